"""The run request the bench client and child share: one run's options, checked, as flags and argv. Stdlib only.

The client hands a RunRequest to the child as argv (`to_argv`) and the child reads it back (`from_argv`);
on either side an option out of range is one RequestError line naming it.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from dataclasses import dataclass
from typing import NoReturn

from pth_top.benches.catalog import KERNELS_BY_NAME, SUITES


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
