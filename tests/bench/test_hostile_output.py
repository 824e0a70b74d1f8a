"""Malformed child output (NaN, wrong types, over-long lines, deep nesting, garbage) becomes shown error rows."""

from __future__ import annotations

import json

import pytest

from pth_top.benches.client import bench_process, spawn
from pth_top.benches.client.bench_process import BenchProcess
from pth_top.benches.protocol import (
    BAD_OUTPUT_ERROR_TYPE,
    MAX_LINE_BYTES,
    PROTOCOL_VERSION,
    ProtocolError,
    decode_line,
)
from tests.bench.fake_children import (
    FINISHED_LINE,
    GOOD_RUN,
    RESULT_LINE,
    STARTED_LINE,
    canned_child,
    shell_child,
)


def _line(kind: str, **fields) -> str:
    return json.dumps({"v": PROTOCOL_VERSION, "event": kind, **fields})


RESULT = {"kernel": "gemm", "device": "cpu", "variant": "fp32", "status": "ok", "value": 1.0}

HOSTILE_LINES = {
    "nan value": '{"v": %d, "event": "result", "kernel": "gemm", "device": "cpu", "variant": "a", "status": "ok", '
                 '"value": NaN}' % PROTOCOL_VERSION,
    "infinity": '{"v": %d, "event": "progress", "kernel": "gemm", "device": "cpu", "fraction": Infinity}'
                % PROTOCOL_VERSION,
    "minus infinity": '{"v": %d, "event": "finished", "ok": true, "results": 1, "errors": 0, "wall_s": -Infinity}'
                      % PROTOCOL_VERSION,
    "value is text": _line("result", **{**RESULT, "value": "fast"}),
    "value is a bool": _line("result", **{**RESULT, "value": True}),
    "kernel is a number": _line("result", **{**RESULT, "kernel": 7}),
    "missing variant": _line("result", kernel="gemm", device="cpu", status="ok", value=1.0),
    "fraction is text": _line("progress", kernel="gemm", device="cpu", fraction="half"),
    "devices not a list": _line("devices", devices={"id": "cpu"}),
    "device without a name": _line("devices", devices=[{"id": "cpu"}]),
    "kernels item not an object": _line("started", suite="quick", devices=["cpu"], metadata={}, kernels=["gemm"]),
    "metadata cpu clock is text": _line("started", suite="quick", devices=["cpu"], kernels=[],
                                        metadata={"cpu": {"max_ghz": "fast"}}),
    "finished ok is text": _line("finished", ok="yes", results=1, errors=0),
    "error message missing": _line("error", kernel=None, device=None, variant=None, error_type="X"),
    "deep nesting": '{"v": %d, "event": "result", "details": %s}' % (PROTOCOL_VERSION, "[" * 100_000 + "]" * 100_000),
    "nesting just over the bound": _line("result", **RESULT, details=json.loads("[" * 17 + "]" * 17)),
    "not an object": "[1, 2, 3]",
    "garbage": "\x1b]52;c;cHduZWQ=\x07 hello",
    "unknown kind": _line("explode"),
    "old version": json.dumps({"v": 1, "event": "finished", "ok": True, "results": 1, "errors": 0}),
}


@pytest.mark.parametrize("line", HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_a_hostile_line_is_one_protocol_error_line(line):
    with pytest.raises(ProtocolError) as raised:
        decode_line(line)
    message = str(raised.value)
    assert "\n" not in message and "\x1b" not in message and "\x07" not in message and len(message) < 300


def test_a_line_over_the_bound_is_refused_before_parsing():
    with pytest.raises(ProtocolError, match="longer than"):
        decode_line(b"x" * (MAX_LINE_BYTES + 1))


async def _collect(python: str, silence_timeout_s: float | None = None):
    process = BenchProcess(python, ["run"], silence_timeout_s=silence_timeout_s)
    await process.start()
    events = [event async for event in process.events()]
    code = await process.wait()
    return process, events, code


def _bad_rows(events):
    return [event for event in events if event.kind == "error" and event.get("error_type") == BAD_OUTPUT_ERROR_TYPE]


@pytest.mark.parametrize("name", ["nan value", "value is text", "deep nesting", "garbage", "kernel is a number"])
async def test_each_bad_line_becomes_an_error_row_and_the_run_goes_on(tmp_path, name):
    python = canned_child(tmp_path, [STARTED_LINE, HOSTILE_LINES[name] + "\n", RESULT_LINE, FINISHED_LINE])
    _, events, code = await _collect(python)
    assert code == 0
    assert [event.kind for event in events] == ["started", "error", "result", "finished"]
    (bad,) = _bad_rows(events)
    assert bad.get("message").startswith("bad output line: ")


async def test_a_17_mib_line_is_skipped_whole_and_the_next_lines_still_count(tmp_path):
    python = canned_child(tmp_path, [STARTED_LINE], after=(
        "sys.stdout.write('x' * (17 * 1024 * 1024) + '\\n')\n"
        f"sys.stdout.write({RESULT_LINE!r} + {FINISHED_LINE!r})\n"))
    _, events, code = await _collect(python)
    assert code == 0
    assert [event.kind for event in events] == ["started", "error", "result", "finished"]
    assert "longer than" in _bad_rows(events)[0].get("message")


async def test_a_flood_of_garbage_stops_the_child(tmp_path):
    python = shell_child(tmp_path, "exec yes 'garbage'")
    process, events, _ = await _collect(python)
    bad = _bad_rows(events)
    assert len(bad) == bench_process.MAX_BAD_LINES + 1
    assert "stopped" in bad[-1].get("message")
    assert process.returncode is not None


async def test_a_silent_child_is_stopped_after_the_bound(tmp_path):
    python = shell_child(tmp_path, "exec sleep 600")
    process, events, _ = await _collect(python, silence_timeout_s=0.5)
    assert process.silenced and process.returncode is not None
    assert "no output for 0.5 s" in _bad_rows(events)[0].get("message")
    assert "gave no output for 0.5 s" in process.failure_reason()


async def test_heartbeats_keep_a_child_alive_and_are_not_yielded(tmp_path):
    heartbeat = '{"v": %d, "event": "heartbeat", "pid": 1}\n' % PROTOCOL_VERSION
    python = canned_child(tmp_path, [STARTED_LINE], after=(
        f"for _ in range(8):\n    time.sleep(0.1)\n    sys.stdout.write({heartbeat!r}); sys.stdout.flush()\n"
        f"sys.stdout.write({RESULT_LINE!r} + {FINISHED_LINE!r})\n"))
    process, events, code = await _collect(python, silence_timeout_s=5)
    assert code == 0 and not process.silenced
    assert [event.kind for event in events] == ["started", "result", "finished"]


async def test_stderr_lines_of_any_length_are_kept_cut_and_terminal_safe(tmp_path):
    python = shell_child(tmp_path, "head -c 3000000 /dev/zero | tr '\\0' 'y' >&2; echo >&2; "
                                   "printf '\\033]0;title\\007 boom\\n' >&2; exit 3")
    process, events, code = await _collect(python)
    assert code == 3 and events == []
    assert process.failure_reason() == "\\x1b]0;title\\x07 boom"
    assert all(len(line) <= spawn.STDERR_LINE_CHARS for line in process.stderr_tail)


def test_good_run_lines_decode():  # the canned lines the other tests rely on are valid events
    assert [decode_line(line).kind for line in GOOD_RUN] == ["started", "result", "finished"]
