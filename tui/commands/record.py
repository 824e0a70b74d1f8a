"""`pth-top record`: the flight recorder, a headless service writing samples and events into a SQLite file."""

from __future__ import annotations

import argparse
import re

from pth_top.tui.commands import CliError, count_argument, seconds_argument

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_DURATION_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
DEFAULT_MAX_SIZE = "1G"
DEFAULT_MAX_AGE = "30d"
DEFAULT_MIN_FREE = "256M"


def size_argument(text: str) -> int:
    """Bytes from "1G", "500M", "64k" (powers of 1024) or a plain number."""
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (use e.g. 1G, 500M, 64k)")
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2).lower()])


def duration_argument(text: str) -> float:
    """Seconds from "30d", "12h", "10m", "90s" or a plain number of seconds."""
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 30d, 12h, 10m)")
    return float(match.group(1)) * _DURATION_UNITS[match.group(2)]




def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "record",
        help="flight recorder: record samples and events into a SQLite file (headless)",
        description=(
            "Sample the machine every INTERVAL (host CPU, memory, disks, network; every GPU in full; every GPU "
            "process and the top N processes by CPU and by memory; every process is read every 5 s, in between "
            "only the GPU and recorded ones, so a newly busy process is recorded up to 5 s late) and detect events "
            "(Xid, ECC, row remaps, "
            "throttling, lost GPUs, power/temperature limits, GPU process start/exit, OOM kills, full disks). "
            "Each interval is one commit to a SQLite file in WAL mode (schema: docs/recording-schema.md). "
            "Rows are thinned to one per 10 s after a day and one a minute after a week."
        ),
        epilog="Stop with Ctrl+C or SIGTERM. Read it back with 'pth-top replay FILE --events' or --csv/--json.",
    )
    parser.add_argument("--interval", type=seconds_argument("interval", 0.1, 3600), default=1.0, metavar="SECONDS",
                        help="time between samples (default 1)")
    parser.add_argument("--top", type=count_argument("--top", 0, 10_000), default=None, metavar="N",
                        help="processes recorded besides the GPU ones: the N busiest by CPU and the N largest "
                             "by memory (default 20)")
    parser.add_argument("--no-cmdline", dest="include_cmdline", action="store_false",
                        help="record process names only, no command lines (arguments can hold secrets)")
    parser.add_argument("--out", metavar="FILE",
                        help="the recording (default <data dir>/recordings/<hostname>.sqlite; "
                             "PTH_TOP_DATA_DIR sets the data dir)")
    parser.add_argument("--max-size", type=size_argument, default=size_argument(DEFAULT_MAX_SIZE), metavar="SIZE",
                        help=f"size cap: past it the oldest samples go (default {DEFAULT_MAX_SIZE})")
    parser.add_argument("--max-age", type=duration_argument, default=duration_argument(DEFAULT_MAX_AGE),
                        metavar="AGE", help=f"samples and events older than this go (default {DEFAULT_MAX_AGE})")
    parser.add_argument("--min-free", type=size_argument, default=size_argument(DEFAULT_MIN_FREE), metavar="SIZE",
                        help="free space floor where the file lives: below it samples stop and an event says "
                             f"so (default {DEFAULT_MIN_FREE})")
    parser.add_argument("--fsync", action="store_true",
                        help="sync each commit to disk: a power cut then loses at most the last interval "
                             "(default: a kill loses at most that, a power cut the last few seconds)")
    parser.add_argument("--duration", type=duration_argument, default=None, metavar="TIME",
                        help="stop after this long (default: run until stopped)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import signal
    import sys
    import threading
    from pathlib import Path

    from pth_top.configs.paths import DATA_DIR_VARIABLE, UserDirError, check_override
    from pth_top.recorder.database import RecordingRefused, default_recording_path
    from pth_top.recorder.recorder import DEFAULT_TOP, Recorder, RecorderOptions
    from pth_top.recorder.store import Retention
    from pth_top.text import printable

    if args.out is None:
        try:
            check_override(DATA_DIR_VARIABLE)
        except UserDirError as error:
            raise CliError(str(error)) from None
    path = Path(args.out) if args.out is not None else default_recording_path()
    if args.max_size < 1024 * 1024:
        raise CliError("--max-size must be at least 1M")
    from pth_top.recorder.delivery import AlertPipeline
    from pth_top.tui.settings import load_settings

    settings, problem = load_settings()
    if problem:
        print(f"pth-top record: {printable(problem, 300)}", file=sys.stderr, flush=True)
    options = RecorderOptions(
        path=path, interval_s=args.interval, top=DEFAULT_TOP if args.top is None else args.top,
        include_cmdline=args.include_cmdline, retention=Retention(max_age_s=args.max_age, max_bytes=args.max_size),
        min_free_bytes=args.min_free, fsync_each_commit=args.fsync, flags=settings.flags,
    )
    try:
        recorder = Recorder(options, alerts=AlertPipeline(settings.alerts))
    except RecordingRefused as error:
        raise CliError(error.strerror or str(error)) from None
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda *_: stop.set())
    if args.duration is not None:
        timer = threading.Timer(args.duration, stop.set)
        timer.daemon = True
        timer.start()
    print(f"pth-top record: recording to {printable(str(path), 300)} every {args.interval:g} s "
          "(Ctrl+C or SIGTERM stops)", file=sys.stderr, flush=True)
    recorder.run(stop)
    return 0
