"""Shared fixtures: user files go to a temp folder; GPU tests skip without a working NVIDIA driver."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import pytest
from hypothesis import settings

# CI runs the same examples every time (a random draw once failed a clean run); HYPOTHESIS_PROFILE=explore
# draws afresh, to run by hand (a few times) when a loader or schema changes.
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("PTH_TOP_CONFIG_DIR", str(root / "config"))
    monkeypatch.setenv("PTH_TOP_DATA_DIR", str(root / "data"))
    return root


@pytest.fixture(autouse=True)
def terminal_size_from_the_terminal(monkeypatch):
    # pytest-xdist's workers export COLUMNS=80 LINES=24, which Textual prefers to a pty's own size.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def child_process():
    """A sleeping child process of this test's own user, for the kill and signal flows; reaped afterwards."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield child
    if child.poll() is None:
        child.kill()
    child.wait()


@functools.cache
def nvidia_gpu_present() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        pynvml.nvmlShutdown()
        return count > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if nvidia_gpu_present():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU with a working driver")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
