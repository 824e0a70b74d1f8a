"""A full burn of 60 s (CPU here, every GPU on a GPU machine) ends cleanly: no process, no temp file left (issue 13).

Run: python tests/perf/burn_leaves_nothing.py [--seconds 60] [--device cpu|all]
Runs `pth-top bench --burn` to its end with TMPDIR and the data dir in a fresh folder, notes every process
of the run while it burns, then checks they are all gone, TMPDIR is empty and the saved run holds the
per-second curve up to the end. Prints JSON; exit 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
GONE_WITHIN_S = 15.0


def alive(processes: list[psutil.Process]) -> list[int]:
    found = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        temp, data = Path(folder, "tmp"), Path(folder, "data")
        temp.mkdir()
        env = {**os.environ, "TMPDIR": str(temp), "PTH_TOP_DATA_DIR": str(data)}
        command = [sys.executable, "-c", "import sys; from pth_top.tui.cli import main; sys.exit(main(sys.argv[1:]))",
                   "bench", "--burn", f"{args.seconds}s", "--device", args.device]
        started = time.monotonic()
        cli = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        seen: dict[int, psutil.Process] = {}
        while cli.poll() is None:
            for child in psutil.Process(cli.pid).children(recursive=True) if cli.poll() is None else ():
                seen.setdefault(child.pid, child)
            time.sleep(0.5)
        out = cli.stdout.read() if cli.stdout else ""
        deadline = time.monotonic() + GONE_WITHIN_S
        while alive(list(seen.values())) and time.monotonic() < deadline:
            time.sleep(0.2)
        runs = sorted(data.glob("bench-runs/bench-*.json"))
        curve_end_s = None
        if runs:
            saved = json.loads(runs[-1].read_text())
            [burn] = [row for row in saved["rows"] if row["kernel"] == "burn"]
            curves = [device["curve"] for device in burn["details"]["burn_log"]["devices"].values()]
            curve_end_s = min(curve[-1][0] for curve in curves) if curves and all(curves) else None
        left = alive(list(seen.values()))
        temp_files = sorted(str(path) for path in temp.rglob("*"))
        result = {"exit_code": cli.returncode, "wall_s": round(time.monotonic() - started, 1),
                  "processes_seen": len(seen), "processes_left": left, "temp_files_left": temp_files,
                  "saved_runs": len(runs), "curve_end_s": curve_end_s, "report": "Burn-in:" in out}
    ok = (cli.returncode == 0 and bool(seen) and not left and not temp_files and len(runs) == 1
          and "Burn-in:" in out and curve_end_s is not None and curve_end_s >= args.seconds)
    print(json.dumps({**result, "ok": ok}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
