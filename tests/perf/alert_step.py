"""Cost of the alert rules per sample (issue 25), beside the recorder's event detector over the same samples.

Run: python tests/perf/alert_step.py [--gpus 8] [--processes 1000] [--steps 300]
Every rule is on (two watched-job patterns); the snapshots are the dashboard tests' fakes. Prints JSON with the
median milliseconds per step of each; exit 1 when the rules cost more than the detector and 5 ms a sample.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pth_top.recorder.alert_rules import alert_settings  # noqa: E402
from pth_top.recorder.alerts import AlertEvaluator  # noqa: E402
from pth_top.recorder.events import EventDetector  # noqa: E402
from tests.fakes.snapshots import make_snapshot  # noqa: E402

BUDGET_MS = 5.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    base = make_snapshot(gpu_count=args.gpus, process_count=args.processes)
    samples = [replace(base, timestamp_s=base.timestamp_s + step) for step in range(args.steps)]
    rules = alert_settings({"rules": {"gpu_memory": {"enabled": True},
                                      "process_exit": {"patterns": ["train\\.py", "^vllm$"]}}})
    evaluator, detector = AlertEvaluator(rules), EventDetector()
    costs: dict[str, list[float]] = {"alert_rules": [], "event_detector": []}
    for snapshot in samples:  # alternated, so load from other processes hits both alike
        started = time.perf_counter()
        events = detector.feed(snapshot)
        costs["event_detector"].append(time.perf_counter() - started)
        started = time.perf_counter()
        evaluator.step(snapshot, events)
        costs["alert_rules"].append(time.perf_counter() - started)
    medians = {name: round(statistics.median(values) * 1000, 3) for name, values in costs.items()}
    print(json.dumps({"gpus": args.gpus, "processes": args.processes, "median_ms_per_step": medians}))
    return 1 if medians["alert_rules"] > max(medians["event_detector"], BUDGET_MS) else 0


if __name__ == "__main__":
    sys.exit(main())
