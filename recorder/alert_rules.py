"""Alert rules and delivery settings as typed structs: the [alerts] table of the settings file, validated here.

Each rule is one table under [alerts.rules]; a key left out takes its default, an unknown key is refused.
`alert_settings(table)` turns the TOML table into AlertSettings or raises AlertSettingsError, one line naming the key.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from msgspec import Meta, field

from pth_top.configs.errors import shown
from pth_top.configs.schema import Problem, Schema, SchemaError, convert, reason
from pth_top.sensors.throttle import THROTTLE_REASON_WORDS
from pth_top.text import printable

THROTTLE_REASONS: tuple[str, ...] = tuple(word for _bit, word in THROTTLE_REASON_WORDS)
DAY_S = 86_400.0
MAX_DESTINATIONS = 16
MAX_PATTERNS = 32
MAX_URL_CHARS = 2000

Seconds = Annotated[float, Meta(ge=0, le=DAY_S, description="seconds")]
Fraction = Annotated[float, Meta(ge=0, le=1, description="a fraction from 0 to 1")]


class Rule(Schema, frozen=True, omit_defaults=True):
    enabled: bool = True


class GpuTemperature(Rule, frozen=True, omit_defaults=True):
    above_c: Annotated[float, Meta(ge=0, le=150)] = 85.0
    clear_below_c: Annotated[float, Meta(ge=0, le=150)] = 80.0  # re-armed once the GPU cools below this
    for_s: Seconds = 60.0


class GpuMemory(Rule, frozen=True, omit_defaults=True):
    # Off by default: PyTorch's caching allocator and vLLM hold most of the memory on purpose.
    enabled: bool = False
    above_fraction: Fraction = 0.98
    clear_below_fraction: Fraction = 0.95
    for_s: Seconds = 60.0


class EventRule(Rule, frozen=True, omit_defaults=True):
    # One alert per GPU for a burst of events; re-armed after this long without one.
    quiet_s: Seconds = 600.0


class Throttle(Rule, frozen=True, omit_defaults=True):
    # Power cap is left out: a busy GPU at its power limit is working as meant.
    reasons: tuple[str, ...] = ("thermal (SW)", "thermal (HW)", "HW slowdown", "power brake (HW)")
    for_s: Seconds = 60.0


class GpuIdle(Rule, frozen=True, omit_defaults=True):
    """A hung job: a process holds the GPU while the GPU does (almost) nothing."""

    below_percent: Annotated[float, Meta(ge=0, le=100)] = 5.0
    for_s: Seconds = 900.0


class Disk(Rule, frozen=True, omit_defaults=True):
    """A filesystem is low when its free space is below the fraction or below the bytes (either)."""

    free_below_fraction: Fraction = 0.05
    free_below_bytes: Annotated[int, Meta(ge=0)] = 2 * 1024**3
    mountpoints: tuple[str, ...] = ()  # empty: every filesystem the snapshot lists
    for_s: Seconds = 0.0


class Memory(Rule, frozen=True, omit_defaults=True):
    available_below_fraction: Fraction = 0.05
    for_s: Seconds = 30.0


class GpuLost(Rule, frozen=True, omit_defaults=True):
    pass


class GpuStuck(Rule, frozen=True, omit_defaults=True):
    """A GPU group reads busy at near-idle power with few SMs active (the stuck flag, [flags] thresholds)."""


class GpuStraggler(Rule, frozen=True, omit_defaults=True):
    """One GPU lags its group (the straggler flag); off by default: an uneven but healthy job also lags."""

    enabled: bool = False


class ProcessExit(Rule, frozen=True, omit_defaults=True):
    """A watched job ended: a process whose name or command line matches a pattern left the process list."""

    patterns: tuple[str, ...] = ()  # regular expressions (re.search); none: nothing is watched


class Rules(Schema, frozen=True, omit_defaults=True):
    gpu_temperature: GpuTemperature = field(default_factory=GpuTemperature)
    gpu_memory: GpuMemory = field(default_factory=GpuMemory)
    xid: EventRule = field(default_factory=EventRule)
    ecc: EventRule = field(default_factory=EventRule)
    throttle: Throttle = field(default_factory=Throttle)
    gpu_idle: GpuIdle = field(default_factory=GpuIdle)
    gpu_lost: GpuLost = field(default_factory=GpuLost)
    gpu_stuck: GpuStuck = field(default_factory=GpuStuck)
    gpu_straggler: GpuStraggler = field(default_factory=GpuStraggler)
    disk: Disk = field(default_factory=Disk)
    memory: Memory = field(default_factory=Memory)
    process_exit: ProcessExit = field(default_factory=ProcessExit)


class Delivery(Schema, frozen=True, omit_defaults=True):
    timeout_s: Annotated[float, Meta(gt=0, le=120)] = 10.0
    retries: Annotated[int, Meta(ge=0, le=10)] = 2
    backoff_s: Annotated[float, Meta(ge=0, le=600)] = 2.0  # doubled after each failed try
    per_minute: Annotated[int, Meta(ge=1, le=600)] = 10  # per destination; the excess is sent as one summary
    queue: Annotated[int, Meta(ge=1, le=10_000)] = 100  # per destination; the oldest is dropped when full


class AlertSettings(Schema, frozen=True, omit_defaults=True):
    enabled: bool = True
    bell: bool = True  # ring the terminal bell with each banner in the dashboard
    # Apprise URLs: json://host/path, slack://..., mailtos://..., dingtalk://..., wecombot://..., feishu://...
    destinations: Annotated[tuple[Annotated[str, Meta(min_length=1, max_length=MAX_URL_CHARS)], ...],
                            Meta(max_length=MAX_DESTINATIONS)] = ()
    delivery: Delivery = field(default_factory=Delivery)
    rules: Rules = field(default_factory=Rules)

    def rule_items(self) -> list[tuple[str, Rule]]:
        """(name, rule) for each rule, in declared order."""
        return [(name, getattr(self.rules, name)) for name in self.rules.__struct_fields__]


class AlertSettingsError(ValueError):
    """A bad [alerts] table: `key: reason`, one printable line."""


def alert_settings(table: Any) -> AlertSettings:
    """The [alerts] table as AlertSettings; AlertSettingsError naming the key (alerts.rules.x.y) otherwise."""
    try:
        settings: AlertSettings = convert(table, AlertSettings, _describe)
    except SchemaError as error:
        raise AlertSettingsError(_where(error.key, error.reason)) from None
    _check(settings)
    return settings


def alert_table(settings: AlertSettings) -> dict[str, Any]:
    """The settings as a TOML-ready table, only what differs from the defaults."""
    return _pruned(msgspec.to_builtins(settings))


def _pruned(table: dict[str, Any]) -> dict[str, Any]:
    """The table without the subtables that hold nothing (a rule left at its defaults)."""
    kept = {key: _pruned(value) if isinstance(value, dict) else value for key, value in table.items()}
    return {key: value for key, value in kept.items() if value != {}}


def _check(settings: AlertSettings) -> None:
    """What msgspec cannot say: thresholds in order, throttle reasons by name, patterns that compile, URLs."""
    rules = settings.rules
    if rules.gpu_temperature.clear_below_c > rules.gpu_temperature.above_c:
        raise AlertSettingsError(_where("rules.gpu_temperature.clear_below_c", "must be at most above_c"))
    if rules.gpu_memory.clear_below_fraction > rules.gpu_memory.above_fraction:
        raise AlertSettingsError(_where("rules.gpu_memory.clear_below_fraction", "must be at most above_fraction"))
    for number, word in enumerate(rules.throttle.reasons, 1):
        if word not in THROTTLE_REASONS:
            raise AlertSettingsError(_where("rules.throttle.reasons", (
                f"item {number} must be one of {', '.join(THROTTLE_REASONS)}, got {shown(word)}")))
    if len(rules.process_exit.patterns) > MAX_PATTERNS:
        raise AlertSettingsError(_where("rules.process_exit.patterns", f"at most {MAX_PATTERNS} patterns"))
    for number, pattern in enumerate(rules.process_exit.patterns, 1):
        try:
            re.compile(pattern)
        except re.error as error:
            raise AlertSettingsError(_where("rules.process_exit.patterns", (
                f"item {number} is not a regular expression ({error}): {shown(pattern)}"))) from None
    for number, url in enumerate(settings.destinations, 1):
        if "://" not in url:
            raise AlertSettingsError(_where("destinations", f"item {number} is not a URL (scheme://...)"))


def _describe(problem: Problem) -> str:
    """The schema's wording, except that a destination URL is never quoted (it may hold a token)."""
    if problem.keys[:1] == ("destinations",) and problem.kind == "value":
        return "must be a list of Apprise URLs (text of 1 to 2000 characters), at most 16"
    return reason(problem)


def _where(key: str | None, because: str) -> str:
    return printable(f"alerts.{key}: {because}" if key else f"alerts: {because}", limit=400)
