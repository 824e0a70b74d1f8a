"""The declared torch floor (2.4) exercised: the probe and a bench run under an interpreter with torch 2.4.x.

Set PTH_TOP_FLOOR_PYTHON to such an interpreter (pth-top need not be installed there: the child is loaded
by path); without it these tests skip and say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pth_top.benches.child.probe import BENCH_TORCH_FLOOR
from tests.bench.fake_children import CLI_CODE

FLOOR_PYTHON_VARIABLE = "PTH_TOP_FLOOR_PYTHON"
FLOOR_VERSION_PREFIX = ".".join(map(str, BENCH_TORCH_FLOOR)) + "."


@pytest.fixture
def floor_python() -> str:
    python = os.environ.get(FLOOR_PYTHON_VARIABLE)
    if not python:
        pytest.skip(f"set {FLOOR_PYTHON_VARIABLE} to a Python with torch {FLOOR_VERSION_PREFIX}x to test the floor")
    return python


def test_the_probe_accepts_the_floor_torch(floor_python):
    from pth_top.doctor.probe_runner import PendingProbe

    report = PendingProbe(floor_python, timeout_s=300).result()
    assert report["error"] is None, report["error"]
    assert report["torch_version"].startswith(FLOOR_VERSION_PREFIX)
    assert report["bench_torch_problem"] is None


def test_gemm_and_the_opt_in_e2e_step_and_allreduce_run_under_the_floor_torch(floor_python, tmp_path):
    completed = subprocess.run(
        [sys.executable, "-c", CLI_CODE, "bench", "--python", floor_python, "--suite", "quick",
         "--kernel", "gemm", "--kernel", "e2e_step", "--kernel", "allreduce", "--scale", "0.01", "--time-cap", "0.05",
         "--disk-dir", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PTH_TOP_DATA_DIR": str(tmp_path)})
    assert completed.returncode == 0, completed.stderr[-3000:]
    run = json.loads(completed.stdout)
    rows = run["rows"]
    assert {row["kernel"] for row in rows} == {"gemm", "e2e_step", "allreduce"}, run.get("errors")
    assert any(row["kernel"] == "gemm" and row["status"] == "ok" and row["value"] > 0 for row in rows)
    assert not run.get("errors")
