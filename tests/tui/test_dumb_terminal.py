"""TERM=dumb: the real dashboard in a pseudo-terminal sends no colour at all (attributes only)."""

from __future__ import annotations

import re

import pexpect

from tests.tui.test_real_terminal import spawn

SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def colour_parameters(output: str) -> list[str]:
    """SGR parameters that set a foreground or background colour (16, 256 or truecolor)."""
    found = []
    for match in SGR.finditer(output):
        for parameter in match.group(1).replace(":", ";").split(";"):
            if parameter.isdigit() and (30 <= int(parameter) <= 38 or 40 <= int(parameter) <= 48
                                        or 90 <= int(parameter) <= 97 or 100 <= int(parameter) <= 107):
                found.append(match.group(0))
                break
    return found


def test_colour_parameters_sees_16_256_and_truecolor():
    assert colour_parameters("\x1b[1;31mx\x1b[38;5;12my\x1b[48;2;1;2;3mz\x1b[0m\x1b[1m\x1b[39;49m") == [
        "\x1b[1;31m", "\x1b[38;5;12m", "\x1b[48;2;1;2;3m"]


def test_dumb_terminal_gets_no_colour_escapes():
    child = spawn("--interval", "0.5", env_overrides={"TERM": "dumb"})
    try:
        child.expect("processes", timeout=30)  # the status line under the process table: a whole frame was drawn
        seen = child.before
        child.send("q")
        child.expect(pexpect.EOF, timeout=20)
        seen += child.before or ""
    finally:
        child.close(force=True)
    assert SGR.search(seen), "the test saw no screen output at all"
    assert colour_parameters(seen) == [], colour_parameters(seen)[:5]
