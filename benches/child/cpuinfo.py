"""CPU model, ISA flags, physical cores, clock and last-level cache from /proc and /sys. Stdlib only.

`measure_clock` times a dependent add chain to learn the clock the cores actually run at (VMs have no
cpufreq, and /proc/cpuinfo's MHz there is the nominal clock, not the turbo one).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

INTERESTING_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile", "amx_fp16")


# Where max_ghz came from: cpufreq's limit is the single-core max turbo; /proc/cpuinfo's MHz is often nominal.
CLOCK_FROM_CPUFREQ = "cpufreq max (single-core turbo)"
CLOCK_FROM_PROC_CPUINFO = "/proc/cpuinfo MHz (nominal in VMs)"
# Dependent `add rax, rdx` chain (1 cycle latency on every x86-64 core; a register operand, so no renamer
# folds it as Golden Cove does for add-immediate), ADDS_PER_LOOP per loop, then `dec rdi; jnz`; `ret`.
ADDS_PER_LOOP = 32
ADD_CHAIN_X86_64 = (bytes.fromhex("4801d0") * ADDS_PER_LOOP + bytes.fromhex("48ffcf")
                    + bytes([0x75, (256 - (3 * ADDS_PER_LOOP + 5)) & 0xFF]) + b"\xc3")
CLOCK_WINDOW_S = 0.01
PLAUSIBLE_GHZ = (0.2, 8.0)


@dataclass(frozen=True)
class CpuIdentity:
    """What /proc/cpuinfo says about the chip: vendor, CPUID family and model, name, flags, cores."""

    model_name: str = ""
    vendor: str = ""
    family: int | None = None
    model_number: int | None = None
    physical_cores: int | None = None
    flags: tuple[str, ...] = ()
    mhz_ghz: float | None = None


@dataclass(frozen=True)
class ClockMeasurement:
    """Clock the cores ran an add chain at: one thread alone, and `threads` threads at once."""

    one_thread_ghz: float
    all_threads_ghz: float
    threads: int


@dataclass(frozen=True)
class CpuInfo:
    model: str
    physical_cores: int
    logical_cpus: int
    flags: tuple[str, ...]
    max_ghz: float | None
    llc_bytes: int | None
    vendor: str = ""
    family: int | None = None
    model_number: int | None = None
    max_ghz_source: str = ""
    measured: ClockMeasurement | None = field(default=None)

    def as_dict(self) -> dict:
        measured = self.measured
        return {
            "model": self.model,
            "vendor": self.vendor,
            "cpu_family": self.family,
            "cpu_model": self.model_number,
            "physical_cores": self.physical_cores,
            "logical_cpus": self.logical_cpus,
            "isa_flags": list(self.flags),
            "max_ghz": self.max_ghz,
            "max_ghz_source": self.max_ghz_source,
            "measured_ghz_1_thread": measured.one_thread_ghz if measured else None,
            "measured_ghz_all_threads": measured.all_threads_ghz if measured else None,
            "measured_threads": measured.threads if measured else None,
            "llc_bytes": self.llc_bytes,
        }


def _int_or_none(text: str) -> int | None:
    try:
        return int(text, 0) if text.startswith("0x") else int(text)
    except ValueError:
        return None


def parse_cpuinfo(text: str) -> CpuIdentity:
    """The first processor's identity; physical cores counted over (physical id, core id) pairs."""
    model = vendor = ""
    family = model_number = None
    cores: set[tuple[str, str]] = set()
    flags: set[str] = set()
    mhz: list[float] = []
    physical_id = core_id = None
    for line in text.splitlines() + [""]:
        if not line.strip():
            if core_id is not None:
                cores.add((physical_id or "0", core_id))
            physical_id = core_id = None
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "model name" and not model:
            model = value
        elif key == "vendor_id" and not vendor:
            vendor = value
        elif key == "cpu family" and family is None:
            family = _int_or_none(value)
        elif key == "model" and model_number is None:
            model_number = _int_or_none(value)
        elif key == "physical id":
            physical_id = value
        elif key == "core id":
            core_id = value
        elif key == "flags" and not flags:
            flags = set(value.split())
        elif key == "cpu MHz":
            try:
                mhz.append(float(value))
            except ValueError:
                pass
    picked = tuple(flag for flag in INTERESTING_FLAGS if flag in flags)
    return CpuIdentity(model_name=model, vendor=vendor, family=family, model_number=model_number,
                       physical_cores=len(cores) or None, flags=picked, mhz_ghz=max(mhz) / 1000 if mhz else None)


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _max_freq_ghz() -> float | None:
    text = _read(Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))
    try:
        return int(text.strip()) / 1e6 if text else None
    except ValueError:
        return None


def _size_bytes(text: str) -> int | None:
    text = text.strip().upper()
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    try:
        if text[-1] in units:
            return int(text[:-1]) * units[text[-1]]
        return int(text)
    except (ValueError, IndexError):
        return None


def _llc_bytes() -> int | None:
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    best = None
    for index in sorted(base.glob("index*")):
        level = _read(index / "level")
        size = _read(index / "size")
        if level and size:
            parsed = _size_bytes(size)
            if parsed and (best is None or int(level) >= best[0]):
                best = (int(level), parsed)
    return best[1] if best else None


def read_cpu_info(measure_clock_threads: int | None = None) -> CpuInfo:
    """This machine's CPU; with `measure_clock_threads`, also the clock measured with 1 and that many threads."""
    identity = parse_cpuinfo(_read(Path("/proc/cpuinfo")) or "")
    logical = os.cpu_count() or 1
    cpufreq_ghz = _max_freq_ghz()
    return CpuInfo(
        model=identity.model_name or platform.processor() or "unknown CPU",
        physical_cores=identity.physical_cores or logical,
        logical_cpus=logical,
        flags=identity.flags,
        max_ghz=cpufreq_ghz or identity.mhz_ghz,
        llc_bytes=_llc_bytes(),
        vendor=identity.vendor,
        family=identity.family,
        model_number=identity.model_number,
        max_ghz_source=CLOCK_FROM_CPUFREQ if cpufreq_ghz else CLOCK_FROM_PROC_CPUINFO if identity.mhz_ghz else "",
        measured=measure_clock(measure_clock_threads) if measure_clock_threads else None,
    )


def _add_chain() -> tuple[Callable[[int, int], int], mmap.mmap] | None:
    """The add chain as a callable (ctypes releases the GIL while it runs), or None off x86-64 Linux / no exec pages."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64") or sys.maxsize <= 2**32:
        return None  # the bytes are x86-64 code: a 32-bit Python on a 64-bit kernel would misread them
    try:
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except (OSError, ValueError):  # SELinux execmem or a hardened kernel refuses executable anonymous memory
        return None
    page.write(ADD_CHAIN_X86_64)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64)(address), page


def _chain_ghz(chain: Callable[[int, int], int], loops: int) -> float:
    """Cycles over this thread's CPU time: time the scheduler gave to other processes does not count."""
    started = time.thread_time_ns()
    chain(loops, 1)
    return loops * ADDS_PER_LOOP / max(1, time.thread_time_ns() - started)


def _together_ghz(chain: Callable[[int, int], int], loops: int, threads: int) -> float:
    """`threads` chains started together; the fastest (a hybrid CPU's slower cores would lower a mean)."""
    results: list[float] = []
    barrier = threading.Barrier(threads)

    def work() -> None:
        barrier.wait()
        results.append(_chain_ghz(chain, loops))

    workers = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return max(results)


def measure_clock(threads: int, rounds: int = 5) -> ClockMeasurement | None:
    """Best of `rounds` short windows, alone and with `threads` at once; cycles per second of thread CPU time,
    so other processes on these cores (or a preempted vCPU, where steal is accounted) do not lower it."""
    made = _add_chain()
    if made is None:
        return None
    chain, page = made
    threads = max(1, threads)
    try:
        guess_ghz = _chain_ghz(chain, 100_000)  # also ramps the core up from idle
        loops = max(1000, int(guess_ghz * 1e9 * CLOCK_WINDOW_S / ADDS_PER_LOOP))
        one = max(_chain_ghz(chain, loops) for _ in range(rounds))
        together = max(_together_ghz(chain, 3 * loops, threads) for _ in range(rounds))
    finally:
        page.close()
    low, high = PLAUSIBLE_GHZ
    if not (low < one < high and low < together < high):
        return None
    return ClockMeasurement(one_thread_ghz=round(one, 3), all_threads_ghz=round(min(together, one), 3), threads=threads)
