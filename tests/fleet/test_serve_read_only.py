"""`pth-top serve`'s read-only app refuses kill, Bench, Wizard and GPU load in the app; --allow-actions lifts it."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from pathlib import Path

import pytest

from pth_top.sensors.model import ProcessSample
from pth_top.tui.app import PthTopApp
from pth_top.tui.cli import build_parser
from pth_top.tui.commands.serve import child_command
from pth_top.tui.panels.history import HistoryPanel
from pth_top.tui.panels.processes import ProcessPanel
from pth_top.tui.screens.kill import KillScreen
from pth_top.tui.screens.monitor import MonitorScreen
from pth_top.tui.served_app import ReadOnlyApp, parse_arguments
from pth_top.tui.settings import SETTINGS_FILE_NAME
from tests.fakes.snapshots import FixedSource, make_snapshot, snapshot_with_process
from tests.waiting import wait_until


def notices(app) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


async def test_read_only_refuses_kill_and_action_modes_with_a_message(child_process):
    source = FixedSource(snapshot_with_process(child_process.pid))
    app = ReadOnlyApp(interval_s=0.1, source_factory=lambda: source)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.screen.query_one(ProcessPanel)
        await wait_until(pilot, lambda: panel.selected_process is not None, what="a selected process")
        panel_process = panel.selected_process
        await pilot.press("k")
        await wait_until(pilot, lambda: any("kill is off" in text for text in notices(app)), what="the kill refusal")
        assert not isinstance(app.screen, KillScreen)
        # The signal path itself refuses too (a palette or a future key cannot reach around the key binding).
        app.screen._send_signal(panel_process, int(signal.SIGKILL))
        await pilot.pause()
        assert child_process.poll() is None
        for key, name in (("b", "Bench"), ("w", "Wizard")):
            await pilot.press(key)
            await wait_until(pilot, lambda name=name: any(f"{name} is off" in text for text in notices(app)),
                             what=f"the {name} refusal")
            assert isinstance(app.screen, MonitorScreen) and app.current_mode == "monitor"
        app.switch_mode("wizard")
        await pilot.pause()
        assert app.current_mode == "monitor"
        await pilot.press("d")
        await wait_until(pilot, lambda: app.current_mode == "doctor", what="the Doctor (its plain checks only read)")
        # The re-run under load would load every GPU of the server: refused even where GPUs were found.
        doctor = app.screen
        load_seconds_asked: list[float] = []
        live_factory = doctor._context_factory
        doctor._context_factory = lambda load_seconds: load_seconds_asked.append(load_seconds) or live_factory(0)
        doctor.gpu_count = 2
        doctor.refresh_bindings()
        await pilot.press("l")
        await wait_until(pilot, lambda: any("re-run under GPU load is off" in text for text in notices(app)),
                         what="the loaded re-run refusal")
        assert not any(load_seconds_asked)
        # Plain re-runs each start a torch probe: the one on opening counts, so `r` now waits its minute.
        runs_before = doctor._run_number
        await pilot.press("r")
        await wait_until(pilot, lambda: any("at most once a minute" in text for text in notices(app)),
                         what="the re-run rate limit")
        assert doctor._run_number == runs_before


async def test_read_only_applies_panel_choices_without_writing_the_servers_settings(child_process):
    settings_file = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / SETTINGS_FILE_NAME
    source = FixedSource(snapshot_with_process(child_process.pid))
    app = ReadOnlyApp(interval_s=0.1, source_factory=lambda: source)
    async with app.run_test(size=(120, 60)) as pilot:
        await wait_until(pilot, lambda: app.screen.query_one(ProcessPanel).selected_process, what="the first sample")
        for key in "hic":
            await pilot.press(key)
        await wait_until(pilot, lambda: not app.screen.query_one(HistoryPanel).display, what="the history to hide")
        assert app.screen.settings.gpu_history == ("power", "temp")
        assert not any("not saved" in text for text in notices(app)), notices(app)
    assert not settings_file.exists() and not settings_file.parent.exists()


SECRET_COMMAND = "python3 train.py --hf-token=hf_SECRET --db=postgres://u:pw@db"


def table_text(app) -> str:
    table = app.screen.query_one("#process-table")
    return "\n".join(" ".join(str(cell) for cell in table.get_row(key)) for key in table.row_keys)


@pytest.mark.parametrize("app_class, shown, hidden", [
    (ReadOnlyApp, "python3", "hf_SECRET"),
    (PthTopApp, "hf_SECRET", None),
])
async def test_read_only_shows_process_names_not_command_lines(app_class, shown, hidden):
    base = make_snapshot(process_count=3)
    secret = ProcessSample(pid=4242, ppid=1, user="carol", cpu_percent=99.0, memory_percent=1.0, rss_bytes=1,
                           state="running", start_time_s=900.0, command=SECRET_COMMAND, name="python3")
    source = FixedSource(replace(base, processes=base.processes + (secret,)))
    app = app_class(interval_s=0.1, source_factory=lambda: source)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: "4242" in table_text(app), what="the process row")
        text = table_text(app)
        assert shown in text
        if hidden is not None:
            assert hidden not in text and "train.py" not in text
            await pilot.press("slash", *"SECRET")
            await wait_until(pilot, lambda: "4242" not in table_text(app), what="the filter to leave no row")


def test_serve_help_says_read_only_hides_command_lines(capsys):
    from pth_top.tui.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert exit_info.value.code == 0 and "processes show by name, not command line" in help_text
    assert "see full command lines" in help_text


def test_the_sampler_names_each_process_by_its_comm():
    from pth_top.sensors.processes import ProcfsProcessSource

    source = ProcfsProcessSource()
    try:
        mine = next(process for process in source.rows(1 << 30).processes if process.pid == os.getpid())
    finally:
        source.close()
    assert mine.name == Path("/proc/self/comm").read_text().rstrip("\n") and mine.name != mine.command


async def test_allowed_actions_open_the_kill_dialog(child_process):
    source = FixedSource(snapshot_with_process(child_process.pid))
    app = PthTopApp(interval_s=0.1, source_factory=lambda: source)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.screen.query_one(ProcessPanel)
        await wait_until(pilot, lambda: panel.selected_process is not None, what="a selected process")
        await pilot.press("k")
        await wait_until(pilot, lambda: isinstance(app.screen, KillScreen), what="the kill dialog")


def test_child_command_is_read_only_unless_allowed_and_forwards_the_fleet_settings():
    parser = build_parser()
    read_only = child_command(parser.parse_args(["serve"]))
    assert "--allow-actions" not in read_only and "pth_top.tui.served_app" in read_only
    assert "--allow-actions" in child_command(parser.parse_args(["serve", "--allow-actions"]))
    fleet = child_command(parser.parse_args(["serve", "--prometheus", "http://p:9090", "--prom-user", "a b",
                                             "--prom-header", "X-Scope-OrgID: t"]))
    assert "--prometheus http://p:9090" in fleet and "'a b'" in fleet
    assert "X-Scope-OrgID" not in fleet and "--prom-header" not in fleet, "headers travel in the environment"
    child = parse_arguments(fleet.split(" -m pth_top.tui.served_app ")[1].replace("'", "").split(" ")[:6])
    assert child.prometheus == "http://p:9090" and not child.allow_actions


def test_headers_reach_each_child_through_its_environment_never_its_argv():
    from pth_top.fleet.connection import HEADERS_ENV, make_connection
    from pth_top.tui.commands.serve import hand_headers_to_children

    args = build_parser().parse_args(["serve", "--prometheus", "http://p:9090", "--prom-header", "X-Api-Key: s3cret",
                                      "--prom-header", "X-Scope-OrgID: t"])
    assert "s3cret" not in child_command(args)
    environ = {HEADERS_ENV: "X-Inherited: yes\n"}
    hand_headers_to_children(args.prom_header, environ)
    child = make_connection("http://p:9090", environ=environ)
    assert child.headers == (("X-Inherited", "yes"), ("X-Api-Key", "s3cret"), ("X-Scope-OrgID", "t"))


@pytest.mark.parametrize("value", ["NoColon", "X-A: a\x1bb", "X-A: caf\u00e9", "Authorization: Bearer x", "X-A: a\rb"])
def test_a_bad_header_in_the_environment_is_one_line_naming_it(value):
    from pth_top.fleet.connection import HEADERS_ENV, ConnectionSettingError, make_connection

    with pytest.raises(ConnectionSettingError) as refused:
        make_connection("http://p:9090", environ={HEADERS_ENV: f"X-Good: 1\n{value}"})
    assert str(refused.value).startswith(f"${HEADERS_ENV}") and "\n" not in str(refused.value)


@pytest.mark.parametrize("listen, problem", [
    ("localhost:8824", "wants IP:PORT"), ("127.0.0.1:0", "from 1 to 65535"), ("127.0.0.1:x", "from 1 to 65535"),
    ("127.0.0.1", "wants IP:PORT"),
])
def test_bad_listen_is_one_line_and_exit_2(listen, problem, capsys):
    from pth_top.tui.cli import main

    assert main(["serve", "--listen", listen]) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1


def test_port_in_use_is_one_line_and_exit_2(capsys):
    import socket

    from pth_top.tui.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--listen", f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert "cannot listen on 127.0.0.1" in err and err.count("\n") == 1
