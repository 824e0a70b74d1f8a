"""Run `pth-top record` on a scripted 8-GPU NVML: installs the fake as `pynvml`, then calls the real CLI.

Usage: python tests/recorder/record_main.py [pth-top record arguments...]
PTH_TOP_FAKE_GPU_PIDS="0:123,456;3:789" makes NVML report those PIDs on those GPUs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fleet.fixtures import make_exporter_gpus  # noqa: E402

FAKE_GPU_COUNT = 8


def gpu_pids(text: str) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for part in filter(None, text.split(";")):
        gpu, _, pids = part.partition(":")
        found[int(gpu)] = [int(pid) for pid in pids.split(",") if pid]
    return found


def main() -> int:
    pids = gpu_pids(os.environ.get("PTH_TOP_FAKE_GPU_PIDS", ""))
    sys.modules["pynvml"] = make_exporter_gpus(FAKE_GPU_COUNT, process_pids=pids)  # type: ignore[assignment]
    from pth_top.tui.cli import main as cli_main

    return cli_main(["record", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
