"""The GPU row's "SM/Tens" cell and detail line (tui/panels/gpu_activity.py) beside NVML's util, on the real H200
readings this repository recorded (tests/fakes/recorded/h200/gpm, each capture's last sample); no Textual app.

Recorded: spin kernels (torch.cuda._sleep) read NVML util 100 % with SM active 0.76 %, tensor 0; a bf16 GEMM
util 99 % with SM active 95.7 %, tensor 92.9 %, DRAM 17.4 %; a held CUDA context 0 % everywhere.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pth_top.sensors.gpm import GPM_FIELDS
from pth_top.sensors.gpu import GpuReader
from pth_top.sensors.nvml import NvmlSession
from pth_top.tui.panels.gpu_activity import activity_cell, activity_text, is_waiting
from pth_top.tui.panels.gpus import GPU_COLUMNS, gpu_cells
from tests.fakes.gpm_profiles import H200_GEMM, H200_SPIN, enable_gpm
from tests.fakes.real_gpus import make_real_machine
from tests.fakes.recorded_h200 import recorded_gpu, recorded_gpu_sample
from tests.sensors.helpers import FakeClock

COLUMN = {key: position for position, (key, _, _) in enumerate(GPU_COLUMNS)}


def row(gpu):
    cells = gpu_cells(gpu)
    return {key: cells[COLUMN[key]] for key in ("util", "activity")}


def test_the_spin_kernel_shows_1_percent_of_real_activity_beside_100_percent_util():
    spin = recorded_gpu_sample("spin-kernel")
    cells = row(spin)
    assert cells["util"].plain == "100%"
    assert cells["activity"].plain == "1/0" and cells["activity"].style == "yellow"
    assert is_waiting(spin)
    assert activity_text(spin).plain == "  busy 100%, SM active 1%, tensor 0%, DRAM 0%: waiting, not computing"


def test_the_gemm_shows_96_percent_sm_and_93_percent_tensor_active():
    gemm = recorded_gpu_sample("gemm")
    cells = row(gemm)
    assert cells["util"].plain == "99%"
    assert cells["activity"].plain == "96/93" and cells["activity"].style == ""
    assert not is_waiting(gemm)
    assert activity_text(gemm).plain == "  busy 99%, SM active 96%, tensor 93%, DRAM 17%"


def test_a_held_context_is_idle_not_waiting():
    idle = recorded_gpu_sample("idle-context")
    assert row(idle)["util"].plain == "0%" and activity_cell(idle).plain == "0/0" and not is_waiting(idle)
    assert activity_text(idle).plain == "  busy 0%, SM active 0%, tensor 0%, DRAM 0%"


def test_the_recorded_profiles_read_back_through_the_gpm_reader_as_recorded():
    """The H200 fake with the recorded GPM profiles and NVML util reads as the real one did (second sample)."""
    for profile, scenario, cell in ((H200_SPIN, "spin-kernel", "1/0"), (H200_GEMM, "gemm", "96/93")):
        recorded = recorded_gpu(scenario)
        fake = enable_gpm(make_real_machine("h200_x1"), 0, profile)
        fake.devices[0].values["nvmlDeviceGetUtilizationRates"] = SimpleNamespace(
            gpu=int(recorded["utilization_percent"]), memory=int(recorded["memory_utilization_percent"]))
        reader = GpuReader(NvmlSession(fake, clock=FakeClock()))
        reader.sample()
        gpu = reader.sample()[0]
        assert {field: getattr(gpu, field) for field in GPM_FIELDS} == pytest.approx(
            {field: recorded[field] for field in GPM_FIELDS}, rel=1e-9, abs=1e-15)
        assert activity_cell(gpu).plain == cell and is_waiting(gpu) is (scenario == "spin-kernel")
