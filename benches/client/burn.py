"""The burn's log on pth-top's side: per-second sample events folded per device, live lines, the report.

Everything is computed from the samples, so a cancelled burn gives the same (partial) report.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from pth_top.benches.client.rows import format_quantity
from pth_top.sensors.throttle import decode_throttle_reasons
from pth_top.text import printable

SAMPLE_COLUMNS = ("t_s", "tflops", "sm_clock_mhz", "power_w", "temperature_c", "clock_event_mask")
# Clock-event bits (sensors/throttle.py) that hold a GPU back by heat or hardware: SW/HW thermal, HW slowdown,
# HW power brake. The power cap (0x4) is named too but is expected under sustained GEMMs.
HARDWARE_THROTTLE_MASK = 0x20 | 0x40 | 0x08 | 0x80
POWER_CAP_MASK = 0x04
THROTTLE_MASK = HARDWARE_THROTTLE_MASK | POWER_CAP_MASK


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _shown(value: float | None, unit: str, digits: int = 0) -> str:
    return f"NA {unit}".rstrip() if value is None else f"{value:.{digits}f} {unit}".rstrip()


@dataclass
class DeviceBurn:
    """One device's samples, in SAMPLE_COLUMNS order (None where the device gave no reading)."""

    device: str
    samples: list[list[Any]] = field(default_factory=list)

    def add(self, fields: dict) -> None:
        mask = fields.get("clock_event_mask")
        self.samples.append([_number(fields.get(name)) for name in SAMPLE_COLUMNS[:-1]]
                            + [mask if isinstance(mask, int) and not isinstance(mask, bool) else None])

    def values(self, name: str) -> list[float]:
        column = SAMPLE_COLUMNS.index(name)
        return [sample[column] for sample in self.samples if sample[column] is not None]

    def median(self, name: str) -> float | None:
        values = self.values(name)
        return statistics.median(values) if values else None

    @property
    def seconds(self) -> float:
        times = self.values("t_s")
        return max(times) if times else 0.0

    @property
    def has_readings(self) -> bool:
        """Whether any second carries an NVML reading (a CPU burn has none: its lines leave those columns out)."""
        return any(value is not None for sample in self.samples for value in sample[2:])

    @property
    def tflops_per_watt(self) -> float | None:
        tflops, watts = self.median("tflops"), self.median("power_w")
        return tflops / watts if tflops is not None and watts else None

    def reason_seconds(self, mask: int = THROTTLE_MASK) -> dict[str, int]:
        """Seconds during which each clock-event reason in `mask` was active, by its word."""
        counts: dict[str, int] = {}
        for value in self.values("clock_event_mask"):
            for word in decode_throttle_reasons(int(value) & mask):
                counts[word] = counts.get(word, 0) + 1
        return counts

    def summary(self) -> dict[str, Any]:
        clocks, temperatures = self.values("sm_clock_mhz"), self.values("temperature_c")
        return {"seconds": self.seconds, "samples": len(self.samples), "median_tflops": self.median("tflops"),
                "median_power_w": self.median("power_w"), "tflops_per_watt": self.tflops_per_watt,
                "median_sm_clock_mhz": self.median("sm_clock_mhz"), "min_sm_clock_mhz": min(clocks, default=None),
                "max_temperature_c": max(temperatures, default=None), "clock_event_seconds": self.reason_seconds(),
                "hardware_throttle_seconds": sum(self.reason_seconds(HARDWARE_THROTTLE_MASK).values())}

    def live_line(self) -> str:
        """The latest second, for the CLI's log and the Bench screen."""
        if not self.samples:
            return f"{self.device}: waiting for the first second"
        t_s, tflops, clock, power, temperature, mask = self.samples[-1]
        reasons = ", ".join(decode_throttle_reasons(mask & THROTTLE_MASK)) if mask is not None else ""
        line = f"{self.device} {t_s or 0:4.0f}s  {format_quantity(tflops, 'TFLOP/s'):>14}"
        if self.has_readings:
            line += f"  SM {_shown(clock, 'MHz')}  {_shown(power, 'W')}  {_shown(temperature, '°C')}"
        return printable(line + (f"  {reasons}" if reasons else ""), 200)

    def report_line(self) -> str:
        summary = self.summary()
        per_watt = summary["tflops_per_watt"]
        events = ", ".join(f"{word} {count} s" for word, count in summary["clock_event_seconds"].items())
        if not self.has_readings:
            return printable(f"{format_quantity(summary['median_tflops'], 'TFLOP/s')} median (no NVML readings)", 300)
        return printable(
            f"{format_quantity(summary['median_tflops'], 'TFLOP/s')} median, {_shown(summary['median_power_w'], 'W')}, "
            f"{'NA TFLOP/s' if per_watt is None else format_quantity(per_watt, 'TFLOP/s')} per W; "
            f"SM {_shown(summary['median_sm_clock_mhz'], 'MHz')} (min {_shown(summary['min_sm_clock_mhz'], 'MHz')}); "
            f"max {_shown(summary['max_temperature_c'], '°C')}; clock events: {events or 'none'}", 300)


@dataclass
class BurnLog:
    """Every device's burn samples, as they arrive."""

    devices: dict[str, DeviceBurn] = field(default_factory=dict)

    def add(self, fields: dict) -> DeviceBurn:
        device = str(fields.get("device"))
        burn = self.devices.setdefault(device, DeviceBurn(device))
        burn.add(fields)
        return burn

    def slowest(self) -> str | None:
        """The device with the lowest median TFLOP/s, when two or more have one."""
        rated = {device: burn.median("tflops") for device, burn in self.devices.items()}
        known = {device: value for device, value in rated.items() if value is not None}
        return min(known, key=lambda device: known[device]) if len(known) > 1 else None

    def throttled(self) -> dict[str, dict[str, int]]:
        """Devices with power-cap, thermal or HW-slowdown clock events: seconds by reason."""
        return {device: reasons for device, burn in self.devices.items() if (reasons := burn.reason_seconds())}

    def report_lines(self, names: dict[str, str] | None = None) -> list[str]:
        names = names or {}
        seconds = max((burn.seconds for burn in self.devices.values()), default=0.0)
        lines = [f"Burn-in: {seconds:.0f} s on {len(self.devices)} device{'s' if len(self.devices) != 1 else ''}"]
        for device, burn in self.devices.items():
            name = f" ({printable(names[device], 60)})" if names.get(device) else ""
            lines.append(f"  {printable(device, 40)}{name}: {burn.report_line()}")
        slowest = self.slowest()
        if slowest is not None:
            fastest = max(burn.median("tflops") or 0.0 for burn in self.devices.values())
            share = (self.devices[slowest].median("tflops") or 0.0) / fastest if fastest else 0.0
            lines.append(f"  slowest: {printable(slowest, 40)} ({100 * (1 - share):.1f} % below the fastest)")
        throttled = self.throttled()
        lines.append("  throttled: " + ("; ".join(
            f"{printable(device, 40)} ({', '.join(f'{word} {count} s' for word, count in reasons.items())})"
            for device, reasons in throttled.items()) or "none"))
        return lines

    @classmethod
    def from_json(cls, data: Any) -> "BurnLog":
        """The log saved by `to_json` (a saved run's burn row); rows that are not SAMPLE_COLUMNS long are skipped."""
        log = cls()
        devices = data.get("devices") if isinstance(data, dict) else None
        for device, saved in (devices.items() if isinstance(devices, dict) else ()):
            curve = saved.get("curve") if isinstance(saved, dict) else None
            for values in curve if isinstance(curve, list) else ():
                if isinstance(values, list) and len(values) == len(SAMPLE_COLUMNS):
                    log.add({"device": device, **dict(zip(SAMPLE_COLUMNS, values, strict=True))})
        return log

    def to_json(self) -> dict[str, Any]:
        """Per device: its summary and its curve (rows of SAMPLE_COLUMNS), for the saved run."""
        return {"columns": list(SAMPLE_COLUMNS), "slowest": self.slowest(),
                "devices": {device: {"summary": burn.summary(), "curve": burn.samples}
                            for device, burn in self.devices.items()}}


def attach_burn_log(record: Any, log: BurnLog) -> list[str]:
    """Save the log with the run (the burn row's `details.burn_log`, so `--open` rebuilds the report); the report.

    The same for the CLI and the Bench screen; GPUs are named from the run's metadata.
    """
    gpus = record.metadata.get("cuda_devices") or {}
    names = {device: str((gpus.get(device) or {}).get("name") or "") for device in log.devices}
    burn_row = next((row for row in record.rows if row.get("kernel") == "burn"), None)
    if burn_row is not None:
        burn_row.setdefault("details", {})["burn_log"] = log.to_json()
    return log.report_lines(names)
