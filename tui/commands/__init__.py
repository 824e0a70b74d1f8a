"""Subcommands of `pth-top`. Each module has `register(subparsers)`; its parser's `func` returns an exit code."""

from __future__ import annotations


class CliError(Exception):
    """A user-facing failure: printed as one line on stderr, exit `exit_code` (2: bad input or usage)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
