"""A benchmark run as a record: built from protocol events, enriched with % of peak, saved, compared.

Parent side only (imports configs, never torch). Saved runs are versioned JSON, never overwritten.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pth_top.benches.client.peaks import percent_of_peak
from pth_top.benches.protocol import (
    BAD_OUTPUT_ERROR_TYPE,
    ERROR_ROW,
    METADATA,
    OPT_NUMBER,
    OPT_STR,
    RESULT_ROW,
    Event,
    Fields,
    ListOf,
    NoneType,
    ProtocolError,
    check,
    parse_json_bounded,
)
from pth_top.text import printable

RUN_FORMAT = "pth-top-bench-run"
RUN_FORMAT_VERSION = 1
MAX_RUN_FILE_BYTES = 64 * 1024 * 1024
MAX_RUN_DEPTH = 32
# Error rows the parent makes (bad output, silence); every other row without a kernel is the runner refusing.
PARENT_ERROR_TYPES = (BAD_OUTPUT_ERROR_TYPE,)

SAVED_ROW = Fields(RESULT_ROW.required, {**RESULT_ROW.optional, "percent_of_peak": OPT_NUMBER, "peak_note": OPT_STR})
SAVED_RUN = Fields(
    required={"format": str, "version": int, "rows": ListOf(SAVED_ROW), "errors": ListOf(ERROR_ROW)},
    optional={"created_at": str, "python": str, "suite": str, "devices": ListOf(str), "scale": OPT_NUMBER,
              "metadata": METADATA, "kernels": ListOf(Fields({"kernel": str, "device": str})),
              "finished": (Fields(), NoneType), "cancelled": bool, "exit_code": (int, NoneType)},
)


class RunFileError(ValueError):
    """A file that is not a readable saved run; the message is one terminal-safe line."""


def row_key(row: dict) -> tuple[str, str, str]:
    return (str(row.get("kernel")), str(row.get("device")), str(row.get("variant")))


@dataclass
class RunRecord:
    python: str = ""
    suite: str = ""
    devices: list[str] = field(default_factory=list)
    scale: float | None = None
    metadata: dict = field(default_factory=dict)
    kernels: list[dict] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    finished: dict | None = None
    cancelled: bool = False
    exit_code: int | None = None
    created_at: str = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))

    def apply(self, event: Event) -> dict | None:
        """Fold one event in; returns the stored row for result/error events (for live display)."""
        if event.kind == "started":
            self.suite = event.get("suite", "")
            self.devices = list(event.get("devices") or [])
            self.scale = event.get("scale")
            self.metadata = dict(event.get("metadata") or {})
            self.kernels = list(event.get("kernels") or [])
            self.python = self.metadata.get("python_executable", self.python)
        elif event.kind == "result":
            row = dict(event.fields)
            try:
                percent, note = percent_of_peak(row, self.metadata)
            except (TypeError, ValueError, AttributeError, ArithmeticError) as error:  # odd metadata from the child
                percent, note = None, f"no peak: {type(error).__name__} in the run's metadata"
            row["percent_of_peak"] = percent
            row["peak_note"] = note
            self.rows.append(row)
            return row
        elif event.kind == "error":
            error_row = dict(event.fields)
            self.errors.append(error_row)
            return error_row
        elif event.kind == "finished":
            self.finished = dict(event.fields)
        return None

    @property
    def has_started(self) -> bool:
        """True once the child said it started the suite (its "started" event names one)."""
        return bool(self.suite)

    def setup_error(self) -> str | None:
        """The runner's refusal (bad usage, no torch) that stopped the run before any kernel, if any."""
        for error in self.errors:
            if not error.get("kernel") and error.get("error_type") not in PARENT_ERROR_TYPES:
                return str(error.get("message"))
        return None

    @property
    def ok(self) -> bool:
        return not self.errors and not self.cancelled and self.finished is not None and self.exit_code in (0, None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RUN_FORMAT, "version": RUN_FORMAT_VERSION, "created_at": self.created_at,
            "python": self.python, "suite": self.suite, "devices": self.devices, "scale": self.scale,
            "metadata": self.metadata, "kernels": self.kernels, "rows": self.rows, "errors": self.errors,
            "finished": self.finished, "cancelled": self.cancelled, "exit_code": self.exit_code,
        }

    @classmethod
    def from_json(cls, data: object) -> "RunRecord":
        if not isinstance(data, dict) or data.get("format") != RUN_FORMAT:
            raise RunFileError("not a pth-top benchmark run")
        if data.get("version") != RUN_FORMAT_VERSION:
            raise RunFileError(f"run format version {printable(repr(data.get('version')), 40)}, "
                               f"expected {RUN_FORMAT_VERSION}")
        try:
            check(data, SAVED_RUN, "run")
        except ProtocolError as error:
            raise RunFileError(printable(error, 300)) from None
        fields = {name: data[name] for name in (
            "created_at", "python", "suite", "devices", "scale", "metadata", "kernels", "rows", "errors",
            "finished", "cancelled", "exit_code") if name in data}
        return cls(**fields)


def save_run(record: RunRecord, folder: Path | None = None) -> Path:
    """Write the run under a unique timestamped name in the bench runs folder; never overwrites."""
    from pth_top.configs.fileio import FileExistsRefused, atomic_write_text
    from pth_top.configs.paths import bench_runs_dir

    folder = folder or bench_runs_dir()
    text = json.dumps(record.to_json(), indent=1, allow_nan=False)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for _ in range(5):
        path = folder / f"bench-{stamp}-{uuid.uuid4().hex[:6]}.json"
        try:
            return atomic_write_text(path, text)
        except FileExistsRefused:
            continue
    raise FileExistsError(f"could not find a free file name in {folder}")


def write_run_to(record: RunRecord, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    from pth_top.configs.fileio import atomic_write_text

    return atomic_write_text(path, json.dumps(record.to_json(), indent=1, allow_nan=False), overwrite=overwrite)


def load_run(path: str | os.PathLike[str]) -> RunRecord:
    """A saved run, checked field by field; RunFileError (one line, naming the file) for anything else."""
    from pth_top.configs.fileio import read_regular_file

    name = printable(Path(path).name, 120)
    try:
        text = read_regular_file(path, MAX_RUN_FILE_BYTES).decode("utf-8")
        return RunRecord.from_json(parse_json_bounded(text, MAX_RUN_DEPTH))
    except OSError as error:
        raise RunFileError(f"{name}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise RunFileError(f"{name}: not UTF-8 text") from None
    except (ProtocolError, RunFileError) as error:
        raise RunFileError(f"{name}: {printable(error, 300)}") from None


def list_runs(folder: Path | None = None) -> list[Path]:
    """Saved runs, newest first."""
    from pth_top.configs.paths import bench_runs_dir

    folder = folder or bench_runs_dir()
    try:
        return sorted(folder.glob("bench-*.json"), reverse=True) if folder.is_dir() else []
    except OSError:
        return []


@dataclass(frozen=True)
class SavedRun:
    """One file of the runs folder: its run, or why it cannot be read."""

    path: Path
    record: RunRecord | None
    problem: str = ""

    def label(self) -> str:
        """One terminal-safe line for a list of runs."""
        if self.record is None:
            return printable(f"unreadable: {self.problem}", 300)
        run = self.record
        where = Path(run.python).parent.parent.name or run.python
        return printable(f"{run.created_at[:19].replace('T', ' ')}  {run.suite:<8} {','.join(run.devices):<12} "
                         f"{len(run.rows)} rows  {where}", 200)


def scan_runs(folder: Path | None = None, limit: int = 50) -> list[SavedRun]:
    """The newest `limit` saved runs, each loaded, or listed as unreadable with the reason."""
    scanned = []
    for path in list_runs(folder)[:limit]:
        try:
            scanned.append(SavedRun(path, load_run(path)))
        except RunFileError as error:
            scanned.append(SavedRun(path, None, str(error).removeprefix(f"{printable(path.name, 120)}: ")))
    return scanned


def compare(current: list[dict], baseline: list[dict]) -> dict[tuple[str, str, str], float | None]:
    """Per row key: % change of value vs the baseline's same kernel/device/variant (None if not comparable)."""
    old = {row_key(row): row.get("value") for row in baseline}
    deltas: dict[tuple[str, str, str], float | None] = {}
    for row in current:
        key = row_key(row)
        before, now = old.get(key), row.get("value")
        deltas[key] = 100.0 * (now - before) / before if before and now is not None else None
    return deltas
