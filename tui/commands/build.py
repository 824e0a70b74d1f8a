"""`pth-top build show|check FILE`: print a saved build, or compare it with this machine."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build", help="show a saved build, or check it against this machine",
        description="Work with build TOML files written by 'pth-top wizard'.",
    )
    actions = parser.add_subparsers(dest="build_action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print a build file", description="Print a build file as text.")
    show.add_argument("file", metavar="FILE", help="a build TOML")
    check = actions.add_parser(
        "check", help="compare a build with this machine",
        description="Compare a build with this machine (exit 0: meets everything it can check; 1: misses something).",
    )
    check.add_argument("file", metavar="FILE", help="a build TOML")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pth_top.configs.build_file import load_build
    from pth_top.configs.errors import ConfigFileError
    from pth_top.text import printable
    from pth_top.tui.commands import CliError

    try:
        build, created, tool_version = load_build(args.file)
    except ConfigFileError as error:
        raise CliError(str(error)) from None
    if args.build_action == "show":
        from pth_top.configs.render import render_build_text

        sys.stdout.write(printable(f"{args.file} (created {created}, pth-top {tool_version})") + "\n\n")
        sys.stdout.write(render_build_text(build))
        return 0
    from pth_top.doctor.build_check import check_build

    try:
        from pth_top.sensors.sampler import Sampler

        snapshot = Sampler().sample()
    except Exception as error:  # any sensor failure is reported, never a traceback
        reason = printable(f"cannot read this machine: {type(error).__name__}: {error}", limit=400)
        raise CliError(reason, exit_code=1) from None
    lines = check_build(build, snapshot)
    width = max((len(line.part) for line in lines), default=0)
    for line in lines:
        print(printable(f"{line.status.upper():<8}{line.part:<{width + 2}}{line.detail}"))
    return 1 if any(line.status == "misses" for line in lines) else 0
