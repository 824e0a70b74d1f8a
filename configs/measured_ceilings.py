"""The ceilings a saved bench run measured, as the wizard's speed reads them instead of the datasheet's."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class MeasuredCeilings:
    """What the last saved bench run measured on one GPU model, as plain numbers (0: not measured)."""

    part_id: str  # the catalog GPU the run's device name matched
    run: str  # the run, as the output names it (date and file)
    tflops: dict[str, float] = field(default_factory=dict)  # by catalog rate key, e.g. "bf16_dense_tflops"
    bandwidth_gb_per_s: float = 0.0
    busbw_gb_per_s: float = 0.0
    busbw_gpus: int = 0  # how many GPUs the all-reduce ran over
