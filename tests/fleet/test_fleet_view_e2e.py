"""The fleet view against 8 simulated hosts (8 scripted GPUs each) behind one real Prometheus.

Numbers are checked against what the exporters themselves served (their /metrics), through the query
client, `pth-top fleet --json` and a Pilot run of the screen; then one host is killed (it turns greyed
with its age, its last GPUs kept) and restarted on its port (it comes back up).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any, Awaitable, Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families

from pth_top.fleet.connection import make_connection
from pth_top.fleet.model import FleetSnapshot, HostState
from pth_top.fleet.query import FleetReader, PrometheusClient
from tests.fleet.fleet_host_main import THROTTLED_GPU, THROTTLED_HOST, host_readings
from tests.fleet.fleet_tools import FleetHost, start_fleet, stop_fleet
from tests.fleet.prometheus_tools import DEADLINE_S, binary, http_get

pytestmark = pytest.mark.slow
HOST_COUNT = 8


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    binary("prometheus")
    hosts, prometheus = start_fleet(tmp_path_factory.mktemp("fleet"), HOST_COUNT)
    yield hosts, prometheus
    stop_fleet(hosts, prometheus)


async def eventually(condition: Callable[[], Awaitable[Any]], what: str) -> Any:
    """Await `condition` until it is truthy; fail naming `what` after the shared deadline."""
    give_up = time.monotonic() + DEADLINE_S
    while True:
        value = await condition()
        if value:
            return value
        if time.monotonic() >= give_up:
            raise AssertionError(f"waited {DEADLINE_S:g} s for {what}, in vain")
        await asyncio.sleep(0.2)


def served(host: FleetHost) -> dict[str, dict[str, float]]:
    """metric name -> gpu -> value, as the host's exporter serves it right now."""
    values: dict[str, dict[str, float]] = {}
    for family in text_string_to_metric_families(http_get(host.url).decode()):
        for sample in family.samples:
            if "gpu" in sample.labels:
                values.setdefault(sample.name, {})[sample.labels["gpu"]] = sample.value
    return values


def expected_row(host: FleetHost) -> dict[str, Any]:
    metrics = served(host)
    gpus = sorted(metrics["pth_top_gpu_utilization_ratio"], key=int)
    memory = [metrics["pth_top_gpu_memory_used_bytes"][gpu] / metrics["pth_top_gpu_memory_total_bytes"][gpu]
              for gpu in gpus]
    return {
        "gpu_count": len(gpus),
        "utilization": [metrics["pth_top_gpu_utilization_ratio"][gpu] for gpu in gpus],
        "memory_used_ratio": sum(memory) / len(memory),
        "temperature_max_celsius": max(metrics["pth_top_gpu_temperature_celsius"].values()),
        "power_watts": sum(metrics["pth_top_gpu_power_watts"].values()),
        "remaps": sum(metrics.get("pth_top_gpu_row_remap_pending", {}).values())
        + sum(metrics.get("pth_top_gpu_row_remap_failed", {}).values()),
    }


def all_up(snapshot: FleetSnapshot) -> bool:
    return len(snapshot.hosts) == HOST_COUNT and all(host.state is HostState.UP for host in snapshot.hosts)


async def test_client_numbers_match_what_each_exporter_served(fleet):
    hosts, prometheus = fleet
    reader = FleetReader(PrometheusClient(make_connection(prometheus.base)))
    try:
        snapshot = await eventually(lambda: _refreshed_if(reader, all_up), "all 8 hosts up")
        assert snapshot.scrape_interval_s == 1.0, "read from /api/v1/targets"
        assert snapshot.query_count <= 13, "11 queries, the targets and the recorded series looked for"
        assert snapshot.gpu_count == 8 * HOST_COUNT
        for host in hosts:
            row = snapshot.host(host.instance)
            expected = expected_row(host)
            assert row is not None and row.hostname
            assert row.gpu_count == expected["gpu_count"] == 8
            assert [gpu.utilization_ratio for gpu in row.gpus] == pytest.approx(expected["utilization"])
            assert expected["utilization"] == pytest.approx(
                [reading["utilization_percent"] / 100 for reading in host_readings(host.host_number)])
            assert row.memory_used_ratio == pytest.approx(expected["memory_used_ratio"])
            assert row.temperature_max_celsius == expected["temperature_max_celsius"]
            assert row.power_watts == pytest.approx(expected["power_watts"])
            assert row.errors == expected["remaps"] == 1.0, "GPU 2's pending row remap"
            assert row.throttled_gpus == (1 if host.host_number == THROTTLED_HOST else 0)
        throttled = snapshot.host(hosts[THROTTLED_HOST].instance)
        assert throttled is not None and [gpu.throttled for gpu in throttled.gpus].index(True) == THROTTLED_GPU

        detail = await reader.host_detail(hosts[0].instance)
        assert detail.error is None and [gpu.gpu for gpu in detail.gpus] == [str(index) for index in range(8)]
        assert detail.gpus[0].name == "NVIDIA H100 80GB HBM3"
        assert [(process.gpu, process.pid) for process in detail.processes] == [("0", str(hosts[0].process.pid))]
    finally:
        await reader.client.close()


async def _refreshed_if(reader: FleetReader, condition: Callable[[FleetSnapshot], bool]) -> FleetSnapshot | None:
    snapshot = await reader.refresh()
    return snapshot if snapshot.error is None and condition(snapshot) else None


def test_json_command_prints_the_fleet_worst_first(fleet):
    hosts, prometheus = fleet
    result = subprocess.run([sys.executable, "-m", "pth_top.tui.cli", "fleet", "--prometheus", prometheus.base,
                             "--json"], capture_output=True, text=True, timeout=DEADLINE_S)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["error"] is None and len(document["hosts"]) == HOST_COUNT
    # Every host carries one error (a pending remap); the throttled host comes first.
    assert document["hosts"][0]["instance"] == hosts[THROTTLED_HOST].instance
    by_instance = {host["instance"]: host for host in document["hosts"]}
    for host in hosts:
        assert by_instance[host.instance]["temperature_max_celsius"] == expected_row(host)["temperature_max_celsius"]


async def test_screen_shows_the_numbers_then_a_killed_host_greyed_then_back(fleet):
    from pth_top.tui.screens.fleet import FleetApp, HostScreen
    from pth_top.widgets.heat_grid import HeatGrid
    from pth_top.widgets.row_table import RowTable

    hosts, prometheus = fleet
    app = FleetApp(make_connection(prometheus.base), interval_s=1.0)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = app.fleet_screen
        table = screen.query_one(RowTable)

        async def shown(condition: Callable[[], bool]) -> bool:
            await pilot.pause(0.2)
            return screen.snapshot.error is None and condition()

        await eventually(lambda: shown(lambda: all_up(screen.snapshot) and table.row_count == HOST_COUNT),
                         "the screen to show 8 hosts up")
        assert table.row_keys[0] == hosts[THROTTLED_HOST].instance, "worst first: the throttled host"
        for host in hosts:
            cells = [cell.plain for cell in table.get_row(host.instance)]
            expected = expected_row(host)
            assert cells[1] == "up" and cells[3] == "8"
            assert cells[4] == f"{100 * sum(expected['utilization']) / 8:.0f}%"
            assert cells[7] == f"{expected['temperature_max_celsius']:.0f}C"
            assert cells[8] == f"{expected['power_watts']:.0f}W"
        grid = {row.label: row.values for row in screen.query_one(HeatGrid).rows}
        assert list(grid) == table.row_keys, "same hostname everywhere: the grid is labelled by instance"
        for host in hosts:
            assert grid[host.instance] == pytest.approx(expected_row(host)["utilization"])

        victim = hosts[5]
        table.move_cursor_to_key(victim.instance)
        await pilot.press("enter")
        await eventually(lambda: shown(lambda: isinstance(app.screen, HostScreen) and len(app.screen.detail.gpus) == 8),
                         "the drill-down to list 8 GPUs")
        await pilot.press("escape")

        assert victim.stop() == 0
        await eventually(lambda: shown(lambda: table.get_row(victim.instance)[1].plain == "down"), "the host down")
        row = screen.snapshot.host(victim.instance)
        assert row is not None and row.state.greyed and row.gpu_count == 8, "last GPUs kept, greyed"
        await eventually(lambda: shown(lambda: (screen.snapshot.host(victim.instance).age_s or 0) >= 2),
                         "the down host's age to grow")
        assert "dim" in str(table.get_row(victim.instance)[0].style)
        assert table.row_keys[0] == victim.instance, "a down host sorts first"
        others = [screen.snapshot.host(host.instance) for host in hosts if host is not victim]
        assert all(other is not None and other.state is HostState.UP for other in others)

        hosts[5] = FleetHost(victim.host_number, port=victim.port)
        await eventually(lambda: shown(lambda: table.get_row(victim.instance)[1].plain == "up"), "the host back up")
