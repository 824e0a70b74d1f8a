"""One `--listen` parser for `pth-top export` and `pth-top serve`: the same refusals, in one line, exit 2."""

from __future__ import annotations

import pytest

from pth_top.fleet.listen import ListenError, parse_listen
from pth_top.tui.cli import main

HOSTILE_LISTEN_VALUES = [
    "", "9824", ":9824", "127.0.0.1", "127.0.0.1:", "localhost:9824", "127.0.0.1:65536", "127.0.0.1:-1",
    "127.0.0.1:9824x", "[::1:9824", "127.0.0.1:\u0669\u0668", "1.2.3.4.5:80", "127.0.0.1:9824\n",
    "\x1b[31m:80", "127.0.0.1:\x1b[2J",
]


@pytest.mark.parametrize("allow_port_zero", [False, True])
@pytest.mark.parametrize("text", HOSTILE_LISTEN_VALUES)
def test_hostile_values_are_refused_whatever_the_port_rule(text, allow_port_zero):
    with pytest.raises(ListenError) as refused:
        parse_listen(text, allow_port_zero=allow_port_zero)
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value)


def test_port_zero_only_where_allowed():
    assert parse_listen("[::1]:0", allow_port_zero=True) == ("::1", 0)
    with pytest.raises(ListenError, match="from 1 to 65535"):
        parse_listen("127.0.0.1:0")
    assert parse_listen("0.0.0.0:8824") == ("0.0.0.0", 8824)


@pytest.mark.parametrize("command", ["export", "serve"])
@pytest.mark.parametrize("text", ["localhost:80", "127.0.0.1:\x1b[2J", "1.2.3.4.5:80", "127.0.0.1:65536"])
def test_both_commands_refuse_in_one_clean_line_and_exit_2(command, text, capsys):
    assert main([command, "--listen", text]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--listen" in err and "\x1b" not in err and "Traceback" not in err
