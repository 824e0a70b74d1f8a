"""One simulated fleet host: `pth-top export` on a scripted 8-GPU NVML whose readings depend on a host number.

Usage: python tests/fleet/fleet_host_main.py --fake-host=N [pth-top export arguments...]
`host_readings(n)` says what host n serves, so tests compare the view against it. GPU 0 of every host runs
this process (its own PID), so the drill-down has a GPU process to show; host 1 has GPU 3 thermally throttled.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fakes.gpu_fixtures import by_argument  # noqa: E402
from tests.fleet.fixtures import XidQueue, make_exporter_gpus  # noqa: E402

GPU_COUNT = 8
HW_THERMAL_BIT = 0x40
THROTTLED_HOST, THROTTLED_GPU = 1, 3


def host_readings(host_number: int) -> list[dict[str, float]]:
    """Per GPU of host `host_number`: utilization (0-100 %) and core temperature (C) it serves."""
    return [{"utilization_percent": float((11 * host_number + 9 * gpu) % 101),
             "temperature_celsius": float(40 + host_number + gpu)} for gpu in range(GPU_COUNT)]


def main() -> int:
    host_arguments = [argument for argument in sys.argv[1:] if argument.startswith("--fake-host=")]
    host_number = int(host_arguments[0].partition("=")[2]) if host_arguments else 0
    export_arguments = [argument for argument in sys.argv[1:] if argument not in host_arguments]
    fake = make_exporter_gpus(GPU_COUNT, process_pids={0: [os.getpid()]}, xid_queue=XidQueue())
    for device, readings in zip(fake.devices, host_readings(host_number), strict=True):
        utilization = int(readings["utilization_percent"])
        device.values["nvmlDeviceGetUtilizationRates"] = SimpleNamespace(gpu=utilization, memory=utilization // 2)
        device.values["nvmlDeviceGetTemperature"] = by_argument({0: int(readings["temperature_celsius"])})
    if host_number == THROTTLED_HOST:
        for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            fake.devices[THROTTLED_GPU].values[name] = HW_THERMAL_BIT
    sys.modules["pynvml"] = fake  # type: ignore[assignment]
    from pth_top.tui.cli import main as cli_main

    return cli_main(["export", *export_arguments])


if __name__ == "__main__":
    sys.exit(main())
