"""Peaks and % of peak; saved runs are versioned, never overwritten, and compare by kernel/device/variant."""

from __future__ import annotations

import json

import pytest

from pth_top.benches.client.peaks import cpu_peak, percent_of_peak
from pth_top.benches.client.runs import RunFileError, RunRecord, compare, list_runs, load_run, save_run
from pth_top.benches.protocol import Event


def test_cpu_peak_uses_cores_clock_and_isa():
    cpu = {"max_ghz": 2.0, "physical_cores": 4, "isa_flags": ["avx2", "fma"]}
    assert cpu_peak(cpu, "fp32", None).value == pytest.approx(4 * 2.0 * 32 / 1000)
    assert cpu_peak(cpu, "fp32", 1).value == pytest.approx(2.0 * 32 / 1000)
    avx512 = dict(cpu, isa_flags=["avx2", "fma", "avx512f", "amx_bf16"])
    assert cpu_peak(avx512, "fp32", None).value == pytest.approx(4 * 2.0 * 64 / 1000)
    assert cpu_peak(avx512, "bf16_tensor", None).value == pytest.approx(4 * 2.0 * 1024 / 1000)
    assert cpu_peak(cpu, "memory_bandwidth", None) is None


def test_above_100_percent_is_kept_with_a_note():
    metadata = {"cuda_devices": {"cuda:0": {"name": "NVIDIA GeForce RTX 3060 Ti"}}}
    percent, note = percent_of_peak({"device": "cuda:0", "peak_kind": "tf32", "value": 18.2}, metadata)
    assert percent == pytest.approx(100 * 18.2 / 16.2)
    assert "above 100 %" in note


def _record(value: float) -> RunRecord:
    record = RunRecord(python="/usr/bin/python3")
    record.apply(Event("started", {"suite": "quick", "devices": ["cpu"], "metadata": {
        "cpu": {"max_ghz": 2.0, "physical_cores": 2, "isa_flags": ["avx2", "fma"]}}, "kernels": []}))
    record.apply(Event("result", {"kernel": "gemm", "device": "cpu", "variant": "fp32 1 thread", "value": value,
                                  "unit": "TFLOP/s", "peak_kind": "fp32", "details": {"threads": 1}, "status": "ok"}))
    record.apply(Event("finished", {"ok": True}))
    return record


def test_result_rows_get_percent_of_peak_on_the_parent_side():
    (row,) = _record(0.032).rows
    assert row["percent_of_peak"] == pytest.approx(50.0)


def test_runs_are_saved_under_unique_names_and_load_back(tmp_path):
    first = save_run(_record(0.03), tmp_path)
    second = save_run(_record(0.03), tmp_path)
    assert first != second and len(list_runs(tmp_path)) == 2
    data = json.loads(first.read_text())
    assert data["format"] == "pth-top-bench-run" and data["version"] == 1
    assert load_run(first).rows == _record(0.03).rows


def test_a_foreign_file_is_not_a_run(tmp_path):
    path = tmp_path / "bench-x.json"
    path.write_text('{"format": "something"}')
    with pytest.raises(RunFileError):
        load_run(path)


def test_compare_gives_percent_change_per_row():
    deltas = compare(_record(0.033).rows, _record(0.030).rows)
    assert deltas[("gemm", "cpu", "fp32 1 thread")] == pytest.approx(10.0)
    assert compare(_record(0.03).rows, []) == {("gemm", "cpu", "fp32 1 thread"): None}
