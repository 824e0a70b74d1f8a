"""The gates every change passes, run as part of the suite (so `make test` and `.ci/run` run them):
ruff, mypy on the headless packages, and the import-linter contracts in pyproject.toml.

mypy and import-linter find modules on disk, and `pth_top.tui` lives in `tui/` (package-dir), so they
run over a tree of links named as the package is installed, built from pyproject's own mapping.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# Every package of ours.
MYPY_PACKAGES = (
    "pth_top.text", "pth_top.units", "pth_top.sensors", "pth_top.configs", "pth_top.benches",
    "pth_top.widgets", "pth_top.doctor", "pth_top.fleet", "pth_top.tui", "pth_top.recorder",
)


def package_dirs() -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["tool"]["setuptools"]["package-dir"]


@pytest.fixture(scope="module")
def installed_tree(tmp_path_factory) -> Path:
    """tmp/pth_top/<sub> -> the repository folder each subpackage is installed from."""
    linked = tmp_path_factory.mktemp("installed")
    mapping = package_dirs()
    (linked / "pth_top").mkdir(parents=True)
    for path in (ROOT / mapping["pth_top"]).iterdir():
        (linked / "pth_top" / path.name).symlink_to(path)
    for name, folder in mapping.items():
        if name != "pth_top":
            (linked / "pth_top" / name.split(".")[1]).symlink_to(ROOT / folder)
    return linked


def run(command: list[str], cwd: Path, env_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(env_path)} if env_path else None
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def test_ruff():
    result = run([str(BIN / "ruff"), "check", "--no-cache", "."], ROOT)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_mypy(installed_tree):
    packages = [argument for package in MYPY_PACKAGES for argument in ("-p", package)]
    result = run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                  "--no-incremental", *packages], installed_tree, installed_tree)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_import_linter_contracts(installed_tree):
    result = run([str(BIN / "lint-imports"), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
                 installed_tree, installed_tree)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
