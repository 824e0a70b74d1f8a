"""Where pth-top keeps user files (platformdirs), overridable with PTH_TOP_CONFIG_DIR / PTH_TOP_DATA_DIR."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "pth-top"


def user_config_dir() -> Path:
    override = os.environ.get("PTH_TOP_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))


def user_data_dir() -> Path:
    override = os.environ.get("PTH_TOP_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))


def builds_dir() -> Path:
    """Saved hardware builds (TOML)."""
    return user_config_dir() / "builds"


def bench_runs_dir() -> Path:
    """Saved benchmark runs (versioned JSON)."""
    return user_data_dir() / "bench-runs"
