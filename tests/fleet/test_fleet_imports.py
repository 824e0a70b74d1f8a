"""The fleet view and the browser view are optional extras: the dashboard's start-up never loads them."""

from __future__ import annotations

import pytest

from tests.test_import_hygiene import imported_after, top_level

OPTIONAL = {"httpx", "textual_serve", "aiohttp"}


@pytest.mark.parametrize("module", ["pth_top.tui.app", "pth_top.tui.cli", "pth_top.tui.commands.fleet",
                                    "pth_top.tui.commands.serve", "pth_top.fleet"])
def test_dashboard_and_cli_start_up_load_no_fleet_or_web_extra(module):
    assert not top_level(imported_after(module)) & OPTIONAL


def test_the_fleet_view_itself_does_load_httpx():
    """The check above can fail: the query client pulls httpx in."""
    assert "httpx" in top_level(imported_after("pth_top.fleet.query"))


@pytest.mark.parametrize("module", ["pth_top.fleet.model", "pth_top.fleet.connection", "pth_top.fleet.query"])
def test_fleet_client_modules_import_no_ui_and_no_torch(module):
    # httpx's own package imports rich (for its command line) when rich is installed: only textual is checked there.
    ui = {"textual"} if module == "pth_top.fleet.query" else {"textual", "rich"}
    assert not top_level(imported_after(module)) & {*ui, "torch", "prometheus_client"}
