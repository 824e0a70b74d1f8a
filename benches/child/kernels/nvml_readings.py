"""The burn's per-second NVML readings of one GPU (SM clock, power, temperature, clock-event reasons).

Imports no torch: the caller maps a torch device to its NVML uuid. `module` is pynvml or a scripted fake.
Every reading the GPU or binding does not give is None; with no NVML at all every reading is None.
"""

from __future__ import annotations

from typing import Any

NVML_CLOCK_SM = 1
NVML_TEMPERATURE_GPU = 0
# Newest name first: drivers from R535 renamed "throttle reasons" to "clocks event reasons".
CLOCK_EVENT_FUNCTIONS = ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
READING_NAMES = ("sm_clock_mhz", "power_w", "temperature_c", "clock_event_mask")


def no_readings() -> dict[str, Any]:
    return dict.fromkeys(READING_NAMES)


class NvmlReadings:
    """One NVML session for the burn: handles by uuid (or index), readings that never raise."""

    def __init__(self, module: Any = None) -> None:
        self.module = module
        self.started = False
        if self.module is None:
            try:
                import pynvml

                self.module = pynvml
            except ImportError:
                return
        try:
            self.module.nvmlInit()
            self.started = True
        except Exception:  # no driver, no library: every reading stays None
            self.started = False

    def handle(self, uuid: str | None, index: int) -> Any:
        """The NVML handle of a GPU by uuid ("GPU-..."), else by NVML index; None when NVML cannot find it."""
        if not self.started:
            return None
        if uuid:
            handle = self._call("nvmlDeviceGetHandleByUUID", uuid)
            if handle is not None:
                return handle
        return self._call("nvmlDeviceGetHandleByIndex", index)

    def uuid(self, handle: Any) -> str | None:
        value = self._call("nvmlDeviceGetUUID", handle) if handle is not None else None
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value

    def read(self, handle: Any) -> dict[str, Any]:
        """This second's readings of `handle`; None for each one NVML does not give."""
        readings = no_readings()
        if handle is None or not self.started:
            return readings
        readings["sm_clock_mhz"] = _number(self._call("nvmlDeviceGetClockInfo", handle, NVML_CLOCK_SM))
        milliwatts = _number(self._call("nvmlDeviceGetPowerUsage", handle))
        readings["power_w"] = None if milliwatts is None else milliwatts / 1000.0
        readings["temperature_c"] = _number(self._call("nvmlDeviceGetTemperature", handle, NVML_TEMPERATURE_GPU))
        for name in CLOCK_EVENT_FUNCTIONS:
            mask = self._call(name, handle)
            if isinstance(mask, int) and not isinstance(mask, bool):
                readings["clock_event_mask"] = mask
                break
        return readings

    def close(self) -> None:
        if self.started:
            self._call("nvmlShutdown")
            self.started = False

    def _call(self, name: str, *args: Any) -> Any:
        function = getattr(self.module, name, None)
        if function is None:
            return None
        try:
            return function(*args)
        except Exception:  # NVMLError (not supported, GPU lost) or a binding that differs: no reading
            return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
