"""The fleet as the cluster view shows it: frozen snapshots built from Prometheus answers, no I/O, no textual."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Mapping, Protocol

# A host whose newest sample is older than this many scrape intervals is shown stale.
STALE_AFTER_INTERVALS = 3
# Hosts that left the answers are remembered (shown gone) up to this many, the most recently seen kept.
MAX_GONE_HOSTS = 1000


class HostState(str, Enum):
    """Worst first: the order the host table sorts health by."""

    GONE = "gone"  # was in an earlier answer, no longer in `up` at all
    DOWN = "down"  # up == 0: Prometheus cannot scrape the exporter
    STALE = "stale"  # the newest sample is older than STALE_AFTER_INTERVALS scrape intervals
    NVML_DOWN = "nvml down"  # the exporter answers but cannot read its GPUs
    UP = "up"

    @property
    def rank(self) -> int:
        return list(HostState).index(self)

    @property
    def greyed(self) -> bool:
        return self in (HostState.GONE, HostState.DOWN, HostState.STALE)


@dataclass(frozen=True, slots=True)
class GpuCell:
    """One GPU of the heat grid; None where the exporter served no such reading."""

    instance: str
    gpu: str
    utilization_ratio: float | None = None
    memory_used_ratio: float | None = None
    temperature_celsius: float | None = None
    power_watts: float | None = None
    errors: float = 0.0  # Xid + uncorrected ECC increase over the error window, + pending/failed row remaps
    throttled: bool = False  # a hardware or thermal reason holds the clocks down


@dataclass(frozen=True, slots=True)
class HostRow:
    instance: str  # Prometheus's target label: host:port
    hostname: str
    state: HostState
    age_s: float | None  # seconds since the newest good sample (None: never seen up)
    gpus: tuple[GpuCell, ...] = ()
    reason: str = ""  # why the host is not up, one printable line, where the source tells ("" otherwise)

    @property
    def gpu_count(self) -> int:
        return len(self.gpus)

    def _values(self, name: str) -> list[float]:
        return [value for gpu in self.gpus if (value := getattr(gpu, name)) is not None]

    @property
    def utilization_avg_ratio(self) -> float | None:
        values = self._values("utilization_ratio")
        return sum(values) / len(values) if values else None

    @property
    def utilization_min_ratio(self) -> float | None:
        return min(self._values("utilization_ratio"), default=None)

    @property
    def memory_used_ratio(self) -> float | None:
        values = self._values("memory_used_ratio")
        return sum(values) / len(values) if values else None

    @property
    def temperature_max_celsius(self) -> float | None:
        return max(self._values("temperature_celsius"), default=None)

    @property
    def power_watts(self) -> float | None:
        values = self._values("power_watts")
        return sum(values) if values else None

    @property
    def errors(self) -> float:
        return sum(gpu.errors for gpu in self.gpus)

    @property
    def throttled_gpus(self) -> int:
        return sum(gpu.throttled for gpu in self.gpus)


def _negated(value: float | None) -> float:
    return -value if value is not None else 0.0


# Each sort puts the worst host first; health, errors and throttling always outrank the chosen column.
SORT_KEYS = {
    "health": lambda host: (host.state.rank, -host.errors, -host.throttled_gpus),
    "utilization": lambda host: host.utilization_avg_ratio if host.utilization_avg_ratio is not None else -1.0,
    "memory": lambda host: _negated(host.memory_used_ratio),
    "temperature": lambda host: _negated(host.temperature_max_celsius),
    "power": lambda host: _negated(host.power_watts),
    "errors": lambda host: -host.errors,
    "throttling": lambda host: -host.throttled_gpus,
    "staleness": lambda host: -(host.age_s or 0.0),
}


def sorted_hosts(hosts: tuple[HostRow, ...], sort_key: str = "health") -> tuple[HostRow, ...]:
    """Worst first by `sort_key`; ties broken by health, then the instance name (a stable order)."""
    by_column = SORT_KEYS[sort_key]
    health = SORT_KEYS["health"]
    return tuple(sorted(hosts, key=lambda host: (by_column(host), health(host), host.instance)))


@dataclass(frozen=True, slots=True)
class FleetSnapshot:
    """One refresh: every host, its GPUs, and whether the answer is fresh."""

    taken_at_s: float  # Unix time of the refresh that produced the data
    scrape_interval_s: float
    hosts: tuple[HostRow, ...] = ()
    error: str | None = None  # the last refresh failed: these are older data, kept and marked stale
    query_count: int = 0
    malformed: int = 0  # series or targets of the refresh skipped for their shape


    @property
    def gpu_count(self) -> int:
        return sum(host.gpu_count for host in self.hosts)

    def host(self, instance: str) -> HostRow | None:
        return next((host for host in self.hosts if host.instance == instance), None)

    def age_s(self, now_s: float) -> float | None:
        """Seconds since the refresh that produced these data; None before the first."""
        return max(0.0, now_s - self.taken_at_s) if self.taken_at_s else None

    def is_stale(self, now_s: float, limit_s: float) -> bool:
        """Failed, never read, or older than `limit_s`: whatever the cause, the view must not look current."""
        age_s = self.age_s(now_s)
        return self.error is not None or age_s is None or age_s > limit_s


@dataclass(frozen=True, slots=True)
class GpuDetail:
    gpu: str
    name: str
    utilization_ratio: float | None
    memory_used_bytes: float | None
    memory_total_bytes: float | None
    temperature_celsius: float | None
    power_watts: float | None
    power_limit_watts: float | None


@dataclass(frozen=True, slots=True)
class GpuProcess:
    gpu: str
    pid: str
    user: str
    comm: str
    memory_bytes: float


@dataclass(frozen=True, slots=True)
class HostDetail:
    """The drill-down of one host: its GPUs and its largest GPU processes."""

    instance: str
    gpus: tuple[GpuDetail, ...] = ()
    processes: tuple[GpuProcess, ...] = ()
    error: str | None = None


class FleetSource(Protocol):
    """What the fleet screens read from: Prometheus (fleet.query) or SSH (sshfleet.reader)."""

    clock: Callable[[], float]
    scrape_interval_s: float

    @property
    def label(self) -> str: ...  # names the source in the status line

    @property
    def timeout_s(self) -> float: ...  # the longest one refresh may be late

    async def refresh(self) -> FleetSnapshot: ...

    async def host_detail(self, instance: str) -> HostDetail: ...

    async def close(self) -> None: ...


@dataclass
class HostMemory:
    """What the client remembers between refreshes: when each host was last seen up, and its last GPUs."""

    last_up_at_s: dict[str, float] = field(default_factory=dict)
    last_rows: dict[str, HostRow] = field(default_factory=dict)
    last_gpus: dict[str, tuple[GpuCell, ...]] = field(default_factory=dict)  # the last refresh that had any
    last_seen_at_s: dict[str, float] = field(default_factory=dict)  # in the `up` answer at all

    def forget_gone(self, present: set[str], now_s: float) -> None:
        """Remember `present` as seen now; forget all but the MAX_GONE_HOSTS most recently seen of the rest."""
        for instance in present:
            self.last_seen_at_s[instance] = now_s
        gone = sorted(set(self.last_rows) - present, key=lambda instance: -self.last_seen_at_s.get(instance, 0.0))
        for instance in gone[MAX_GONE_HOSTS:]:
            for remembered in (self.last_up_at_s, self.last_rows, self.last_gpus, self.last_seen_at_s):
                remembered.pop(instance, None)


def host_state(up: float | None, age_s: float | None, nvml_up: float | None, interval_s: float) -> HostState:
    if up is None:
        return HostState.GONE
    if age_s is not None and age_s > STALE_AFTER_INTERVALS * interval_s:
        return HostState.STALE
    if up < 1:
        return HostState.DOWN
    if nvml_up is not None and nvml_up < 1:
        return HostState.NVML_DOWN
    return HostState.UP


def build_hosts(
    answers: Mapping[str, Mapping[tuple[str, str], float]],
    hostnames: Mapping[str, str],
    now_s: float,
    interval_s: float,
    memory: HostMemory,
) -> tuple[HostRow, ...]:
    """Rows from per-query answers keyed by (instance, gpu) ('' for per-host queries); updates `memory`."""
    up = {instance: value for (instance, _), value in answers["up"].items()}
    scrape_age = {instance: value for (instance, _), value in answers["age"].items()}
    nvml_up = {instance: value for (instance, _), value in answers["nvml_up"].items()}
    gpus_by_host = _gpu_cells(answers)
    memory.forget_gone(set(up), now_s)
    rows = []
    for instance in sorted(set(up) | set(memory.last_rows)):
        state = host_state(up.get(instance), scrape_age.get(instance), nvml_up.get(instance), interval_s)
        gpus = gpus_by_host.get(instance, ())
        if gpus:
            memory.last_gpus[instance] = gpus
        if state is HostState.UP or state is HostState.NVML_DOWN:
            memory.last_up_at_s[instance] = now_s - (scrape_age.get(instance) or 0.0)
        elif not gpus:  # the last GPUs seen, shown greyed: a refresh may read `up` before its GPU series go stale
            gpus = memory.last_gpus.get(instance, ())
        last_up = memory.last_up_at_s.get(instance)
        # A down host's info series is gone with the rest: it keeps the hostname it last had.
        last_row = memory.last_rows.get(instance)
        hostname = hostnames.get(instance) or (last_row.hostname if last_row is not None else "")
        row = HostRow(instance=instance, hostname=hostname, state=state,
                      age_s=None if last_up is None else max(0.0, now_s - last_up), gpus=gpus)
        memory.last_rows[instance] = row
        rows.append(row)
    return tuple(rows)


def _gpu_cells(answers: Mapping[str, Mapping[tuple[str, str], float]]) -> dict[str, tuple[GpuCell, ...]]:
    """Each host's GPUs that have a utilization, memory or temperature reading, in GPU order."""
    utilization, used, temperature = answers["utilization"], answers["memory"], answers["temperature"]
    power, errors, remaps, throttle = answers["power"], answers["errors"], answers["remaps"], answers["throttle"]
    gpus_by_host: dict[str, list[str]] = {}
    for instance, gpu in set(utilization).union(used, temperature):
        gpus_by_host.setdefault(instance, []).append(gpu)
    gpu_order = {gpu: _gpu_order(gpu) for gpu in {gpu for gpus in gpus_by_host.values() for gpu in gpus}}
    cells = {}
    for instance, gpus in gpus_by_host.items():
        gpus.sort(key=gpu_order.__getitem__)
        cells[instance] = tuple(GpuCell(
            instance=instance, gpu=gpu,
            utilization_ratio=utilization.get(key), memory_used_ratio=used.get(key),
            temperature_celsius=temperature.get(key), power_watts=power.get(key),
            errors=errors.get(key, 0.0) + remaps.get(key, 0.0), throttled=throttle.get(key, 0.0) >= 1,
        ) for gpu in gpus for key in [(instance, gpu)])
    return cells


def _gpu_order(gpu: str) -> tuple[int, str]:
    return (int(gpu), "") if re.fullmatch("[0-9]{1,9}", gpu) else (1 << 30, gpu)
