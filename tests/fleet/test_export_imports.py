"""The exporter is an optional extra: the dashboard and the CLI's start-up never import prometheus_client."""

from __future__ import annotations

import pytest

from tests.test_import_hygiene import imported_after, top_level


@pytest.mark.parametrize("module", ["pth_top.tui.app", "pth_top.tui.cli", "pth_top.tui.commands.export",
                                    "pth_top.fleet", "pth_top.sensors.sampler"])
def test_no_prometheus_client_until_export_runs(module):
    assert "prometheus_client" not in top_level(imported_after(module))


def test_the_exporter_itself_does_load_it():
    """The check above can fail: importing the collector does pull prometheus_client in."""
    assert "prometheus_client" in top_level(imported_after("pth_top.fleet.collector"))


@pytest.mark.parametrize("module", ["pth_top.sensors.gpu_health", "pth_top.sensors.xid_events",
                                    "pth_top.sensors.gpu_process_owners", "pth_top.sensors.host_counters",
                                    "pth_top.fleet.collector", "pth_top.fleet.server"])
def test_exporter_modules_import_no_ui_and_no_torch(module):
    assert not top_level(imported_after(module)) & {"textual", "rich", "torch"}
