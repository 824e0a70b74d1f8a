"""The fleet read over SSH: each host on its own schedule, so a slow or dead one never holds up the others.

Every host has a loop of its own: probe (bounded by the transport's timeout), wait the interval, again; after
a failure it waits longer each time (back-off, capped). A refresh assembles the hosts' latest answers into
the same FleetSnapshot and HostDetail the Prometheus reader makes, so the fleet screens and `--json` work
unchanged.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import Callable

from pth_top.fleet.model import FleetSnapshot, HostDetail, HostMemory, HostState, build_hosts
from pth_top.sshfleet.answer import AnswerError, HostAnswer, decode
from pth_top.sshfleet.transport import SshTransport

# A failing host is retried after interval x 2^(failures - 1), at most this long.
MAX_BACKOFF_S = 60.0
# At most this many `ssh` clients run at once (a big fleet starts in waves, not all at one instant).
MAX_CONCURRENT_PROBES = 64


@dataclass
class _Host:
    answer: HostAnswer | None = None
    ok_at_s: float | None = None  # when the last good answer came
    reason: str = "connecting (no answer yet)"  # why the host is down ("" when the last probe worked)
    failures: int = 0
    attempted: bool = False
    malformed: bool = False


def backoff_s(interval_s: float, failures: int) -> float:
    return min(MAX_BACKOFF_S, interval_s * 2 ** max(0, failures - 1))


class SshFleetReader:
    """FleetSnapshots of hosts reached with `ssh`; the same interface as pth_top.fleet.query.FleetReader."""

    def __init__(self, hosts: list[str], transport: SshTransport, interval_s: float = 5.0,
                 clock: Callable[[], float] = time.time, first_wait_s: float | None = None) -> None:
        self.hosts = list(dict.fromkeys(hosts))
        self.transport = transport
        self.scrape_interval_s = interval_s
        self.clock = clock
        # How long the first refresh waits for every host's first try (None: the timeout; a screen waits less).
        self.first_wait_s = transport.timeout_s + 5.0 if first_wait_s is None else first_wait_s
        self._state = {host: _Host() for host in self.hosts}
        self._memory = HostMemory()
        self._tasks: list[asyncio.Task[None]] = []
        self._first_round: asyncio.Event | None = None
        self._limit: asyncio.Semaphore | None = None
        self.snapshot = FleetSnapshot(taken_at_s=0.0, scrape_interval_s=interval_s, error="no data yet")

    @property
    def label(self) -> str:
        config = f" -F {self.transport.config_file}" if self.transport.config_file else ""
        return f"ssh{config}: {len(self.hosts)} hosts"

    @property
    def timeout_s(self) -> float:
        return self.transport.timeout_s

    def _start(self) -> None:
        self._first_round = asyncio.Event()
        self._limit = asyncio.Semaphore(MAX_CONCURRENT_PROBES)
        self._tasks = [asyncio.create_task(self._poll(host)) for host in self.hosts]

    async def _poll(self, host: str) -> None:
        state = self._state[host]
        while True:
            await self.probe_once(host)
            if all(each.attempted for each in self._state.values()) and self._first_round is not None:
                self._first_round.set()
            await asyncio.sleep(backoff_s(self.scrape_interval_s, state.failures) if state.failures
                                else self.scrape_interval_s)

    async def probe_once(self, host: str) -> None:
        """One probe of `host`; its state says what came of it."""
        state = self._state[host]
        assert self._limit is not None
        async with self._limit:
            result = await self.transport.probe(host)
        state.attempted = True
        if result.body is None:
            state.failures, state.reason, state.malformed = state.failures + 1, result.reason, False
            return
        try:
            state.answer = decode(result.body, host)
        except AnswerError as error:
            state.failures, state.reason, state.malformed = state.failures + 1, str(error), True
            return
        state.failures, state.reason, state.malformed, state.ok_at_s = 0, "", False, self.clock()

    async def refresh(self) -> FleetSnapshot:
        """The hosts' latest answers as one snapshot; the first call waits for every host's first try."""
        if not self._tasks:
            self._start()
            assert self._first_round is not None
            if self.hosts and self.first_wait_s > 0:
                try:
                    await asyncio.wait_for(self._first_round.wait(), self.first_wait_s)
                except asyncio.TimeoutError:
                    pass  # those still trying show as connecting
        now_s = self.clock()
        answers: dict[str, dict[tuple[str, str], float]] = {name: {} for name in (
            "up", "age", "nvml_up", "utilization", "memory", "temperature", "power", "errors", "remaps", "throttle")}
        hostnames: dict[str, str] = {}
        for host, state in self._state.items():
            up = not state.reason and state.answer is not None
            answers["up"][(host, "")] = 1.0 if up else 0.0
            answers["age"][(host, "")] = now_s - state.ok_at_s if up and state.ok_at_s is not None else 0.0
            if state.answer is None:
                continue
            hostnames[host] = state.answer.hostname
            if not up:
                continue
            answers["nvml_up"][(host, "")] = 0.0 if state.answer.nvml_reason and not state.answer.cells else 1.0
            for cell in state.answer.cells:
                key = (host, cell.gpu)
                for name, value in (("utilization", cell.utilization_ratio), ("memory", cell.memory_used_ratio),
                                    ("temperature", cell.temperature_celsius), ("power", cell.power_watts)):
                    if value is not None:
                        answers[name][key] = value
                answers["errors"][key] = cell.errors
                answers["throttle"][key] = 1.0 if cell.throttled else 0.0
        rows = build_hosts(answers, hostnames, now_s, self.scrape_interval_s, self._memory)
        rows = tuple(replace(row, reason=self._reason(row.instance, row.state)) for row in rows)
        self.snapshot = FleetSnapshot(taken_at_s=now_s, scrape_interval_s=self.scrape_interval_s, hosts=rows,
                                      query_count=self.transport.sent,
                                      malformed=sum(state.malformed for state in self._state.values()))
        return self.snapshot

    def _reason(self, host: str, state: HostState) -> str:
        remembered = self._state[host]
        if state is HostState.NVML_DOWN and remembered.answer is not None:
            return remembered.answer.nvml_reason or ""
        return remembered.reason

    def answered_at_s(self, host: str) -> float | None:
        """When `host` last answered well (None: never)."""
        return self._state[host].ok_at_s

    async def host_detail(self, instance: str) -> HostDetail:
        """The host's GPUs and largest GPU processes from its last answer (no extra connection)."""
        state = self._state.get(instance)
        if state is None:
            return HostDetail(instance=instance, error="not one of the hosts")
        if state.answer is None:
            return HostDetail(instance=instance, error=state.reason)
        return HostDetail(instance=instance, gpus=state.answer.gpus, processes=state.answer.processes,
                          error=state.reason or None)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.transport.close(self.hosts)
