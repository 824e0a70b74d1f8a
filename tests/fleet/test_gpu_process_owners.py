"""Owners of NVML's GPU PIDs: stat() once per listed PID, through NSpid in a container, forgotten once unlisted."""

from __future__ import annotations

import pwd
import shutil

from pth_top.sensors.gpu_process_owners import GpuProcessOwners, ProcessOwner
from tests.sensors.proc_tree import add_process, make_proc_root

ME = pwd.getpwuid(__import__("os").getuid()).pw_name


def test_visible_pid_owner_and_comm(tmp_path):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 1000, "python3", ["python3", "train.py"])
    owners = GpuProcessOwners(str(root))
    assert owners.identify([1000, 1000]) == {1000: ProcessOwner(pid=1000, user=ME)}
    assert owners.comm(1000) == "python3"
    assert owners.comm(4321) is None


def test_pid_from_the_root_namespace_found_through_nspid(tmp_path):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 7, "trainer", ["trainer"], nspid=(7, 5000))
    assert GpuProcessOwners(str(root)).identify([5000]) == {5000: ProcessOwner(pid=7, user=ME)}


def test_owner_is_kept_while_listed_and_forgotten_once_unlisted(tmp_path):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 1000, "python3", ["python3"])
    owners = GpuProcessOwners(str(root))
    assert 1000 in owners.identify([1000])
    shutil.rmtree(root / "1000")
    assert 1000 in owners.identify([1000]), "still listed by NVML: the PID cannot have been reused"
    assert owners.identify([]) == {}
    assert owners.identify([1000]) == {}, "unlisted once, so read again, and it is gone"
