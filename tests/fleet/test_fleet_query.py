"""The fleet query client without a server: canned Prometheus answers through httpx.MockTransport.

Query count independent of fleet size, the scrape-interval rate limit, errors in one line with the last
data kept, hosts that go stale, down or away, and the worst-first order.
"""

from __future__ import annotations

import json
import socket
import urllib.parse
from typing import Any

import httpx
import pytest

from pth_top.fleet.connection import make_connection
from pth_top.fleet.model import HostRow, HostState, sorted_hosts
from pth_top.fleet.query import FleetReader, PrometheusClient, QueryError, parse_duration_s, promql_string


class FakeFleet:
    """Answers the fleet queries for `host_count` hosts of 8 GPUs; `scrape_age_s`, `up` per host adjustable."""

    def __init__(self, host_count: int) -> None:
        self.instances = [f"node-{number:03d}:9824" for number in range(host_count)]
        self.up = {instance: 1.0 for instance in self.instances}
        self.scrape_age_s = {instance: 0.5 for instance in self.instances}
        self.queries: list[str] = []
        self.failure: httpx.Response | None = None
        self.series_gone: set[str] = set()  # hosts whose GPU series are stale while `up` still reads 1

    def vector(self, series: list[tuple[dict[str, str], float]]) -> httpx.Response:
        result = [{"metric": labels, "value": [1700000000.0, repr(value) if value == value else "NaN"]}
                  for labels, value in series]
        return httpx.Response(200, json={"status": "success", "data": {"resultType": "vector", "result": result}})

    def per_gpu(self, value_of) -> list[tuple[dict[str, str], float]]:
        return [({"instance": instance, "gpu": str(gpu)}, value_of(number, gpu))
                for number, instance in enumerate(self.instances)
                if self.up[instance] and instance not in self.series_gone for gpu in range(8)]

    def handle(self, request: httpx.Request) -> httpx.Response:
        if self.failure is not None:
            return self.failure
        if request.url.path == "/api/v1/targets":
            return httpx.Response(200, json={"status": "success", "data": {"activeTargets": [
                {"labels": {"job": "pth-top", "instance": instance}, "scrapeInterval": "5s"}
                for instance in self.instances]}})
        query = urllib.parse.parse_qs(request.content.decode())["query"][0]
        self.queries.append(query)
        # Answers keep only the labels the view reads: per GPU instance and gpu, the host info instance and hostname.
        query = query.removeprefix("max by (instance, gpu) (").removeprefix("count by (instance, hostname) (")
        per_host = {"up": lambda instance: self.up[instance], "time()": lambda instance: self.scrape_age_s[instance],
                    "pth_top_nvml_up": lambda instance: 1.0, "pth_top_host_info": lambda instance: 1.0}
        for prefix, value_of in per_host.items():
            if query.startswith(prefix):
                return self.vector([({"instance": instance, "hostname": instance.split(":")[0]}, value_of(instance))
                                    for instance in self.instances if prefix in ("up", "time()") or self.up[instance]])
        if query.startswith("pth_top_gpu_utilization_ratio"):
            return self.vector(self.per_gpu(lambda number, gpu: ((number + gpu) % 10) / 10))
        if query.startswith("pth_top_gpu_temperature_celsius"):
            return self.vector(self.per_gpu(lambda number, gpu: 40.0 + number % 7 + gpu))
        if query.startswith("pth_top_gpu_power_watts"):
            return self.vector(self.per_gpu(lambda number, gpu: float("nan") if gpu == 7 else 100.0))
        if "(pth_top_gpu_memory_used_bytes{" in query:  # the view's raw memory aggregate
            return self.vector(self.per_gpu(lambda number, gpu: 0.5))
        if query.startswith("max by (job, instance, gpu) (pth_top_gpu_clocks_event_active"):
            return self.vector(self.per_gpu(lambda number, gpu: 1.0 if (number, gpu) == (3, 1) else 0.0))
        if "xid_errors_total" in query:
            return self.vector(self.per_gpu(lambda number, gpu: 2.0 if (number, gpu) == (4, 0) else 0.0))
        return self.vector([])


class Clock:
    def __init__(self) -> None:
        self.now_s = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now_s


def reader_for(fleet: FakeFleet, clock: Clock | None = None, **connection: Any) -> FleetReader:
    client = PrometheusClient(make_connection("http://prom:9090", **connection),
                              transport=httpx.MockTransport(fleet.handle))
    return FleetReader(client, clock=clock or Clock())


@pytest.mark.parametrize("host_count", [8, 125])
async def test_one_refresh_costs_the_same_queries_whatever_the_fleet_size(host_count):
    fleet = FakeFleet(host_count)
    snapshot = await reader_for(fleet).refresh()
    assert snapshot.error is None and len(snapshot.hosts) == host_count and snapshot.gpu_count == 8 * host_count
    assert snapshot.query_count == 13, "11 queries plus the targets read and the recorded series looked for"
    assert len(fleet.queries) == 12
    assert snapshot.scrape_interval_s == 5.0
    host = snapshot.host("node-000:9824")
    assert host is not None and host.hostname == "node-000"
    assert host.power_watts == 700.0, "a NaN reading is left out, not summed"


async def test_never_refreshes_faster_than_the_scrape_interval():
    fleet, clock = FakeFleet(2), Clock()
    reader = reader_for(fleet, clock)
    first = await reader.refresh()
    clock.now_s += 4.9
    assert await reader.refresh() is first and len(fleet.queries) == 12
    clock.now_s += 0.2
    assert await reader.refresh() is not first and len(fleet.queries) == 23, "recorded series looked for once"


async def test_worst_first_errors_throttling_then_staleness_and_down():
    fleet, clock = FakeFleet(6), Clock()
    fleet.scrape_age_s["node-005:9824"] = 16.0  # more than 3 scrape intervals of 5 s
    reader = reader_for(fleet, clock)
    snapshot = await reader.refresh()
    order = [host.instance for host in sorted_hosts(snapshot.hosts)]
    assert order[:3] == ["node-005:9824", "node-004:9824", "node-003:9824"], "stale, then Xid errors, then throttled"
    assert snapshot.host("node-005:9824").state is HostState.STALE
    assert snapshot.host("node-004:9824").errors == 2.0
    assert snapshot.host("node-003:9824").throttled_gpus == 1

    fleet.up["node-001:9824"] = 0.0
    clock.now_s += 10
    snapshot = await reader.refresh()
    down = snapshot.host("node-001:9824")
    assert down is not None and down.state is HostState.DOWN and down.state.greyed
    assert down.gpu_count == 8 and down.hostname == "node-001", "its last GPUs and hostname are kept"
    assert down.age_s == pytest.approx(10.5)

    # The stress run's race: a refresh read `up` at 1 while the killed host's GPU series were already stale, and the
    # down row that followed had no GPUs to grey.
    fleet.series_gone.add("node-000:9824")
    clock.now_s += 10
    assert (await reader.refresh()).host("node-000:9824").gpu_count == 0
    fleet.up["node-000:9824"] = 0.0
    clock.now_s += 10
    assert (await reader.refresh()).host("node-000:9824").gpu_count == 8, "the last GPUs seen, not the last row's"

    fleet.instances.remove("node-002:9824")
    clock.now_s += 10
    snapshot = await reader.refresh()
    gone = snapshot.host("node-002:9824")
    assert gone is not None and gone.state is HostState.GONE and gone.age_s == pytest.approx(10.5)
    assert [host.instance for host in sorted_hosts(snapshot.hosts)][0] == "node-002:9824"


@pytest.mark.parametrize("response, message", [
    (httpx.Response(401, text="Unauthorized"), "refused the request: HTTP 401"),
    (httpx.Response(400, json={"status": "error", "errorType": "bad_data", "error": "parse error at char 3"}),
     "bad query: parse error at char 3"),
    (httpx.Response(503, text="<html>Service Unavailable</html>"), "HTTP 503"),
    (httpx.Response(200, json={"status": "success", "data": {"resultType": "matrix", "result": []}}),
     "not an instant vector"),
])
async def test_a_failed_refresh_says_what_in_one_line_and_keeps_the_last_data(response, message):
    fleet, clock = FakeFleet(3), Clock()
    reader = reader_for(fleet, clock)
    good = await reader.refresh()
    fleet.failure = response
    clock.now_s += 60
    failed = await reader.refresh()
    assert failed.error is not None and message in failed.error and "\n" not in failed.error
    assert failed.hosts == good.hosts and failed.taken_at_s == good.taken_at_s, "last data kept"


async def test_timeout_and_connection_refused_are_one_line():
    def too_slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    client = PrometheusClient(make_connection("http://prom:9090", timeout_s=0.5),
                              transport=httpx.MockTransport(too_slow))
    with pytest.raises(QueryError, match=r"did not answer within 0.5 s"):
        await client.vector("up")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    client = PrometheusClient(make_connection(f"http://127.0.0.1:{closed_port}"))
    with pytest.raises(QueryError, match=r"cannot connect to http://127.0.0.1:\d+: connection refused"):
        await client.vector("up")
    await client.close()


async def test_a_connection_closed_without_an_answer_says_so():
    def closes(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("", request=request)  # what an HTTPS server asked over http can look like

    client = PrometheusClient(make_connection("http://prom:9090"), transport=httpx.MockTransport(closes))
    with pytest.raises(QueryError, match=r"closed the connection without an answer \(an HTTPS server asked over"):
        await client.vector("up")


async def test_a_redirect_within_the_origin_keeps_the_credentials_one_elsewhere_is_refused(tmp_path):
    seen: list[tuple[str, str, str | None, str | None]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.host, request.url.path, request.headers.get("authorization"),
                     request.headers.get("x-scope-orgid")))
        if request.url.path == "/api/v1/query":
            return httpx.Response(307, headers={"location": "/gateway/api/v1/query"})
        if request.url.path == "/gateway/api/v1/query":
            return FakeFleet(1).vector([({"instance": "a"}, 1.0)])
        return httpx.Response(307, headers={"location": "http://elsewhere:9090/api/v1/query"})

    password = tmp_path / "password"
    password.write_text("s3cret\n")
    client = PrometheusClient(make_connection("http://prom:9090", user="alice", password_file=str(password),
                                              headers=["X-Scope-OrgID: team-a"]),
                              transport=httpx.MockTransport(handle))
    assert await client.vector("up") == [({"instance": "a"}, 1.0)]
    assert seen[1] == ("prom", "/gateway/api/v1/query", "Basic YWxpY2U6czNjcmV0", "team-a"), "same origin"
    with pytest.raises(QueryError, match="another origin: refused"):
        await client.api("/api/v1/targets")
    assert [host for host, *_ in seen] == ["prom"] * 3, "nothing sent elsewhere"


def test_promql_strings_escape_quotes_and_backslashes():
    assert promql_string('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert parse_duration_s("1m30s") == 90 and parse_duration_s("250ms") == 0.25
    assert parse_duration_s("5") is None and parse_duration_s("5sx") is None


def test_sort_columns_put_the_worst_first():
    hot = HostRow("hot:1", "", HostState.UP, 0.0)
    assert sorted_hosts((hot,), "temperature") == (hot,)
    with pytest.raises(KeyError):
        sorted_hosts((hot,), "no such column")
    assert json.dumps([state.value for state in sorted(HostState, key=lambda state: state.rank)]) == (
        '["gone", "down", "stale", "nvml down", "up"]')
