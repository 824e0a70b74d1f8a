"""`pth-top replay [FILE]`: the dashboard over a flight recording, or its GPU rows and events exported."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from pth_top.tui.commands import CliError, input_file_argument

RELATIVE_TIME_ARGUMENT = re.compile(r"^-\d+(?:\.\d+)?[smhdw]?$")


def gpu_index(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a GPU index: {text!r}") from None
    if not 0 <= value < 4096:
        raise argparse.ArgumentTypeError(f"not a GPU index: {text}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay a flight recording in the dashboard, or export GPU rows (--csv, --json) or events (--events)",
        description=(
            "Read a recording made by 'pth-top record'. Without an export flag it opens the dashboard on the "
            "recording at its last sample (or --at): left/right step one sample, PgUp/PgDn one minute, "
            "Shift+PgUp/PgDn ten, e/E the next/previous event, l the event list, space plays ([ ] speed 1x-60x), "
            "/ jumps to a time. --csv and --json export the GPU metric rows of a time window; --events prints "
            "the event log (as JSON with --json)."
        ),
        epilog="T is an ISO time (2025-01-31T14:05, local unless it has a zone), a Unix time, 'now', or relative "
               "to the recording's last sample: -10m, -2h, -1d.",
    )
    # "--from -10m" must read -10m as a value, as argparse already reads "-10" (a negative number), not as a flag.
    parser._negative_number_matcher = RELATIVE_TIME_ARGUMENT
    parser.add_argument("file", type=input_file_argument, metavar="FILE", nargs="?",
                        help="the recording (default: this host's, <data dir>/recordings/<hostname>.sqlite)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--csv", action="store_true", help="GPU rows as CSV")
    shape.add_argument("--json", action="store_true", help="GPU rows (or, with --events, events) as JSON")
    parser.add_argument("--events", action="store_true", help="print the event log")
    parser.add_argument("--from", dest="from_time", metavar="T", help="window start (default: the first sample)")
    parser.add_argument("--to", dest="to_time", metavar="T", help="window end (default: the last sample)")
    parser.add_argument("--gpu", type=gpu_index, metavar="N", help="only GPU N")
    parser.add_argument("--at", dest="at_time", metavar="T", help="the dashboard opens at this time (default: the end)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from pth_top.recorder import replay
    from pth_top.recorder.database import RecordingRefused, open_recording

    if args.file is None:
        args.file = str(default_file())
    try:
        connection = open_recording(args.file, create=False)
    except RecordingRefused as error:
        raise CliError(error.strerror or str(error)) from None
    try:
        span = replay.time_span(connection)
        end = span[1] if span else 0.0
        try:
            from_s = replay.parse_time(args.from_time, end) if args.from_time else float("-inf")
            to_s = replay.parse_time(args.to_time, end) if args.to_time else float("inf")
        except replay.TimeRefused as error:
            raise CliError(str(error)) from None
        if from_s > to_s:
            raise CliError("--from is after --to")
        if not (args.csv or args.json or args.events):
            connection.close()  # the dashboard reads the file on its own thread
            return run_dashboard(args, span)
        out = sys.stdout
        if args.events:
            found = replay.events(connection, from_s, to_s, args.gpu)
            if args.json:
                json.dump({"schema": "pth-top.replay.events", "schema_version": 1, "events": list(found)}, out)
                out.write("\n")
            else:
                for event in found:
                    out.write(replay.event_line(event) + "\n")
        elif args.csv:
            replay.write_csv(replay.gpu_rows(connection, from_s, to_s, args.gpu), out)
        else:
            bounds = (from_s if from_s != float("-inf") else (span[0] if span else 0.0),
                      to_s if to_s != float("inf") else end)
            replay.write_json(replay.gpu_rows(connection, from_s, to_s, args.gpu), out, *bounds)
    finally:
        connection.close()
    out.flush()
    return 0


def default_file() -> Path:
    from pth_top.configs.paths import DATA_DIR_VARIABLE, UserDirError, check_override
    from pth_top.recorder.database import default_recording_path

    try:
        check_override(DATA_DIR_VARIABLE)
    except UserDirError as error:
        raise CliError(str(error)) from None
    return default_recording_path()


def run_dashboard(args: argparse.Namespace, span: tuple[float, float] | None) -> int:
    """The dashboard on the recording, once the file and --at are known good."""
    import os
    import sys

    from pth_top.recorder import replay

    if span is None:
        raise CliError(f"{args.file}: no samples recorded yet")
    at_s = None
    if args.at_time:
        try:
            at_s = replay.parse_time(args.at_time, span[1])
        except replay.TimeRefused as error:
            raise CliError(str(error)) from None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CliError("not a terminal; the replay needs one (--csv, --json and --events export without)")
    from pth_top.recorder.frames import FileFrames
    from pth_top.tui.cli import prepare_terminal_environment
    from pth_top.tui.replay_app import ReplayApp

    prepare_terminal_environment(os.environ)
    ReplayApp(FileFrames(Path(args.file)), at_s).run()
    return 0
