"""The real `pth-top` in a pseudo-terminal, and the command line around it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).resolve().parents[2]


def pth_top_command() -> list[str]:
    """The installed console script when there is one (as in CI), else the module."""
    script = Path(sys.executable).with_name("pth-top")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pth_top.tui"]


def spawn(*args: str, env_overrides: dict[str, str] | None = None) -> pexpect.spawn:
    command = pth_top_command() + list(args)
    env = {**os.environ, "TERM": "xterm-256color", **(env_overrides or {})}
    return pexpect.spawn(command[0], command[1:], cwd=ROOT, env=env, dimensions=(24, 80), timeout=30,
                         encoding="utf-8", codec_errors="replace")


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_dashboard_starts_in_a_terminal_and_q_quits(env):
    child = spawn("--interval", "0.5", env_overrides=env)
    try:
        child.expect("processes", timeout=30)
        child.expect("CPU%▼", timeout=20)
        if env.get("TERM") == "dumb":
            assert "\x1b[38;2;" not in child.before, "TERM=dumb must not get truecolor escapes"
        child.send("q")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before


def test_dashboard_refuses_without_a_terminal():
    result = subprocess.run(
        pth_top_command(), cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "pth-top snapshot" in result.stderr


def test_version_help_and_bad_flags():
    version = subprocess.run(pth_top_command() + ["--version"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("pth-top ")
    help_text = subprocess.run(pth_top_command() + ["--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert help_text.returncode == 0
    for command in ("snapshot", "doctor", "wizard", "build"):
        assert command in help_text.stdout
    bad = subprocess.run(
        pth_top_command() + ["--interval", "0.01"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "interval" in bad.stderr
    unknown = subprocess.run(pth_top_command() + ["--frobnicate"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr


def test_prepare_terminal_environment_picks_safe_colours():
    from pth_top.tui.cli import prepare_terminal_environment

    dumb = {"TERM": "dumb"}
    prepare_terminal_environment(dumb)
    assert dumb["TEXTUAL_COLOR_SYSTEM"] == "standard"
    broken = {"TERM": "xterm", "TEXTUAL_COLOR_SYSTEM": "none"}
    prepare_terminal_environment(broken)
    assert broken["TEXTUAL_COLOR_SYSTEM"] == "standard"
    normal = {"TERM": "xterm-256color"}
    prepare_terminal_environment(normal)
    assert "TEXTUAL_COLOR_SYSTEM" not in normal


def test_the_dashboard_flags_parse_without_loading_the_commands():
    code = (
        "import sys; from tui.cli import parse_arguments; args = parse_arguments(['-i', '2']); "
        "print(args.command, args.interval, sorted(m for m in sys.modules if m.startswith('pth_top.tui.commands.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == ["None", "2.0", "[]"]


def test_anything_beyond_the_dashboard_flags_gets_the_full_command_line():
    from pth_top.tui.cli import parse_arguments

    args = parse_arguments(["snapshot", "--top", "3", "--interval", "0.1"])
    assert (args.command, args.top, args.interval) == ("snapshot", 3, 0.1), "snapshot's own --interval"
    # An abbreviation is still understood: the full parser allows it.
    assert parse_arguments(["--int", "3"]).interval == 3.0


def test_help_wins_over_dashboard_flags_as_with_the_full_parser():
    for arguments in (["--help", "-i", "0"], ["--help", "--version"], ["-i", "2", "-h"], ["--he"]):
        result = subprocess.run(pth_top_command() + arguments, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and "COMMAND" in result.stdout and "snapshot" in result.stdout, arguments
