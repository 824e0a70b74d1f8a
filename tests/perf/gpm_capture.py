"""Record the GPU fields of `pth-top snapshot --json` a few times while a workload runs: a GPM fixture.

  python gpm_capture.py NAME [--samples N] [--interval S] -- COMMAND...
Starts COMMAND in its own session with GPM_READY_FILE set and waits (at most --ready-timeout) for the
workload to write it; takes one sample and N more --interval apart (GPM needs an interval: the first has
none); then creates GPM_STOP_FILE (the workload ends, rc 0), ending its session if it lingers.
Writes $OUT/gpm/NAME.json: the command, each sample's `gpus` and `jobs` as snapshot --json has them
(docs/snapshot-schema.md), the workload's rc and stderr tail. Exit 0 when the workload got ready, else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TERM_WAIT_S = 5  # under gpu_check.sh's --kill-after


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gpm_capture.py", usage="%(prog)s NAME [options] -- COMMAND...")
    parser.add_argument("name")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--ready-timeout", type=float, default=90.0)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.command = argv[split + 1:]
    if not args.command:
        parser.error("give the workload after --")
    return args


def end_session(process: subprocess.Popen) -> int:
    """SIGTERM to the workload's session (torchrun and its rank), SIGKILL if it lingers; its rc."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(TERM_WAIT_S)
        except subprocess.TimeoutExpired:
            continue
    return process.wait()


def sample_while_ready(
    process: subprocess.Popen, ready_file: Path, args: argparse.Namespace,
) -> tuple[bool, list[dict[str, Any]]]:
    """Whether the workload got ready, and the samples taken while it ran."""
    from pth_top.sensors.sampler import Sampler
    from pth_top.sensors.snapshot_json import snapshot_to_dict

    give_up = time.monotonic() + args.ready_timeout
    while not ready_file.exists() and process.poll() is None and time.monotonic() < give_up:
        time.sleep(0.1)
    if not ready_file.exists():
        return False, []
    samples = []
    sampler = Sampler()
    try:
        sampler.sample()
        for _ in range(args.samples):
            time.sleep(args.interval)
            document = snapshot_to_dict(sampler.sample(), top_processes=0)
            samples.append({key: document.get(key) for key in ("timestamp_s", "gpus", "jobs")})
    finally:
        sampler.close()
    return True, samples


def main(argv: list[str]) -> int:
    args = parse(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

    out = Path(os.environ.get("OUT", ".")) / "gpm"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        ready_file, stop_file = Path(scratch) / "ready", Path(scratch) / "stop"
        stderr_path = Path(scratch) / "stderr"
        try:
            with open(stderr_path, "w") as stderr:
                process = subprocess.Popen(args.command, env=dict(os.environ, GPM_READY_FILE=str(ready_file),
                                                                   GPM_STOP_FILE=str(stop_file)),
                                           stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
        except OSError as error:
            print(f"gpm_capture.py {args.name}: cannot start {args.command[0]!r}: {error.strerror}", file=sys.stderr)
            return 2
        try:
            got_ready, samples = sample_while_ready(process, ready_file, args)
        finally:  # also when `timeout` ends this script: never leave the workload on the GPU
            stop_file.touch()
            try:
                rc = process.wait(TERM_WAIT_S)
            except subprocess.TimeoutExpired:
                rc = end_session(process)
        stderr_tail = stderr_path.read_text(errors="replace").splitlines()[-20:]
    fixture = {
        "fixture": "pth-top.gpm-capture", "version": 1, "scenario": args.name, "command": args.command,
        "ready": got_ready, "interval_s": args.interval, "workload_rc": rc, "workload_stderr_tail": stderr_tail,
        "samples": samples,
    }
    (out / f"{args.name}.json").write_text(json.dumps(fixture, indent=1, allow_nan=False) + "\n")
    print(f"gpm_capture.py {args.name}: {len(samples)} samples, ready {got_ready}, workload rc {rc}")
    return 0 if got_ready else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
