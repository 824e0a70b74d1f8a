"""`pth-top alert test` against a real webhook receiver on 127.0.0.1 and a dead port; `alert rules`; bad settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pth_top.tui.cli import main
from pth_top.tui.settings import SETTINGS_FILE_NAME
from tests.recorder.webhook import Receiver, dead_port

pytest.importorskip("apprise", reason="Apprise is the delivery (pip install 'pth-top[alerts]')")

SECRET = "T0KEN-s3cret"


def write_settings(text: str) -> Path:
    path = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / SETTINGS_FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def receiver():
    webhook = Receiver()
    yield webhook
    webhook.close()


def test_alert_test_reaches_every_configured_destination(receiver, capsys):
    write_settings(f'[alerts]\ndestinations = ["{receiver.url()}", "{receiver.url("second/" + SECRET)}"]\n')
    assert main(["alert", "test"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"ok      json://127.0.0.1:{receiver.port}/***"] * 2
    assert len(receiver.bodies) == 2 and "pth-top test alert from" in receiver.bodies[0]["message"]
    assert receiver.paths == [f"/hook/{SECRET}", f"/second/{SECRET}"]


def test_alert_test_to_one_url(receiver, capsys):
    assert main(["alert", "test", "--to", receiver.url()]) == 0
    assert capsys.readouterr().out == f"ok      json://127.0.0.1:{receiver.port}/***\n"
    assert receiver.bodies[0]["title"].endswith(": test")


def test_a_dead_port_fails_in_one_line_each_and_exits_1(receiver, capsys):
    dead = f"json://127.0.0.1:{dead_port()}/hook/{SECRET}"
    write_settings(f'[alerts]\ndestinations = ["{dead}", "{receiver.url()}", "nosuchscheme://{SECRET}"]\n')
    assert main(["alert", "test"]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 3 and SECRET not in captured.out + captured.err
    assert lines[0].startswith(f"failed  json://127.0.0.1:{dead.split(':')[2].split('/')[0]}/***: ")
    assert lines[1].startswith("ok      ")
    assert lines[2] == "failed  nosuchscheme://***: not a URL Apprise knows (see the Apprise wiki for its URL forms)"


def test_nothing_to_send_to_is_a_usage_error(capsys):
    assert main(["alert", "test"]) == 2
    assert "no destinations: set alerts.destinations in" in capsys.readouterr().err
    assert main(["alert", "test", "--to", "no-scheme"]) == 2


def test_a_bad_rule_is_one_line_and_exit_2(capsys):
    path = write_settings("[alerts.rules.gpu_temperature]\nabove_c = 'hot'\n")
    assert main(["alert", "rules"]) == 2
    err = capsys.readouterr().err
    assert err == (f"pth-top: alert: settings file {path} ignored: "
                   "alerts.rules.gpu_temperature.above_c: must be a number, got 'hot'\n")


def test_alert_rules_lists_the_rules_in_force_with_urls_masked(capsys):
    write_settings(f'[alerts]\ndestinations = ["slack://{SECRET}/b/c"]\n[alerts.rules.gpu_memory]\nenabled = true\n')
    assert main(["alert", "rules"]) == 0
    out = capsys.readouterr().out
    assert "  gpu_memory      on  above_fraction=0.98" in out and "  gpu_temperature on  above_c=85.0" in out
    assert "  slack://***" in out and SECRET not in out
