"""A GPU's estimated share of this machine's measured bf16 matmul rate, from its tensor-pipe activity (GPM).

An estimate, said as one: the saved bench GEMM is taken to keep the tensor pipes busy all the time, so a
tensor-active share of the interval is about that share of the measured rate. Any tensor math counts (FP8, TF32
too), so it is not a FLOP count.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from pth_top.sensors.model import GpuSample
from pth_top.sensors.na import is_na

# The catalog rate key of the ceiling (tui/wizard/measured.py MATMUL_ROWS: the bf16 GEMM or MAMF rows).
MATMUL_RATE = "bf16_dense_tflops"


@dataclass(frozen=True, slots=True)
class MatmulCeiling:
    """The bf16 GEMM rate the last saved bench run measured, and the GPU model it measured."""

    tflops: float
    run: str
    # The model's device names, as benches.client.peaks.normalized_device_name writes them.
    device_names: frozenset[str]


def load_matmul_ceiling() -> MatmulCeiling | None:
    """The last saved run's bf16 matmul ceiling, or None; reads files and the catalog: call it off the UI loop."""
    from pth_top.benches.client.peaks import gpu_peak_table
    from pth_top.tui.wizard.measured import last_run_ceilings

    ceilings = last_run_ceilings()
    tflops = ceilings.tflops.get(MATMUL_RATE, 0.0) if ceilings else 0.0
    if ceilings is None or tflops <= 0:
        return None
    names = frozenset(name for name, peaks in gpu_peak_table().by_device_name.items()
                      if peaks.part_id == ceilings.part_id)
    return MatmulCeiling(tflops=tflops, run=ceilings.run, device_names=names)


def efficiency_text(gpu: GpuSample, ceiling: MatmulCeiling | None) -> Text:
    """The estimate's words where GPM reads tensor activity and the saved run measured this GPU model, else none."""
    if ceiling is None or gpu.gpm_supported is not True or is_na(gpu.tensor_active_ratio):
        return Text()
    # Loaded with the ceiling, on the worker that read it.
    from pth_top.benches.client.peaks import normalized_device_name

    if normalized_device_name(gpu.name) not in ceiling.device_names:
        return Text()
    share = min(1.0, max(0.0, gpu.tensor_active_ratio))
    # The share first: on a narrow terminal the detail's second line ends in the figures.
    return Text(f"  ~{100 * share:.0f}% of measured bf16 matmul, est. from tensor activity "
                f"(~{share * ceiling.tflops:.0f} of {ceiling.tflops:.0f} TFLOP/s)")
