"""Human-readable numbers for the dashboard (NA prints as N/A)."""

from __future__ import annotations

from pth_top.sensors.na import is_na
from pth_top.units import binary_scaled, format_scaled

_HTOP_UNITS = ("B", "K", "M", "G", "T", "P")


def format_bytes(value: float | None) -> str:
    """htop-style sizes: 512B, 3.4M, 15.5G (binary units)."""
    if is_na(value):
        return "N/A"
    return format_scaled(*binary_scaled(value), _HTOP_UNITS, "")


def format_rate(bytes_per_s: float | None) -> str:
    return "N/A" if is_na(bytes_per_s) else f"{format_bytes(bytes_per_s)}/s"


def format_percent(value: float | None, digits: int = 0) -> str:
    return "N/A" if is_na(value) else f"{value:.{digits}f}%"


def format_number(value: float | None, unit: str = "", digits: int = 0) -> str:
    return "N/A" if is_na(value) else f"{value:.{digits}f}{unit}"


def format_duration(seconds: float | None) -> str:
    """Running time the htop way: 12:34.56 under an hour, 5h12:03 under a day, 3d04h beyond."""
    if is_na(seconds):
        return "N/A"
    seconds = max(0.0, float(seconds))
    if seconds < 3600:
        minutes, rest = divmod(seconds, 60)
        return f"{int(minutes)}:{rest:05.2f}"
    hours, rest = divmod(int(seconds), 3600)
    if hours < 24:
        return f"{hours}h{rest // 60:02d}:{rest % 60:02d}"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


def format_uptime(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    clock = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return f"{days} day{'s' if days != 1 else ''}, {clock}" if days else clock
