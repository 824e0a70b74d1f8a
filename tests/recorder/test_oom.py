"""An OOM kill in a small cgroup v2 memory cgroup becomes an oom_kill event with the cgroup's counters as evidence
(where the kernel lets root make one: cgroup v2 with the memory controller delegable)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from pth_top.recorder.oom import cgroup2_mount
from tests.fleet.fixtures import make_exporter_gpus
from tests.recorder.helpers import make_recorder, step
from tests.waiting import WAIT_TIMEOUT_S, wait_for

HOG = "import time\nhog = []\nwhile True:\n    hog.append(bytearray(8 << 20))\n    time.sleep(0.005)\n"


def small_memory_cgroup() -> Path:
    """A fresh cgroup with memory.max 48M, or pytest.skip saying why not here."""
    if os.geteuid() != 0:
        pytest.skip("making a memory cgroup needs root")
    mount = cgroup2_mount()
    if mount is None:
        pytest.skip("no cgroup v2 hierarchy mounted (cgroup v1 only): memory.events oom_kill is v2's")
    root = Path(mount)
    try:
        controllers = (root / "cgroup.controllers").read_text().split()
    except OSError as error:
        pytest.skip(f"cgroup v2 at {mount} unreadable: {error}")
    if "memory" not in controllers:
        pytest.skip(f"the memory controller is not on cgroup v2 at {mount} (it is bound to v1 here)")
    try:
        if "memory" not in (root / "cgroup.subtree_control").read_text().split():
            (root / "cgroup.subtree_control").write_text("+memory")
        group = root / f"pth-top-oom-{uuid.uuid4().hex[:8]}"
        group.mkdir()
        (group / "memory.max").write_text(str(48 << 20))
        if (group / "memory.swap.max").exists():
            (group / "memory.swap.max").write_text("0")
    except OSError as error:
        pytest.skip(f"cgroup v2 delegation not possible here: {error}")
    return group


def test_an_oom_kill_in_a_small_cgroup_is_an_event(tmp_path):
    group = small_memory_cgroup()
    fake = make_exporter_gpus(1)
    recorder, nvml_clock = make_recorder(fake, tmp_path / "r.sqlite", top=5000)
    hog = subprocess.Popen([sys.executable, "-c", f"import os, sys, time\ntime.sleep(1)\n{HOG}"])
    try:
        (group / "cgroup.procs").write_text(str(hog.pid))
        step(recorder, nvml_clock)  # the hog (and its cgroup) is recorded, its oom_kill count the baseline
        found: list = []
        wait_for(lambda: found.extend(event for event in step(recorder, nvml_clock) if event.kind == "oom_kill")
                 or found, "the oom_kill event", timeout_s=4 * WAIT_TIMEOUT_S)
        event = found[0]
        assert event.severity == "critical" and event.evidence["cgroup"].endswith(group.name)
        assert event.evidence["oom_kill_after"] > event.evidence["oom_kill_before"]
    finally:
        hog.kill()
        hog.wait(WAIT_TIMEOUT_S)
        recorder.close()
        try:
            group.rmdir()
        except OSError:
            pass
