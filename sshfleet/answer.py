"""A host's answer (`pth-top snapshot --json`, or the probe's subset of it), decoded and checked where it enters.

The answer is untrusted: it is capped in size, decoded by one msgspec schema (only the fields the fleet
view reads; the rest is skipped), every string made printable and bounded, every reading finite and of
plausible size or None. A wrong shape is one printable line, and the host shows down with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

import msgspec

from pth_top.fleet.answers import LABEL_MAX_CHARS, MAX_READING
from pth_top.fleet.model import GpuCell, GpuDetail, GpuProcess
from pth_top.text import printable

# A busy host's full `pth-top snapshot --json` (thousands of processes) stays well under this.
MAX_ANSWER_BYTES = 8 * 1024 * 1024
MAX_GPUS = 1024
MAX_PROCESSES = 100_000
TOP_PROCESSES = 20
# Clock-event words (sensors/throttle.py) that mean hardware or heat holds the clocks down.
HW_THROTTLE_WORDS = frozenset({"thermal (SW)", "thermal (HW)", "HW slowdown", "power brake (HW)"})
SCHEMA = "pth-top.snapshot"
_BAD_JSON = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
Reading = Optional[Union[float, int]]


class AnswerError(ValueError):
    """The answer is no pth-top snapshot; the message is one printable line."""


class _Host(msgspec.Struct):
    hostname: str = ""
    nvml_unavailable_reason: Optional[str] = None


class _Gpu(msgspec.Struct):
    index: int
    name: str = ""
    lost: bool = False
    utilization_percent: Reading = None
    memory_used_bytes: Reading = None
    memory_total_bytes: Reading = None
    temperature_c: Reading = None
    power_draw_w: Reading = None
    power_limit_w: Reading = None
    throttle_reasons: list[str] = []
    ecc_volatile_uncorrected_errors: Reading = None
    xid_errors: Reading = None
    remapped_rows_pending: Optional[bool] = None
    remapped_rows_failed: Optional[bool] = None


class _GpuUse(msgspec.Struct):
    gpu_index: int
    gpu_memory_used_bytes: Reading = None


class _Process(msgspec.Struct):
    pid: int
    user: str = ""
    name: str = ""
    command: str = ""
    gpu_uses: list[_GpuUse] = []


class _Snapshot(msgspec.Struct):
    schema: str
    schema_version: int
    timestamp_s: float
    host: _Host
    gpus: list[_Gpu] = []
    processes: list[_Process] = []


_DECODER = msgspec.json.Decoder(_Snapshot)


def text(value: object) -> str:
    return printable(value, LABEL_MAX_CHARS)


def reading(value: Reading) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) and abs(number) <= MAX_READING else None


@dataclass(frozen=True, slots=True)
class HostAnswer:
    """What the fleet view takes from one host's snapshot: model objects, every string printable."""

    hostname: str
    nvml_reason: str | None
    cells: tuple[GpuCell, ...]
    gpus: tuple[GpuDetail, ...]
    processes: tuple[GpuProcess, ...]


def decode(body: bytes, instance: str) -> HostAnswer:
    """`body` (at most MAX_ANSWER_BYTES) as a HostAnswer for `instance`, or AnswerError in one line."""
    if len(body) > MAX_ANSWER_BYTES:
        raise AnswerError(f"its answer is over {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")
    try:
        snapshot = _DECODER.decode(body)
    except _BAD_JSON as error:
        first = (body.strip().splitlines() or [b""])[0][:80].decode("utf-8", "replace")
        raise AnswerError(f"its answer is no pth-top snapshot ({text(str(error))[:120]}): {text(first)}") from None
    if snapshot.schema != SCHEMA or snapshot.schema_version != 1:
        raise AnswerError(f"its answer is schema {text(snapshot.schema)[:40]} {snapshot.schema_version}, "
                          f"not {SCHEMA} 1")
    if len(snapshot.gpus) > MAX_GPUS or len(snapshot.processes) > MAX_PROCESSES:
        raise AnswerError(f"its answer lists {len(snapshot.gpus)} GPUs and {len(snapshot.processes)} processes")
    gpus = sorted({gpu.index: gpu for gpu in snapshot.gpus if 0 <= gpu.index < MAX_GPUS}.values(),
                  key=lambda gpu: gpu.index)
    return HostAnswer(
        hostname=text(snapshot.host.hostname),
        nvml_reason=None if snapshot.host.nvml_unavailable_reason is None
        else text(snapshot.host.nvml_unavailable_reason),
        cells=tuple(_cell(instance, gpu) for gpu in gpus),
        gpus=tuple(_detail(gpu) for gpu in gpus),
        processes=_top_processes(snapshot.processes),
    )


def _memory_ratio(gpu: _Gpu) -> float | None:
    used, total = reading(gpu.memory_used_bytes), reading(gpu.memory_total_bytes)
    return used / total if used is not None and total else None


def _cell(instance: str, gpu: _Gpu) -> GpuCell:
    utilization = reading(gpu.utilization_percent)
    # Errors the driver counts since it loaded, and row remaps a reset must finish (or that failed).
    errors = sum(value for value in (reading(gpu.ecc_volatile_uncorrected_errors), reading(gpu.xid_errors))
                 if value is not None and value > 0)
    errors += bool(gpu.remapped_rows_pending) + bool(gpu.remapped_rows_failed)
    return GpuCell(
        instance=instance, gpu=str(gpu.index),
        utilization_ratio=None if utilization is None else utilization / 100,
        memory_used_ratio=_memory_ratio(gpu), temperature_celsius=reading(gpu.temperature_c),
        power_watts=reading(gpu.power_draw_w), errors=float(errors),
        throttled=any(reason in HW_THROTTLE_WORDS for reason in gpu.throttle_reasons),
    )


def _detail(gpu: _Gpu) -> GpuDetail:
    utilization = reading(gpu.utilization_percent)
    return GpuDetail(
        gpu=str(gpu.index), name=text(gpu.name) + (" (lost)" if gpu.lost else ""),
        utilization_ratio=None if utilization is None else utilization / 100,
        memory_used_bytes=reading(gpu.memory_used_bytes), memory_total_bytes=reading(gpu.memory_total_bytes),
        temperature_celsius=reading(gpu.temperature_c), power_watts=reading(gpu.power_draw_w),
        power_limit_watts=reading(gpu.power_limit_w),
    )


def _top_processes(processes: list[_Process]) -> tuple[GpuProcess, ...]:
    uses = [
        GpuProcess(gpu=str(use.gpu_index), pid=str(process.pid), user=text(process.user),
                   comm=text(process.name or process.command.split(" ")[0]), memory_bytes=memory)
        for process in processes for use in process.gpu_uses
        if (memory := reading(use.gpu_memory_used_bytes)) is not None
    ]
    return tuple(sorted(uses, key=lambda use: -use.memory_bytes)[:TOP_PROCESSES])
