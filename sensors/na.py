"""The NA value: a reading the hardware, driver or OS does not provide."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import TypeIs


class NotApplicable(float):
    """A missing reading: prints as "N/A", is NaN in arithmetic, falsy, and serialises as null.

    There is exactly one instance, `NA`; test with `is_na(value)`.
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


# TypeIs: after `if not is_na(x)` a type checker knows x is a real reading.
def is_na(value: object) -> TypeIs[NotApplicable | None]:
    """True for NA, None and any NaN float: the one test for "no reading" (NA is a NaN float too)."""
    # NA is matched by identity (NA != NA is False); `x != x` is the cheap test for any other NaN.
    return value is None or value is NA or (isinstance(value, float) and value != value)
