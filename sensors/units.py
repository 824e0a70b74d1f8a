"""Human-readable numbers for sensors' tables and the doctor: bytes, rates, durations. NA prints as "N/A"."""

from __future__ import annotations

from typing import Any

from pth_top.sensors.na import is_na
from pth_top.units import BINARY_UNITS, binary_scaled, format_scaled


def format_bytes(value: Any) -> str:
    """1536 -> "1.5 KiB"; binary units, three significant digits."""
    if is_na(value):
        return "N/A"
    return format_scaled(*binary_scaled(value), BINARY_UNITS, " ")


def format_rate(bytes_per_s: Any) -> str:
    return "N/A" if is_na(bytes_per_s) else f"{format_bytes(bytes_per_s)}/s"


def format_duration(seconds: Any) -> str:
    """Running or up time: "45s", "12:03", "3:04:05", "2d 03:04"."""
    if is_na(seconds):
        return "N/A"
    total = int(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}:{minutes:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    if minutes:
        return f"{minutes}:{secs:02d}"
    return f"{secs}s"


def format_number(value: Any, digits: int = 0, suffix: str = "") -> str:
    if is_na(value):
        return "N/A"
    return f"{value:.{digits}f}{suffix}"
