"""`pth-top fleet` in a real pseudo-terminal, 80x24, against one simulated host behind a real Prometheus."""

from __future__ import annotations

import os
import sys

import pytest

from tests.fleet.fleet_tools import start_fleet, stop_fleet
from tests.fleet.prometheus_tools import DEADLINE_S, binary

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.slow


def test_fleet_screen_runs_in_a_terminal_opens_a_host_and_quits(tmp_path):
    binary("prometheus")
    hosts, prometheus = start_fleet(tmp_path, 1)
    try:
        child = pexpect.spawn(sys.executable, ["-m", "pth_top.tui.cli", "fleet", "--prometheus", prometheus.base,
                                               "--interval", "1"],
                              env={**os.environ, "TERM": "xterm-256color"}, dimensions=(24, 80),
                              timeout=DEADLINE_S, encoding="utf-8", codec_errors="replace")
        try:
            child.expect("1 hosts")
            child.expect("up")
            child.send("\r")
            child.expect("GPU processes")
            child.send("\x1b")
            child.expect("Open host")
            child.send("q")
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 0
    finally:
        stop_fleet(hosts, prometheus)
