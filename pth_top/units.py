"""Byte units and binary scaling, shared by every package (stdlib only: the lowest layer)."""

from __future__ import annotations

KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4
PIB = 1024**5

BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def binary_scaled(value: float) -> tuple[float, int]:
    """(amount, power) with value = amount * 1024**power and |amount| < 1024 (up to PiB)."""
    amount, power = float(value), 0
    while abs(amount) >= 1024 and power < len(BINARY_UNITS) - 1:
        amount /= 1024
        power += 1
    return amount, power


def format_scaled(amount: float, power: int, units: tuple[str, ...], separator: str) -> str:
    """Whole bytes, else one decimal below 100 and none above: three significant digits."""
    if power == 0:
        return f"{amount:.0f}{separator}{units[0]}"
    digits = 1 if abs(amount) < 100 else 0
    return f"{amount:.{digits}f}{separator}{units[power]}"
