"""MAMF sweep, SDPA attention, end-to-end step (eager vs compiled), FP8 matmul: CPU paths, skip rows, FLOP math."""

from __future__ import annotations

import math

import pytest

from pth_top.benches.catalog import KERNELS_BY_NAME, PEAK_FP8, SUITES
from pth_top.benches.child.runner import plan, run_suite
from pth_top.benches.protocol import decode_line, encode_event
from tests.bench.conftest import TINY_SCALE, TINY_TIME_CAP_S

pytestmark = pytest.mark.usefixtures("torch")
NEW_KERNELS = ("attention", "fp8", "mamf", "e2e_step")


def run(names, tmp_path, *, devices=("cpu",), scale=TINY_SCALE, **options):
    events = []

    def emit(kind: str, **fields) -> None:
        events.append(decode_line(encode_event(kind, **fields)))  # through the wire format

    options = {"disk_dir": str(tmp_path), "disk_size_mib": 8, "cpu_memory_budget_mib": 16, **options}
    code = run_suite(plan([KERNELS_BY_NAME[name] for name in names], list(devices)), emit, scale=scale,
                     time_cap_s=TINY_TIME_CAP_S, options=options, devices=list(devices))
    rows = {(event.get("kernel"), event.get("variant")): event.fields for event in events if event.kind == "result"}
    errors = [event.fields for event in events if event.kind == "error"]
    return code, rows, errors


def ctx(device="cpu", scale=TINY_SCALE, **options):
    from pth_top.benches.child.kernels._common import KernelContext

    return KernelContext(device=device, scale=scale, time_cap_s=TINY_TIME_CAP_S, options=options)


def test_mamf_and_e2e_are_opt_in_and_attention_and_fp8_run_in_the_standard_suite_only():
    assert KERNELS_BY_NAME["mamf"].opt_in and KERNELS_BY_NAME["e2e_step"].opt_in
    for name in ("mamf", "e2e_step"):
        assert all(name not in members for members in SUITES.values())
    for name in ("attention", "fp8"):
        assert name in SUITES["standard"] and name not in SUITES["quick"]
    assert KERNELS_BY_NAME["fp8"].peak_kind == PEAK_FP8


def test_attention_flops_follow_flashattention2_counting():
    from pth_top.benches.child.kernels.attention import attention_flops

    # 4 * b*h*s^2*d for 4x32x4096x128: 4 * 4 * 32 * 4096**2 * 128 = 1.0995e12 FLOPs forward.
    forward = attention_flops(4, 32, 4096, 128, causal=False, backward=False)
    assert forward == 4 * 4 * 32 * 4096**2 * 128 == 1_099_511_627_776
    assert attention_flops(4, 32, 4096, 128, causal=True, backward=False) == forward / 2
    assert attention_flops(4, 32, 4096, 128, causal=False, backward=True) == 3.5 * forward
    assert attention_flops(4, 32, 4096, 128, causal=True, backward=True) == 1.75 * forward


def test_matmul_and_model_flop_counts():
    from pth_top.benches.child.kernels.e2e_step import StackSize, model_flops_per_token
    from pth_top.benches.child.kernels.mamf import matmul_tflops

    assert matmul_tflops(8192, 8192, 8192, 1.0) == pytest.approx(2 * 8192**3 / 1e12)
    assert matmul_tflops(1024, 2048, 4096, 0.5) == pytest.approx(2 * 1024 * 2048 * 4096 * 2 / 1e12)
    size = StackSize(d_model=1024, heads=8, layers=2, seq_len=512, batch=3)
    assert size.parameters == 2 * 12 * 1024**2 and size.tokens == 1536
    assert model_flops_per_token(size) == 6 * 2 * 12 * 1024**2 + 12 * 2 * 1024 * 512


def test_mamf_shape_plan_tries_squares_first_then_every_other_shape_once():
    from pth_top.benches.child.kernels.mamf import sweep_dims, sweep_shapes

    dims = sweep_dims(4096, 1024)
    assert dims == [1024, 2048, 3072, 4096]
    shapes = sweep_shapes(dims)
    assert shapes[:4] == [(4096,) * 3, (3072,) * 3, (2048,) * 3, (1024,) * 3]
    assert len(shapes) == len(set(shapes)) == 4**3
    assert shapes == sweep_shapes(dims)  # a fixed order: two runs try the same shapes


def test_mamf_warms_a_gpu_up_for_mamf_finders_30_s_at_any_scale_and_a_cpu_not_at_all():
    from pth_top.benches.child.kernels import mamf

    # mamf-finder.py (stas00/ml-engineering compute/accelerator/benchmarks): 30 s warm-up before the sweep.
    assert mamf.sweep_warmup_s("cuda:0") == mamf.CUDA_WARMUP_S == 30.0
    assert mamf.sweep_warmup_s("cpu") == 0.0
    assert mamf.sweep(ctx(scale=0.25), budget_s=1e-9)["details"]["warmup_s"] == 0.0


def test_mamf_stops_at_its_time_budget_after_one_shape_and_reports_best_and_median():
    from pth_top.benches.child.kernels import mamf

    cut = mamf.sweep(ctx(), budget_s=1e-9)
    assert cut["details"]["shapes_measured"] == 1 < cut["details"]["shapes_planned"]
    full = mamf.sweep(ctx(), budget_s=600)
    details = full["details"]
    assert details["shapes_measured"] == details["shapes_planned"] == 27  # 64, 128, 192 cubed at this scale
    kept = details["shapes"]  # the fastest 20, best first
    assert len(kept) == 20 and [shape["tflops"] for shape in kept] == sorted((s["tflops"] for s in kept), reverse=True)
    assert full["tflops"] == kept[0]["tflops"] >= details["median_shape_tflops"] > 0
    assert details["best_shape"] == [kept[0]["m"], kept[0]["n"], kept[0]["k"]]
    assert details["best_shape_fastest_rep_tflops"] >= full["tflops"]


def test_new_kernels_on_cpu_give_rows_with_their_shapes_and_clear_skips(tmp_path):
    code, rows, errors = run(("attention", "fp8", "mamf"), tmp_path)
    assert code == 0 and not errors, errors

    default = rows[("attention", "default fwd+bwd")]
    assert default["status"] == "ok" and default["note"] == f"PyTorch chose {default['details']['backend_ran']}"
    flash, math_row = rows[("attention", "flash fwd+bwd")], rows[("attention", "math fwd+bwd")]
    assert flash["details"]["backend_ran"] == "flash" and math_row["details"]["backend_ran"] == "math"
    for row in (default, flash, math_row):
        details = row["details"]
        assert 0 < row["value"] < 100 and row["unit"] == "TFLOP/s"
        assert (details["batch"], details["heads"], details["head_dim"]) == (1, 4, 64) and details["causal"]
        assert details["seq_len"] % 64 == 0 and row["size"] == {key: details[key] for key in row["size"]}
        assert set(row["size"]) == {"batch", "heads", "seq_len", "head_dim", "causal", "dtype"}
    efficient = rows[("attention", "efficient fwd+bwd")]
    assert efficient["status"] == "skipped"
    assert efficient["note"].startswith("efficient back end unavailable on the CPU: torch ")
    assert efficient["note"].endswith(" has no CPU kernel for it")

    (fp8,) = [row for (kernel, _), row in rows.items() if kernel == "fp8"]
    assert fp8["status"] == "skipped" and "compute capability >= 8.9" in fp8["note"] and "CPU" in fp8["note"]

    from pth_top.benches.child.kernels.gemm import cpu_has_native_bf16

    label, dtype = ("bf16", "bfloat16") if cpu_has_native_bf16() else ("fp32", "float32")  # as mamf picks
    best, median = rows[("mamf", f"{label} best shape")], rows[("mamf", f"{label} median shape")]
    assert best["value"] >= median["value"] > 0
    m, n, k = best["details"]["best_shape"]
    assert best["note"].endswith(f" shapes, at {m}x{n}x{k}") and best["note"].startswith("best of ")
    assert median["value"] == best["details"]["median_shape_tflops"]
    assert best["size"] == {"m": m, "n": n, "k": k, "dtype": dtype}
    assert median["size"]["shapes_measured"] == best["details"]["shapes_measured"]


def test_the_backend_that_ran_is_read_from_the_autograd_nodes_even_under_a_view(torch):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from pth_top.benches.child.kernels.attention import backend_that_ran

    q, k, v = (torch.randn(1, 2, 64, 32, requires_grad=True) for _ in range(3))
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        flash = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    with sdpa_kernel([SDPBackend.MATH]):
        plain = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert backend_that_ran(flash) == backend_that_ran(flash.transpose(1, 2)[:, :, :1]) == "flash"
    assert backend_that_ran(plain) == "math"


def test_an_unavailable_gpu_back_end_is_explained_by_the_checks_sdpa_warned_about():
    import warnings

    from pth_top.benches.child.kernels.attention import _unavailable_reason

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # What torch warns when flash is forced on a Turing card (aten/.../transformers/cuda/sdp_utils.cpp).
        warnings.warn("Flash attention kernel not used because: (Triggered internally at sdp_utils.cpp:1)",
                      stacklevel=1)
        warnings.warn("Flash attention only supports gpu architectures in the range [sm80, sm121]. Attempting to "
                      "run on a sm 7.5 gpu. (Triggered internally at sdp_utils.cpp:2)", stacklevel=1)
    reason = _unavailable_reason("flash", "cuda:0", caught, RuntimeError("No available kernel. Aborting execution."))
    assert reason == ("flash back end unavailable on this GPU, dtype and shape: Flash attention only supports gpu "
                      "architectures in the range [sm80, sm121]. Attempting to run on a sm 7.5 gpu.")
    bare = _unavailable_reason("cudnn", "cuda:0", [], RuntimeError("No available kernel. Aborting execution."))
    assert bare == "cudnn back end unavailable on this GPU, dtype and shape: No available kernel. Aborting execution."


def test_attention_out_of_memory_is_a_skipped_row_naming_the_shape(monkeypatch, torch):
    from pth_top.benches.child.kernels import attention
    from pth_top.benches.child.kernels._common import Skipped

    def out_of_memory(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")

    monkeypatch.setattr(attention.F, "scaled_dot_product_attention", out_of_memory)
    math_variant = next(variant for variant in attention.variants(ctx()) if variant.name == "math fwd+bwd")
    with pytest.raises(Skipped, match=r"^math: out of memory at 1x4x64x64$"):
        math_variant.run()


def test_fp8_operands_are_scaled_e4m3_with_a_column_major_b_and_multiply_correctly(torch):
    from pth_top.benches.child.kernels.fp8 import fp8_operands, quantize_e4m3, scaled_matmul

    values = torch.tensor([[-3.0, 0.5], [1.5, 2.0]])
    quantized, scale = quantize_e4m3(values)
    assert quantized.dtype == torch.float8_e4m3fn and scale.dtype == torch.float32
    assert quantized.float().abs().max() == 448  # e4m3's largest finite value takes the amax
    assert torch.allclose(quantized.float() * scale, values, rtol=0.07)  # 3 mantissa bits: <= 1/16 error

    torch.manual_seed(0)
    operands = fp8_operands(64, 48, 32, "cpu")
    assert operands["b"].shape == (32, 48) and operands["b"].stride() == (1, 32)
    exact = (operands["a"].float() * operands["scale_a"]) @ (operands["b"].float() * operands["scale_b"])
    result = scaled_matmul(operands, fast_accum=False)  # CPU torch has _scaled_mm: the call checks out here
    assert result.dtype == torch.bfloat16 and result.shape == (64, 48)
    assert torch.allclose(result.float(), exact, rtol=0.02, atol=0.05 * exact.abs().max().item())


def test_fp8_sweep_reports_its_best_shape_against_bf16_at_that_shape(monkeypatch):
    from pth_top.benches.child.kernels import fp8

    assert fp8.sweep_sizes(TINY_SCALE) == [256, 768, 1536]
    # CPU torch 2.13's _scaled_mm runs ~50 MFLOP/s (5.5 s at 512^3): the GPU shapes' floor (256-1536) took 17 min.
    monkeypatch.setattr(fp8, "sweep_sizes", lambda scale: [32, 64, 96])
    result = fp8.sweep(ctx(), fast_accum=False)  # the CUDA path's code; CPU torch runs _scaled_mm too
    details = result["details"]
    assert [shape["m"] for shape in details["shapes"]] == [32, 64, 96]
    assert result["tflops"] == max(shape["tflops"] for shape in details["shapes"]) > 0
    assert details["speedup_vs_bf16"] == pytest.approx(result["tflops"] / details["bf16_tflops_at_best_shape"])
    assert isinstance(details["speedup_noisy"], bool)


def test_fp8_says_why_an_older_gpu_is_skipped(monkeypatch, torch):
    from pth_top.benches.child.kernels import fp8

    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 6))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA GeForce RTX 3090")
    assert fp8.unsupported_reason("cuda:0") == (
        "NVIDIA GeForce RTX 3090 is compute capability 8.6; FP8 tensor cores need >= 8.9")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    assert fp8.unsupported_reason("cuda:0") == ""


@pytest.mark.parametrize(("total_gib", "d_model"), [(141, 4096), (80, 4096), (24, 2048), (12, 1024)])
def test_gpu_stack_fills_its_memory_shares_without_exceeding_them(total_gib, d_model):
    from pth_top.benches.child.kernels import e2e_step

    total = total_gib * 2**30
    size = e2e_step.gpu_stack_size(total, 1.0)
    assert size.d_model == d_model and size.heads * e2e_step.HEAD_DIM == d_model and size.seq_len == 2048
    state_bytes = e2e_step.TRAINING_STATE_BYTES_PER_PARAMETER * size.parameters
    activation_bytes = e2e_step.ACTIVATION_BYTES_PER_TOKEN_PER_WIDTH * d_model * size.layers * size.tokens
    assert state_bytes <= e2e_step.STATE_MEMORY_SHARE * total or size.layers == 1
    assert activation_bytes <= e2e_step.ACTIVATION_MEMORY_SHARE * total or size.batch == 1
    assert size.layers == e2e_step.MAX_LAYERS or state_bytes + 12 * d_model**2 * 16 > 0.3 * total
    assert e2e_step.gpu_stack_size(total, 0.25).batch <= size.batch


def test_e2e_step_compares_eager_and_compiled_and_reports_compile_time_apart(tmp_path):
    code, rows, errors = run(("e2e_step",), tmp_path, compile_backend="aot_eager")
    assert code == 0 and not errors, errors
    eager, compiled = rows[("e2e_step", "eager")], rows[("e2e_step", "torch.compile")]
    for row in (eager, compiled):
        assert row["status"] == "ok" and row["value"] > 0 and row["unit"] == "tokens/s"
        details = row["details"]
        assert {"d_model", "heads", "layers", "seq_len", "batch", "parameters"} <= set(details)
        assert math.isclose(row["value"] * row["median_s"], details["batch"] * details["seq_len"])
        assert row["size"] == {key: details[key] for key in ("d_model", "heads", "layers", "seq_len", "batch",
                                                              "parameters")}
    assert compiled["details"]["compile_backend"] == "aot_eager" and compiled["details"]["compile_s"] >= 0
    speedup = compiled["value"] / eager["value"]
    assert compiled["details"]["speedup_vs_eager"] == pytest.approx(speedup)
    noisy = " (noisy)" if compiled["details"]["speedup_noisy"] else ""
    assert compiled["note"].startswith(f"{speedup:.2f}x vs eager{noisy}; compile ")


def test_regional_compilation_makes_one_graph_for_every_block(torch):
    import torch._dynamo
    from torch._dynamo.utils import counters

    from pth_top.benches.child.kernels import e2e_step

    torch._dynamo.reset()
    counters.clear()
    size = e2e_step.StackSize(d_model=64, heads=2, layers=3, seq_len=32, batch=2)
    result = e2e_step.measure_step(ctx(compile_backend="aot_eager"), size, compiled=True)
    assert result["tokens_per_s"] > 0
    assert counters["stats"]["unique_graphs"] == 1  # compile time does not grow with depth


def test_e2e_step_with_inductor_on_this_cpu(tmp_path):
    code, rows, errors = run(("e2e_step",), tmp_path)  # the default back end: compiles C++ here
    assert code == 0 and not errors, errors
    compiled = rows[("e2e_step", "torch.compile")]
    assert compiled["status"] == "ok" and compiled["details"]["compile_backend"] == "inductor", compiled["note"]


def test_e2e_step_says_why_when_torch_compile_is_unusable(tmp_path):
    code, rows, errors = run(("e2e_step",), tmp_path, compile_backend="no_such_backend")
    assert code == 0 and not errors, errors
    assert rows[("e2e_step", "eager")]["status"] == "ok"
    skipped = rows[("e2e_step", "torch.compile")]
    assert skipped["status"] == "skipped" and skipped["value"] is None
    assert skipped["note"].startswith("torch.compile unusable here (no_such_backend): InvalidBackend")


@pytest.mark.gpu
def test_new_kernels_on_a_gpu(tmp_path, torch):
    """Kept to ~30 s for gpu_check.sh's pytest step; that script also runs each kernel at standard scale."""
    from pth_top.benches.child.kernels import e2e_step, mamf
    from pth_top.benches.client.peaks import gpu_peak

    # Quarter scale (the quick suite's) for attention, compared with the peak: 4x32x2048x128.
    code, rows, errors = run(("attention", "fp8"), tmp_path, devices=("cuda:0",), scale=0.25)
    assert not errors, errors
    bf16_peak = gpu_peak(torch.cuda.get_device_name(0), "bf16_tensor")
    flash = rows[("attention", "flash fwd+bwd")]
    if torch.cuda.get_device_capability(0) >= (8, 0):  # flash needs sm80+ (sdp_utils.cpp)
        assert flash["details"]["backend_ran"] == "flash" and "telemetry" in flash
        if bf16_peak is not None:
            # FlashAttention-2 reaches 50-73 % of A100 peak (arXiv 2307.08691), ~35 % of H100's (arXiv 2407.08608).
            assert flash["value"] > 0.2 * bf16_peak.value, flash
    assert rows[("attention", "default fwd+bwd")]["status"] == "ok"

    sweep = mamf.sweep(ctx("cuda:0", scale=0.25), budget_s=8.0, warmup_s=2.0)  # squares from 8192 down first
    assert sweep["details"]["shapes_measured"] >= 2 and sweep["details"]["warmup_s"] >= 1.5
    if bf16_peak is not None:  # mamf-finder's best shapes: 75-87 % of dense peak on data-center parts
        assert sweep["tflops"] > 0.5 * bf16_peak.value, sweep["details"]

    fp8 = rows[("fp8", "e4m3 -> bf16")]
    if torch.cuda.get_device_capability(0) >= (8, 9):
        assert fp8["status"] == "ok" and fp8["details"]["speedup_vs_bf16"] > 1, fp8
    else:
        assert fp8["status"] == "skipped" and "compute capability" in fp8["note"]

    size = e2e_step.StackSize(d_model=1024, heads=8, layers=2, seq_len=1024, batch=2)
    gpu_ctx = ctx("cuda:0", scale=0.25, compile_backend="aot_eager")  # inductor: gpu_check's e2e_step run
    eager = e2e_step.measure_step(gpu_ctx, size, compiled=False)
    compiled = e2e_step.measure_step(gpu_ctx, size, compiled=True)
    assert eager["tokens_per_s"] > 0 and compiled["tokens_per_s"] > 0 and compiled["details"]["compile_s"] >= 0


def _user_catalog(text: str) -> None:
    import os
    from pathlib import Path

    directory = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / "catalog"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "mine.toml").write_text(text, encoding="utf-8")


def test_fp8_rows_compare_to_the_catalog_fp8_peak_or_say_there_is_none():
    from pth_top.benches.client.peaks import gpu_peak, percent_of_peak

    fp8_row = {"device": "cuda:0", "peak_kind": PEAK_FP8, "value": 1484.25}
    on_h100 = {"cuda_devices": {"cuda:0": {"name": "NVIDIA H100 80GB HBM3"}}}
    # H100 SXM datasheet: FP8 tensor 3,958 TFLOPS with sparsity, 1,979 dense (nvidia.com/en-us/data-center/h100/).
    percent, note = percent_of_peak(fp8_row, on_h100)
    assert percent == pytest.approx(75.0) and "peak 1979" in note and "catalog id h100-80gb-sxm" in note
    assert gpu_peak("NVIDIA H200", PEAK_FP8).value == 1979
    assert gpu_peak("NVIDIA A100-SXM4-80GB", PEAK_FP8) is None  # Ampere has no FP8 unit
    _user_catalog('[[gpu]]\nid = "h100-80gb-sxm"\nfp8_dense_tflops = 1484.25\n')
    percent, note = percent_of_peak(fp8_row, on_h100)
    assert percent == pytest.approx(100.0) and "your catalog id h100-80gb-sxm" in note
    _user_catalog('[[gpu]]\nid = "h100-80gb-sxm"\nfp8_dense_tflops = 0\n')
    percent, note = percent_of_peak(fp8_row, on_h100)
    assert percent is None and note == "no fp8_tensor peak in the catalog entry for 'NVIDIA H100 80GB HBM3'"


@pytest.mark.parametrize(("eager_samples", "compiled_noisy", "noisy_note"), [
    ((1e-3,) * 5, False, False),
    ((1e-3, 2e-3), False, True),  # eager from 2 samples
    ((1e-3,) * 5, True, True),  # compiled's spread over target
])
def test_the_compile_speedup_note_is_noisy_when_either_side_is(monkeypatch, eager_samples, compiled_noisy,
                                                               noisy_note):
    from pth_top.benches.child.harness import Measurement
    from pth_top.benches.child.kernels import e2e_step

    def measured(samples, noisy):
        return Measurement(median_s=samples[0], iqr_s=0.0, samples_s=samples, calls_per_sample=1, warmup_samples=1,
                           noisy=noisy, target_rel_iqr=0.05)

    def fake_step(ctx, size, *, compiled):
        measurement = measured((5e-4,) * 5, compiled_noisy) if compiled else measured(eager_samples, False)
        details = {"compile_s": 1.0} if compiled else {}
        return {"tokens_per_s": 1.0 / measurement.median_s, "measurement": measurement, "details": details,
                "size": {}}

    monkeypatch.setattr(e2e_step, "measure_step", fake_step)
    eager, compiled = e2e_step.variants(ctx())
    eager.run()
    note = compiled.run()["note"]
    assert note.startswith("2.00x vs eager") and ("(noisy)" in note) == noisy_note, note
