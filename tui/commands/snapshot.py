"""`pth-top snapshot`: one sample of the machine as tables, or as JSON with --json (no terminal needed)."""

from __future__ import annotations

import argparse

from pth_top.tui.commands import seconds_argument

DEFAULT_TOP = 15
DEFAULT_INTERVAL_S = 0.5


def positive_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "snapshot",
        help="print one sample of the machine (tables, or JSON with --json) and exit",
        description=(
            "Take two samples INTERVAL apart (so rates and CPU % mean something) and print the second: "
            "host, CPU, memory, disks, network, GPUs and the busiest processes. Needs no terminal."
        ),
    )
    parser.add_argument("--json", action="store_true",
                        help="print JSON (schema pth-top.snapshot, version 1; see docs/snapshot-schema.md)")
    parser.add_argument("--top", type=positive_count, default=None, metavar="N",
                        help=f"processes to include, busiest first (default {DEFAULT_TOP}; all with --json)")
    parser.add_argument(
        "--interval", type=seconds_argument("interval", 0.05, 60), default=DEFAULT_INTERVAL_S, metavar="SECONDS",
        help=f"time between the two samples (default {DEFAULT_INTERVAL_S})",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import shutil
    import sys
    import time

    from pth_top.sensors.sampler import Sampler

    sampler = Sampler()
    try:
        sampler.sample()
        time.sleep(args.interval)
        snapshot = sampler.sample()
    finally:
        sampler.close()
    if args.json:
        from pth_top.sensors.snapshot_json import snapshot_to_dict

        json.dump(snapshot_to_dict(snapshot, top_processes=args.top), sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    else:
        from pth_top.sensors.snapshot_table import format_snapshot_table

        width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
        top = DEFAULT_TOP if args.top is None else args.top
        sys.stdout.write(format_snapshot_table(snapshot, top_processes=top, width=width))
    sys.stdout.flush()
    return 0
