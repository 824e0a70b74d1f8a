"""The shipped Grafana dashboard: Grafana's JSON shape, and every panel query answers against a real Prometheus
scraping the scripted exporter (template variables as "All")."""

from __future__ import annotations

import json
import time

import pytest

from pth_top.fleet.metrics import SPECS
from tests.deploy.deploy_files import DASHBOARD, series_names
from tests.deploy.scripted_prometheus import scripted_prometheus
from tests.fleet.prometheus_tools import DEADLINE_S

GRID_COLUMNS = 24
# What Grafana puts in for the variables: "All" is the regex .*; the intervals as a 1 s scrape allows.
SUBSTITUTIONS = {"$instance": ".*", "$gpu": ".*", "$__rate_interval": "1m", "$__range": "5m", "$__interval": "15s"}


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def panels() -> list[dict]:
    return [panel for panel in dashboard()["panels"] if panel["type"] != "row"]


def queries() -> list[tuple[str, str]]:
    """(panel title, expr with the variables substituted) for every target of every panel."""
    found = []
    for panel in panels():
        for target in panel["targets"]:
            expr = target["expr"]
            for variable, value in SUBSTITUTIONS.items():
                expr = expr.replace(variable, value)
            found.append((panel["title"], expr))
    return found


def test_the_dashboard_has_grafanas_shape():
    board = dashboard()
    assert board["uid"] and board["title"] and isinstance(board["schemaVersion"], int)
    variables = {variable["name"] for variable in board["templating"]["list"]}
    assert {"datasource", "instance", "gpu"} <= variables
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    cells: dict[tuple[int, int], str] = {}
    for panel in board["panels"]:
        grid = panel["gridPos"]
        assert grid["w"] > 0 and grid["h"] > 0 and 0 <= grid["x"] and grid["x"] + grid["w"] <= GRID_COLUMNS, panel
        for cell in ((x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                     for y in range(grid["y"], grid["y"] + grid["h"])):
            assert cell not in cells, f"{panel['title']!r} overlaps {cells[cell]!r}"
            cells[cell] = panel["title"]
    for panel in panels():
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["targets"], panel["title"]
        refs = [target["refId"] for target in panel["targets"]]
        assert len(refs) == len(set(refs)) and all(target["expr"] for target in panel["targets"]), panel["title"]


def test_the_panels_read_only_series_the_exporter_serves():
    unknown = {name for _, expr in queries() for name in series_names(expr)} - set(SPECS)
    assert not unknown, f"not served by pth-top export: {sorted(unknown)}"


@pytest.mark.slow
def test_every_panel_query_returns_data_from_a_real_prometheus(tmp_path):
    with scripted_prometheus(tmp_path) as prometheus:
        give_up = time.monotonic() + 2 * DEADLINE_S
        empty = queries()
        while empty and time.monotonic() < give_up:
            empty = [(title, expr) for title, expr in empty if not prometheus.query(expr)]
            if empty:
                time.sleep(1)
        assert not empty, f"panels whose query returned nothing: {empty}"
