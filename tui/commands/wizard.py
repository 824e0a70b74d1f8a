"""`pth-top wizard`: the build wizard (TUI), or headless from an answers file to a build TOML."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "wizard", help="recommend a PyTorch machine (TUI; headless with --answers)",
        description=(
            "Recommend a machine for a PyTorch workload. Without --answers it opens the wizard in the terminal; "
            "with --answers FILE.toml it writes the build TOML without a UI."
        ),
        epilog="An answers file has scenario = ... and [workload] [task] [data] [scale] [budget] tables; "
               "a table or key left out takes its default. A saved build file works too (its [answers] are used).",
    )
    parser.add_argument("--answers", metavar="FILE.toml", help="answers to run headless")
    parser.add_argument(
        "--preset", metavar="NAME",
        help="a guide build preset (guide-personal, guide-enterprise): "
        "opens in the review step, or headless with --out",
    )
    parser.add_argument("--out", metavar="BUILD.toml", help="where to save the build (default: the builds folder)")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pth_top.configs.paths import CONFIG_DIR_VARIABLE, UserDirError, check_override
    from pth_top.tui.commands import CliError

    if args.answers is not None and args.preset is not None:
        raise CliError("give --answers or --preset, not both")
    if args.out is not None and not args.out.strip():
        raise CliError("--out needs a file name (leave --out out to save in the builds folder)")
    try:
        check_override(CONFIG_DIR_VARIABLE)
    except UserDirError as error:
        raise CliError(str(error)) from None
    if args.answers is None and args.out is None:
        if args.force:
            raise CliError("--force needs --out (the wizard asks before overwriting in its review step)")
        if args.preset is None or sys.stdin.isatty() and sys.stdout.isatty():
            return _run_tui(args.preset)
    if args.answers is None and args.preset is None:
        raise CliError("--out needs --answers or --preset (the wizard saves from its review step)")
    return _run_headless(args)


def _run_tui(preset: str | None) -> int:
    import os

    from pth_top.tui.cli import prepare_terminal_environment

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "pth-top: not a terminal; the wizard needs one. Headless: 'pth-top wizard --answers FILE.toml'.",
            file=sys.stderr,
        )
        return 2
    prepare_terminal_environment(os.environ)
    from pth_top.configs.errors import shown
    from pth_top.configs.presets import build_preset_paths
    from pth_top.tui.commands import CliError
    from pth_top.tui.wizard_app import WizardApp

    if preset is not None and preset not in build_preset_paths():
        raise CliError(f"unknown preset {shown(preset)} (one of {', '.join(build_preset_paths())})")
    WizardApp(preset=preset).run()
    return 0


def _run_headless(args: argparse.Namespace) -> int:
    import datetime as dt
    from pathlib import Path

    from pth_top import __version__
    from pth_top.configs.build_file import default_build_path, save_build
    from pth_top.configs.errors import MESSAGE_LIMIT_CHARS, shown
    from pth_top.configs.fileio import FileExistsRefused
    from pth_top.configs.parts import load_catalog
    from pth_top.configs.presets import build_preset_paths, load_build_preset
    from pth_top.configs.recommend import recommend
    from pth_top.configs.render import render_build_text
    from pth_top.text import printable
    from pth_top.tui.commands import CliError
    from pth_top.tui.wizard.measured import last_run_ceilings

    measured = last_run_ceilings()  # this machine's last bench run: measured ceilings for its GPU model
    try:
        catalog = load_catalog()
        if args.preset is not None:
            if args.preset not in build_preset_paths():
                raise CliError(f"unknown preset {shown(args.preset)} (one of {', '.join(build_preset_paths())})")
            preset = load_build_preset(args.preset)
            build = recommend(preset.answers, catalog, pins=preset.pins, title=preset.title, comments=preset.comments,
                              measured=measured)
        else:
            answers = read_answers_file(Path(args.answers))
            build = recommend(answers, catalog, measured=measured)
    except ValueError as error:  # ConfigFileError included: both are one line naming what is wrong
        raise CliError(printable(error, limit=MESSAGE_LIMIT_CHARS)) from None
    created = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    # A trailing "/" is kept (Path would drop it): "--out dir/" names a folder, not a file called "dir".
    out = args.out if args.out else default_build_path(build, created)
    shown_out = printable(out, limit=1000)
    try:
        saved = save_build(build, out, created=created, tool_version=__version__, overwrite=args.force)
    except FileExistsRefused:
        raise CliError(f"{shown_out}: already exists (use --force to overwrite)") from None
    except OSError as error:
        reason = printable(f"{shown_out}: cannot write: {error.strerror or error}", limit=MESSAGE_LIMIT_CHARS)
        raise CliError(reason) from None
    sys.stdout.write(render_build_text(build))
    print(f"saved {printable(saved, limit=1000)}")
    return 0


def read_answers_file(path):
    """Answers from a TOML file (bare answers, or a whole valid build file's); ConfigFileError when bad."""
    from pth_top.configs.answers import answers_from_dict
    from pth_top.configs.build_file import build_from_dict
    from pth_top.configs.tomlsource import read_toml

    data, text = read_toml(path)
    if "schema_version" in data:  # a build file is used only when all of it is valid, as `build show` would
        return build_from_dict(data, path=path, text=text)[0].answers
    return answers_from_dict(data, path=path, text=text)
