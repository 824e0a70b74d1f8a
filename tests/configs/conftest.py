"""Shared fixtures for the configs tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from pth_top.configs.parts import load_catalog


@pytest.fixture(scope="module")
def catalog():
    """The built-in catalog only: a user catalog on this machine never changes what a test sees."""
    return load_catalog(Path("/nonexistent-user-catalog"))
