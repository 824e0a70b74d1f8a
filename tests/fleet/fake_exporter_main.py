"""Run `pth-top export` on a scripted 8-GPU NVML: installs the fake as `pynvml`, then calls the real CLI.

Usage: python tests/fleet/fake_exporter_main.py [pth-top export arguments...]
GPU 2 reports one Xid 79 (fallen off the bus) after start; energy grows at each GPU's power draw.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fleet.fixtures import XidQueue, make_exporter_gpus  # noqa: E402

FAKE_GPU_COUNT = 8
XID_GPU, XID_CODE = 2, 79


def main() -> int:
    queue = XidQueue()
    queue.push(XID_GPU, XID_CODE)
    sys.modules["pynvml"] = make_exporter_gpus(FAKE_GPU_COUNT, xid_queue=queue, wall_clock=time.time)  # type: ignore[assignment]
    from pth_top.tui.cli import main as cli_main

    return cli_main(["export", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
