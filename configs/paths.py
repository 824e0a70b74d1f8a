"""Where pth-top keeps user files (platformdirs), overridable with PTH_TOP_CONFIG_DIR / PTH_TOP_DATA_DIR."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "pth-top"
CONFIG_DIR_VARIABLE = "PTH_TOP_CONFIG_DIR"
DATA_DIR_VARIABLE = "PTH_TOP_DATA_DIR"


class UserDirError(ValueError):
    """An override variable names a folder pth-top will not use: one line saying which and why."""


def _override(variable: str) -> Path | None:
    """The folder an environment variable names, with `~` expanded; None when unset or empty."""
    value = os.environ.get(variable)
    if not value:
        return None
    try:
        return Path(value).expanduser()
    except RuntimeError:  # `~user` for a user that does not exist: left relative, so check_override refuses it
        return Path(value)


def check_override(variable: str) -> None:
    """Raise UserDirError when `variable` names a relative path (a `~user` that does not exist is one).

    Commands that write user files call this first, so a typo is one line, not a folder in the wrong place.
    """
    folder = _override(variable)
    if folder is not None and not folder.is_absolute():
        from pth_top.text import printable

        given = printable(os.environ[variable], limit=200)
        raise UserDirError(f"{variable} must be an absolute path (or start with ~/), got '{given}'")


def user_config_dir() -> Path:
    return _override(CONFIG_DIR_VARIABLE) or Path(platformdirs.user_config_dir(APP_NAME))


def user_data_dir() -> Path:
    return _override(DATA_DIR_VARIABLE) or Path(platformdirs.user_data_dir(APP_NAME))


def builds_dir() -> Path:
    """Saved hardware builds (TOML)."""
    return user_config_dir() / "builds"


def bench_runs_dir() -> Path:
    """Saved benchmark runs (versioned JSON)."""
    return user_data_dir() / "bench-runs"
