"""Human-readable numbers: bytes, rates, durations. NA prints as "N/A"."""

from __future__ import annotations

from typing import Any

from pth_top.sensors.na import NA

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def binary_scaled(value: float) -> tuple[float, int]:
    """(amount, power) with value = amount * 1024**power and |amount| < 1024 (up to PiB)."""
    amount, power = float(value), 0
    while abs(amount) >= 1024 and power < len(_BINARY_UNITS) - 1:
        amount /= 1024
        power += 1
    return amount, power


def format_scaled(amount: float, power: int, units: tuple[str, ...], separator: str) -> str:
    """Whole bytes, else one decimal below 100 and none above: three significant digits."""
    if power == 0:
        return f"{amount:.0f}{separator}{units[0]}"
    digits = 1 if abs(amount) < 100 else 0
    return f"{amount:.{digits}f}{separator}{units[power]}"


def format_bytes(value: Any) -> str:
    """1536 -> "1.5 KiB"; binary units, three significant digits."""
    if value is NA or value is None:
        return "N/A"
    return format_scaled(*binary_scaled(value), _BINARY_UNITS, " ")


def format_rate(bytes_per_s: Any) -> str:
    return "N/A" if bytes_per_s is NA or bytes_per_s is None else f"{format_bytes(bytes_per_s)}/s"


def format_duration(seconds: Any) -> str:
    """Running or up time: "45s", "12:03", "3:04:05", "2d 03:04"."""
    if seconds is NA or seconds is None:
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
    if value is NA or value is None:
        return "N/A"
    return f"{value:.{digits}f}{suffix}"
