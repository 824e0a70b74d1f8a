"""Run files a real H200 wrote (tests/fakes/recorded/h200: `pth-top bench --json`, 2026-12-04, driver 580.159.04,
torch 2.11.0+cu130, by tests/perf/gpu_check.sh) load, and their % of peak against today's catalog comes out as
recorded: the device is "NVIDIA H200", the catalog's h200-141gb-sxm (bf16 dense 989 TFLOP/s, 4,800 GB/s HBM).

Recorded: bf16 GEMM 713.7 TFLOP/s (72.2 %), device copy 4,266.8 GB/s (88.9 %), triad 4,370.4 GB/s (91.0 %),
fp8 e4m3 1,272.7 TFLOP/s (64.3 % of 1,979), h2d pinned 55.4 GB/s (88.0 % of a Gen5 x16 link's 63).
"""

from __future__ import annotations

import pytest

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP8, PEAK_MEMORY
from pth_top.benches.client.memory_check import estimated_bytes
from pth_top.benches.client.peaks import gpu_peak, gpu_peaks, percent_of_peak
from pth_top.benches.client.rows import format_row, row_from_dict
from pth_top.benches.client.runs import load_run, row_key
from tests.fakes.recorded_h200 import H200_DIR

RUN_FILES = ("run-peak.json", "run-attention-fp8.json", "run-memory.json", "run-burn.json")


def rows_by_key(name: str) -> dict[tuple[str, str, str], dict]:
    return {row_key(row): row for row in load_run(H200_DIR / name).rows}


@pytest.mark.parametrize("name", RUN_FILES)
def test_the_recorded_run_files_load_whole(name):
    record = load_run(H200_DIR / name)
    assert record.ok and record.devices == ["cuda:0"] and record.errors == []
    assert record.metadata["cuda_devices"]["cuda:0"]["name"] == "NVIDIA H200"
    assert record.metadata["torch_version"] == "2.11.0+cu130"
    assert record.rows


def test_the_catalog_matches_the_h200_by_its_device_name():
    peaks = gpu_peaks("NVIDIA H200")
    assert peaks is not None and peaks.part_id == "h200-141gb-sxm"
    assert gpu_peak("NVIDIA H200", PEAK_BF16).value == 989
    assert gpu_peak("NVIDIA H200", PEAK_MEMORY).value == 4800
    assert gpu_peak("NVIDIA H200", PEAK_FP8).value == 1979


def test_percent_of_peak_of_the_recorded_peak_run_comes_out_as_recorded():
    record = load_run(H200_DIR / "run-peak.json")
    rows = rows_by_key("run-peak.json")
    expected = {
        ("gemm", "cuda:0", "bf16"): (713.6867997606831, 72.16, "peak 989 "),
        ("membw", "cuda:0", "copy"): (4266.840135236461, 88.89, "peak 4800 "),
        ("membw", "cuda:0", "triad"): (4370.3943771493605, 91.05, "peak 4800 "),
        ("h2d", "cuda:0", "h2d pinned"): (55.44867118411384, 88.01, "peak 63 (negotiated PCIe Gen5 x16"),
    }
    for key, (value, percent, note) in expected.items():
        row = rows[key]
        assert row["value"] == value, key
        computed, computed_note = percent_of_peak(row, record.metadata)
        assert computed == pytest.approx(percent, abs=0.01), key
        assert computed_note.startswith(note), (key, computed_note)
    assert [format_row(row_from_dict(rows[key])).percent for key in expected] == ["72%", "89%", "91%", "88%"]


@pytest.mark.parametrize("name", RUN_FILES)
def test_every_recorded_percent_of_peak_is_recomputed_the_same(name):
    """Every row, recomputed from its value and the run's metadata, gives the % and note the machine saved."""
    record = load_run(H200_DIR / name)
    for row in record.rows:
        computed, note = percent_of_peak(row, record.metadata)
        if row.get("percent_of_peak") is None:
            assert computed is None, row_key(row)
        else:
            assert computed == pytest.approx(row["percent_of_peak"], rel=1e-12), row_key(row)
            assert note == row["peak_note"], row_key(row)


def test_the_recorded_fp8_gemm_is_against_the_dense_fp8_peak():
    record = load_run(H200_DIR / "run-attention-fp8.json")
    fp8 = rows_by_key("run-attention-fp8.json")[("fp8", "cuda:0", "e4m3 -> bf16")]
    percent, note = percent_of_peak(fp8, record.metadata)
    assert fp8["value"] == pytest.approx(1272.7, abs=0.05)
    assert percent == pytest.approx(64.31, abs=0.01) and note.startswith("peak 1979 ")


def test_the_wizards_estimate_of_the_recorded_h200_training_steps():
    # The memory kernel's fp32 steps on the H200 (max_memory_allocated): cnn 1,705, transformer 2,925, lora 2,225 MiB.
    measured = {row["variant"]: row for row in load_run(H200_DIR / "run-memory.json").rows}
    errors = {name: estimated_bytes(row["details"]["model"], cuda=True) / (row["value"] * 2**20) - 1
              for name, row in measured.items()}
    assert set(errors) == {"cnn", "transformer", "lora"} and all(abs(error) <= 0.15 for error in errors.values())
    assert errors["transformer"] == pytest.approx(0.105, abs=0.01)  # dropout masks at 4 B made it +16 %
