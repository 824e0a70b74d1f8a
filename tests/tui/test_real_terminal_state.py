"""In a real 80x24 and 60x15 pseudo-terminal: pausing shows PAUSED, and Quit and Help stay in the key bar."""

from __future__ import annotations

import pexpect
import pytest

from tests.tui.test_real_terminal import ROOT, pth_top_command


@pytest.mark.parametrize("rows, columns", [(24, 80), (15, 60)], ids=["80x24", "60x15"])
def test_paused_and_the_quit_and_help_keys_are_on_a_small_screen(rows, columns):
    command = pth_top_command() + ["--interval", "0.5"]
    child = pexpect.spawn(command[0], command[1:], cwd=ROOT, env={"TERM": "xterm-256color", "PATH": "/usr/bin:/bin"},
                          dimensions=(rows, columns), timeout=30, encoding="utf-8", codec_errors="replace")
    try:
        # The key bar's line: "? Help  q Quit", drawn once the screen is up.
        child.expect("Help", timeout=60)
        child.expect("Quit", timeout=20)
        child.send(" ")
        child.expect("PAUSED", timeout=20)
        child.send("q")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
