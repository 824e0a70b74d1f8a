"""Benchmark: how long the wizard takes to recompute a build after an answer or a swap (target <= 50 ms).

Run: python tests/perf/wizard_recompute.py [--repeats N]
Prints the median and worst time per scenario; exits 1 if any median is above the target.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pth_top.configs.answers import Answers  # noqa: E402
from pth_top.configs.parts import load_catalog  # noqa: E402
from pth_top.configs.presets import load_build_preset  # noqa: E402
from pth_top.configs.recommend import recommend, swap  # noqa: E402

TARGET_MS = 50.0
TODAY = dt.date(2026, 1, 1)


def scenarios():
    base = Answers()
    yield "gpt2-small, 1 GPU, ¥15000", lambda catalog: recommend(base, catalog, today=TODAY)
    big = (base.with_value("workload", "preset", "llama-70b").with_value("scale", "gpu_count", 8)
           .with_value("scale", "sharding", "fsdp").with_value("budget", "amount", 3_000_000.0))
    yield "llama-70b, 8 GPUs, FSDP (no card is big enough)", lambda catalog: recommend(big, catalog, today=TODAY)
    cheap = base.with_value("workload", "preset", "resnet18").with_value("budget", "amount", 1000.0)
    yield "resnet18 on ¥1000 (every card tried, none fits)", lambda catalog: recommend(cheap, catalog, today=TODAY)
    tight = base.with_value("workload", "preset", "llama-13b").with_value("budget", "amount", 5000.0)
    yield "llama-13b on ¥5000 (no build fits the budget)", lambda catalog: recommend(tight, catalog, today=TODAY)
    preset = load_build_preset("guide-enterprise")
    yield "guide-enterprise preset (pinned parts)", lambda catalog: recommend(
        preset.answers, catalog, pins=preset.pins, comments=preset.comments, today=TODAY)
    first = recommend(base, load_catalog(), today=TODAY)
    yield "swap GPU", lambda catalog: swap(first, "gpu", catalog, today=TODAY)
    yield "swap RAM", lambda catalog: swap(first, "memory_kit", catalog, today=TODAY)
    from pth_top.tui.wizard.review import build_text

    yield "recompute + review text (what the wizard redraws)", lambda catalog: build_text(
        recommend(base, catalog, today=TODAY))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    catalog = load_catalog()
    print(f"catalog: {len(catalog)} parts; {args.repeats} repeats each; target median <= {TARGET_MS:g} ms")
    slow = False
    for name, run in scenarios():
        run(catalog)  # warm-up
        times_ms = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            run(catalog)
            times_ms.append((time.perf_counter() - start) * 1000)
        median = statistics.median(times_ms)
        slow |= median > TARGET_MS
        print(f"  {name:<55} median {median:6.2f} ms   max {max(times_ms):6.2f} ms")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
