"""`pth-top bench` options beyond what the machine or the watchdog can honour are refused as input.

Exit 2 and one line, before anything runs: never a run that ends as a hardware FAIL verdict.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.bench.fake_children import CLI_CODE, shell_child

RAM_MIB = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20


@pytest.mark.parametrize("options, message", [
    (["--cpu-memory-budget-mib", str(RAM_MIB + 1)],
     f"--cpu-memory-budget-mib {RAM_MIB + 1} is more than this machine's {RAM_MIB:,} MiB of RAM"),
    (["--accept", "--device", "cpu", "--cpu-memory-budget-mib", "999999999"], "MiB of RAM"),
    (["--stall-limit", "0.5"], "stall limit must be between 1 and 86400 s, got 0.5"),
    (["--stall-limit", "1e-9"], "stall limit must be between 1 and 86400 s"),
    (["--kernel", "disk", "--disk-size-mib", str(2**50)], f"--disk-size-mib {2**50} is more than the "),
    (["--device", "cpu", "--burn", "0.5s"], "--burn must be a duration like 60s, 10m or 1h (from 1s to 24h)"),
    (["--accept", "--device", "cpu", "--burn", "0.0000001s"], "(from 1s to 24h), got '0.0000001s'"),
])
def test_a_limit_the_machine_cannot_honour_is_exit_2_one_line_and_nothing_runs(tmp_path, options, message):
    ran = tmp_path / "ran"
    python = shell_child(tmp_path, f"touch {ran}\nexec /bin/true")
    done = subprocess.run([sys.executable, "-c", CLI_CODE, "bench", "--python", python, *options],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PTH_TOP_DATA_DIR": str(tmp_path / "data")})
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and message in done.stderr, done.stderr
    assert not ran.exists() and not (tmp_path / "data").exists()
