"""VRAM test: fill ~90 % of each GPU's free memory with 64-bit word patterns, read them back, count mismatches.

Patterns: walking ones (word i holds 1 << (i mod 64)), seeded random, and address-in-address (word i holds
i). Written and checked chunk by chunk with torch ops on the device, so temporaries stay one chunk in
size. On CPU the buffer is a host buffer of --cpu-memory-budget-mib. The test hook PTH_TOP_VRAM_TEST_FLIP_WORD
(a word index) flips that word's lowest bit between each pattern's write and its read.
"""

from __future__ import annotations

import os
import secrets
from typing import Callable

import torch

from pth_top.benches.catalog import PEAK_NONE
from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row
from pth_top.benches.child.kernels.burn import burn_devices, device_identity
from pth_top.benches.child.kernels.nvml_readings import NvmlReadings

FILL_FRACTION = 0.9
CHUNK_WORDS = 32 * 2**20  # 256 MiB of int64 per chunk
WORD_BYTES = 8
FLIP_WORD_VARIABLE = "PTH_TOP_VRAM_TEST_FLIP_WORD"
PATTERNS = ("walking_ones", "random", "address")
Progress = Callable[[float, str], None]


def buffer_words(device: str, cpu_budget_mib: int) -> int:
    """Words to test: ~90 % of the GPU's free memory now, or the CPU budget."""
    if is_cuda(device):
        free_bytes, _ = torch.cuda.mem_get_info(device)
        return int(free_bytes * FILL_FRACTION) // WORD_BYTES
    return max(1, cpu_budget_mib * 2**20 // WORD_BYTES)


def expected_chunk(pattern: str, start: int, stop: int, seed: int, device: str) -> torch.Tensor:
    """Words start..stop of `pattern` (random: regenerated from the seed and the chunk's first word)."""
    if pattern == "address":
        return torch.arange(start, stop, dtype=torch.int64, device=device)
    if pattern == "walking_ones":
        shifts = torch.arange(start, stop, dtype=torch.int64, device=device).remainder_(64)
        return torch.bitwise_left_shift(torch.ones_like(shifts), shifts)
    generator = torch.Generator(device=device)
    generator.manual_seed(seed + start)
    return torch.empty(stop - start, dtype=torch.int64, device=device).random_(generator=generator)


def chunks(words: int) -> list[tuple[int, int]]:
    return [(start, min(words, start + CHUNK_WORDS)) for start in range(0, words, CHUNK_WORDS)]


def check_patterns(buffer: torch.Tensor, seed: int, flip_word: int | None = None,
                   progress: Progress = lambda fraction, message: None) -> dict[str, dict]:
    """Per pattern: mismatching words and the first one's index (None when none); `flip_word` injects a fault."""
    device = str(buffer.device)
    spans = chunks(buffer.numel())
    results = {}
    for number, pattern in enumerate(PATTERNS):
        for start, stop in spans:
            buffer[start:stop].copy_(expected_chunk(pattern, start, stop, seed, device))
        if flip_word is not None and 0 <= flip_word < buffer.numel():
            buffer[flip_word] ^= 1
        mismatches, first_bad = 0, None
        for start, stop in spans:
            bad = buffer[start:stop] != expected_chunk(pattern, start, stop, seed, device)
            count = int(bad.sum().item())
            if count and first_bad is None:
                first_bad = start + int(bad.nonzero()[0].item())
            mismatches += count
        results[pattern] = {"mismatches": mismatches, "first_bad_word": first_bad}
        progress((number + 1) / len(PATTERNS), pattern)
    return results


def flip_word_from_environment() -> int | None:
    text = os.environ.get(FLIP_WORD_VARIABLE, "")
    return int(text) if text.isdigit() else None


def check_device(ctx: KernelContext, device: str, nvml: NvmlReadings | None) -> dict:
    _, identity = device_identity(device, nvml)
    words = buffer_words(device, int(ctx.options.get("cpu_memory_budget_mib") or 64))
    seed = secrets.randbits(31)
    buffer = torch.empty(words, dtype=torch.int64, device=device)
    try:
        patterns = check_patterns(buffer, seed, flip_word_from_environment(), ctx.progress)
    finally:
        del buffer
        if is_cuda(device):
            torch.cuda.empty_cache()
    mismatches = sum(result["mismatches"] for result in patterns.values())
    bad = [f"{name} {result['mismatches']}" for name, result in patterns.items() if result["mismatches"]]
    return row(variant=device, value=mismatches, peak_kind=PEAK_NONE, unit="errors",
               note=f"mismatching words: {', '.join(bad)}" if bad else "",
               details={**identity, "bytes": words * WORD_BYTES, "words": words, "seed": seed,
                        "patterns": patterns})


def variants(ctx: KernelContext) -> list[Variant]:
    devices = burn_devices(list(ctx.options.get("devices") or ["cpu"]))

    def make(device: str) -> Variant:
        def run() -> dict:
            nvml = NvmlReadings() if is_cuda(device) else None
            try:
                if is_cuda(device):
                    with torch.cuda.device(device):
                        return check_device(ctx, device, nvml)
                return check_device(ctx, device, nvml)
            finally:
                if nvml:
                    nvml.close()
        return Variant(device, run)

    return [make(device) for device in devices]
