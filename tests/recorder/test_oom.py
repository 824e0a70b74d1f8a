"""An OOM kill in a small memory cgroup becomes an oom_kill event: the cgroup's oom_kill counter as evidence
(cgroup v2 `memory.events`, or v1 `memory.oom_control` where the memory controller is bound to v1), with the
killed process's PID and name from the kernel log where root can read it. Each test makes its cgroup where the
kernel lets root make one, and skips saying why not where its hierarchy cannot be used."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pth_top.recorder.oom import CgroupHierarchy, memory_hierarchies, read_oom_kills
from tests.fleet.fixtures import make_exporter_gpus
from tests.recorder.helpers import make_recorder, step, stored_events
from tests.waiting import WAIT_TIMEOUT_S, wait_for

LIMIT_BYTES = 48 << 20
# Waits for a line on stdin, then allocates (and touches) 8 MiB at a time until the kernel kills it.
HOG = "import sys\nsys.stdin.readline()\nhog = []\nwhile True:\n    hog.append(b'\\xff' * (8 << 20))\n"


def hierarchy(version: int) -> CgroupHierarchy:
    if os.geteuid() != 0:
        pytest.skip("making a memory cgroup needs root")
    found = next((each for each in memory_hierarchies() if each.version == version), None)
    if found is None:
        pytest.skip(f"no cgroup v{version} hierarchy with the memory controller is mounted here")
    return found


@pytest.fixture
def v2_cgroup() -> Iterator[tuple[Path, str]]:
    """A fresh cgroup v2 group with memory.max 48M: (its folder, its path in the hierarchy)."""
    mounted = hierarchy(2)
    root = Path(mounted.mount)
    try:
        controllers = (root / "cgroup.controllers").read_text().split()
    except OSError as error:
        pytest.skip(f"cgroup v2 at {root} unreadable: {error}")
    if "memory" not in controllers:
        pytest.skip(f"the memory controller is not on cgroup v2 at {root} (it is bound to v1 here)")
    group = root / f"pth-top-oom-{uuid.uuid4().hex[:8]}"
    try:
        if "memory" not in (root / "cgroup.subtree_control").read_text().split():
            (root / "cgroup.subtree_control").write_text("+memory")
        group.mkdir()
        (group / "memory.max").write_text(str(LIMIT_BYTES))
        if (group / "memory.swap.max").exists():
            (group / "memory.swap.max").write_text("0")
    except OSError as error:
        remove(group)
        pytest.skip(f"cgroup v2 delegation not possible here: {error}")
    yield group, f"{mounted.root.rstrip('/')}/{group.name}"
    remove(group)


@pytest.fixture
def v1_cgroup() -> Iterator[tuple[Path, str]]:
    """A fresh cgroup v1 memory group with memory.limit_in_bytes 48M (and memsw, so it cannot swap instead)."""
    mounted = hierarchy(1)
    root = Path(mounted.mount)
    if read_oom_kills(str(root / "memory.oom_control")) is None:
        pytest.skip(f"{root}/memory.oom_control has no oom_kill counter (kernels before 4.13)")
    group = root / f"pth-top-oom-{uuid.uuid4().hex[:8]}"
    try:
        group.mkdir()
        (group / "memory.limit_in_bytes").write_text(str(LIMIT_BYTES))
        if (group / "memory.memsw.limit_in_bytes").exists():
            (group / "memory.memsw.limit_in_bytes").write_text(str(LIMIT_BYTES))
    except OSError as error:
        remove(group)
        pytest.skip(f"cannot make a cgroup v1 memory group under {root}: {error}")
    yield group, f"{mounted.root.rstrip('/')}/{group.name}"
    remove(group)


def remove(group: Path) -> None:
    """rmdir once its processes are gone (the kernel refuses while one is left); nothing if it never was."""
    if group.exists():
        wait_for(lambda: not (group / "cgroup.procs").read_text().split(), f"{group} empty", WAIT_TIMEOUT_S)
        group.rmdir()


def kill_a_hog_in(tmp_path: Path, enter: Callable[[int], None], cgroup: str, counter_file: str) -> None:
    """Record while a process in `cgroup` allocates until the kernel kills it; check the event and its row."""
    path = tmp_path / "r.sqlite"
    recorder, nvml_clock = make_recorder(make_exporter_gpus(1), path, top=5000, read_kernel_log=True)
    assert recorder.oom.kernel_log is not None
    log_readable = recorder.oom.kernel_log.unavailable_reason is None
    hog = subprocess.Popen([sys.executable, "-c", HOG], stdin=subprocess.PIPE)
    try:
        enter(hog.pid)
        name = Path(f"/proc/{hog.pid}/comm").read_text().strip()
        wait_for(lambda: step(recorder, nvml_clock) is not None and cgroup in recorder.oom.watched_cgroups,
                 f"the hog's cgroup {cgroup} watched (its oom_kill count the baseline)")
        assert hog.stdin is not None
        hog.stdin.write(b"go\n")
        hog.stdin.flush()
        found: list = []

        def recorded_kill() -> list:
            found.extend(event for event in step(recorder, nvml_clock)
                         if event.kind == "oom_kill" and event.evidence.get("cgroup") == cgroup)
            return found

        wait_for(recorded_kill, "the oom_kill event", timeout_s=4 * WAIT_TIMEOUT_S)
        assert hog.wait(WAIT_TIMEOUT_S) == -signal.SIGKILL, "the kernel killed the hog"
    finally:
        hog.kill()
        hog.wait(WAIT_TIMEOUT_S)
        recorder.close()
    event = found[0]
    assert event.severity == "critical"
    assert event.evidence["oom_kill_after"] > event.evidence["oom_kill_before"]
    assert event.evidence["counter"].endswith(f"/{cgroup.rsplit('/', 1)[1]}/{counter_file}")
    if log_readable:  # the PID and name come from the kernel log ("Killed process PID (name)")
        assert event.pid == hog.pid and f"({name})" in event.message
        assert any(f"Killed process {hog.pid} ({name})" in line for line in event.evidence["kernel_log"])
    rows = [row for row in stored_events(path) if row[0] == "oom_kill" and json.loads(row[5])["cgroup"] == cgroup]
    assert len(rows) == 1, "one event per kill, with the evidence of both sources"
    assert rows[0][3] == event.pid and json.loads(rows[0][5]) == event.evidence


def test_an_oom_kill_in_a_small_cgroup_v1_memory_group_is_an_event(tmp_path, v1_cgroup):
    group, cgroup = v1_cgroup
    kill_a_hog_in(tmp_path, lambda pid: (group / "cgroup.procs").write_text(str(pid)), cgroup, "memory.oom_control")


def test_an_oom_kill_in_a_small_cgroup_v2_group_is_an_event(tmp_path, v2_cgroup):
    group, cgroup = v2_cgroup
    kill_a_hog_in(tmp_path, lambda pid: (group / "cgroup.procs").write_text(str(pid)), cgroup, "memory.events")
