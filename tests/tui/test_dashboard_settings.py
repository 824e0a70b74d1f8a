"""The dashboard remembers its panels and GPU history charts in <config dir>/dashboard.toml."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pth_top.sensors.gpu_flags import FlagThresholds
from pth_top.sensors.history import History
from pth_top.tui.app import PthTopApp
from pth_top.tui.panels.history import HistoryPanel
from pth_top.tui.settings import (
    GPU_HISTORY_VIEWS,
    SETTINGS_FILE_NAME,
    DashboardSettings,
    load_settings,
    save_settings,
    settings_path,
    settings_to_toml,
)
from pth_top.widgets.history_chart import HistoryChart
from pth_top.widgets.level_sparkline import LevelSparkline
from tests.fakes.snapshots import FixedSource, make_snapshot
from tests.waiting import wait_until


def config_file() -> Path:
    return Path(os.environ["PTH_TOP_CONFIG_DIR"]) / SETTINGS_FILE_NAME


def test_defaults_without_a_file():
    assert load_settings() == (DashboardSettings(), None)
    assert settings_path() == config_file()


def test_saved_settings_load_back():
    chosen = DashboardSettings(history_shown=False, io_shown=True, gpu_history=("power", "temp"))
    assert save_settings(chosen) is None
    assert load_settings() == (chosen, None)
    assert 'gpu_history = "power+temp"' in config_file().read_text()


def test_the_key_cycles_through_every_metric_and_back():
    settings, seen = DashboardSettings(), set()
    for _ in GPU_HISTORY_VIEWS:
        seen.update(settings.gpu_history)
        settings = settings.next_gpu_history()
    assert settings == DashboardSettings() and seen == {"util", "mem", "power", "temp"}


@pytest.mark.parametrize("content, reason", [
    (b"[monitor\n", "Expected ']'"),
    (b"[monitor]\nhistory = 'yes'\n", "monitor.history must be true or false"),
    (b"[monitor]\ngpu_history = 'fan+clock'\n", "monitor.gpu_history must be one of util+mem"),
    (b"[monitor]\ndisk_network = 3\n", "monitor.disk_network must be true, false"),
    (b"monitor = 1\n", "[monitor] is not a table"),
    (b"monitor = [1]\n", "[monitor] is not a table"),
    (b"[monitor]\nhistory = [true]\n", "monitor.history must be true or false"),
    (b"[monitor]\nhistory = {shown = true}\n", "monitor.history must be true or false"),
    (b"[monitor]\nhistory = 1\n", "monitor.history must be true or false"),
    (b"[monitor]\ndisk_network = ['auto']\n", "monitor.disk_network must be true, false"),
    (b"[monitor]\ndisk_network = {auto = true}\n", "monitor.disk_network must be true, false"),
    (b"[monitor]\ndisk_network = 'yes'\n", "monitor.disk_network must be true, false"),
    (b"[monitor]\ngpu_history = ['util']\n", "monitor.gpu_history must be one of util+mem"),
    (b"[monitor]\ngpu_history = ['util', 'mem']\n", "monitor.gpu_history must be one of util+mem"),
    (b"[monitor]\ngpu_history = {util = 'mem'}\n", "monitor.gpu_history must be one of util+mem"),
    (b"[monitor]\ngpu_history = 3\n", "monitor.gpu_history must be one of util+mem"),
    (b"[monitor]\ngpu_history = 1979-05-27\n", "monitor.gpu_history must be one of util+mem"),
    (b"\xff\xfe\x00", "codec"),
])
def test_a_broken_file_gives_defaults_and_one_line(content, reason):
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_bytes(content)
    settings, problem = load_settings()
    assert settings == DashboardSettings()
    assert reason in problem and "\n" not in problem and "using defaults" in problem
    assert config_file().read_bytes() == content, "a broken file is left as it was"


def test_a_folder_in_place_of_the_file_and_a_relative_config_dir(monkeypatch):
    config_file().mkdir(parents=True)
    settings, problem = load_settings()
    assert settings == DashboardSettings() and "is a directory" in problem
    assert "not saved" in save_settings(DashboardSettings())
    monkeypatch.setenv("PTH_TOP_CONFIG_DIR", "relative/dir")
    assert "must be an absolute path" in load_settings()[1]
    assert "must be an absolute path" in save_settings(DashboardSettings())
    assert not Path("relative").exists()


def test_a_symlinked_settings_file_is_not_written_through(tmp_path):
    target = tmp_path / "elsewhere.toml"
    target.write_text("[monitor]\nhistory = false\n")
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().symlink_to(target)
    assert "symbolic link" in save_settings(DashboardSettings())
    assert target.read_text() == "[monitor]\nhistory = false\n"


def test_a_config_dir_that_is_a_dangling_link_says_so_and_makes_nothing(tmp_path):
    folder, target = config_file().parent, tmp_path / "gone"
    folder.symlink_to(target)
    assert load_settings() == (DashboardSettings(), None), "nothing saved yet is the defaults"
    problem = save_settings(DashboardSettings())
    assert problem == f"settings not saved: settings directory {folder} is a dangling symbolic link to {target}"
    assert os.readlink(folder) == str(target) and not target.exists()


@pytest.mark.parametrize("inside", [False, True])
def test_a_config_dir_that_is_a_file_says_so_and_leaves_it(monkeypatch, inside):
    blocker = config_file().parent
    blocker.write_bytes(b"not a folder\n")
    if inside:
        monkeypatch.setenv("PTH_TOP_CONFIG_DIR", str(blocker / "sub"))
    folder = config_file().parent
    said = f"settings directory {folder} cannot be made: {blocker}" if inside else f"settings directory {blocker}"
    settings, problem = load_settings()
    assert settings == DashboardSettings()
    assert problem == f"settings not loaded: {said} is a file, not a directory; using defaults"
    assert save_settings(DashboardSettings()) == f"settings not saved: {said} is a file, not a directory"
    assert blocker.read_bytes() == b"not a folder\n"


def make_app(gpu_count=2):
    source = FixedSource(make_snapshot(gpu_count=gpu_count))
    return PthTopApp(interval_s=0.1, source_factory=lambda: source)


async def test_keys_change_the_charts_and_the_choice_survives_a_restart():
    app = make_app()
    async with app.run_test(size=(120, 60)) as pilot:
        panel = app.screen.query_one(HistoryPanel)
        left = app.screen.query_one("#chart-gpu-left", HistoryChart)
        await wait_until(pilot, lambda: panel.has_class("-charts") and left.series, what="the history charts")
        assert app.screen.query_one("#chart-gpu-left", HistoryChart).title == "GPU util %"
        await pilot.press("c")
        await wait_until(pilot, lambda: app.screen.query_one("#chart-gpu-left", HistoryChart).title == "GPU power W",
                         what="the power chart")
        right = app.screen.query_one("#chart-gpu-right", HistoryChart)
        assert right.title == "GPU temp °C" and right.y_max == 100.0
        assert app.screen.query_one("#chart-gpu-left", HistoryChart).y_max == 700.0  # the H100 power limit
        await pilot.press("i")
        await pilot.press("h")
        await wait_until(pilot, lambda: not panel.display, what="the history panel to hide")
    chosen = DashboardSettings(history_shown=False, io_shown=False, gpu_history=("power", "temp"))
    assert load_settings() == (chosen, None)
    app = make_app()
    async with app.run_test(size=(120, 60)) as pilot:
        await wait_until(pilot, lambda: app.screen.query_one("#process-table").row_count, what="the first sample")
        assert not app.screen.query_one(HistoryPanel).display
        assert not app.screen.query_one("#io-row").display
        assert app.screen.settings.gpu_history == ("power", "temp")


@pytest.mark.parametrize("content, reason", [
    ("[monitor]\nhistory = 'maybe'\n", "monitor.history must be true or false"),
    ("[monitor]\ngpu_history = ['util']\n", "monitor.gpu_history must be one of"),
    ("[monitor]\ngpu_history = {left = 'util'}\n", "monitor.gpu_history must be one of"),
    ("[monitor]\ndisk_network = [true]\n", "monitor.disk_network must be true, false"),
])
async def test_a_broken_settings_file_is_one_line_on_screen_and_the_defaults(content, reason):
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_text(content)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query_one("#process-table").row_count, what="the first sample")
        messages = [notification.message for notification in app._notifications]
        assert [message for message in messages if reason in message and "\n" not in message], messages
        assert app.screen.query_one(HistoryPanel).display


async def test_a_refused_settings_file_is_never_overwritten_and_that_is_said_once():
    broken = b"[monitor]\nhistory = 'maybe'\n"
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_bytes(broken)
    app = make_app()
    async with app.run_test(size=(120, 60)) as pilot:
        await wait_until(pilot, lambda: app.screen.query_one("#process-table").row_count, what="the first sample")
        for key in "hic":
            await pilot.press(key)
        await wait_until(pilot, lambda: not app.screen.query_one(HistoryPanel).display, what="the history to hide")
        assert app.screen.settings.gpu_history == ("power", "temp"), "the choice still applies for this run"
        messages = [str(notification.message) for notification in app._notifications]
        assert sum("changes are not saved" in message for message in messages) == 1, messages
    assert config_file().read_bytes() == broken


async def test_short_terminal_sparkline_follows_the_chosen_metric():
    save_settings(DashboardSettings(gpu_history=("mem", "temp")))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        label = app.screen.query_one("#spark-gpu-label")
        sparkline = app.screen.query_one("#spark-gpu", LevelSparkline)
        await wait_until(pilot, lambda: sparkline.values, what="the GPU sparkline")
        assert str(label.render()) == "GPU mem"


def test_history_keeps_power_and_temperature_per_gpu():
    history = History(capacity=3)
    for _ in range(4):
        history.append(make_snapshot(gpu_count=2))
    assert len(history.gpu_series("power", 1)) == 3
    assert history.gpu_series("power", 0)[-1] == make_snapshot(gpu_count=2).gpus[0].power_draw_w
    assert history.gpu_series("temp", 1)[-1] == make_snapshot(gpu_count=2).gpus[1].temperature_c
    assert history.gpu_power_limit_w == 700.0


@pytest.mark.parametrize("content, reason", [
    (b"[flags]\nstuck_after_s = 'soon'\n", "flags.stuck_after_s must be a positive number"),
    (b"[flags]\nstuck_after_s = -5\n", "flags.stuck_after_s must be a positive number"),
    (b"[flags]\nstuck_power_ratio = 35\n", "flags.stuck_power_ratio must be a share from 0 to 1"),
    (b"[flags]\nstuck_after = 60\n", "flags.'stuck_after' is not a setting; the settings are stuck_util_percent"),
    (b"[flags]\nstraggler_ratio = true\n", "flags.straggler_ratio must be a positive number"),
    (b"flags = 3\n", "[flags] is not a table"),
])
def test_broken_flag_thresholds_give_defaults_and_one_line(tmp_path, content, reason):
    path = tmp_path / "dashboard.toml"
    path.write_bytes(content)
    settings, problem = load_settings(path)
    assert settings == DashboardSettings() and reason in problem and "\n" not in problem


def test_flag_thresholds_load_and_are_kept_when_a_key_saves(tmp_path):
    path = tmp_path / "dashboard.toml"
    path.write_text("[flags]\nstuck_after_s = 120\nstraggler_ratio = 0.8\n")
    settings, problem = load_settings(path)
    assert problem is None
    assert settings.flags == FlagThresholds(stuck_after_s=120.0, straggler_ratio=0.8)
    assert save_settings(settings.next_gpu_history(), path) is None
    assert load_settings(path)[0].flags == settings.flags
    assert "[flags]" not in settings_to_toml(DashboardSettings())
