"""Hang and straggler signatures over scripted histories of GPU samples (the clock is the samples' times)."""

from __future__ import annotations

from dataclasses import replace

from pth_top.sensors.gpu_flags import STRAGGLER, STUCK, FlagThresholds, detect_flags, gpu_groups
from pth_top.sensors.model import GpuProcessUse, GpuSample, ProcessSample
from pth_top.sensors.na import NA


def busy(index: int) -> GpuSample:
    """An H100 training step as published (tests/fakes/gpm_profiles.py TRAINING): 93 % SMs, 75 % tensor."""
    return GpuSample(
        index=index, name="NVIDIA H100 80GB HBM3", bus_id=f"00000000:{index:02X}:00.0", uuid=f"GPU-{index}",
        utilization_percent=100.0, power_draw_w=650.0, power_limit_w=700.0, sm_clock_mhz=1464.0,
        memory_clock_mhz=2619.0, temperature_c=60.0, pcie_generation_current=5, pcie_generation_max=5,
        pcie_width_current=16, pcie_width_max=16, gpm_supported=True, sm_active_ratio=0.93,
        tensor_active_ratio=0.75,
    )


def hung(index: int) -> GpuSample:
    """NVIDIA/nccl#1550's hung allgather: 100 % busy at 152 W of 700 W; 15 % of SMs active (nccl#1432)."""
    return replace(busy(index), power_draw_w=152.0, sm_active_ratio=0.15, tensor_active_ratio=0.0)


def history(make, seconds: int, gpus: int = 4, step: int = 5, start: float = 1000.0):
    return [(start + t, tuple(make(index, t) for index in range(gpus))) for t in range(0, seconds + 1, step)]


GROUP = ((0, 1, 2, 3),)


def test_all_gpus_busy_at_idle_power_for_a_minute_are_stuck():
    samples = history(lambda index, t: hung(index), 65)
    flags = detect_flags(samples, GROUP, now_s=1065.0)
    assert sorted(flags) == [0, 1, 2, 3] and {flag.kind for flag in flags.values()} == {STUCK}
    assert flags[0].held_s == 65.0
    assert flags[0].reason == (
        "likely stuck in a collective: all its group's GPUs busy at <= 22% of the power limit, "
        "SM active <= 15%, for 65 s"
    )


def test_not_stuck_before_the_threshold_nor_when_one_gpu_computes():
    samples = history(lambda index, t: hung(index), 55)
    assert detect_flags(samples, GROUP, now_s=1055.0) == {}
    one_working = history(lambda index, t: busy(index) if index == 2 else hung(index), 120)
    assert detect_flags(one_working, GROUP, now_s=1120.0) == {}


def test_a_compute_burst_restarts_the_count():
    samples = history(lambda index, t: busy(index) if t == 30 else hung(index), 80)
    assert detect_flags(samples, GROUP, now_s=1080.0) == {}
    assert detect_flags(samples, GROUP, now_s=1080.0, thresholds=FlagThresholds(stuck_after_s=45.0))


def test_without_gpm_busy_at_idle_power_is_the_signature():
    samples = history(lambda index, t: replace(hung(index), gpm_supported=False, sm_active_ratio=NA), 90)
    flags = detect_flags(samples, GROUP, now_s=1090.0)
    assert "SM activity not measured (no GPM)" in flags[1].reason


def test_a_real_training_step_is_never_stuck():
    assert detect_flags(history(lambda index, t: busy(index), 300), GROUP, now_s=1300.0) == {}


def test_one_throttled_gpu_lagging_its_group_is_a_straggler_with_the_reason():
    def make(index, t):
        if index != 2:
            return busy(index)
        return replace(busy(2), sm_clock_mhz=900.0, power_draw_w=420.0, temperature_c=84.0,
                       throttle_reasons=("thermal (HW)",), sm_active_ratio=0.93)
    flags = detect_flags(history(make, 40), GROUP, now_s=1040.0)
    assert list(flags) == [2] and flags[2].kind == STRAGGLER
    assert flags[2].reason == (
        "straggler: power 65% of its group's median for 40 s (throttled: thermal (HW); 24 C hotter than its group)"
    )


def test_a_down_trained_link_is_named_and_short_lags_are_not_flagged():
    def make(index, t):
        gpu = busy(index)
        return replace(gpu, pcie_generation_current=3, sm_active_ratio=0.40) if index == 1 else gpu
    flags = detect_flags(history(make, 35), GROUP, now_s=1035.0)
    assert flags[1].reason == "straggler: SM active 43% of its group's median for 35 s (PCIe Gen3 x16 of Gen5 x16)"
    assert detect_flags(history(make, 25), GROUP, now_s=1025.0) == {}


def test_idle_groups_and_lone_gpus_have_no_stragglers():
    def idle(index, t):
        return replace(busy(index), utilization_percent=0.0, power_draw_w=70.0 + 20 * index, sm_active_ratio=0.0)
    assert detect_flags(history(idle, 60), GROUP, now_s=1060.0) == {}
    assert detect_flags(history(lambda index, t: busy(index), 60, gpus=1), ((0,),), now_s=1060.0) == {}


def test_groups_are_the_gpus_of_one_parents_processes():
    def rank(pid, ppid, gpu):
        return ProcessSample(pid=pid, ppid=ppid, user="alice", cpu_percent=0.0, memory_percent=0.0, rss_bytes=0,
                             state="running", start_time_s=0.0, command="python train.py",
                             gpu_uses=(GpuProcessUse(gpu_index=gpu, gpu_memory_used_bytes=NA, kind="compute"),))
    gpus = tuple(busy(index) for index in range(8))
    processes = [rank(101, 100, 0), rank(102, 100, 1), rank(201, 200, 2), rank(202, 200, 3),
                 rank(301, 1, 4), rank(302, 1, 5)]
    assert gpu_groups(gpus, processes) == ((0, 1), (2, 3), (4,), (5,), (6, 7))


def test_the_tracker_carries_runs_forward_and_agrees_with_a_walk_of_the_whole_history():
    # Random stretches of busy, hung, slowed and idle GPUs over 400 s: each sample's flags, judged incrementally
    # (FlagTracker's RunMemo), equal those of a fresh walk over the history it keeps; groups change midway.
    import random

    from pth_top.sensors.gpu_flags import FlagTracker

    rng = random.Random(7)
    states = ("busy", "hung", "slow", "idle")
    current = ["busy"] * 4

    def sample(index: int, state: str) -> GpuSample:
        if state == "hung":
            return hung(index)
        if state == "slow":
            return replace(busy(index), sm_clock_mhz=600.0, throttle_reasons=("thermal (HW)",))
        return replace(busy(index), utilization_percent=0.0) if state == "idle" else busy(index)

    tracker = FlagTracker(FlagThresholds(stuck_after_s=20.0, straggler_after_s=10.0))
    seen = set()
    for second in range(400):
        if rng.random() < 0.08:
            current = [rng.choice(states)] * 4 if rng.random() < 0.5 else current
            current[rng.randrange(4)] = rng.choice(states)
        gpus = tuple(sample(index, state) for index, state in enumerate(current))
        tracker.groups = ()
        uses = (GpuProcessUse(gpu_index=0, gpu_memory_used_bytes=1, kind="compute"),) if second > 200 else ()
        processes = [ProcessSample(pid=10, ppid=1, user="u", cpu_percent=0.0, memory_percent=0.0, rss_bytes=0,
                                   state="S", start_time_s=0.0, command="torchrun", gpu_uses=uses)] if uses else []
        flags = tracker.update(gpus, processes, 1000.0 + second)
        history_now = list(tracker._history)
        expected = detect_flags(history_now, tracker.groups, history_now[-1][0], tracker.thresholds)
        assert flags == expected, second
        seen.update(flag.kind for flag in flags.values())
    assert seen == {STUCK, STRAGGLER}
