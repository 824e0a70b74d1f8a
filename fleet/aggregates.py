"""The fleet view's costly per-GPU aggregates, declared once: as raw PromQL and as recorded series.

deploy/prometheus/pth-top-recording.yml records each `expression("")` as `record` for every job; the view reads
the recorded series where the Prometheus has them and sends the raw expression, limited to its job, where not.
No expression selects by a `__name__` regex (Prometheus would match it against every metric name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# Counters are read as their increase over this window.
ERROR_WINDOW = "15m"
HW_THROTTLE_REASONS = "hw_slowdown|hw_thermal|sw_thermal|hw_power_brake"
BY_GPU = "by (job, instance, gpu)"


def selector(metric: str, *matchers: str) -> str:
    """`metric{a,b}` from the non-empty matchers; the bare name when there are none."""
    present = ",".join(matcher for matcher in matchers if matcher)
    return f"{metric}{{{present}}}" if present else metric


def counted_since(counter: str, window: str) -> str:
    """PromQL: how much `counter` (one starting at 0 with the exporter, as Xid) grew over `window`, by series.

    `increase()` never sees a series' first value (a new Xid code appears at 1), so a series born inside the
    window counts whole; only where the target was already scraped then, lest old counts of a new target count.
    """
    return (f"(({counter} unless {counter} offset {window}) and on (instance, job) up offset {window})"
            f" or increase({counter}[{window}])")


def errors(job: str) -> str:
    """Uncorrected ECC errors plus Xid events (a code's first one included) over ERROR_WINDOW, per GPU."""
    ecc = selector("pth_top_gpu_ecc_errors_total", 'severity!="corrected"', job)
    xid = selector("pth_top_gpu_xid_errors_total", job)
    return f"sum {BY_GPU} (increase({ecc}[{ERROR_WINDOW}]) or {counted_since(xid, ERROR_WINDOW)})"


def remaps(job: str) -> str:
    """Pending plus failed row remaps per GPU; the added label keeps `or` from merging a GPU's two series."""
    pending = selector("pth_top_gpu_row_remap_pending", job)
    failed = selector("pth_top_gpu_row_remap_failed", job)
    return f'sum {BY_GPU} ({pending} or label_replace({failed}, "remap", "failed", "", ""))'


def throttle(job: str) -> str:
    """1 where a hardware or thermal clocks-event reason is active on the GPU."""
    active = selector("pth_top_gpu_clocks_event_active", f'reason=~"{HW_THROTTLE_REASONS}"', job)
    return f"max {BY_GPU} ({active})"


def memory_used(job: str) -> str:
    """The share of its memory each GPU uses: a join of two series a GPU, the view's costliest reading."""
    used = selector("pth_top_gpu_memory_used_bytes", job)
    total = selector("pth_top_gpu_memory_total_bytes", job)
    return f"max {BY_GPU} ({used} / {total})"


@dataclass(frozen=True, slots=True)
class Aggregate:
    name: str  # the view's query name
    record: str  # the recorded series' name (level:metric:operation)
    build: Callable[[str], str]  # (job matcher, "" for every job) -> PromQL
    # PromQL comparison the view appends: it asks only for the GPUs it shows something for ("" for all).
    shown: str = ""

    def expression(self, job: str) -> str:
        return self.build(job)


AGGREGATES = (
    # The view adds errors and remaps and shows 0 where a GPU has neither; a throttle under 1 shows as none.
    Aggregate("errors", f"instance_gpu:pth_top_gpu_errors:increase{ERROR_WINDOW}", errors, " != 0"),
    Aggregate("remaps", "instance_gpu:pth_top_gpu_row_remaps:sum", remaps, " != 0"),
    Aggregate("throttle", "instance_gpu:pth_top_gpu_hw_throttled:max", throttle, " >= 1"),
    Aggregate("memory", "instance_gpu:pth_top_gpu_memory_used:ratio", memory_used),
)


def recorded_present(job: str) -> str:
    """One cheap query naming (label `aggregate`) each aggregate whose recorded series exist for `job`."""
    return " or ".join(
        f'label_replace(count({selector(aggregate.record, job)}), "aggregate", "{aggregate.name}", "", "")'
        for aggregate in AGGREGATES)
