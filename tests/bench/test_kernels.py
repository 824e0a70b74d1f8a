"""Every kernel at tiny sizes returns plausible values with metadata; one failure does not stop the suite."""

from __future__ import annotations

import math

from pth_top.benches.catalog import KERNELS, KernelSpec
from tests.bench.conftest import run_in_process


def results(events, kernel):
    return [event.fields for event in events if event.kind == "result" and event.get("kernel") == kernel]


def test_quick_kernels_return_plausible_values_and_metadata(run_kernels, tmp_path):
    code, events = run_kernels("gemm", "conv2d", "membw", "amp_step", "max_batch", "disk", "cpu_vs_gpu", "h2d")
    assert code == 0, [event.fields for event in events if event.kind == "error"]
    started = events[0]
    assert started.kind == "started"
    metadata = started.get("metadata")
    for field in ("torch_version", "cudnn_allow_tf32", "cuda_matmul_allow_tf32", "env", "torch_num_threads", "cpu"):
        assert field in metadata
    assert "NVIDIA_TF32_OVERRIDE" in metadata["env"] and "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE" in metadata["env"]
    assert metadata["cpu"]["physical_cores"] >= 1 and isinstance(metadata["cpu"]["isa_flags"], list)

    gemm = results(events, "gemm")
    assert {row["variant"] for row in gemm} >= {"fp32 1 thread", "bf16 1 thread"}
    for row in gemm:
        assert 1e-6 < row["value"] < 100, row  # TFLOP/s of a CPU
        assert row["unit"] == "TFLOP/s" and row["median_s"] > 0 and row["iqr_s"] >= 0
        assert len(row["details"]["shapes"]) == 3
        best = max(shape["tflops"] for shape in row["details"]["shapes"])
        assert math.isclose(row["value"], best)
        assert row["details"]["median_shape_tflops"] <= best
    for row in results(events, "conv2d"):
        assert 1e-6 < row["value"] < 100 and row["details"]["memory_format"] == "channels_last"
    membw = {row["variant"]: row for row in results(events, "membw")}
    assert set(membw) == {"copy", "triad"}
    for row in membw.values():
        assert 0.1 < row["value"] < 2000  # GB/s
        assert row["details"]["array_bytes"] >= 4 * row["details"]["last_level_cache_bytes"]
    amp = {row["variant"]: row for row in results(events, "amp_step")}
    assert amp["cnn fp32"]["value"] > 0 and amp["cnn bf16"]["details"]["speedup_vs_fp32"] > 0
    (max_batch,) = results(events, "max_batch")
    assert max_batch["value"] >= 1 and max_batch["details"]["per_batch"]
    assert max_batch["details"]["recommended_batch"] <= max_batch["value"]
    disk = {row["variant"]: row for row in results(events, "disk")}
    assert disk["sequential write"]["value"] > 0 and disk["sequential read"]["value"] > 0
    assert disk["sequential read"]["details"]["cache_bypass"] in ("O_DIRECT", "fadvise")
    assert not list(tmp_path.glob(".pth-top-bench-*"))
    (skip,) = results(events, "cpu_vs_gpu")
    assert skip["status"] == "skipped" and "1/50" in skip["note"]
    assert not results(events, "h2d")  # CUDA-only kernel: not planned on a CPU-only run
    assert events[-1].kind == "finished" and events[-1].get("ok") is True


def test_max_batch_on_cpu_is_bounded_by_the_memory_budget(tmp_path, torch):
    from pth_top.benches.child.kernels import max_batch

    tight = max_batch.search(_ctx(tmp_path), "fp32", limit=16, budget_bytes=4 * 2**20)
    roomy = max_batch.search(_ctx(tmp_path), "fp32", limit=16, budget_bytes=24 * 2**20)
    assert 1 <= tight["max_batch"] < roomy["max_batch"]
    assert any(rate is None for rate in tight["tried"].values())


def _ctx(tmp_path):
    from pth_top.benches.child.kernels._common import KernelContext

    return KernelContext(device="cpu", scale=0.01, time_cap_s=0.05, options={})


def test_an_oom_in_one_kernel_leaves_the_others_running(tmp_path, torch):
    oom = KernelSpec("fake_oom", "tests.bench.fake_kernels", "x", "none", ("cpu",), "raises OOM")
    good = next(spec for spec in KERNELS if spec.name == "disk")
    code, events = run_in_process([oom, good], tmp_path)
    assert code == 1
    errors = [event.fields for event in events if event.kind == "error"]
    assert len(errors) == 1
    assert errors[0]["error_type"] == "OutOfMemoryError" and errors[0]["variant"] == "oom"
    assert [row["variant"] for row in results(events, "fake_oom")] == ["after oom"]
    assert len(results(events, "disk")) == 2
    assert events[-1].kind == "finished" and events[-1].get("errors") == 1
