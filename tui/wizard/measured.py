"""The last saved bench run's ceilings as plain numbers for the wizard's speed prediction (configs reads no
benches: the caller passes them in)."""

from __future__ import annotations

from pth_top.configs.measured_ceilings import MeasuredCeilings

# Bench rows whose value is a ceiling: (kernel, variant) -> the catalog rate key it measures.
MATMUL_ROWS = {
    ("gemm", "fp32 (tf32 off)"): "fp32_tflops", ("gemm", "tf32"): "tf32_dense_tflops",
    ("gemm", "fp16"): "fp16_dense_tflops", ("gemm", "bf16"): "bf16_dense_tflops",
    ("mamf", "bf16 best shape"): "bf16_dense_tflops",
}
BANDWIDTH_ROW = ("membw", "copy")  # STREAM copy, read and write counted
BUSBW_PREFIX = "best busbw x"


def last_run_ceilings() -> MeasuredCeilings | None:
    """The newest saved run's GPU ceilings, or None (no run, unreadable, or no GPU the catalog knows)."""
    from pth_top.benches.client.runs import RunFileError, list_runs, load_run

    paths = list_runs()
    if not paths:
        return None
    try:
        run = load_run(paths[0])
    except RunFileError:
        return None
    return ceilings_of(run.metadata, run.rows, f"{run.created_at[:10]} ({paths[0].name})")


def ceilings_of(metadata: dict, rows: list[dict], label: str) -> MeasuredCeilings | None:
    """The first GPU's measured matmul rates and memory bandwidth, and the all-reduce bus bandwidth."""
    from pth_top.benches.client.peaks import gpu_peaks

    devices = {name: info for name, info in (metadata.get("cuda_devices") or {}).items() if isinstance(info, dict)}
    if not devices:
        return None
    first = sorted(devices)[0]
    peaks = gpu_peaks(str(devices[first].get("name", "")))
    if peaks is None:
        return None
    tflops: dict[str, float] = {}
    bandwidth = busbw = 0.0
    gpus = 0
    for row in rows:
        value, kernel, variant = row.get("value"), row.get("kernel"), str(row.get("variant"))
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < 1e9:
            continue
        if kernel == "allreduce" and variant.startswith(BUSBW_PREFIX) and "nccl" in variant:
            count = variant.removeprefix(BUSBW_PREFIX).split()[0]
            busbw, gpus = float(value), int(count) if count.isdigit() else 0
        if row.get("device") != first:
            continue
        rate = MATMUL_ROWS.get((str(kernel), variant))
        if rate:
            tflops[rate] = max(tflops.get(rate, 0.0), float(value))
        elif (kernel, variant) == BANDWIDTH_ROW:
            bandwidth = float(value)
    if not tflops and not bandwidth and not busbw:
        return None
    return MeasuredCeilings(part_id=peaks.part_id, run=label, tflops=tflops, bandwidth_gb_per_s=bandwidth,
                            busbw_gb_per_s=busbw, busbw_gpus=gpus)
