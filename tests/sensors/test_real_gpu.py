"""On a machine with an NVIDIA GPU and driver: the real pynvml binding, end to end."""

from __future__ import annotations

import json

import pytest

from pth_top.sensors.sampler import Sampler
from pth_top.sensors.snapshot_json import SCHEMA_PATH, snapshot_to_dict
from tests.sensors.schema_check import validate

pytestmark = pytest.mark.gpu


def test_real_nvml_sample_is_complete_and_valid():
    sampler = Sampler()
    try:
        sampler.sample()
        snapshot = sampler.sample()
    finally:
        sampler.close()
    assert snapshot.host.nvml_unavailable_reason is None
    assert snapshot.host.nvidia_driver_version and snapshot.host.cuda_driver_version
    assert snapshot.gpus and not any(gpu.lost for gpu in snapshot.gpus)
    for gpu in snapshot.gpus:
        assert gpu.name != "unknown GPU" and gpu.bus_id and gpu.uuid.startswith(("GPU-", "MIG-"))
        assert gpu.memory_total_bytes > 0 and 0 <= gpu.utilization_percent <= 100
    assert sampler.nvml.missing_functions <= {
        "nvmlDeviceGetCurrentClocksEventReasons", "nvmlSystemGetCudaDriverVersion_v2",
        "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3",
    }
    assert validate(snapshot_to_dict(snapshot), json.loads(SCHEMA_PATH.read_text())) == []


def test_real_gpu_found_again_by_bus_id():
    sampler = Sampler()
    try:
        sampler.sample()
        slot = sampler._gpus.slots[0]
        slot.handle = None
        gpu = sampler.sample().gpus[0]
    finally:
        sampler.close()
    assert not gpu.lost and gpu.bus_id == slot.bus_id
