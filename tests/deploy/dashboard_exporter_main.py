"""`pth-top export` on a scripted 4-GPU NVML with everything the Grafana dashboard shows.

Usage: python tests/deploy/dashboard_exporter_main.py [pth-top export arguments...]
GPUs 0-1 train (GPM), GPU 2 hangs in a collective (GPM), GPU 3 has no GPM; this process holds memory on
GPUs 0 and 1 (so the process and user series have a real owner); GPU 2 reports one Xid 79.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fakes.gpm_profiles import NCCL_HANG, TRAINING, enable_gpm  # noqa: E402
from tests.fleet.fixtures import XidQueue, make_exporter_gpus  # noqa: E402

GPU_COUNT = 4


def main() -> int:
    queue = XidQueue()
    queue.push(2, 79)
    fake = make_exporter_gpus(GPU_COUNT, process_pids={0: [os.getpid()], 1: [os.getpid()]}, xid_queue=queue,
                              wall_clock=time.time)
    for index, profile in ((0, TRAINING), (1, TRAINING), (2, NCCL_HANG)):
        enable_gpm(fake, index, profile)
    sys.modules["pynvml"] = fake  # type: ignore[assignment]
    from pth_top.tui.cli import main as cli_main

    return cli_main(["export", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
