"""STREAM-style bandwidth: copy (2 words moved) and triad (3 words) over arrays >= 4x the last-level cache.

Counted as STREAM counts: copy moves 2 words, triad reads two arrays and writes one (3 words). The
write-allocate read of the destination that CPU caches add is not counted, so on a CPU the true traffic
can be up to 3/2 (copy) or 4/3 (triad) of the figure.
No L2 flush between repetitions: at >= 4x L2 the arrays cannot stay cached, and a flush would only add its
write-back traffic to the timed copy.
"""

from __future__ import annotations

import torch

from pth_top.benches.catalog import PEAK_MEMORY
from pth_top.benches.child.cpuinfo import read_cpu_info
from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row, timed

MIN_CACHE_MULTIPLE = 4


def array_bytes(ctx: KernelContext) -> tuple[int, int | None]:
    """(bytes per array, last-level cache bytes): at least 4x the cache, more at larger scales."""
    if is_cuda(ctx.device):
        cache = getattr(torch.cuda.get_device_properties(ctx.device), "L2_cache_size", None) or 64 * 2**20
        wanted = int(2 * 2**30 * ctx.scale)
    else:
        cache = read_cpu_info().llc_bytes or 32 * 2**20
        wanted = int(256 * 2**20 * ctx.scale)
    return max(wanted, MIN_CACHE_MULTIPLE * cache), cache


def variants(ctx: KernelContext) -> list[Variant]:
    def make(name: str, words: int) -> Variant:
        def run() -> dict:
            nbytes, cache = array_bytes(ctx)
            elements = nbytes // 4
            a = torch.randn(elements, device=ctx.device)
            b = torch.randn(elements, device=ctx.device)
            c = torch.randn(elements, device=ctx.device)
            if name == "copy":
                op = lambda: b.copy_(a)  # noqa: E731
            else:
                op = lambda: torch.add(b, c, alpha=3.0, out=a)  # noqa: E731  a = b + 3c
            measurement = timed(ctx, op)
            gbps = words * elements * 4 / measurement.median_s / 1e9
            best_gbps = words * elements * 4 / measurement.best_s / 1e9
            details = {"array_bytes": elements * 4, "last_level_cache_bytes": cache, "words_counted": words,
                       "best_gbps": best_gbps, "threads": torch.get_num_threads(),
                       "write_allocate_counted": False}
            return row(variant=name, value=gbps, measurement=measurement, peak_kind=PEAK_MEMORY, details=details,
                       size={"array_bytes": elements * 4, "arrays": words})
        return Variant(name, run)

    return [make("copy", 2), make("triad", 3)]
