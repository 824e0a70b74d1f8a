"""Subcommands of `pth-top`. Each module has `register(subparsers)`; its parser's `func` returns an exit code."""

from __future__ import annotations

import argparse
from typing import Callable


class CliError(Exception):
    """A user-facing failure: printed as one line on stderr, exit `exit_code` (2: bad input or usage)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def seconds_argument(name: str, low_s: float, high_s: float) -> Callable[[str], float]:
    """An argparse type: a number of seconds within [low_s, high_s] (NaN refused), else a one-line error."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not low_s <= value <= high_s:
            raise argparse.ArgumentTypeError(f"{name} must be between {low_s:g} and {high_s:g} s, got {text}")
        return value

    return parse
