"""`pth-top doctor`: check that this machine is set up right for PyTorch (GPU & driver, host, torch)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pth_top.text import printable
from pth_top.tui.commands import CliError, seconds_argument

MAX_LOAD_SECONDS = 60.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check GPU, driver, host and torch setup; explain each finding and how to fix it",
        description=(
            "Run setup checks (GPU & driver via NVML, host via /proc and /sys, torch via a probe "
            "subprocess). Exit 0 when nothing fails, 1 when a check fails, 2 on usage errors."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print a JSON document (schema pth-top.doctor v1)")
    parser.add_argument(
        "--python", metavar="PATH",
        help="interpreter whose torch to check (default: the one running pth-top)",
    )
    parser.add_argument(
        "--data-dir", metavar="DIR", type=Path, default=None,
        help="where datasets and checkpoints live, for the free-space and disk checks (default: current directory)",
    )
    parser.add_argument("--no-torch", action="store_true", help="skip the torch probe and the checks that need it")
    parser.add_argument(
        "--load", metavar="SECONDS", type=seconds_argument("--load", 0, MAX_LOAD_SECONDS), default=0.0,
        help="keep the GPUs busy this long in the probe and check the PCIe links under load (default 0)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pth_top.benches.client.spawn import InterpreterError, resolve_python
    from pth_top.doctor.live import live_context
    from pth_top.doctor.registry import run_all
    from pth_top.doctor.report import exit_code_for, format_text, to_json_document

    try:
        python = resolve_python(args.python) if args.python is not None else None
    except InterpreterError as error:
        raise CliError(f"doctor: --python: no Python interpreter at {error.shown} ({error.reason})") from None
    if args.no_torch and args.load:
        raise CliError("doctor: --load needs the torch probe; drop --no-torch")
    data_dir = (args.data_dir or Path.cwd()).expanduser()
    try:
        is_dir = data_dir.is_dir()
    except (OSError, ValueError) as error:  # a name too long, a NUL byte
        raise CliError(f"doctor: --data-dir: {getattr(error, 'strerror', None) or error}: "
                       f"{printable(data_dir, 200)}") from None
    if not is_dir:
        raise CliError(f"doctor: --data-dir: not a directory: {printable(data_dir, 200)}")
    context = live_context(python, data_dir.resolve() if args.data_dir else None, with_torch=not args.no_torch,
                           load_seconds=args.load)
    try:
        findings = run_all(context)
    finally:
        context.nvml.shutdown()
    if args.json:
        document = to_json_document(findings, None if args.no_torch else context.python, str(context.data_dir))
        print(json.dumps(document, indent=2))
    else:
        print(format_text(findings))
    sys.stdout.flush()
    return exit_code_for(findings)
