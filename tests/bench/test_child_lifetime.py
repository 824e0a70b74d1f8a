"""No benchmark or probe process outlives its reason to run: cancel, SIGHUP/SIGTERM/Ctrl-C, a killed parent,
a timeout."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pth_top.benches.client.bench_process import BenchProcess
from pth_top.doctor.probe_runner import PendingProbe, ProbeError
from tests.bench.fake_children import (
    CLI_CODE,
    end_if_running,
    executable,
    process_gone,
    read_pid,
    shell_child,
    wait_for,
)


def child_with_grandchild(tmp_path: Path) -> tuple[str, Path, Path]:
    """A fake interpreter that starts a grandchild (sleep), writes both pids, and waits forever."""
    child_pid, grandchild_pid = tmp_path / "child.pid", tmp_path / "grandchild.pid"
    python = shell_child(tmp_path, f"echo $$ > {child_pid}\nsleep 600 &\necho $! > {grandchild_pid}\nwait")
    return python, child_pid, grandchild_pid


def pids_written(*paths: Path) -> list[int]:
    wait_for(lambda: all(read_pid(path) for path in paths), what="the fake child to write its pids")
    return [read_pid(path) for path in paths]


async def test_cancel_ends_the_grandchildren_too(tmp_path):
    python, child_file, grandchild_file = child_with_grandchild(tmp_path)
    process = BenchProcess(python, ["run"])
    await process.start()
    try:
        import asyncio

        deadline = time.monotonic() + 30
        while not (read_pid(child_file) and read_pid(grandchild_file)):
            assert time.monotonic() < deadline, "the fake child did not start"
            await asyncio.sleep(0.02)
        await process.cancel()
        grandchild = read_pid(grandchild_file)
        wait_for(lambda: process_gone(grandchild), what="the grandchild to end")
    finally:
        end_if_running(read_pid(child_file), read_pid(grandchild_file))


# The CLI as a terminal starts it: a suite run under nohup, or as a background job, passes SIGHUP and SIGINT on ignored.
DEFAULT_SIGNALS = ("import signal; signal.signal(signal.SIGHUP, signal.SIG_DFL); "
                   "signal.signal(signal.SIGINT, signal.default_int_handler); ")


@pytest.mark.parametrize("signum, exit_code", [(signal.SIGHUP, -signal.SIGHUP), (signal.SIGTERM, -signal.SIGTERM),
                                               (signal.SIGINT, 130)])
def test_a_signal_to_headless_bench_ends_the_child_group(tmp_path, signum, exit_code):
    python, child_file, grandchild_file = child_with_grandchild(tmp_path)
    cli = subprocess.Popen([sys.executable, "-c", DEFAULT_SIGNALS + CLI_CODE, "bench", "--python", python, "--kernel",
                            "gemm"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        child, grandchild = pids_written(child_file, grandchild_file)
        cli.send_signal(signum)
        _, err = cli.communicate(timeout=60)
        assert cli.returncode == exit_code, err
        if signum == signal.SIGINT:
            assert err.splitlines()[-1] == "pth-top: interrupted" and "Traceback" not in err
        wait_for(lambda: process_gone(child) and process_gone(grandchild), what="the child group to end")
    finally:
        cli.kill()
        end_if_running(read_pid(child_file), read_pid(grandchild_file))


ORPHAN_PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=subprocess.PIPE, start_new_session=True)
print(child.pid, flush=True)
time.sleep(600)
"""
HEARTBEAT_CHILD = """
import time
from pth_top.benches.child.runner import EventWriter, Heartbeat
Heartbeat(EventWriter.take_over_stdout(), interval_s=0.1).start()
time.sleep(600)
"""


def test_a_child_whose_parent_was_sigkilled_ends_itself():
    parent = subprocess.Popen([sys.executable, "-c", ORPHAN_PARENT, HEARTBEAT_CHILD], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        parent.kill()
        parent.wait(timeout=30)
        wait_for(lambda: process_gone(child), timeout_s=60, what="the orphaned child to end itself")
    finally:
        end_if_running(child)


def test_the_probe_timeout_holds_when_a_descendant_keeps_its_pipes_open(tmp_path):
    grandchild_file = tmp_path / "grandchild.pid"
    python = shell_child(tmp_path, f"sleep 120 &\necho $! > {grandchild_file}\nexit 0")
    started = time.monotonic()
    try:
        with pytest.raises(ProbeError, match="took longer than 1 s"):
            PendingProbe(python, timeout_s=1).result()
        assert time.monotonic() - started < 60  # not the grandchild's 120 s
        grandchild = read_pid(grandchild_file)
        wait_for(lambda: process_gone(grandchild), what="the probe's grandchild to end")
    finally:
        end_if_running(read_pid(grandchild_file))


def test_the_heartbeat_thread_sends_valid_versioned_events_until_stopped():
    from pth_top.benches.child.runner import Heartbeat
    from pth_top.benches.protocol import decode_line, encode_event

    lines: list[str] = []
    heartbeat = Heartbeat(lambda kind, **fields: lines.append(encode_event(kind, **fields)), interval_s=0.01)
    heartbeat.start()
    wait_for(lambda: len(lines) >= 3, what="three heartbeats")
    heartbeat.stopped.set()
    heartbeat.join(timeout=30)
    assert not heartbeat.is_alive()
    assert {decode_line(line).kind for line in lines} == {"heartbeat"}


def test_the_probe_keeps_a_bounded_tail_of_a_flood_and_still_finds_its_report(tmp_path):
    from pth_top.doctor.probe_runner import PROBE_STDOUT_LINES
    report = '{"schema": "pth-top.torch-probe", "schema_version": 1, "error": null}'
    python = executable(tmp_path / "fake-python", (
        f"#!{sys.executable}\n"
        "import sys\n"
        "sys.stdout.write('x' * (17 * 1024 * 1024) + '\\n')\n"  # over the line bound: skipped whole
        "sys.stdout.write('noise\\n' * 100000)\n"
        f"print({report!r})\n"))
    pending = PendingProbe(python, timeout_s=60)
    assert pending.result()["schema_version"] == 1
    assert len(pending._stdout) <= PROBE_STDOUT_LINES


HUNG_KERNEL_CHILD = """#!{python}
import os, sys, time
from pth_top.benches.child.runner import EventWriter, Heartbeat
open({pid_file!r}, "w").write(str(os.getpid()))
emit = EventWriter.take_over_stdout()
Heartbeat(emit, interval_s=0.05).start()
emit("started", suite="custom", devices=["cuda:0"], scale=1.0, time_cap_s=3.0, metadata={{}},
     kernels=[{{"kernel": "gemm", "device": "cuda:0"}}])
emit("progress", kernel="gemm", device="cuda:0", fraction=0.1, message="8192^3")
time.sleep(600)  # the main thread blocks with the GIL released, as in torch.cuda.synchronize on a hung GPU
"""


async def test_a_hung_kernel_whose_heartbeat_goes_on_is_stopped_with_one_error_row(tmp_path):
    import asyncio

    pid_file = tmp_path / "child.pid"
    python = executable(tmp_path / "fake-python", HUNG_KERNEL_CHILD.format(python=sys.executable,
                                                                           pid_file=str(pid_file)))
    process = BenchProcess(python, ["run"], stall_limit_s=0.5)
    await process.start()
    try:
        events = await asyncio.wait_for(_collect(process), timeout=120)
        errors = [event for event in events if event.kind == "error"]
        assert [event.get("error_type") for event in errors] == ["Stalled"]
        assert errors[0].get("kernel") == "gemm" and errors[0].get("device") == "cuda:0"
        assert "no progress for" in errors[0].get("message") and "GPU hung?" in errors[0].get("message")
        assert "GPU hung?" in process.failure_reason()
        wait_for(lambda: process_gone(read_pid(pid_file)), what="the hung child to be stopped")
    finally:
        await process.cancel()
        end_if_running(read_pid(pid_file))


async def _collect(process: BenchProcess) -> list:
    return [event async for event in process.events()]


def test_the_stall_limit_follows_the_time_cap_and_is_generous():
    from pth_top.benches.protocol import STALL_FLOOR_S, stall_limit_s

    assert stall_limit_s(None) == STALL_FLOOR_S >= 120
    assert stall_limit_s(600.0) == 6000.0


def test_the_progress_age_grows_with_heartbeats_and_resets_on_any_other_event():
    import io

    from pth_top.benches.child.runner import EventWriter

    now = [100.0]
    writer = EventWriter(io.StringIO(), clock=lambda: now[0])
    now[0] = 130.0
    writer("heartbeat", pid=1)
    assert writer.progress_age_s() == 30.0
    writer("progress", kernel="gemm", device="cpu", fraction=0.5)
    now[0] = 131.0
    assert writer.progress_age_s() == 1.0


def test_the_cli_stops_a_hung_kernel_at_its_stall_limit(tmp_path):
    import os

    pid_file = tmp_path / "child.pid"
    python = executable(tmp_path / "fake-python", HUNG_KERNEL_CHILD.format(python=sys.executable,
                                                                           pid_file=str(pid_file)))
    try:
        done = subprocess.run([sys.executable, "-c", CLI_CODE, "bench", "--python", python, "--kernel", "gemm",
                               "--stall-limit", "1"], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PTH_TOP_DATA_DIR": str(tmp_path / "data")})
        assert done.returncode == 1, done.stderr
        assert "ERROR" in done.stdout and "Stalled: no progress for" in done.stdout
        assert done.stderr.splitlines()[-1].startswith("pth-top: benchmark failed: no progress for")
        wait_for(lambda: process_gone(read_pid(pid_file)), what="the hung child to be stopped")
    finally:
        end_if_running(read_pid(pid_file))


@pytest.mark.parametrize("limit", ["0", "-3", "nan", "inf"])
def test_a_stall_limit_out_of_range_is_one_line_and_exit_2(cli, capsys, limit):
    with pytest.raises(SystemExit) as raised:
        cli(["bench", "--kernel", "gemm", "--stall-limit", limit])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "argument --stall-limit: stall limit must be" in err
