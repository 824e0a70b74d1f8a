"""Per-process SM % from NVML's process utilisation samples, on the scripted fake NVML."""

from __future__ import annotations

import os

import pynvml
import pytest

from pth_top.sensors.gpu_processes import PROCESS_UTILIZATION_WINDOW_S, read_gpu_processes
from pth_top.sensors.na import NA, is_na
from pth_top.sensors.nvml import NvmlSession
from tests.fakes.fake_pynvml import process_utilization
from tests.fakes.gpu_fixtures import enable_mig, make_fake_gpus
from tests.sensors.helpers import sampler_with

NOW_S = 1_700_000_000.0
NOW_US = int(NOW_S * 1_000_000)


def sm_by_gpu_and_pid(fake) -> dict[tuple[int, int], object]:
    session = NvmlSession(fake)
    session.start()
    handles = [(index, fake.nvmlDeviceGetHandleByIndex(index)) for index in range(len(fake.devices))]
    return {(process.gpu_index, process.pid): process.sm_util_percent
            for process in read_gpu_processes(session, handles, wall_clock=lambda: NOW_S)}


def test_newest_sample_in_the_window_per_process_and_zero_for_a_process_without_one():
    fake = make_fake_gpus(2, process_pids={0: [101, 102, 103], 1: [201]})
    fake.devices[0].values["nvmlDeviceGetProcessUtilization"] = process_utilization([
        (101, NOW_US - 10_000_000, 99),  # outside the window: stale
        (101, NOW_US - 900_000, 35), (101, NOW_US - 400_000, 62),
        (102, NOW_US - 300_000, 7),
    ])
    # GPU 1 answers with no sample in the window: its processes are idle, not unknown.
    fake.devices[1].values["nvmlDeviceGetProcessUtilization"] = process_utilization(
        [(201, NOW_US - int((PROCESS_UTILIZATION_WINDOW_S + 5) * 1_000_000), 80)])
    sm = sm_by_gpu_and_pid(fake)
    assert sm == {(0, 101): 62.0, (0, 102): 7.0, (0, 103): 0.0, (1, 201): 0.0}


def test_a_gpu_that_does_not_support_it_is_na_and_the_others_still_report():
    fake = make_fake_gpus(3, process_pids={0: [101], 1: [201], 2: [301]})
    fake.devices[0].values["nvmlDeviceGetProcessUtilization"] = process_utilization([(101, NOW_US, 40)])
    # GPU 1 has no scripted value: NVMLError_NotSupported, as a recorded board without it answers.
    enable_mig(fake, 2)
    fake.fail("nvmlDeviceGetProcessUtilization", pynvml.NVMLError_NotSupported, device_index=2)
    sm = sm_by_gpu_and_pid(fake)
    assert sm[(0, 101)] == 40.0 and is_na(sm[(1, 201)]) and is_na(sm[(2, 301)])


@pytest.mark.parametrize("answer", [
    [(101, NOW_US, 250)], [(0, NOW_US, 20)], [(2 ** 32 - 1, NOW_US, 20)], [(101, NOW_US, -1)],
], ids=["over-100", "pid-0", "pid-garbage", "negative"])
def test_impossible_samples_are_dropped_not_shown(answer):
    fake = make_fake_gpus(1, process_pids={0: [101]})
    fake.devices[0].values["nvmlDeviceGetProcessUtilization"] = process_utilization(answer)
    assert sm_by_gpu_and_pid(fake) == {(0, 101): 0.0}


@pytest.mark.parametrize("error", [pynvml.NVMLError_NoPermission, pynvml.NVMLError_GpuIsLost, pynvml.NVMLError_Unknown,
                                   pynvml.NVMLError_FunctionNotFound, TypeError("signature changed")])
def test_failures_make_sm_unknown_and_keep_the_memory(error):
    fake = make_fake_gpus(1, process_pids={0: [101]})
    fake.fail("nvmlDeviceGetProcessUtilization", error)
    session = NvmlSession(fake)
    session.start()
    processes = read_gpu_processes(session, [(0, fake.nvmlDeviceGetHandleByIndex(0))], wall_clock=lambda: NOW_S)
    assert [process.pid for process in processes] == [101] and processes[0].sm_util_percent is NA
    assert isinstance(processes[0].gpu_memory_used_bytes, int)


def test_a_binding_without_the_function_is_asked_once():
    fake = make_fake_gpus(1, process_pids={0: [101]})
    fake.remove("nvmlDeviceGetProcessUtilization")
    session = NvmlSession(fake)
    session.start()
    handles = [(0, fake.nvmlDeviceGetHandleByIndex(0))]
    for _ in range(3):
        assert read_gpu_processes(session, handles)[0].sm_util_percent is NA
    assert "nvmlDeviceGetProcessUtilization" in session.missing_functions


def test_gpus_without_processes_are_not_asked():
    fake = make_fake_gpus(2, process_pids={0: [101]})
    for device in fake.devices:
        device.values["nvmlDeviceGetProcessUtilization"] = process_utilization([(101, NOW_US, 5)])
    sm_by_gpu_and_pid(fake)
    assert fake.calls["nvmlDeviceGetProcessUtilization"] == 1


def test_the_sampler_puts_sm_percent_on_this_process_gpu_use():
    fake = make_fake_gpus(1, process_pids={0: [os.getpid()]})
    far_future_us = 2 ** 62  # always inside the window, whatever the wall clock says
    fake.devices[0].values["nvmlDeviceGetProcessUtilization"] = process_utilization([(os.getpid(), far_future_us, 73)])
    snapshot = sampler_with(fake).sample()
    me = next(process for process in snapshot.processes if process.pid == os.getpid())
    assert me.gpu_uses[0].sm_util_percent == 73.0 and me.gpu_sm_util_percent == 73.0
