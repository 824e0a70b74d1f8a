"""RAM (used / buffers+cache / available) and swap."""

from __future__ import annotations

import psutil

from pth_top.sensors.model import MemorySample


def read_memory() -> MemorySample:
    memory = psutil.virtual_memory()
    swap = psutil.swap_memory()
    buffers_cache = getattr(memory, "buffers", 0) + getattr(memory, "cached", 0)
    return MemorySample(
        total_bytes=memory.total,
        used_bytes=memory.used,
        buffers_cache_bytes=buffers_cache,
        available_bytes=memory.available,
        swap_total_bytes=swap.total,
        swap_used_bytes=swap.used,
    )
