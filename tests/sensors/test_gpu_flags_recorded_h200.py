"""The hang signature (sensors/gpu_flags.py) on GPUs reading exactly as a real H200 read in this repository's
recording (tests/fakes/recorded/h200/gpm: one `snapshot --json` GPU a second while each workload ran).

Recorded: torch.cuda._sleep spin kernels read NVML util 100 % with 0.70-0.76 % of the SMs active at ~123 W of
700 W; a bf16 GEMM 99-100 % util, SM active 91-96 %, 690-696 W (power cap); a held CUDA context and a one-rank
torchrun all_reduce 0 % util at ~123 W.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pth_top.sensors.gpu_flags import STUCK, detect_flags
from pth_top.sensors.model import GpuSample
from tests.fakes.recorded_h200 import gpm_capture, gpu_samples

START_S = 1000.0


def recorded_samples(scenario: str) -> tuple[GpuSample, ...]:
    """The H200 of each sample of a capture, in recorded order."""
    return gpu_samples([sample["gpus"][0] for sample in gpm_capture(scenario)["samples"]])


def as_gpu(recorded: GpuSample, index: int) -> GpuSample:
    """GPU `index` of a group, reading what the recorded H200 read."""
    return replace(recorded, index=index, bus_id=f"00000000:{index:02X}:06.0", uuid=f"{recorded.uuid}-{index}")


def history(scenario: str, seconds: int, gpus: int = 4):
    """One reading a second (the recorded interval), each GPU going through the recorded samples in turn from its
    own offset, so the group never reads in lockstep."""
    recorded = recorded_samples(scenario)
    return [
        (START_S + t, tuple(as_gpu(recorded[(t + index) % len(recorded)], index) for index in range(gpus)))
        for t in range(seconds + 1)
    ]


GROUP = ((0, 1, 2, 3),)


def test_the_recorded_spin_kernel_reads_busy_at_idle_power_with_no_sm_activity():
    spin = recorded_samples("spin-kernel")
    assert {gpu.utilization_percent for gpu in spin} == {100.0}
    assert max(gpu.sm_active_ratio for gpu in spin) == pytest.approx(0.0076, abs=0.0001)
    assert max(gpu.power_draw_w for gpu in spin) == pytest.approx(123.5, abs=0.1)
    assert {gpu.power_limit_w for gpu in spin} == {700.0}


def test_a_group_reading_like_the_recorded_spin_kernel_for_a_minute_is_stuck():
    flags = detect_flags(history("spin-kernel", 65), GROUP, now_s=START_S + 65)
    assert sorted(flags) == [0, 1, 2, 3] and {flag.kind for flag in flags.values()} == {STUCK}
    assert flags[0].held_s == 65.0
    assert flags[0].reason == (
        "likely stuck in a collective: all its group's GPUs busy at <= 18% of the power limit, "
        "SM active <= 1%, for 65 s"
    )
    assert detect_flags(history("spin-kernel", 55), GROUP, now_s=START_S + 55) == {}, "not before the minute"


def test_the_recorded_h200_alone_is_stuck_after_a_minute_of_spinning():
    flags = detect_flags(history("spin-kernel", 61, gpus=1), ((0,),), now_s=START_S + 61)
    assert list(flags) == [0] and flags[0].kind == STUCK
    assert flags[0].reason.startswith("likely stuck in a collective: this GPU busy at <= 18% of the power limit")


@pytest.mark.parametrize("groups", [GROUP, ((0,), (1,), (2,), (3,))])
def test_the_recorded_gemm_is_never_flagged(groups):
    gemm = recorded_samples("gemm")
    assert min(gpu.utilization_percent for gpu in gemm) == 99.0 and min(gpu.power_draw_w for gpu in gemm) > 689
    assert detect_flags(history("gemm", 300), groups, now_s=START_S + 300) == {}


def test_one_gpu_computing_the_recorded_gemm_keeps_its_spinning_group_from_being_stuck():
    spin, gemm = history("spin-kernel", 120), history("gemm", 120)
    mixed = [(time_s, (*spinning[:3], computing[3])) for (time_s, spinning), (_, computing)
             in zip(spin, gemm, strict=True)]
    assert detect_flags(mixed, GROUP, now_s=START_S + 120) == {}


@pytest.mark.parametrize("scenario", ["idle-context", "torchrun-allreduce"])
def test_gpus_reading_like_the_recorded_idle_ones_are_never_flagged(scenario):
    recorded = recorded_samples(scenario)
    assert {gpu.utilization_percent for gpu in recorded} == {0.0}
    assert detect_flags(history(scenario, 300), GROUP, now_s=START_S + 300) == {}
    assert detect_flags(history(scenario, 300, gpus=1), ((0,),), now_s=START_S + 300) == {}
