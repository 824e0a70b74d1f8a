"""`pth-top replay FILE`: read a flight recording back (exports now; the interactive replay comes later)."""

from __future__ import annotations

import argparse
import re

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
        help="read a flight recording: export GPU rows (--csv, --json) or print its events (--events)",
        description=(
            "Read a recording made by 'pth-top record'. --csv and --json export the GPU metric rows of a time "
            "window; --events prints the event log (as JSON with --json)."
        ),
        epilog="T is an ISO time (2025-01-31T14:05, local unless it has a zone), a Unix time, 'now', or relative "
               "to the recording's last sample: -10m, -2h, -1d.",
    )
    # "--from -10m" must read -10m as a value, as argparse already reads "-10" (a negative number), not as a flag.
    parser._negative_number_matcher = RELATIVE_TIME_ARGUMENT
    parser.add_argument("file", type=input_file_argument, metavar="FILE", help="the recording (.sqlite)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--csv", action="store_true", help="GPU rows as CSV")
    shape.add_argument("--json", action="store_true", help="GPU rows (or, with --events, events) as JSON")
    parser.add_argument("--events", action="store_true", help="print the event log")
    parser.add_argument("--from", dest="from_time", metavar="T", help="window start (default: the first sample)")
    parser.add_argument("--to", dest="to_time", metavar="T", help="window end (default: the last sample)")
    parser.add_argument("--gpu", type=gpu_index, metavar="N", help="only GPU N")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from pth_top.recorder import replay
    from pth_top.recorder.database import RecordingRefused, open_recording

    if not (args.csv or args.json or args.events):
        raise CliError("the interactive replay is not available yet; use --csv, --json or --events")
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
