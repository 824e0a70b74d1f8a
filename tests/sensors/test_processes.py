"""The process table: /proc parsing, CPU % from tick deltas, vanished and zombie processes,
psutil errors per process, a real child that exits between samples, and NSpid mapping."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace

import psutil
import pytest

from pth_top.sensors.gpu_processes import NvmlProcess
from pth_top.sensors.na import NA
from pth_top.sensors.pidns import NamespacePidMapper, read_nspid
from pth_top.sensors.processes import ProcessReader, ProcfsProcessSource, PsutilProcessSource, attach_gpu_uses
from pth_top.sensors.procfs import KEPT_DESCRIPTOR_FLOOR, StatFiles, parse_stat
from tests.sensors.helpers import FakeClock
from tests.sensors.proc_tree import add_process, make_proc_root, stat_line

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
GIB = 1024 ** 3


def test_parse_stat_with_spaces_and_parentheses_in_the_name():
    stat = parse_stat(stat_line(42, "tmux: server (1)", state="R", ppid=7, utime=30, stime=12,
                                start_ticks=555, rss_pages=10).encode())
    assert (stat.pid, stat.comm, stat.state, stat.ppid) == (42, "tmux: server (1)", "R", 7)
    assert (stat.cpu_ticks, stat.start_ticks, stat.rss_pages, stat.flags) == (42, 555, 10, 0x400100)


def test_procfs_rows_cpu_percent_zombie_and_vanished(tmp_path):
    root = make_proc_root(tmp_path / "proc", uptime_s=100.0)
    add_process(root, 10, "python", ["python", "train.py", "--lr", "3e-4"], utime=0, start_ticks=50 * TICKS,
                rss_pages=GIB // PAGE)
    add_process(root, 11, "defunct", [], state="Z", ppid=10)
    add_process(root, 13, "kworker/0:1-events", [], ppid=2, flags=0x04208060)
    (root / "12").mkdir()  # exited between listing and reading: no stat file
    clock = FakeClock()
    source = ProcfsProcessSource(str(root), clock)
    first = {row.pid: row for row in source.rows(memory_total_bytes=4 * GIB).processes}
    assert set(first) == {10, 11, 13}
    assert first[13].is_kernel_thread and first[13].command == "[kworker/0:1-events]"
    assert not first[10].is_kernel_thread and not first[11].is_kernel_thread
    assert first[10].cpu_percent == 0.0
    assert first[10].command == "python train.py --lr 3e-4"
    assert first[10].rss_bytes == GIB and first[10].memory_percent == pytest.approx(25.0)
    # 50 s before the fake uptime; a wide margin, since a loaded machine may stall between the reads.
    assert time.time() - first[10].start_time_s == pytest.approx(50.0, abs=10.0)
    assert first[10].user == first[11].user
    assert first[11].state == "zombie" and first[11].command == "[defunct]" and first[11].ppid == 10

    # 2 s later the process has used 1.5 s of CPU: 75 %.
    add_process(root, 10, "python", ["python", "train.py", "--lr", "3e-4"], utime=TICKS, stime=TICKS // 2,
                start_ticks=50 * TICKS, rss_pages=GIB // PAGE)
    clock.advance(2.0)
    second = {row.pid: row for row in source.rows(memory_total_bytes=4 * GIB).processes}
    assert second[10].cpu_percent == pytest.approx(75.0, abs=100.0 / TICKS)


def test_a_reused_pid_starts_from_zero_cpu_and_rereads_its_command(tmp_path):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 20, "old", ["old"], utime=0, start_ticks=100)
    clock = FakeClock()
    source = ProcfsProcessSource(str(root), clock)
    source.rows(GIB)
    add_process(root, 20, "new", ["new", "--flag"], utime=5 * TICKS, start_ticks=900)
    clock.advance(1.0)
    (row,) = source.rows(GIB).processes
    assert row.cpu_percent == 0.0 and row.command == "new --flag"


class ScriptedProcess:
    def __init__(self, pid, outcome):
        self.pid = pid
        self._outcome = outcome

    def as_dict(self, attrs, ad_value=None):
        if isinstance(self._outcome, Exception):
            raise self._outcome
        return self._outcome


def test_psutil_source_handles_errors_per_process(monkeypatch):
    healthy = {"pid": 1, "ppid": 0, "username": "root", "cpu_percent": 12.5, "memory_percent": 1.0,
               "memory_info": SimpleNamespace(rss=8192),
               "status": "sleeping", "create_time": time.time() - 10, "cmdline": ["init"], "name": "init"}
    processes = [
        ScriptedProcess(1, healthy),
        ScriptedProcess(2, psutil.NoSuchProcess(2)),
        ScriptedProcess(3, psutil.AccessDenied(3)),
        ScriptedProcess(4, psutil.ZombieProcess(4)),
    ]
    monkeypatch.setattr(psutil, "process_iter", lambda *args, **kwargs: iter(processes))
    rows = {row.pid: row for row in PsutilProcessSource().rows(GIB).processes}
    assert set(rows) == {1, 3, 4}
    assert rows[1].command == "init" and rows[1].cpu_percent == 12.5 and rows[1].user == "root"
    assert rows[1].rss_bytes == 8192 and time.time() - rows[1].start_time_s >= 10
    assert rows[3].user == "?" and rows[3].command == "?"
    assert rows[4].state == "zombie"


@pytest.mark.parametrize("use_procfs", [True, False], ids=["procfs", "psutil"])
def test_real_child_that_exits_between_samples(use_procfs):
    reader = ProcessReader(use_procfs=use_procfs)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        before = {process.pid: process for process in reader.sample(psutil.virtual_memory().total, [])}
        assert child.pid in before and "time.sleep(60)" in before[child.pid].command
        assert before[os.getpid()].rss_bytes > 0 and not before[os.getpid()].is_kernel_thread
    finally:
        child.kill()
        child.wait()
    after = reader.sample(psutil.virtual_memory().total, [NvmlProcess(child.pid, 0, 1024, "compute")])
    assert child.pid not in {process.pid for process in after}
    assert all(not process.gpu_uses for process in after)


def test_nspid_maps_a_host_pid_to_the_visible_process(tmp_path):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 7, "python", ["python", "train.py"], nspid=(7, 31337))
    add_process(root, 8, "bash", ["bash"], nspid=(8, 31338))
    assert read_nspid(str(root), 7) == (7, 31337)
    assert read_nspid(str(root), 99) == ()
    source = ProcfsProcessSource(str(root), FakeClock())
    gpu_processes = [
        NvmlProcess(31337, 1, 5 * GIB, "compute"),
        NvmlProcess(8, 0, NA, "graphics"),
        NvmlProcess(424242, 0, GIB, "compute"),
    ]
    samples = {s.pid: s for s in attach_gpu_uses(source.rows(GIB), gpu_processes, NamespacePidMapper(str(root)))}
    assert samples[7].gpu_indices == (1,) and samples[7].gpu_memory_used_bytes == 5 * GIB
    assert samples[8].gpu_uses[0].kind == "graphics" and samples[8].gpu_memory_used_bytes is NA
    assert set(samples) == {7, 8}


def test_nspid_lines_are_read_only_when_a_gpu_pid_is_not_visible(tmp_path, monkeypatch):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 7, "python", ["python"], nspid=(7, 70))
    reads = []
    monkeypatch.setattr("pth_top.sensors.pidns.read_nspid", lambda proc_root, pid: reads.append(pid) or (7, 70))
    mapper = NamespacePidMapper(str(root))
    source = ProcfsProcessSource(str(root), FakeClock())
    attach_gpu_uses(source.rows(GIB), [NvmlProcess(7, 0, GIB, "compute")], mapper)
    assert reads == []
    for _ in range(2):
        attach_gpu_uses(source.rows(GIB), [NvmlProcess(70, 0, GIB, "compute")], mapper)
    assert reads == [7]  # cached per process after the first read


def test_an_unchanged_process_keeps_its_row_and_a_changed_one_gets_a_new_row(tmp_path):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 30, "idle", ["idle"], utime=10)
    add_process(root, 31, "busy", ["busy"], utime=10)
    clock = FakeClock()
    source = ProcfsProcessSource(str(root), clock)
    first = {row.pid: row for row in source.rows(GIB).processes}
    add_process(root, 31, "busy", ["busy"], utime=10 + TICKS)
    clock.advance(1.0)
    second = {row.pid: row for row in source.rows(GIB).processes}
    assert second[30] is first[30]
    assert second[31] is not first[31] and second[31].cpu_percent == pytest.approx(100.0)
    # The busy process stops using CPU: same stat line again, so its row drops back to 0 %.
    clock.advance(1.0)
    third = {row.pid: row for row in source.rows(GIB).processes}
    assert third[31].cpu_percent == 0.0 and third[31].cpu_time_s == second[31].cpu_time_s
    assert third[30] is first[30]
    # A different memory total rebuilds rows, since they carry memory %.
    fourth = {row.pid: row for row in source.rows(2 * GIB).processes}
    assert fourth[30] is not first[30] and fourth[30].memory_percent == pytest.approx(first[30].memory_percent / 2)


@pytest.fixture
def room_for_kept_files():
    """A soft descriptor limit with room above the floor the kept stat files use."""
    import resource

    from pth_top.sensors.procfs import KEPT_DESCRIPTOR_FLOOR, raise_open_file_limit

    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    if raise_open_file_limit(KEPT_DESCRIPTOR_FLOOR + 256) < KEPT_DESCRIPTOR_FLOOR + 256:
        pytest.skip("the hard descriptor limit leaves no room above the floor")
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_stat_files_stay_open_up_to_the_budget_and_close_when_processes_go(tmp_path, room_for_kept_files):
    root = make_proc_root(tmp_path / "proc")
    for pid in (40, 41, 42):
        add_process(root, pid, f"p{pid}", [f"p{pid}"])
    source = ProcfsProcessSource(str(root), FakeClock())
    source.procfs.stat_files.max_open = 2
    assert {row.pid for row in source.rows(GIB).processes} == {40, 41, 42}
    assert source.procfs.stat_files.open_count == 2
    shutil.rmtree(root / "40")
    shutil.rmtree(root / "41")
    assert {row.pid for row in source.rows(GIB).processes} == {42}
    assert source.procfs.stat_files.open_count == 0
    # With the gone processes' files closed there is room to keep 42's open.
    assert {row.pid for row in source.rows(GIB).processes} == {42}
    assert list(source.procfs.stat_files._descriptors) == [42]
    assert all(descriptor >= KEPT_DESCRIPTOR_FLOOR for descriptor in source.procfs.stat_files._descriptors.values())
    source.close()
    assert source.procfs.stat_files.open_count == 0


def test_a_kept_stat_file_of_a_reaped_child_is_replaced_not_read_stale(room_for_kept_files):
    """A real child: its kept stat file fails once it is reaped, and no row of it survives."""
    reader = ProcessReader(use_procfs=True)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        before = {process.pid for process in reader.sample(psutil.virtual_memory().total, [])}
        assert child.pid in before
        stat_files = reader.source.procfs.stat_files
        kept = stat_files._descriptors.get(child.pid)
        assert kept is not None
    finally:
        child.kill()
        child.wait()
    with pytest.raises(OSError):
        os.pread(kept, 4096, 0)
    assert stat_files.read(child.pid) is None
    assert child.pid not in stat_files._descriptors
    after = {process.pid for process in reader.sample(psutil.virtual_memory().total, [])}
    assert child.pid not in after
    reader.close()
    assert stat_files.open_count == 0


def test_raise_open_file_limit_stays_under_the_hard_limit():
    import resource

    from pth_top.sensors.procfs import descriptor_budget, raise_open_file_limit

    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, before[1]))
        assert descriptor_budget() == 0
        new_soft = raise_open_file_limit(wanted=2048)
        expected = 2048 if before[1] == resource.RLIM_INFINITY else min(2048, before[1])
        assert new_soft == expected == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        assert descriptor_budget() == max(0, expected - KEPT_DESCRIPTOR_FLOOR)
        assert raise_open_file_limit(wanted=1024) == expected
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_kept_stat_files_are_closed_when_the_reader_is_dropped(room_for_kept_files):
    stat_files = StatFiles()
    assert stat_files.read(os.getpid()) is not None
    (descriptor,) = stat_files._descriptors.values()
    os.fstat(descriptor)
    del stat_files
    with pytest.raises(OSError):
        os.fstat(descriptor)


def test_no_room_above_the_floor_falls_back_to_reading_by_path():
    import resource

    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (KEPT_DESCRIPTOR_FLOOR, before[1]))
    try:
        stat_files = StatFiles(max_open=10)
        assert stat_files.read(os.getpid()) is not None
        assert stat_files.read(os.getpid()) is not None
        assert stat_files.open_count == 0 and stat_files.max_open == 0
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)
