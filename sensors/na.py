"""The NA value: a reading the hardware, driver or OS does not provide."""

from __future__ import annotations

import math
from typing import Any


class NotApplicable(float):
    """A missing reading: prints as "N/A", is NaN in arithmetic, falsy, and serialises as null.

    There is exactly one instance, `NA`; test with `value is NA` or `is_na(value)`.
    """

    _instance: "NotApplicable | None" = None

    def __new__(cls) -> "NotApplicable":
        if cls._instance is None:
            cls._instance = super().__new__(cls, math.nan)
        return cls._instance

    def __repr__(self) -> str:
        return "NA"

    def __str__(self) -> str:
        return "N/A"

    def __format__(self, format_spec: str) -> str:
        width = "".join(ch for ch in format_spec.split(".")[0] if ch.isdigit())
        align = ">" if not format_spec or format_spec[0] not in "<^" else format_spec[0]
        return format("N/A", f"{align}{width}") if width else "N/A"

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return other is self

    def __ne__(self, other: object) -> bool:
        return other is not self

    def __hash__(self) -> int:
        return hash("pth-top-NA")

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return (NotApplicable, ())


NA = NotApplicable()


def is_na(value: object) -> bool:
    """True for NA and for None (both mean "no reading")."""
    return value is NA or value is None


def na_to_none(value: Any) -> Any:
    """NA becomes None (JSON null); anything else is returned unchanged."""
    return None if value is NA else value
