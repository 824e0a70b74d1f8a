"""What the bench client and child share: the run request (argv) and JSON-lines events. Stdlib only.

Each line is one JSON object: {"v": PROTOCOL_VERSION, "event": KIND, ...fields}, at most MAX_LINE_BYTES
long and MAX_DEPTH deep. EVENT_SCHEMAS declares each kind's fields once; `decode_line` checks every
event against it, so the parent never acts on NaN, a wrong type or a missing field.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, NoReturn

from pth_top.benches.catalog import KERNELS_BY_NAME, SUITES

PROTOCOL_VERSION = 2
MAX_LINE_BYTES = 1 << 20
MAX_DEPTH = 16
HEARTBEAT_INTERVAL_S = 2.0
# A child whose main thread made no progress (no finished timing batch, sweep shape, burn second or event)
# this long is stopped: a hung GPU keeps the heartbeat thread going. Generous, as torch.compile or an OOM
# retry can be silent for minutes.
STALL_FLOOR_S = 300.0
STALL_TIME_CAP_FACTOR = 10.0
BAD_OUTPUT_ERROR_TYPE = "BadOutput"
MIN_TRUSTED_SAMPLES = 3  # a row timed from fewer samples gives no spread worth a figure: it is noisy


class ProtocolError(ValueError):
    """A line that is not a valid event of a version this parent understands."""


class Number:
    """Schema marker: an int or a finite float, never a bool."""


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class MapOf:
    """A JSON object with any string keys, each value matching `item`."""

    item: Any


@dataclass(frozen=True)
class Fields:
    """A JSON object with these required and optional fields (others are kept, unchecked)."""

    required: dict[str, Any] = field(default_factory=dict)
    optional: dict[str, Any] = field(default_factory=dict)


NoneType = type(None)
OPT_STR = (str, NoneType)
OPT_NUMBER = (Number, NoneType)
DEVICE = Fields({"id": str, "name": str})
CPU_INFO = Fields(optional={"model": OPT_STR, "physical_cores": (int, NoneType), "max_ghz": OPT_NUMBER,
                            "isa_flags": ListOf(str)})
METADATA = Fields(optional={"cpu": CPU_INFO, "cuda_devices": MapOf(Fields(optional={"name": str})),
                            "python_executable": str, "python_version": str})
RESULT_ROW = Fields(
    required={"kernel": str, "device": str, "variant": str, "status": str, "value": OPT_NUMBER},
    optional={"unit": OPT_STR, "peak_kind": OPT_STR, "note": OPT_STR,
              "details": Fields(optional={"threads": (int, NoneType)}),
              "rel_iqr": OPT_NUMBER, "noisy": (bool, NoneType), "median_s": OPT_NUMBER, "iqr_s": OPT_NUMBER},
)
ERROR_ROW = Fields(
    required={"kernel": OPT_STR, "device": OPT_STR, "variant": OPT_STR, "error_type": str, "message": str},
    optional={"traceback": OPT_STR},
)
EVENT_SCHEMAS: dict[str, Fields] = {
    "devices": Fields({"devices": ListOf(DEVICE)}),
    "started": Fields({"suite": str, "devices": ListOf(str), "metadata": METADATA,
                       "kernels": ListOf(Fields({"kernel": str, "device": str}, {"unit": OPT_STR}))},
                      {"scale": OPT_NUMBER, "time_cap_s": OPT_NUMBER}),
    "progress": Fields({"kernel": str, "device": str, "fraction": Number},
                       {"eta_s": OPT_NUMBER, "message": OPT_STR}),
    "result": RESULT_ROW,
    "error": ERROR_ROW,
    "finished": Fields({"ok": bool, "results": int, "errors": int}, {"wall_s": OPT_NUMBER}),
    # progress_age_s: seconds since the child's main thread last sent anything but a heartbeat.
    "heartbeat": Fields({"pid": int}, {"progress_age_s": OPT_NUMBER}),
    # One device's second of a burn: GEMM rate and NVML readings (null where the device has none).
    "sample": Fields({"kernel": str, "device": str, "t_s": Number},
                     {"tflops": OPT_NUMBER, "sm_clock_mhz": OPT_NUMBER, "power_w": OPT_NUMBER,
                      "temperature_c": OPT_NUMBER, "clock_event_mask": (int, NoneType)}),
}
EVENT_KINDS = tuple(EVENT_SCHEMAS)


@dataclass(frozen=True)
class Event:
    kind: str
    fields: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


def _type_name(spec: Any) -> str:
    if isinstance(spec, tuple):
        return " or ".join(_type_name(item) for item in spec)
    if spec is Number:
        return "a number"
    if spec is NoneType:
        return "null"
    if isinstance(spec, (ListOf, Fields, MapOf)):
        return "a list" if isinstance(spec, ListOf) else "an object"
    return spec.__name__


def _matches(value: Any, spec: Any, where: str) -> bool:
    """True if `value` fits `spec`; raises ProtocolError for a nested mismatch (with its path)."""
    if isinstance(spec, tuple):
        return any(_matches(value, option, where) for option in spec)
    if spec is Number:
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and math.isfinite(value))
    if spec is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(spec, ListOf):
        if not isinstance(value, list):
            return False
        for index, item in enumerate(value):
            check(item, spec.item, f"{where}[{index}]")
        return True
    if isinstance(spec, MapOf):
        if not isinstance(value, dict):
            return False
        for key, item in value.items():
            check(item, spec.item, f"{where}.{key}")
        return True
    if isinstance(spec, Fields):
        if not isinstance(value, dict):
            return False
        for name, item_spec in spec.required.items():
            if name not in value:
                raise ProtocolError(f"{where}: missing field {name!r}")
            check(value[name], item_spec, f"{where}.{name}")
        for name, item_spec in spec.optional.items():
            if name in value:
                check(value[name], item_spec, f"{where}.{name}")
        return True
    return isinstance(value, spec)


def check(value: Any, spec: Any, where: str) -> None:
    """Raise ProtocolError (one line, with the field's path) unless `value` fits `spec`."""
    if not _matches(value, spec, where):
        raise ProtocolError(f"{where}: expected {_type_name(spec)}, got {type(value).__name__}")


def _finite_or_none(value: Any) -> Any:
    """JSON has no NaN/inf: non-finite floats travel as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(key): _finite_or_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(item) for item in value]
    return value


def encode_event(kind: str, **fields: Any) -> str:
    """One event as a single JSON line (with a trailing newline)."""
    if kind not in EVENT_KINDS:
        raise ProtocolError(f"unknown event kind {kind!r}")
    payload = {"v": PROTOCOL_VERSION, "event": kind, **_finite_or_none(fields)}
    return json.dumps(payload, separators=(",", ":"), allow_nan=False) + "\n"


def _refuse_constant(name: str) -> Any:
    raise ProtocolError(f"{name} is not a number JSON allows")


def _depth_exceeds(text: str, limit: int) -> bool:
    """True if brackets nest deeper than `limit` (strings skipped), checked before parsing."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def parse_json_bounded(text: str, max_depth: int = MAX_DEPTH, *, non_finite_as_none: bool = False) -> Any:
    """json.loads without nesting deeper than `max_depth`; NaN/Infinity refused (or read as None). ProtocolError."""
    if text.count("[") + text.count("{") > max_depth and _depth_exceeds(text, max_depth):
        raise ProtocolError(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=(lambda name: None) if non_finite_as_none else _refuse_constant)
    except json.JSONDecodeError as error:
        raise ProtocolError(f"not JSON: {text.strip()[:80]!r} ({error.msg})") from None
    except RecursionError:
        raise ProtocolError(f"nested deeper than {max_depth} levels") from None


def decode_line(line: str | bytes) -> Event:
    """Parse and check one line; raises ProtocolError (one line) for anything that is not a valid event."""
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"line longer than {MAX_LINE_BYTES} bytes")
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    payload = parse_json_bounded(line)
    if not isinstance(payload, dict):
        raise ProtocolError(f"not an event object: {line.strip()[:80]!r}")
    version = payload.pop("v", None)
    if version != PROTOCOL_VERSION:
        raise ProtocolError(f"protocol version {version!r}, expected {PROTOCOL_VERSION}")
    kind = payload.pop("event", None)
    if kind not in EVENT_KINDS:
        raise ProtocolError(f"unknown event kind {str(kind)[:40]!r}")
    check(payload, EVENT_SCHEMAS[kind], kind)
    return Event(kind=kind, fields=payload)


def stall_limit_s(time_cap_s: float | None) -> float:
    """Seconds without progress after which the parent stops a child: max(STALL_FLOOR_S, 10 x the time cap)."""
    return max(STALL_FLOOR_S, STALL_TIME_CAP_FACTOR * (time_cap_s or 0.0))


def bad_output_event(reason: str) -> Event:
    """The error row that stands for a child output line that is not a valid event."""
    return Event("error", {"kernel": None, "device": None, "variant": None, "error_type": BAD_OUTPUT_ERROR_TYPE,
                           "message": reason})


class RequestError(ValueError):
    """A run request with an option out of range; the message is one line naming the option."""


class _RequestParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise RequestError(message)


MAX_SCALE = 16.0
MAX_TIME_CAP_S = 600.0
# A burn samples each second: under one, its rate is 0 and a verdict would blame the hardware.
MIN_BURN_S = 1.0
MAX_BURN_S = 24 * 3600.0
DURATION_UNITS_S = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}
DEVICE_CHOICES_HELP = "cpu, cuda, cuda:N, or all"


@dataclass(frozen=True)
class RunRequest:
    """The eight options of one benchmark run, declared once for the CLI, the Bench screen and the child.

    None means "the suite's default" (worked out by the child, which knows its cwd and scale).
    """

    device: str = "cpu"
    suite: str = "quick"
    kernels: tuple[str, ...] = ()
    scale: float | None = None
    time_cap_s: float | None = None
    disk_dir: str | None = None
    disk_size_mib: int | None = None
    cpu_memory_budget_mib: int | None = None
    burn_s: float | None = None  # how long the burn kernel runs (None: its default)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kernels", tuple(self.kernels))
        if isinstance(self.disk_dir, str) and self.disk_dir.startswith(f".{os.sep}-"):
            object.__setattr__(self, "disk_dir", self.disk_dir[2:])  # one spelling of the folder "-x" (see to_argv)
        problem = self.problem()
        if problem:
            raise RequestError(problem)

    def problem(self) -> str | None:
        """Why this request cannot run (one line), or None."""
        device = self.device
        if not isinstance(device, str) or not (
                device in ("cpu", "all", "cuda") or (device.startswith("cuda:") and device[5:].isdigit()
                                                     and device[5:].isascii())):
            return f"--device must be {DEVICE_CHOICES_HELP}, got {_shown(device)}"
        if self.suite not in SUITES:
            return f"--suite must be {' or '.join(SUITES)}, got {_shown(self.suite)}"
        unknown = [name for name in self.kernels if name not in KERNELS_BY_NAME]
        if unknown:
            return f"unknown kernel {_shown(unknown[0])} (known: {', '.join(KERNELS_BY_NAME)})"
        if self.scale is not None and not (_is_number(self.scale) and 0 < self.scale <= MAX_SCALE):
            return f"--scale must be in (0, {MAX_SCALE:g}], got {_shown(self.scale)}"
        if self.time_cap_s is not None and not (_is_number(self.time_cap_s) and 0 < self.time_cap_s <= MAX_TIME_CAP_S):
            return f"--time-cap must be in (0, {MAX_TIME_CAP_S:g}] seconds, got {_shown(self.time_cap_s)}"
        for option, value in (("--disk-size-mib", self.disk_size_mib),
                              ("--cpu-memory-budget-mib", self.cpu_memory_budget_mib)):
            if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
                return f"{option} must be a whole number of at least 1, got {_shown(value)}"
        ram_mib = physical_memory_mib()
        if self.cpu_memory_budget_mib is not None and ram_mib is not None and self.cpu_memory_budget_mib > ram_mib:
            return (f"--cpu-memory-budget-mib {self.cpu_memory_budget_mib} is more than this machine's "
                    f"{ram_mib:,} MiB of RAM")
        if self.burn_s is not None and not (_is_number(self.burn_s) and MIN_BURN_S <= self.burn_s <= MAX_BURN_S):
            return (f"--burn must be a duration from {MIN_BURN_S:g}s to {MAX_BURN_S / 3600:g}h, "
                    f"got {_shown(self.burn_s)}")
        if self.disk_dir is not None and (not isinstance(self.disk_dir, str) or not self.disk_dir
                                          or "\0" in self.disk_dir):
            return f"--disk-dir must be a non-empty path without NUL bytes, got {_shown(self.disk_dir)}"
        return None

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Declare the eight options on `parser` (the CLI's and the child's)."""
        parser.add_argument("--device", default="cpu", help=f"{DEVICE_CHOICES_HELP} (default cpu)")
        parser.add_argument("--suite", choices=tuple(SUITES), default="quick",
                            help="quick (~30 s on a small CPU; the default) or standard (a few minutes; "
                                 "pth-top bench's default with --kernel)")
        parser.add_argument("--kernel", action="append", default=[], metavar="NAME",
                            help="run only this kernel (repeatable)")
        parser.add_argument("--scale", type=float, default=None, help="size multiplier (default: the suite's)")
        parser.add_argument("--time-cap", type=float, default=None, metavar="SECONDS",
                            help="time cap per measurement (default: the suite's)")
        parser.add_argument("--disk-dir", default=None, metavar="DIR", help="folder for the disk kernel's temp file")
        parser.add_argument("--disk-size-mib", type=int, default=None, metavar="MIB",
                            help="disk temp file size (default 1024 x scale)")
        parser.add_argument("--cpu-memory-budget-mib", type=int, default=None, metavar="MIB",
                            help="max_batch and vram_test on CPU: memory budget standing in for device memory "
                                 "(default 2048 x scale; at most this machine's RAM)")
        parser.add_argument("--burn", default=None, metavar="DURATION",
                            help="burn-in: load every GPU with GEMMs for DURATION (60s, 10m, 1h)")

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> "RunRequest":
        """The request `add_arguments`' options parsed into `args`; RequestError when one is out of range."""
        return cls(device=args.device, suite=args.suite, kernels=tuple(args.kernel), scale=args.scale,
                   time_cap_s=args.time_cap, disk_dir=args.disk_dir, disk_size_mib=args.disk_size_mib,
                   cpu_memory_budget_mib=args.cpu_memory_budget_mib,
                   burn_s=None if args.burn is None else parse_duration_s(args.burn))

    @classmethod
    def from_argv(cls, argv: list[str]) -> "RunRequest":
        """Inverse of `to_argv`; RequestError (one line) for an unknown option or a value out of range."""
        parser = _RequestParser(prog="run", add_help=False)
        cls.add_arguments(parser)
        return cls.from_namespace(parser.parse_args(argv))

    def to_argv(self) -> list[str]:
        """Options as `--name=value` (a value starting with '-' stays a value); floats as repr, exact."""
        argv = [f"--device={self.device}", f"--suite={self.suite}", *(f"--kernel={name}" for name in self.kernels)]
        for option, value in (("--scale", self.scale), ("--time-cap", self.time_cap_s)):
            if value is not None:
                argv.append(f"{option}={float(value)!r}")
        if self.disk_dir is not None:  # "./-x" is the folder "-x", and argparse cannot drop a "--" from it
            argv.append(f"--disk-dir=.{os.sep}{self.disk_dir}" if self.disk_dir.startswith("-") else
                        f"--disk-dir={self.disk_dir}")
        for option, value in (("--disk-size-mib", self.disk_size_mib),
                              ("--cpu-memory-budget-mib", self.cpu_memory_budget_mib)):
            if value is not None:
                argv.append(f"{option}={value}")
        if self.burn_s is not None:
            argv.append(f"--burn={float(self.burn_s)!r}s")
        return argv


def parse_duration_s(text: str) -> float:
    """Seconds in "90", "60s", "10m", "1.5h"; RequestError (one line) for anything else or out of range."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([smh]?)\s*", str(text), re.ASCII)
    seconds = float(match.group(1)) * DURATION_UNITS_S[match.group(2)] if match else None
    if seconds is None or not MIN_BURN_S <= seconds <= MAX_BURN_S:
        raise RequestError(f"--burn must be a duration like 60s, 10m or 1h (from {MIN_BURN_S:g}s to "
                           f"{MAX_BURN_S / 3600:g}h), got {_shown(text)}")
    return seconds


def physical_memory_mib() -> int | None:
    """This machine's RAM in MiB (the most --cpu-memory-budget-mib may be), or None where the OS does not say."""
    try:
        pages, page_bytes = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page_bytes // 2**20 if pages > 0 and page_bytes > 0 else None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: object) -> str:
    """A value in an error line: repr, cut, control characters escaped by repr itself."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
