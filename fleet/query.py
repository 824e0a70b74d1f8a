"""Reads the fleet from Prometheus's HTTP API: about ten instant queries a refresh, whatever the fleet size.

Each query covers every host at once (`... by (instance)` or one series per GPU); counters go through
`increase()`, so resets (driver reload, exporter restart) do no harm. The costly aggregates are read from
pth-top's recording rules where Prometheus has them (checked with the targets), raw where not: the same
snapshot either way. A failed refresh keeps the last snapshot, marked with the error. Needs httpx (the
`fleet` extra).
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from typing import Callable

from pth_top.fleet.aggregates import AGGREGATES, recorded_present, selector
from pth_top.fleet.client import PrometheusClient, QueryError, all_or_none
from pth_top.fleet.model import (
    FleetSnapshot,
    GpuDetail,
    GpuProcess,
    HostDetail,
    HostMemory,
    build_hosts,
)

__all__ = ["FleetReader", "PrometheusClient", "QueryError", "parse_duration_s", "promql_string"]

DEFAULT_JOB = "pth-top"
# Used until /api/v1/targets tells the job's real scrape interval.
FALLBACK_SCRAPE_INTERVAL_S = 15.0
# A longer scrape interval (or a nonsense one) still lets the view refresh this often.
MAX_SCRAPE_INTERVAL_S = 300.0
# Re-read the targets (scrape interval) every this many refreshes.
TARGETS_EVERY_REFRESHES = 12
TOP_PROCESSES = 20
# The drill-down's GPU readings: pth_top_gpu_<name>, one `or` of plain selectors (no __name__ regex).
DETAIL_READINGS = ("utilization_ratio", "memory_used_bytes", "memory_total_bytes", "temperature_celsius",
                   "power_watts", "power_limit_watts")
DURATION_UNITS_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def promql_string(text: str) -> str:
    """`text` as a PromQL double-quoted string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def parse_duration_s(text: str) -> float | None:
    """Prometheus's '5s', '1m30s', '250ms' as seconds, at most MAX_SCRAPE_INTERVAL_S; None if it is not one."""
    parts = re.findall(r"([0-9]{1,30})(ms|s|m|h|d)", text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return min(MAX_SCRAPE_INTERVAL_S, sum(int(number) * DURATION_UNITS_S[unit] for number, unit in parts))


class FleetReader:
    """Refreshes a FleetSnapshot of one Prometheus job; never queries faster than the scrape interval."""

    def __init__(
        self,
        client: PrometheusClient,
        job: str = DEFAULT_JOB,
        scrape_interval_s: float | None = None,
        clock: Callable[[], float] = time.time,
        recorded: bool | None = None,
    ) -> None:
        self.client = client
        self.job = job
        self._fixed_interval_s = scrape_interval_s
        self.scrape_interval_s = scrape_interval_s or FALLBACK_SCRAPE_INTERVAL_S
        self.clock = clock
        self._memory = HostMemory()
        self._refreshes = 0
        self.snapshot = FleetSnapshot(taken_at_s=0.0, scrape_interval_s=self.scrape_interval_s,
                                      error="no data yet")
        self._last_query_at_s: float | None = None
        # Aggregates read from recorded series; `recorded` True/False forces all/none, None checks Prometheus.
        self._fixed_recorded = recorded
        self.recorded: frozenset[str] = frozenset(
            aggregate.name for aggregate in AGGREGATES) if recorded else frozenset()

    @property
    def label(self) -> str:
        return f"{self.client.connection.url} job={self.job}"

    @property
    def timeout_s(self) -> float:
        return self.client.connection.timeout_s

    async def close(self) -> None:
        await self.client.close()

    def queries(self) -> dict[str, tuple[str, str]]:
        """Name -> (PromQL, the label besides `instance` its readings are keyed by) for one refresh; each covers
        every host of the job.

        Answers keep only the labels the view reads: decoding the others of 8 series a host was most of a big
        fleet's refresh. Errors, remaps and throttling come only for the GPUs that have some.
        """
        job = f"job={promql_string(self.job)}"
        return {name: (f"max by (instance, gpu) ({promql}){shown}" if label == "gpu" else promql, label)
                for name, (promql, label, shown) in self._queries(job).items()}

    def _queries(self, job: str) -> dict[str, tuple[str, str, str]]:
        """Name -> (PromQL, key label, comparison that keeps only the GPUs the view shows something for)."""
        return {
            "up": (f"up{{{job}}}", "", ""),
            "age": (f"time() - timestamp(up{{{job}}})", "", ""),
            "nvml_up": (f"pth_top_nvml_up{{{job}}}", "", ""),
            "info": (f"count by (instance, hostname) (pth_top_host_info{{{job}}})", "hostname", ""),
            "utilization": (f"pth_top_gpu_utilization_ratio{{{job}}}", "gpu", ""),
            "temperature": (f"pth_top_gpu_temperature_celsius{{{job}}}", "gpu", ""),
            "power": (f"pth_top_gpu_power_watts{{{job}}}", "gpu", ""),
            **{aggregate.name: (selector(aggregate.record, job) if aggregate.name in self.recorded
                                else aggregate.expression(job), "gpu", aggregate.shown) for aggregate in AGGREGATES},
        }

    async def refresh(self) -> FleetSnapshot:
        """A new snapshot, or the last one (marked with the error) when Prometheus fails; rate-limited."""
        now_s = self.clock()
        if self._last_query_at_s is not None and now_s - self._last_query_at_s < self.scrape_interval_s:
            return self.snapshot
        self._last_query_at_s = now_s
        sent_before, malformed_before = self.client.queries_sent, self.client.malformed
        try:
            if self._refreshes % TARGETS_EVERY_REFRESHES == 0:
                if self._fixed_interval_s is None:
                    self.scrape_interval_s = await self._job_scrape_interval_s()
                if self._fixed_recorded is None:
                    self.recorded = await self._recorded_aggregates()
            queries = self.queries()
            results = await all_or_none([self.client.readings(promql, label) for promql, label in queries.values()])
        except QueryError as error:
            self.snapshot = replace(self.snapshot, error=str(error),
                                    query_count=self.client.queries_sent - sent_before)
            return self.snapshot
        self._refreshes += 1
        answers = dict(zip(queries, results, strict=True))
        hostnames = dict(answers["info"].keys())  # keyed by (instance, hostname)
        hosts = build_hosts(answers, hostnames, now_s, self.scrape_interval_s, self._memory)
        self.snapshot = FleetSnapshot(taken_at_s=now_s, scrape_interval_s=self.scrape_interval_s, hosts=hosts,
                                      query_count=self.client.queries_sent - sent_before,
                                      malformed=self.client.malformed - malformed_before)
        return self.snapshot

    async def _job_scrape_interval_s(self) -> float:
        for labels, interval in await self.client.target_intervals():
            if labels.get("job") == self.job:
                interval_s = parse_duration_s(interval)
                if interval_s:
                    return interval_s
        return self.scrape_interval_s

    async def _recorded_aggregates(self) -> frozenset[str]:
        """The aggregates whose recorded series Prometheus holds for the job (pth-top's recording rules)."""
        series = await self.client.vector(recorded_present(f"job={promql_string(self.job)}"))
        return frozenset(labels.get("aggregate", "") for labels, _ in series)

    async def host_detail(self, instance: str) -> HostDetail:
        """One host's GPUs and largest GPU processes (three queries, only while the drill-down is open)."""
        matchers = f"job={promql_string(self.job)},instance={promql_string(instance)}"
        readings_query = " or ".join(selector(f"pth_top_gpu_{name}", matchers) for name in DETAIL_READINGS)
        try:
            readings, info, processes = await all_or_none([
                self.client.vector(readings_query),
                self.client.vector(selector("pth_top_gpu_info", matchers)),
                self.client.vector(f"topk({TOP_PROCESSES}, {selector('pth_top_process_gpu_memory_bytes', matchers)})"),
            ])
        except QueryError as error:
            return HostDetail(instance=instance, error=str(error))
        by_gpu: dict[str, dict[str, float | None]] = {}
        for labels, value in readings:
            by_gpu.setdefault(labels.get("gpu", ""), {})[labels.get("__name__", "")[len("pth_top_gpu_"):]] = value
        model = {labels.get("gpu", ""): labels.get("name", "") for labels, _ in info}
        gpus = tuple(
            GpuDetail(gpu=gpu, name=model.get(gpu, ""), utilization_ratio=values.get("utilization_ratio"),
                      memory_used_bytes=values.get("memory_used_bytes"),
                      memory_total_bytes=values.get("memory_total_bytes"),
                      temperature_celsius=values.get("temperature_celsius"), power_watts=values.get("power_watts"),
                      power_limit_watts=values.get("power_limit_watts"))
            for gpu, values in sorted(by_gpu.items(), key=lambda item: (len(item[0]), item[0]))
        )
        top = sorted(
            (GpuProcess(gpu=labels.get("gpu", ""), pid=labels.get("pid", ""), user=labels.get("user", ""),
                        comm=labels.get("comm", ""), memory_bytes=value)
             for labels, value in processes if value is not None),
            key=lambda process: -process.memory_bytes,
        )
        return HostDetail(instance=instance, gpus=gpus, processes=tuple(top[:TOP_PROCESSES]))
