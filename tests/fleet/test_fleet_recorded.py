"""The fleet view reads pth-top's recording rules where Prometheus has them, the raw aggregates where not.

Against two real Prometheus servers scraping the same two simulated hosts, one with
deploy/prometheus/pth-top-recording.yml loaded and one without: each reader finds out which it has, and
both give the same hosts (a throttled GPU, pending remaps). And no query the view sends matches `__name__`
by a regex, which Prometheus answers by testing every metric name it holds.
"""

from __future__ import annotations

import asyncio
import re
import urllib.parse

import httpx
import pytest

from pth_top.fleet.aggregates import AGGREGATES
from pth_top.fleet.connection import make_connection
from pth_top.fleet.query import FleetReader, PrometheusClient
from tests.deploy.deploy_files import RECORDING_RULES
from tests.fleet.fleet_host_main import THROTTLED_GPU, THROTTLED_HOST
from tests.fleet.fleet_tools import FleetHost, stop_fleet
from tests.fleet.prometheus_tools import PrometheusServer, binary, wait_for
from tests.fleet.test_fleet_query import Clock, FakeFleet

NAME_MATCHER = re.compile(r"__name__\s*(=~|!~)")
EVERY_AGGREGATE = frozenset(aggregate.name for aggregate in AGGREGATES)


class RecordingFleet(FakeFleet):
    """FakeFleet that keeps every query and says all recorded series exist."""

    def handle(self, request: httpx.Request) -> httpx.Response:
        query = urllib.parse.parse_qs(request.content.decode()).get("query", [""])[0]
        if query.startswith("label_replace(count("):
            self.queries.append(query)
            return self.vector([({"aggregate": aggregate.name}, 8.0) for aggregate in AGGREGATES])
        return super().handle(request)


@pytest.mark.parametrize("fleet", [FakeFleet(3), RecordingFleet(3)], ids=["raw", "recorded"])
async def test_no_query_matches_metric_names_by_regex(fleet):
    client = PrometheusClient(make_connection("http://prom:9090"), transport=httpx.MockTransport(fleet.handle))
    reader = FleetReader(client, clock=Clock())
    snapshot = await reader.refresh()
    await reader.host_detail("node-001:9824")
    assert snapshot.error is None and len(snapshot.hosts) == 3
    assert reader.recorded == (EVERY_AGGREGATE if isinstance(fleet, RecordingFleet) else frozenset())
    assert any("pth_top_gpu_memory_total_bytes" in query for query in fleet.queries), "the drill-down was read"
    assert [query for query in fleet.queries if NAME_MATCHER.search(query)] == []
    per_gpu = [promql for promql, label in reader.queries().values() if label == "gpu"]
    assert len(per_gpu) == 7 and all(promql.startswith("max by (instance, gpu) (") for promql in per_gpu), (
        "per-GPU answers carry only the two labels the view reads")


def shown(snapshot) -> dict[str, tuple]:
    """What the view shows of each host, leaving out the ages (read at different moments)."""
    return {host.instance: (host.state, tuple((gpu.gpu, gpu.utilization_ratio, gpu.memory_used_ratio,
                                               gpu.temperature_celsius, gpu.power_watts, gpu.errors, gpu.throttled)
                                              for gpu in host.gpus))
            for host in snapshot.hosts}


async def read(prometheus: PrometheusServer) -> tuple[frozenset[str], dict[str, tuple]]:
    reader = FleetReader(PrometheusClient(make_connection(prometheus.base)))
    try:
        snapshot = await reader.refresh()
        assert snapshot.error is None, snapshot.error
        return reader.recorded, shown(snapshot)
    finally:
        await reader.close()


@pytest.mark.slow
def test_with_or_without_the_recording_rules_the_same_hosts(tmp_path):
    binary("prometheus")
    hosts = [FleetHost(0), FleetHost(THROTTLED_HOST)]
    servers: list[PrometheusServer] = []
    try:
        targets = [host.instance for host in hosts]
        (tmp_path / "with").mkdir()
        (tmp_path / "without").mkdir()
        servers.append(PrometheusServer(tmp_path / "with", targets, rule_files=(RECORDING_RULES,)))
        servers.append(PrometheusServer(tmp_path / "without", targets))
        with_rules, without_rules = servers
        for server in servers:
            wait_for(lambda server=server: len(server.query('pth_top_gpu_utilization_ratio{job="pth-top"}')) == 16,
                     "both hosts' GPUs stored")
        for aggregate in AGGREGATES:
            wait_for(lambda record=aggregate.record: len(with_rules.query(record)) == 16, f"{aggregate.record}")

        recorded, from_rules = asyncio.run(read(with_rules))
        raw, from_raw = asyncio.run(read(without_rules))
        assert recorded == EVERY_AGGREGATE and raw == frozenset()
        throttled = hosts[1].instance
        assert [gpu[0] for gpu in from_rules[throttled][1] if gpu[-1]] == [str(THROTTLED_GPU)]
        assert [[gpu[0] for gpu in host[1] if gpu[5]] for host in from_rules.values()] == [["2"], ["2"]], (
            "GPU 2's pending row remap")
        assert from_rules == from_raw
    finally:
        for server in servers:
            server.stop()
        stop_fleet(hosts, None)
