"""Every kernel at tiny sizes returns plausible values with metadata; one failure does not stop the suite."""

from __future__ import annotations

import math

import pytest

from pth_top.benches.catalog import KERNELS, KernelSpec
from tests.bench.conftest import run_in_process


@pytest.fixture
def fp32_precision_restored(torch):
    """Puts every backend's fp32_precision back after the test (and after monkeypatch's undo, so list it first):
    torch 2.9+ refuses to read the matmul precision once the legacy allow_tf32 flags and the new API were mixed."""
    backends = torch.backends
    holders = [backends, backends.cuda.matmul, backends.cudnn, backends.mkldnn]
    holders += [getattr(holder, part) for holder in (backends.cudnn, backends.mkldnn) for part in ("conv", "rnn")
                if hasattr(holder, part)] + ([backends.mkldnn.matmul] if hasattr(backends.mkldnn, "matmul") else [])
    saved = [(holder, holder.fp32_precision) for holder in holders if hasattr(holder, "fp32_precision")]
    yield
    for holder, value in saved:
        holder.fp32_precision = value


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


# Datasheet shapes: H100 SXM5 and H200 have 132 SMs (https://glennklockwood.com/garden/processors/h100; the H200
# is the same GPU with more HBM), 80 GB / 141 GB (NVIDIA H200 datasheet, nvidia.com/en-us/data-center/h200);
# RTX 4090: 16384 CUDA cores at 128 per SM = 128 SMs, 24 GB
# (https://www.thefpsreview.com/gpu-family/nvidia-geforce-rtx-4090-gpu-family-specifications).
def _devices():
    from pth_top.benches.child.kernels._sizing import DeviceSize

    return {"H100": DeviceSize("NVIDIA H100 80GB HBM3", 132, 80 * 10**9),
            "H200": DeviceSize("NVIDIA H200", 132, 141 * 10**9),
            "4090": DeviceSize("NVIDIA GeForce RTX 4090", 128, 24 * 10**9)}


H100_BF16_DENSE_TFLOPS = 989.4  # https://glennklockwood.com/garden/processors/h100 (BF16 matrix, dense)


def test_gpu_work_is_sized_from_the_device_so_a_call_runs_milliseconds_even_at_peak(torch):
    from pth_top.benches.child.kernels import conv2d
    from pth_top.benches.child.kernels._models import step_size

    devices = _devices()
    shapes = {name: conv2d.conv_shape("cuda:0", 1.0, device) for name, device in devices.items()}
    assert shapes["H100"] == shapes["H200"] == {"batch": 256, "channels": 256, "side": 56}
    assert shapes["4090"]["batch"] == 248  # 256 x 128 / 132 SMs, down to a multiple of 8
    assert conv2d.conv_shape("cpu", 1.0) == {"batch": 16, "channels": 128, "side": 28}  # CPU sizes unchanged
    conv_flops = 3 * 2 * 256 * 256 * 56 * 56 * 256 * 9
    assert conv_flops / (H100_BF16_DENSE_TFLOPS * 1e12) > 2e-3  # > 2 ms even at the datasheet peak

    transformer = step_size("transformer", "cuda:0", 1.0, devices["H100"])
    assert (transformer.width, transformer.seq_len, transformer.layers) == (4096, 2048, 4)
    assert step_size("transformer", "cuda:0", 1.0, devices["4090"]).width == 2048
    tokens = transformer.batch * transformer.seq_len
    transformer_flops = 6 * 12 * transformer.width**2 * transformer.layers * tokens  # 6 x weights x tokens
    assert transformer_flops / (H100_BF16_DENSE_TFLOPS * 1e12) > 2e-3
    cnn = {name: step_size("cnn", "cuda:0", 1.0, device) for name, device in devices.items()}
    assert cnn["H100"].image_side == 224 and cnn["H100"].batch == 256
    assert 8 <= cnn["4090"].batch <= cnn["H100"].batch and cnn["4090"].batch % 8 == 0
    assert step_size("cnn", "cpu", 1.0).as_dict() == {"model": "cnn", "batch": 32, "image_side": 32}


def test_gpu_batches_stay_within_half_the_device_memory():
    from pth_top.benches.child.kernels._sizing import DeviceSize, gpu_batch

    small = DeviceSize("8 GB card", 132, 8 * 10**9)
    assert gpu_batch(256, small, 1.0, bytes_per_sample=10**8) == 40  # 4 GB / 100 MB
    assert gpu_batch(256, small, 1.0, bytes_per_sample=10**8, fixed_bytes=3 * 10**9) == 8
    assert gpu_batch(2, small, 1.0, bytes_per_sample=10**10) == 1  # never zero


def test_max_batch_counts_cublas_and_cudnn_runtime_errors_as_oom_and_goes_on(torch, monkeypatch):
    from pth_top.benches.child.kernels import max_batch

    for message in ("CUDA out of memory. Tried to allocate 2.00 GiB",
                    "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"):
        assert max_batch.is_out_of_memory(RuntimeError(message))
    not_supported = RuntimeError("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
                                 "non-contiguous input.")
    assert max_batch.is_out_of_memory(not_supported, smaller_batch_fit=True)
    assert not max_batch.is_out_of_memory(not_supported), "at the first batch it is a config cuDNN cannot run"
    assert max_batch.is_out_of_memory(torch.OutOfMemoryError("x"))
    assert not max_batch.is_out_of_memory(RuntimeError("CUDA error: an illegal memory access was encountered"))

    def fake_step(load, device, precision, batch):
        def step() -> None:
            if batch > 4:
                raise RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
        return step

    monkeypatch.setattr(max_batch, "training_step", fake_step)
    result = max_batch.search(_ctx(None), "fp32", limit=64, budget_bytes=None)
    assert result["max_batch"] == 4 and result["tried"][8] is None and not result["limit_reached"]

    def broken_step(load, device, precision, batch):
        def step() -> None:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return step

    monkeypatch.setattr(max_batch, "training_step", broken_step)
    with pytest.raises(RuntimeError, match="illegal memory access"):
        max_batch.search(_ctx(None), "fp32", limit=64, budget_bytes=None)


def test_max_batch_cap_follows_memory_and_the_row_says_when_it_was_reached(torch, monkeypatch):
    from pth_top.benches.child.kernels import max_batch
    from pth_top.benches.child.kernels._models import CPU_SIZES, saved_bytes_per_sample

    devices = _devices()
    small_cnn_sample_bytes = saved_bytes_per_sample(CPU_SIZES["cnn"])  # the 32 px CNN that hit 16384 on an H200
    assert max_batch.search_limit(devices["H200"], small_cnn_sample_bytes, 1.0) > 16384
    assert max_batch.search_limit(devices["4090"], small_cnn_sample_bytes, 1.0) < max_batch.search_limit(
        devices["H200"], small_cnn_sample_bytes, 1.0)
    monkeypatch.setattr(max_batch, "training_step", lambda load, device, precision, batch: lambda: None)
    ctx = _ctx(None)  # every batch fits: the scaled cap (1024 x 0.01 = 10) binds
    (variant,) = max_batch.variants(ctx)
    fields = variant.run()
    assert fields["value"] == 10 and fields["details"]["limit_reached"]
    assert "cap 10" in fields["note"] and fields["size"]["batch"] == 10


def test_membw_times_the_copy_without_an_l2_flush(torch, monkeypatch):
    from pth_top.benches.child.kernels import membw

    calls = []

    def recording_timed(ctx, fn, **options):
        calls.append(options)
        fn()
        from pth_top.benches.child.harness import Measurement

        return Measurement(1e-3, 0.0, (1e-3,), 1, 1, False, 0.05)

    monkeypatch.setattr(membw, "timed", recording_timed)
    rows = [variant.run() for variant in membw.variants(_ctx(None))]
    assert calls == [{}, {}]
    assert all(row["details"]["write_allocate_counted"] is False for row in rows)
    assert "write-allocate" in membw.__doc__


def test_conv2d_fp32_runs_with_tf32_off_and_gradients_do_not_accumulate(fp32_precision_restored, torch, monkeypatch):
    from pth_top.benches.child.kernels import conv2d

    seen = []

    def recording_timed(ctx, fn, **options):
        seen.append(torch.backends.cudnn.allow_tf32)
        from pth_top.benches.child.harness import Measurement

        return Measurement(1e-3, 0.0, (1e-3,), 1, 1, False, 0.05)

    monkeypatch.setattr(conv2d, "timed", recording_timed)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)  # torch's default
    fp32 = conv2d.variants(_ctx(None))[0]
    assert fp32.name == "fp32" and fp32.run()["details"]["dtype"] == "float32"
    assert seen == [False] and torch.backends.cudnn.allow_tf32 is True  # off for the row, restored after

    conv = torch.nn.Conv2d(4, 4, 3, padding=1, bias=False)
    x = torch.randn(2, 4, 8, 8, requires_grad=True)
    step = conv2d.conv_step(conv, x, torch.randn(2, 4, 8, 8))
    step()
    first_input_grad, first_weight_grad = x.grad.clone(), conv.weight.grad.clone()
    step()
    assert torch.equal(x.grad, first_input_grad) and torch.equal(conv.weight.grad, first_weight_grad)


def test_cpu_vs_gpu_uses_the_runs_gpu_and_skips_a_run_without_one(torch):
    from pth_top.benches.child.kernels import cpu_vs_gpu
    from pth_top.benches.child.kernels._common import KernelContext, Skipped

    def ctx(devices):
        return KernelContext(device="host", scale=0.01, time_cap_s=0.05, options={"devices": devices})

    assert cpu_vs_gpu.run_gpu(ctx(["cpu", "cuda:1"])) == "cuda:1"
    assert cpu_vs_gpu.run_gpu(ctx(["cpu"])) is None
    (only,) = cpu_vs_gpu.variants(ctx(["cpu"]))
    with pytest.raises(Skipped, match="no CUDA device in this run"):
        only.run()


def test_torch_floor_is_2_4_and_unparsable_versions_pass():
    from pth_top.benches.child.probe import torch_floor_problem

    assert "needs torch >= 2.4" in torch_floor_problem("2.3.1+cu121")
    assert torch_floor_problem("2.1.0") and torch_floor_problem("1.13.1")
    for version in ("2.4.0", "2.4.1+cpu", "2.13.0+cpu", "2.10.0.dev20260101", "10.0", "unknown"):
        assert torch_floor_problem(version) is None


def test_the_child_refuses_an_older_torch_with_one_clear_line(tmp_path):
    """torch 2.4 itself cannot be installed here (no index); a fake torch module stands in for an old one."""
    import os
    import subprocess
    import sys

    from pth_top.benches.protocol import decode_line

    fake = tmp_path / "old_torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "2.3.1+cu121"\n')
    env = {**os.environ, "PYTHONPATH": str(fake.parent)}
    completed = subprocess.run([sys.executable, "-m", "pth_top.benches", "run", "--kernel", "gemm"],
                               capture_output=True, text=True, env=env, timeout=120)
    assert completed.returncode == 3, completed.stderr
    events = [decode_line(line) for line in completed.stdout.splitlines()]
    (error,) = [event for event in events if event.kind == "error"]
    assert error.get("error_type") == "TorchTooOld"
    assert error.get("message") == ("torch 2.3.1+cu121 is too old for pth-top bench: it needs torch >= 2.4 "
                                    "(torch.amp.GradScaler, torch.OutOfMemoryError); upgrade torch in this environment")
    assert events[-1].kind == "finished" and "Traceback" not in completed.stderr


def test_amp_step_fp32_baseline_runs_without_tf32_and_fp16_rows_name_the_grad_scaler_sync(fp32_precision_restored,
                                                                                        torch, monkeypatch):
    from pth_top.benches.child.harness import Measurement
    from pth_top.benches.child.kernels import amp_step

    seen: list[tuple] = []

    def recording_timed(ctx, fn, **options):
        seen.append((torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                     torch.get_float32_matmul_precision()))
        return Measurement(1e-3, 0.0, (1e-3,) * 5, 1, 1, False, 0.05)

    monkeypatch.setattr(amp_step, "timed", recording_timed)
    monkeypatch.setattr(amp_step, "is_cuda", lambda device: True)  # the GPU's precisions, built on CPU tensors
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", True)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)  # torch's default for cuDNN
    previous_precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        cnn = [variant for variant in amp_step.variants(_ctx(None)) if variant.name.startswith("cnn")]
        rows = {variant.name: variant.run() for variant in cnn}
        assert seen == [(False, False, "highest"), (True, True, "high"), (True, True, "high")]
        assert torch.get_float32_matmul_precision() == "high" and torch.backends.cudnn.allow_tf32 is True
    finally:
        torch.set_float32_matmul_precision(previous_precision)
    assert rows["cnn fp32"]["details"]["cudnn_allow_tf32"] is False
    assert rows["cnn fp16"]["note"] == "1.00x vs fp32 (TF32 off); GradScaler: 1 host sync/step"
    assert rows["cnn fp16"]["details"]["host_syncs_per_step"] == 1
    assert rows["cnn bf16"]["note"] == "1.00x vs fp32 (TF32 off)"


@pytest.mark.parametrize(("fp32_samples", "noisy"), [((1e-3,) * 5, False), ((1e-3, 1e-3), True)])
def test_amp_steps_speedup_is_noisy_when_its_fp32_baseline_is(torch, monkeypatch, fp32_samples, noisy):
    from pth_top.benches.child.harness import Measurement
    from pth_top.benches.child.kernels import amp_step

    calls = []

    def fake_timed(ctx, fn, **options):  # the fp32 row is timed first: from 2 samples in the noisy case
        calls.append(fn)
        return Measurement(1e-3, 0.0, fp32_samples if len(calls) == 1 else (1e-3,) * 5, 1, 1, False, 0.05)

    monkeypatch.setattr(amp_step, "timed", fake_timed)
    cnn = [variant for variant in amp_step.variants(_ctx(None)) if variant.name.startswith("cnn")]
    rows = {variant.name: variant.run() for variant in cnn}
    note = rows["cnn bf16"]["note"]
    assert note == "1.00x vs fp32" + (" (noisy)" if noisy else ""), note  # on CPU: no TF32 to speak of


@pytest.mark.parametrize(("gain", "spread", "noted"), [(0.03, 0.05, False), (0.5, 0.02, True)])
def test_max_batch_names_a_fastest_batch_only_when_it_beats_the_step_noise(torch, monkeypatch, gain, spread, noted):
    from pth_top.benches.child.kernels import max_batch

    def fake_try_batch(ctx, precision, batch, budget_bytes, size=None, smaller_batch_fit=False):
        if batch > 8:
            return None
        return max_batch.BatchTiming(100.0 * (1 + gain if batch == 4 else 1), spread)

    monkeypatch.setattr(max_batch, "try_batch", fake_try_batch)
    (variant,) = max_batch.variants(_ctx(None))
    fields = variant.run()
    assert fields["value"] == 8 and fields["details"]["fastest_batch"] == 4
    assert ("fastest at batch 4" in fields["note"]) is noted
    assert max_batch.TIMED_STEPS >= 5


def test_max_batch_times_each_step_and_a_not_supported_first_batch_is_an_error(torch, monkeypatch):
    from pth_top.benches.child.kernels import max_batch

    steps: list[int] = []
    monkeypatch.setattr(max_batch, "training_step", lambda load, device, precision, batch: lambda: steps.append(batch))
    timing = max_batch.try_batch(_ctx(None), "fp32", 2, budget_bytes=None)
    assert timing is not None and len(steps) == 1 + max_batch.TIMED_STEPS and timing.rel_spread >= 0

    def unsupported(load, device, precision, batch):
        def step() -> None:
            raise RuntimeError("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED")
        return step

    monkeypatch.setattr(max_batch, "training_step", unsupported)
    with pytest.raises(RuntimeError, match="NOT_SUPPORTED"):
        max_batch.search(_ctx(None), "fp32", limit=64, budget_bytes=None)
