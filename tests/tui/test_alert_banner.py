"""The dashboard's alerts: a rule crossed shows one banner and rings the bell once; [alerts] in the settings file."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from pth_top.tui.app import PthTopApp
from pth_top.tui.settings import SETTINGS_FILE_NAME, load_settings, save_settings
from tests.fakes.snapshots import FixedSource, make_snapshot
from tests.waiting import wait_until

ONLY_TEMPERATURE = """[alerts.rules.gpu_temperature]
for_s = 0
"""


def write_settings(text: str) -> Path:
    path = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / SETTINGS_FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def with_gpu(**fields):
    snapshot = make_snapshot(gpu_count=1)
    return replace(snapshot, gpus=(replace(snapshot.gpus[0], **fields),))


def counted_bell(app: PthTopApp) -> list[int]:
    rings = [0]

    def bell() -> None:
        rings[0] += 1

    app.bell = bell  # type: ignore[method-assign]
    return rings


def alert_banners(app: PthTopApp) -> list[str]:
    return [notification.message for notification in app._notifications if notification.title == "Alert"]


class XidSource(FixedSource):
    """A source whose Xid watcher saw one Xid 79 on GPU 0 from its fourth sample on."""

    def xid_counts(self) -> dict[tuple[int, str], int]:
        return {(0, "79"): 1} if self.calls >= 4 else {}


async def run_until_banner(snapshots, what: str, settings: str = ONLY_TEMPERATURE, source_class=FixedSource):
    write_settings(settings)
    source = source_class(*snapshots)
    app = PthTopApp(interval_s=0.05, source_factory=lambda: source)
    rings = counted_bell(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: alert_banners(app), what=what)
        calls = source.calls
        await wait_until(pilot, lambda: source.calls >= calls + 5, what="five more samples")
        await pilot.pause()
        return alert_banners(app), rings[0]


async def test_a_hot_gpu_shows_one_banner_and_rings_the_bell_once():
    cool, hot = with_gpu(temperature_c=60.0), with_gpu(temperature_c=97.0)
    banners, rings = await run_until_banner((cool, cool, hot), "the temperature alert's banner")
    assert banners == ["GPU 0 (NVIDIA H100 80GB HBM3) at 97 C, at or above 85 C for 0 s"]
    assert rings == 1


async def test_an_xid_the_recorder_detects_is_a_banner():
    before, after = with_gpu(xid_errors=0), with_gpu(xid_errors=1)
    banners, rings = await run_until_banner((before, before, before, after), "the Xid alert's banner", "")
    assert len(banners) == 1 and banners[0].startswith("GPU 0: Xid ?") and rings == 1


async def test_an_xid_code_from_the_sampler_is_named_in_the_banner():
    banners, rings = await run_until_banner((with_gpu(),), "the Xid 79 banner", "", XidSource)
    assert len(banners) == 1 and banners[0].startswith("GPU 0: Xid 79: ") and rings == 1


async def test_bell_off_shows_the_banner_without_the_bell():
    cool, hot = with_gpu(temperature_c=60.0), with_gpu(temperature_c=97.0)
    banners, rings = await run_until_banner((cool, cool, hot), "the banner", "[alerts]\nbell = false\n"
                                            + ONLY_TEMPERATURE)
    assert len(banners) == 1 and rings == 0


def test_the_alerts_table_survives_a_dashboard_key_that_saves():
    path = write_settings('[alerts]\ndestinations = ["json://127.0.0.1:9/x"]\n\n'
                          '[alerts.rules.gpu_temperature]\nabove_c = 80\nclear_below_c = 70\n')
    settings, problem = load_settings()
    assert problem is None and settings.alerts.rules.gpu_temperature.above_c == 80
    assert save_settings(replace(settings, history_shown=False)) is None
    again, problem = load_settings()
    assert problem is None and again.alerts == settings.alerts and not again.history_shown
    assert "[alerts.rules.gpu_temperature]" in path.read_text()


def test_a_bad_alert_rule_is_one_line_and_the_file_is_kept():
    path = write_settings("[alerts.rules.disk]\nfree_below_fraction = 2\n")
    settings, problem = load_settings()
    assert problem == (f"settings file {path} ignored: alerts.rules.disk.free_below_fraction: must be at most 1, "
                       "got 2; using defaults")
    assert settings.alerts.rules.disk.free_below_fraction == 0.05
