"""Temp files a kernel must not leave behind: removed by `finally`, and by the SIGTERM handler first."""

from __future__ import annotations

import os
import signal
import sys

_registered_paths: set[str] = set()


class Cancelled(BaseException):
    """Raised in the main thread when the parent terminates the run (SIGTERM)."""


def register(path: str) -> None:
    _registered_paths.add(path)


def remove(path: str) -> None:
    _registered_paths.discard(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove_all() -> None:
    for path in list(_registered_paths):
        try:
            remove(path)
        except OSError:
            pass


def _on_terminate(signum: int, frame: object) -> None:
    # Remove files at once: the parent kills us ~1.5 s later if unwinding takes too long.
    remove_all()
    raise Cancelled(f"terminated by signal {signum}")


def install_signal_handlers() -> None:
    signal.signal(signal.SIGTERM, _on_terminate)
    if sys.platform != "win32":
        signal.signal(signal.SIGHUP, _on_terminate)
