"""Decode NVML's clock-event (throttle) reason bitmask into short words for people."""

from __future__ import annotations

# Bit values of nvmlClocksEventReason* / nvmlClocksThrottleReason*, in the order they are shown.
THROTTLE_REASON_WORDS: tuple[tuple[int, str], ...] = (
    (0x0000000000000004, "power cap"),
    (0x0000000000000020, "thermal (SW)"),
    (0x0000000000000040, "thermal (HW)"),
    (0x0000000000000008, "HW slowdown"),
    (0x0000000000000080, "power brake (HW)"),
    (0x0000000000000010, "sync boost"),
    (0x0000000000000002, "applications clocks"),
    (0x0000000000000100, "display clocks"),
    (0x0000000000000200, "board limit"),
    (0x0000000000000400, "reliability"),
    (0x0000000000000001, "idle"),
)
_KNOWN_BITS = 0
for _bit, _word in THROTTLE_REASON_WORDS:
    _KNOWN_BITS |= _bit


def decode_throttle_reasons(mask: int) -> tuple[str, ...]:
    """Words for each set bit of `mask` (unknown bits become "other 0x..."); () when nothing is set."""
    words = [word for bit, word in THROTTLE_REASON_WORDS if mask & bit]
    unknown = mask & ~_KNOWN_BITS
    if unknown:
        words.append(f"other {unknown:#x}")
    return tuple(words)
