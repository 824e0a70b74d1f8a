"""The `pth-top` command line: the dashboard by default, plus headless subcommands."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import TYPE_CHECKING, Callable, NoReturn, Sequence

from pth_top import __version__
from pth_top.text import printable
from pth_top.tui import MIN_INTERVAL_S
from pth_top.tui.commands import CliError, seconds_argument

if TYPE_CHECKING:
    from textual.app import App

# Each module registers one subcommand; imported lazily by name so `--help` stays fast.
COMMAND_MODULES = (
    "pth_top.tui.commands.snapshot",
    "pth_top.tui.commands.bench",
    "pth_top.tui.commands.doctor",
    "pth_top.tui.commands.wizard",
    "pth_top.tui.commands.build",
    "pth_top.tui.commands.export",
    "pth_top.tui.commands.fleet",
    "pth_top.tui.commands.serve",
    "pth_top.tui.commands.record",
    "pth_top.tui.commands.replay",
    "pth_top.tui.commands.alert",
)
COMMAND_NAMES = tuple(module_name.rpartition(".")[2] for module_name in COMMAND_MODULES)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (plus a pointer to --help), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {printable(message)} (see '{self.prog} --help')\n")


def build_parser(with_commands: bool = True) -> argparse.ArgumentParser:
    """The whole command line; without commands (and -h), just the dashboard's own flags."""
    parser = _Parser(
        add_help=with_commands,
        allow_abbrev=with_commands,
        prog="pth-top",
        description=(
            "A terminal dashboard for PyTorch machines. With no command it opens the live monitor "
            "(keys: ? for help, q to quit)."
        ),
        epilog="Headless use: 'pth-top snapshot --json' prints one sample for scripts and cron.",
    )
    parser.add_argument("--version", action="version", version=f"pth-top {__version__}")
    parser.add_argument(
        "-i", "--interval", type=seconds_argument("interval", MIN_INTERVAL_S, 3600), default=1.0,
        metavar="SECONDS",
        help=f"dashboard refresh interval (default 1, minimum {MIN_INTERVAL_S})",
    )
    if not with_commands:
        return parser
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Plain `pth-top [-i S]` parses without importing the command modules; anything else gets them all."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not any(argument in COMMAND_NAMES or argument.startswith(("-h", "--h")) for argument in arguments):
        args, rest = build_parser(with_commands=False).parse_known_args(arguments)
        if not rest:
            args.command = None
            return args
    return build_parser().parse_args(arguments)


def run_dashboard(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "pth-top: not a terminal; the dashboard needs one. "
            "For scripts and cron use 'pth-top snapshot' (or 'pth-top snapshot --json').",
            file=sys.stderr,
        )
        return 2
    prepare_terminal_environment(os.environ)
    start_dashboard(args.interval)
    return 0


def start_dashboard(interval_s: float, app_class: Callable[..., App] | None = None) -> None:
    """Run the dashboard (PthTopApp unless `app_class` is given) until it quits."""
    from pth_top.tui import startup_gc
    from pth_top.tui.first_sample import FirstSample

    startup_gc.pause()  # the app resumes it after its first frame

    # The machine is read in a child process while Textual is imported, so the first frame has data.
    first_sample = FirstSample.in_child_process()
    try:
        if app_class is None:
            from pth_top.tui.app import PthTopApp  # imported after the fork: Textual is the slow part

            app_class = PthTopApp
        app_class(interval_s=interval_s, first_sample=first_sample).run()
    finally:
        first_sample.close()


def prepare_terminal_environment(environ: "os._Environ[str] | dict[str, str]") -> None:
    """Pick a safe colour system where Textual's own guess would be wrong."""
    if environ.get("TEXTUAL_COLOR_SYSTEM", "").lower() == "none":
        environ["TEXTUAL_COLOR_SYSTEM"] = "standard"
    term = environ.get("TERM", "")
    if term in ("", "dumb", "unknown") and "TEXTUAL_COLOR_SYSTEM" not in environ:
        # Rich finds no colour system for these and Textual then falls back to truecolor.
        environ["TEXTUAL_COLOR_SYSTEM"] = "standard"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    try:
        if args.command is None:
            return run_dashboard(args)
        return int(args.func(args) or 0)
    except CliError as error:
        print(f"pth-top: {printable(error)}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("pth-top: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: exit quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as error:  # a bug must still end in one line; PTH_TOP_DEBUG=1 shows the traceback
        if os.environ.get("PTH_TOP_DEBUG"):
            raise
        print(f"pth-top: internal error: {printable(type(error).__name__)}: {printable(error, 300)} "
              "(PTH_TOP_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
