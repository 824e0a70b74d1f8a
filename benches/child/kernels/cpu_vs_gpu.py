"""The same training step on CPU and on the run's GPU, as a speed ratio ("the guide says 1/50; here it is N").

ResNet-18-like at 224 px on both sides: the GPU batch is sized from the device (so the GPU runs kernels, not
launch overhead), the CPU batch stays small; the ratio compares samples/s.
"""

from __future__ import annotations

import torch

from pth_top.benches.child.kernels._common import KernelContext, Skipped, Variant, is_cuda, row, timed
from pth_top.benches.child.kernels._models import step_size, training_step, workload

GUIDE_RATIO = 50
CPU_BASE_BATCH = 8


def run_gpu(ctx: KernelContext) -> str | None:
    """The run's first CUDA device (`--device cuda:1` means cuda:1), or None when the run has none."""
    return next((device for device in ctx.options.get("devices", []) if is_cuda(device)), None)


def variants(ctx: KernelContext) -> list[Variant]:
    gpu = run_gpu(ctx) if torch.cuda.is_available() else None

    def make(precision: str) -> Variant:
        def run() -> dict:
            if gpu is None:
                raise Skipped(f"no CUDA device in this run: the guide's 'CPU is 1/{GUIDE_RATIO} of a GPU' "
                              "cannot be checked here")
            gpu_size = step_size("cnn", gpu, ctx.scale)
            cpu_size = gpu_size.with_batch(max(2, int(round(CPU_BASE_BATCH * ctx.scale))))
            rates, telemetry = {}, None
            for device, size in (("cpu", cpu_size), (gpu, gpu_size)):
                torch.manual_seed(0)
                load = workload(size, device)
                measurement = timed(ctx, training_step(load, device, precision, size.batch), device=device)
                rates[device] = size.batch / measurement.median_s
                telemetry = measurement.extra.get("telemetry", telemetry)
            ratio = rates[gpu] / rates["cpu"]
            details = {"model": "cnn", "precision": precision, "cpu_batch": cpu_size.batch,
                       "gpu_batch": gpu_size.batch, "cpu_samples_per_s": rates["cpu"],
                       "gpu_samples_per_s": rates[gpu], "gpu_device": gpu,
                       "gpu_name": torch.cuda.get_device_name(gpu), "cpu_threads": torch.get_num_threads()}
            note = f"the guide says 1/{GUIDE_RATIO}; here it is 1/{ratio:.0f}"
            return row(variant=f"cnn {precision}", value=ratio, details=details, note=note,
                       size={"cpu": cpu_size.as_dict(), "gpu": gpu_size.as_dict()}, telemetry=telemetry)
        return Variant(f"cnn {precision}", run)

    if gpu is None:
        return [make("fp32")]
    return [make("fp32"), make("bf16")]
