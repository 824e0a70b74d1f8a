"""Protocol round trips; the parent-side modules import neither torch nor the UI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pth_top.benches.protocol import PROTOCOL_VERSION, ProtocolError, decode_line, encode_event


def test_events_round_trip_with_nested_fields():
    fields = {"kernel": "gemm", "device": "cpu", "variant": "fp32", "status": "ok", "value": 1.5,
              "details": {"shapes": [{"m": 64}]}}
    line = encode_event("result", **fields)
    assert line.endswith("\n") and "\n" not in line[:-1]
    event = decode_line(line)
    assert event.kind == "result"
    assert event.fields == fields
    assert decode_line(line.encode()).fields == event.fields


def test_non_finite_numbers_travel_as_null():
    event = decode_line(encode_event("progress", kernel="gemm", device="cpu", fraction=0.5, eta_s=float("inf"),
                                     values=[float("nan"), 1.0]))
    assert event.get("eta_s") is None and event.get("values") == [None, 1.0]


@pytest.mark.parametrize("line, reason", [
    ("not json", "not JSON"),
    ("[1, 2]", "not an event"),
    (json.dumps({"v": PROTOCOL_VERSION + 1, "event": "result"}), "protocol version"),
    (json.dumps({"v": PROTOCOL_VERSION, "event": "explode"}), "unknown event kind"),
])
def test_bad_lines_are_protocol_errors(line, reason):
    with pytest.raises(ProtocolError, match=reason):
        decode_line(line)


def test_encoding_an_unknown_kind_is_refused():
    with pytest.raises(ProtocolError):
        encode_event("explode")


def test_client_side_modules_import_without_torch_or_ui():
    code = (
        "import sys, pth_top.benches.protocol, pth_top.benches.run_request, pth_top.benches.catalog, "
        "pth_top.benches.client.spawn, pth_top.benches.client.bench_process, pth_top.benches.client.peaks, "
        "pth_top.benches.client.runs, pth_top.benches.client.rows, pth_top.benches.child.harness, "
        "pth_top.benches.child.cpuinfo\n"
        "print(sorted(m for m in ('torch', 'textual', 'rich', 'numpy') if sys.modules.get(m) is not None))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
