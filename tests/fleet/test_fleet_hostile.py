"""A hostile Prometheus (or anything posing as one): what it serves reaches no terminal raw and breaks nothing.

Terminal controls, bidi overrides, Rich markup and huge strings in every label; labels and values of the
wrong type or size; JSON nested 100,000 deep; targets of the wrong shape; a nonsense scrape interval.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse

import httpx
import pytest

from pth_top.fleet.answers import LABEL_MAX_CHARS, MAX_SERIES
from pth_top.fleet.model import MAX_GONE_HOSTS
from pth_top.fleet.query import MAX_SCRAPE_INTERVAL_S, FleetReader, PrometheusClient, QueryError
from pth_top.tui.screens.fleet import FleetApp, HostScreen
from pth_top.widgets.heat_grid import HeatGrid
from pth_top.widgets.row_table import RowTable
from tests.fleet.loopback_prometheus import LoopbackPrometheus, serving
from tests.fleet.test_fleet_query import Clock, FakeFleet, reader_for
from tests.fleet.test_fleet_screen import fleet_app, status
from tests.hostile_children import OSC52_TAIL, terminal_controls_in
from tests.waiting import wait_until

# Retitles the window, resets the terminal, a C1 CSI, bidi overrides, Rich markup, then far too long.
HOSTILE = ("\x1b]2;owned\x07\x1bc\u009b2J\u202eevil\u2066[bold]b[/bold][link=http://x]l" + OSC52_TAIL
           + "\x00\x7f\u2028" + "w" * 100_000)


class HostileFleet(FakeFleet):
    """Two hosts whose every label (instance, hostname, gpu, GPU model, pid, user, comm) is hostile."""

    def __init__(self) -> None:
        super().__init__(2)
        self.instances = [f"{number}{HOSTILE}" for number in range(2)]
        self.up = {instance: 1.0 for instance in self.instances}
        self.scrape_age_s = {instance: 0.5 for instance in self.instances}

    def per_gpu(self, value_of):
        return [({"instance": instance, "gpu": f"{gpu}{HOSTILE}"}, value_of(number, gpu))
                for number, instance in enumerate(self.instances) for gpu in range(2)]

    def handle(self, request: httpx.Request) -> httpx.Response:
        query = urllib.parse.parse_qs(request.content.decode()).get("query", [""])[0]
        gpus = [f"{gpu}{HOSTILE}" for gpu in range(2)]
        if " or pth_top_gpu_memory_used_bytes{" in query:  # the drill-down's GPU readings
            return self.vector([({"__name__": "pth_top_gpu_utilization_ratio", "gpu": gpu}, 0.4) for gpu in gpus])
        if query.startswith("pth_top_gpu_info"):
            return self.vector([({"gpu": gpu, "name": HOSTILE}, 1.0) for gpu in gpus])
        if query.startswith("topk("):
            return self.vector([({"gpu": gpu, "pid": HOSTILE, "user": HOSTILE, "comm": HOSTILE}, 2e9)
                                for gpu in gpus])
        if query.startswith("count by (instance, hostname) (pth_top_host_info"):
            return self.vector([({"instance": instance, "hostname": f"h{instance}"}, 1.0)
                                for instance in self.instances])
        return super().handle(request)


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_every_fleet_screen_shows_hostile_labels_as_visible_escapes():
    fleet, clock = HostileFleet(), Clock()
    app = fleet_app(fleet, clock)
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.fleet_screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 2, what="2 hosts")
        shown = []
        for key in ["g", "g", "g", "u", "m", "t", "p", "e", "r", "s", "h"]:
            await pilot.press(key)
            await pilot.pause()
            shown.append(screen_text(app))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, HostScreen) and len(app.screen.detail.processes) == 2,
                         what="the host's GPUs and processes")
        await pilot.pause()
        shown.append(screen_text(app))
        cells = [cell.plain for name in ("#host-gpus", "#host-processes")
                 for key in app.screen.query_one(name, RowTable).row_keys
                 for cell in app.screen.query_one(name, RowTable).get_row(key)]
        cells += [cell.plain for key in table.row_keys for cell in table.get_row(key)]
    for text in [*shown, *cells]:
        assert not terminal_controls_in(text), text[:300]
    assert all("\\x1b]2;owned" in text for text in shown), "each screen shows the labels, escaped"
    assert "[bold]b[/bold]" in shown[-1], "markup shown as written, not applied"
    assert max(map(len, cells)) <= LABEL_MAX_CHARS, "a huge label is cut"


def test_fleet_json_has_no_control_character_in_any_string():
    with LoopbackPrometheus(serving(HostileFleet().handle)) as server:
        result = subprocess.run([sys.executable, "-m", "pth_top.tui.cli", "fleet", "--prometheus", server.base,
                                 "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)

    def strings(value):
        if isinstance(value, dict):
            for key, item in value.items():
                yield key
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, str):
            yield value

    found = list(strings(answer))
    assert len(answer["hosts"]) == 2 and any("\\x1b]2;owned" in text for text in found)
    assert not any(terminal_controls_in(text) for text in found)
    assert max(map(len, found)) <= LABEL_MAX_CHARS + 100


class OddFleet(FakeFleet):
    """A fleet of 3 whose answers carry the odd series given in `extra` (by query prefix)."""

    def __init__(self, extra: dict[str, list[dict]], targets: object = None) -> None:
        super().__init__(3)
        self.extra = extra
        self.targets = targets

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/targets" and self.targets is not None:
            return httpx.Response(200, json={"status": "success", "data": self.targets})
        response = super().handle(request)
        query = self.queries[-1].removeprefix("max by (instance, gpu) (") if request.url.path == "/api/v1/query" else ""
        for prefix, series in self.extra.items():
            if query.startswith(prefix):
                answer = json.loads(response.content)
                answer["data"]["result"] += series
                return httpx.Response(200, content=json.dumps(answer).encode())
        return response


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("series, malformed", [
    ([{"metric": {"instance": "node-000:9824", "gpu": "\u00b2"}, "value": [1, "0.5"]}], 0),  # isdigit(), not int()
    ([{"metric": {"instance": "node-000:9824", "gpu": "\u0663"}, "value": [1, "0.5"]}], 0),  # Arabic-Indic 3
    ([{"metric": {"instance": "node-000:9824", "gpu": 7}, "value": [1, "0.5"]}], 1),  # a label that is no string
    ([{"metric": {"instance": "node-000:9824", "gpu": "8"}, "value": [1, "0.5", 2]}], 1),
    ([{"metric": {"instance": "node-000:9824", "gpu": "8"}, "value": "0.5"}, "a string", None, 5], 4),
    ([{"metric": {"instance": "node-000:9824", "gpu": "8"}, "value": [1, "0.5"], "deep": json.loads(
        "[" * 500 + "]" * 500)}], 0),
])
async def test_an_odd_series_is_skipped_or_kept_and_the_rest_of_the_fleet_stands(series, malformed):
    fleet = OddFleet({"pth_top_gpu_utilization_ratio": series})
    snapshot = await reader_for(fleet).refresh()
    assert snapshot.error is None and len(snapshot.hosts) == 3
    assert sum(host.gpu_count >= 8 for host in snapshot.hosts) == 3
    assert snapshot.malformed == malformed


@pytest.mark.parametrize("body", [DEEP, '{"status": "success", "data": ' + DEEP + "}",
                                  '{"status": "success", "data": {"resultType": "vector", "result": [' + DEEP + "]}}",
                                  '{"status": "success", "x": ' + DEEP + "}"])
async def test_json_nested_100000_deep_is_one_line_or_one_skipped_series(body):
    client = PrometheusClient(reader_for(FakeFleet(1)).client.connection,
                              transport=httpx.MockTransport(lambda request: httpx.Response(200, content=body)))
    try:
        series = await client.vector("up")
    except QueryError as error:
        assert "\n" not in str(error) and len(str(error)) < 400
    else:
        assert series == [] and client.malformed == 1


@pytest.mark.parametrize("targets, interval_s, malformed", [
    ({"activeTargets": ["x", None, {"labels": []}, {"labels": {"job": "pth-top"}, "scrapeInterval": 5},
                        {"labels": {"job": "pth-top"}, "scrapeInterval": "2s"}]}, 2.0, 4),
    ({"activeTargets": [{"labels": {"job": "pth-top"}, "scrapeInterval": "99999999999999d"}]},
     MAX_SCRAPE_INTERVAL_S, 0),
    ({"activeTargets": [{"labels": {"job": "pth-top"}, "scrapeInterval": "9" * 5000 + "s"}]}, 15.0, 0),
    ({"activeTargets": [{"labels": {"job": "pth-top"}, "scrapeInterval": "\u0663s"}]}, 15.0, 0),
])
async def test_targets_of_the_wrong_shape_or_a_nonsense_interval(targets, interval_s, malformed):
    reader = reader_for(OddFleet({}, targets=targets))
    snapshot = await reader.refresh()
    assert snapshot.error is None and len(snapshot.hosts) == 3
    assert reader.scrape_interval_s == interval_s and snapshot.malformed == malformed


@pytest.mark.parametrize("targets", [{"activeTargets": {}}, [], {"activeTargets": "x"}])
async def test_a_targets_answer_that_is_no_list_is_one_line(targets):
    snapshot = await reader_for(OddFleet({}, targets=targets)).refresh()
    assert snapshot.error is not None and "not a targets answer" in snapshot.error and "\n" not in snapshot.error


def test_fleet_json_with_readings_near_the_float_limit_is_valid_json():
    fleet = OddFleet({"pth_top_gpu_power_watts": [
        {"metric": {"instance": "node-000:9824", "gpu": str(gpu)}, "value": [1, "1.7e308"]} for gpu in range(8)]})
    with LoopbackPrometheus(serving(fleet.handle)) as server:
        result = subprocess.run([sys.executable, "-m", "pth_top.tui.cli", "fleet", "--prometheus", server.base,
                                 "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    hosts = {host["instance"]: host for host in json.loads(result.stdout)["hosts"]}
    assert hosts["node-000:9824"]["power_watts"] == 700.0, "the implausible readings are no readings"


async def test_hosts_that_keep_leaving_are_remembered_up_to_a_bound():
    fleet, clock = FakeFleet(0), Clock()
    reader = reader_for(fleet, clock)
    for generation in range(3):
        fleet.instances = [f"gen{generation}-{number}:9824" for number in range(700)]
        fleet.up = {instance: 1.0 for instance in fleet.instances}
        fleet.scrape_age_s = {instance: 0.5 for instance in fleet.instances}
        clock.now_s += 60
        snapshot = await reader.refresh()
        assert snapshot.error is None
    assert len(snapshot.hosts) == 700 + MAX_GONE_HOSTS
    assert all(host.instance.startswith("gen2-") or host.state.value == "gone" for host in snapshot.hosts)


class HangingReader(FleetReader):
    """Answers once, then every refresh hangs (a stuck query, a wedged proxy): the data only grow old."""

    async def refresh(self):
        if self.snapshot.taken_at_s:
            import asyncio

            await asyncio.Event().wait()
        return await super().refresh()


async def test_data_that_grow_old_are_shown_with_their_age_and_marked_stale():
    fleet, clock = FakeFleet(2), Clock()
    connection = reader_for(fleet).client.connection
    reader = HangingReader(PrometheusClient(connection, transport=httpx.MockTransport(fleet.handle)), clock=clock)
    app = FleetApp(connection, reader=reader, interval_s=1.0)
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.fleet_screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 2, what="2 hosts")
        await wait_until(pilot, lambda: ", 0s old" in status(app), what="the data's age")
        assert "STALE" not in status(app)
        clock.now_s += 1000
        await wait_until(pilot, lambda: "STALE: no new data for 17m" in status(app), what="stale by age")
        assert ", 17m old" in status(app)
        assert all(row.greyed for row in app.fleet_screen.query_one(HeatGrid).rows), "the grid greyed too"


async def test_an_answer_of_more_series_than_the_view_reads_is_one_line():
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": f"n{number}"}, "value": [1, "1"]} for number in range(MAX_SERIES + 1)]}})
    client = PrometheusClient(reader_for(FakeFleet(1)).client.connection,
                              transport=httpx.MockTransport(lambda request: httpx.Response(200, content=body)))
    with pytest.raises(QueryError, match=f"more than the {MAX_SERIES} the view reads"):
        await client.vector("up")
