"""CPU model, ISA flags, physical cores, clock and last-level cache from /proc and /sys. Stdlib only."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

INTERESTING_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile", "amx_fp16")


@dataclass(frozen=True)
class CpuInfo:
    model: str
    physical_cores: int
    logical_cpus: int
    flags: tuple[str, ...]
    max_ghz: float | None
    llc_bytes: int | None

    def as_dict(self) -> dict:
        return {
            "model": self.model,
            "physical_cores": self.physical_cores,
            "logical_cpus": self.logical_cpus,
            "isa_flags": list(self.flags),
            "max_ghz": self.max_ghz,
            "llc_bytes": self.llc_bytes,
        }


def parse_cpuinfo(text: str) -> tuple[str, int | None, tuple[str, ...], float | None]:
    """(model, physical cores or None, interesting flags, highest 'cpu MHz' in GHz or None)."""
    model = ""
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
    return model, (len(cores) or None), picked, (max(mhz) / 1000 if mhz else None)


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


def read_cpu_info() -> CpuInfo:
    text = _read(Path("/proc/cpuinfo")) or ""
    model, cores, flags, mhz_ghz = parse_cpuinfo(text)
    logical = os.cpu_count() or 1
    return CpuInfo(
        model=model or platform.processor() or "unknown CPU",
        physical_cores=cores or logical,
        logical_cpus=logical,
        flags=flags,
        max_ghz=_max_freq_ghz() or mhz_ghz,
        llc_bytes=_llc_bytes(),
    )
