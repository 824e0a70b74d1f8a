"""The CLI's own error lines never pass a control character through, and a bug ends in one line."""

from __future__ import annotations

import pytest

from pth_top.tui import cli
from pth_top.tui.commands import CliError

OSC52 = "\x1b]52;c;cHduZWQ=\x07"


def test_a_usage_error_quoting_the_argument_is_printable(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["snapshot", f"--nonsense{OSC52}"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert "\x1b" not in err and "\x07" not in err and "\\x1b]52" in err
    assert err.count("\n") == 1


def test_a_cli_error_message_is_printable(monkeypatch, capsys):
    def fail(args):
        raise CliError(f"cannot read {OSC52}")

    monkeypatch.setattr(cli, "run_dashboard", fail)
    monkeypatch.setattr(cli, "parse_arguments", lambda argv: type("Args", (), {"command": None})())
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1


def test_an_unexpected_error_is_one_line_not_a_traceback(monkeypatch, capsys):
    def crash(args):
        raise ValueError(f"boom {OSC52}")

    monkeypatch.delenv("PTH_TOP_DEBUG", raising=False)
    monkeypatch.setattr(cli, "run_dashboard", crash)
    monkeypatch.setattr(cli, "parse_arguments", lambda argv: type("Args", (), {"command": None})())
    assert cli.main([]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pth-top: internal error: ValueError: boom") and err.count("\n") == 1
    assert "Traceback" not in err and "\x1b" not in err
    monkeypatch.setenv("PTH_TOP_DEBUG", "1")
    with pytest.raises(ValueError):
        cli.main([])
