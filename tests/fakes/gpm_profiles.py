"""GPM metric values (NVML_GPM_METRIC_* id -> value over an interval) shaped like real H100s, or recorded
on a real H200, for FakeDevice.

What is recorded and where from (everything else in a profile is shaped to agree with it, and says so):
- IDLE: thamada/nvidia-smi nvsim/H100SXMx8_smi.py, 8 x H100 SXM5 at 0 % utilisation and ~85 W: no SM, pipe or
  link activity.
- TRAINING: als244/ml_dataflow docs/sample_profiling_trace.md, Llama3 8B training on an H100 (Nsight Systems
  GPU metrics, the counters DCGM's profiling fields read): "75% tensor active", power-bound, GPC clock averaging
  1464 MHz of 1755 MHz.
- NCCL_HANG: NVIDIA/nccl#1550 (an allgather hung in TensorRT-LLM on 8 x H100 80GB HBM3): GPU 0 at 100 %
  utilisation drawing 152 W of 700 W with 75370 MiB in use; NVIDIA/nccl#1432: a lone NCCL kernel keeps 15 % of
  the SMs active (one block per channel, waiting). No math runs, nothing moves over the links.

Recorded here, not shaped (tests/fakes/recorded/h200/gpm/*.json: one H200, driver 580.159.04, 2026-12-04, by
tests/perf/gpu_check.sh): each is the last sample of a capture, every metric as pth-top read it, converted back
to what NVML gives (sensors/gpm.py GPM_FIELDS turns percent into 0..1 ratios and MiB/s into bytes/s).
- H200_GEMM: a bf16 GEMM at 99 % NVML utilisation: SM active 95.7 %, tensor (HMMA) active 92.9 %, DRAM 17.4 %;
  690 W of 700 W, power cap, SM 1485 MHz.
- H200_SPIN: torch.cuda._sleep spin kernels at 100 % NVML utilisation: SM active 0.76 %, no pipe busy; 123 W.
- H200_IDLE_CONTEXT: a CUDA context held, no kernel: 0 % utilisation, every pipe 0, PCIe 0.41 MiB/s out, 0.16 in; 123 W.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pth_top.sensors.gpm import GPM_FIELDS
from pth_top.units import MIB
from tests.fakes.fake_pynvml import FakePynvml
from tests.fakes.recorded_h200 import recorded_gpu

SM_UTIL, SM_OCCUPANCY, ANY_TENSOR, HMMA_TENSOR, DRAM_BW = 2, 3, 5, 7, 10
FP64, FP32, FP16, PCIE_TX, PCIE_RX, NVLINK_RX, NVLINK_TX = 11, 12, 13, 20, 21, 60, 61

IDLE: dict[int, float] = dict.fromkeys(
    (SM_UTIL, SM_OCCUPANCY, ANY_TENSOR, HMMA_TENSOR, DRAM_BW, FP64, FP32, FP16, NVLINK_RX, NVLINK_TX), 0.0
) | {PCIE_TX: 0.5, PCIE_RX: 0.5}  # the idle boards' ~560 KB/s of PCIe chatter (nvidia-smi -q), in MiB/s
TRAINING: dict[int, float] = {
    ANY_TENSOR: 75.0, HMMA_TENSOR: 75.0,  # recorded: 75 % tensor active (BF16 training: HMMA)
    # shaped: SM active above tensor active, the rest of a bandwidth-heavy transformer step
    SM_UTIL: 93.0, SM_OCCUPANCY: 31.0, DRAM_BW: 42.0, FP32: 9.0, FP16: 3.0, FP64: 0.0,
    PCIE_TX: 180.0, PCIE_RX: 950.0, NVLINK_RX: 41_000.0, NVLINK_TX: 41_000.0,
}
NCCL_HANG: dict[int, float] = {
    SM_UTIL: 15.0,  # recorded (NVIDIA/nccl#1432)
    # shaped: a few resident warps per busy SM, no math, no traffic while it waits on a peer
    SM_OCCUPANCY: 1.5, ANY_TENSOR: 0.0, HMMA_TENSOR: 0.0, DRAM_BW: 0.0, FP64: 0.0, FP32: 0.0, FP16: 0.0,
    PCIE_TX: 0.5, PCIE_RX: 0.5, NVLINK_RX: 0.0, NVLINK_TX: 0.0,
}


def recorded_profile(gpu: dict[str, Any]) -> dict[int, float]:
    """The GPM metrics (percent, MiB/s) a recorded `snapshot --json` GPU was read from (0..1 ratios, bytes/s)."""
    return {
        metric_id: gpu[field] * 100.0 if field.endswith("_ratio") else gpu[field] / MIB
        for field, (metric_id, _) in GPM_FIELDS.items()
    }


H200_GEMM = recorded_profile(recorded_gpu("gemm"))
H200_SPIN = recorded_profile(recorded_gpu("spin-kernel"))
H200_IDLE_CONTEXT = recorded_profile(recorded_gpu("idle-context"))

# NVIDIA/nccl#1550, GPU 0 of the hung allgather.
HANG_UTILIZATION_PERCENT = 100
HANG_POWER_MW = 152_000
HANG_MEMORY_USED_BYTES = 75370 * MIB


def enable_gpm(fake: FakePynvml, index: int, profile: dict[int, float]) -> FakePynvml:
    """Give GPU `index` of `fake` GPM with `profile`'s values (a copy: tests may change it between samples)."""
    fake.devices[index].gpm_metrics = dict(profile)
    return fake


def hang(fake: FakePynvml, index: int) -> FakePynvml:
    """GPU `index` as the hung allgather's GPU was: 100 % busy at 152 W, 15 % of its SMs active."""
    values = fake.devices[index].values
    memory = values["nvmlDeviceGetMemoryInfo"]
    values["nvmlDeviceGetUtilizationRates"] = SimpleNamespace(gpu=HANG_UTILIZATION_PERCENT, memory=0)
    values["nvmlDeviceGetPowerUsage"] = HANG_POWER_MW
    values["nvmlDeviceGetMemoryInfo"] = SimpleNamespace(
        total=memory.total, used=HANG_MEMORY_USED_BYTES, free=memory.total - HANG_MEMORY_USED_BYTES
    )
    values["nvmlDeviceGetCurrentClocksEventReasons"] = values["nvmlDeviceGetCurrentClocksThrottleReasons"] = 0
    return enable_gpm(fake, index, NCCL_HANG)
