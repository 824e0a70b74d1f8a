"""GPU-sized work: batches from the device's SM count and memory, so each timed call runs >= 1-2 ms of kernels.

A CPU-sized step on an H100 measures Python and launch overhead (issue 13, item 1). Work grows with the SM
count relative to an H100 SXM and is capped by a share of device memory; CPU sizes stay as they were.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# H100 SXM5: 132 SMs (https://glennklockwood.com/garden/processors/h100); base batches are chosen for it.
REFERENCE_SM_COUNT = 132
# The measured work takes at most this share of device memory: cuDNN/cuBLAS workspaces and the allocator need room.
MEMORY_SHARE = 0.5


@dataclass(frozen=True)
class DeviceSize:
    name: str
    sm_count: int
    total_memory_bytes: int

    @classmethod
    def of(cls, device: str) -> "DeviceSize":
        properties = torch.cuda.get_device_properties(device)
        return cls(properties.name, int(properties.multi_processor_count), int(properties.total_memory))

    def as_dict(self) -> dict:
        return {"gpu": self.name, "sm_count": self.sm_count, "total_memory_bytes": self.total_memory_bytes}


def gpu_batch(base_batch: int, device: DeviceSize, scale: float, *, bytes_per_sample: int, fixed_bytes: int = 0,
              multiple: int = 8) -> int:
    """`base_batch` at scale 1 on an H100, in proportion to SMs and `scale`, within MEMORY_SHARE of memory;
    a multiple of `multiple` (tensor-core friendly) once it is that large, never below 1."""
    wanted = base_batch * device.sm_count / REFERENCE_SM_COUNT * scale
    fits = (device.total_memory_bytes * MEMORY_SHARE - fixed_bytes) / max(1, bytes_per_sample)
    batch = min(wanted, fits)
    if batch >= multiple:
        return int(batch // multiple) * multiple
    return max(1, int(batch))


def transformer_width(device: DeviceSize) -> int:
    """d_model of the block stack: 4096 on 40 GB+ parts, 2048 on 10 GB+, else 1024 (weights + states must fit)."""
    gib = device.total_memory_bytes / 2**30
    return 4096 if gib >= 40 else 2048 if gib >= 10 else 1024
