"""Subcommands of `pth-top`. Each module has `register(subparsers)`; its parser's `func` returns an exit code."""

from __future__ import annotations

import argparse
import os
import stat
from typing import Callable

from pth_top.text import printable


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


def count_argument(name: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number within [low, high], else a one-line error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{name} must be between {low} and {high}, got {text}")
        return value

    return parse


def input_file_argument(text: str) -> str:
    """An argparse type: a file to read, refused when empty or a folder, device, FIFO or socket (a FIFO hangs
    the reader); one that does not exist is left to the reader's own error."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    try:
        info = os.stat(text)
    except (OSError, ValueError):
        return text  # the reader says why (no such file, a NUL byte, a name too long, no permission)
    if not stat.S_ISREG(info.st_mode):
        raise argparse.ArgumentTypeError(
            f"{printable(text, 200)}: not a regular file (a folder, device, FIFO or socket)")
    return text
