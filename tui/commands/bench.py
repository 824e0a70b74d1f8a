"""`pth-top bench`: run the torch benchmarks headless; progress on stderr, table or JSON on stdout."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pth_top.text import printable
from pth_top.tui.commands import CliError, seconds_argument

if TYPE_CHECKING:
    from pth_top.benches.run_request import RunRequest
    from pth_top.tui.commands.bench_burn import BurnLogPrinter

# --stall-limit: under a second a kernel's ordinary step looks hung; a day is longer than the longest burn.
STALL_LIMIT_RANGE_S = (1.0, 24 * 3600.0)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run torch benchmarks (GEMM, memory bandwidth, AMP steps, disk ...) headless",
        description="Run torch kernel benchmarks in a subprocess and compare them with the hardware's peak. "
                    "Every run is saved as JSON in the user data folder.",
    )
    from pth_top.benches.run_request import RunRequest

    RunRequest.add_arguments(parser)
    parser.set_defaults(device=None)  # cpu, or all with --burn / --accept (bench_burn.default_device)
    parser.set_defaults(suite=None)  # quick, or standard with --kernel (default_suite)
    parser.add_argument("--accept", action="store_true",
                        help="used-GPU acceptance: burn (5m or --burn), VRAM patterns, ECC/remap/Xid counters, "
                             "a verdict per GPU")
    parser.add_argument("--json", action="store_true", help="print the run as JSON instead of a table")
    parser.add_argument("--out", metavar="FILE", help="also write the run's JSON to FILE")
    parser.add_argument("--force", action="store_true", help="let --out overwrite an existing file")
    parser.add_argument("--python", metavar="PATH",
                        help="interpreter whose torch to benchmark, e.g. your training venv's python")
    parser.add_argument("--list", action="store_true", help="list the kernels and exit")
    parser.add_argument("--stall-limit", type=seconds_argument("stall limit", *STALL_LIMIT_RANGE_S), default=None,
                        metavar="SECONDS",
                        help="stop the run when a kernel makes no progress this long (a hung GPU); "
                             f"default max(300 s, 10 x the time cap), at least {STALL_LIMIT_RANGE_S[0]:g} s")
    parser.add_argument("--runs", action="store_true", help="list the saved runs (unreadable ones with the reason)")
    parser.add_argument("--open", metavar="FILE", help="print a saved run (as a table, or JSON with --json)")
    parser.set_defaults(func=run)


def list_kernels() -> str:
    from pth_top.benches.catalog import KERNELS, SUITES

    lines = []
    for spec in KERNELS:
        suites = ",".join(name for name, members in SUITES.items() if spec.name in members) or "opt-in"
        lines.append(f"{spec.name:<11} {spec.unit:<10} {'/'.join(spec.devices):<9} {suites:<15} {spec.summary}")
    return "\n".join(lines)


def validate(args: argparse.Namespace) -> RunRequest:
    """The run the options ask for; CliError (one line) for any option out of range or a path we cannot use."""
    from pth_top.benches.run_request import RequestError, RunRequest
    from pth_top.tui.commands.bench_burn import burn_request, default_device

    args.device = default_device(args)
    args.suite = default_suite(args)
    try:
        request = burn_request(args, RunRequest.from_namespace(args))
    except RequestError as error:
        raise CliError(str(error)) from None
    if request.disk_dir is not None:
        problem = path_problem(request.disk_dir)
        if problem is None and not os.path.isdir(request.disk_dir):
            problem = "not a directory"
        if problem:
            raise CliError(f"--disk-dir {printable(request.disk_dir, 200)}: {problem}")
    if request.disk_size_mib is not None:
        check_disk_space(request.disk_size_mib, request.disk_dir)
    if args.out is not None:
        validate_out(args.out, args.force)
    return request


def check_disk_space(size_mib: int, disk_dir: str | None) -> None:
    """CliError when the disk kernel's file would not fit in its folder (it would fill the disk, then fail)."""
    import shutil

    from pth_top.configs.paths import user_data_dir

    folder = Path(disk_dir) if disk_dir is not None else user_data_dir()
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent  # the data dir is made later: its space is its nearest existing parent's
    try:
        free_mib = shutil.disk_usage(folder).free // 2**20
    except OSError:
        return  # the disk kernel reports an unusable folder as its error row
    if size_mib > free_mib:
        raise CliError(f"--disk-size-mib {size_mib} is more than the {free_mib:,} MiB free in {printable(folder, 200)}")


def default_suite(args: argparse.Namespace) -> str:
    """--suite as given; else standard for chosen kernels (full size and warm-up), quick for the whole suite."""
    if args.suite is not None:
        return args.suite
    return "standard" if args.kernel else "quick"


def path_problem(path: str) -> str | None:
    """Why `path` cannot be looked at (empty, NUL byte, name too long, a parent that is a file), or None."""
    if not path:
        return "empty path"
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except ValueError:
        return "contains a NUL byte"
    except OSError as error:
        return error.strerror or str(error)
    return None


def validate_out(out: str, force: bool) -> None:
    """--out must name a file we may write (what the atomic write refuses, refused now), in a writable folder."""
    from pth_top.configs.fileio import check_write_target, folder_problem

    shown = printable(out, 200)
    problem = folder_problem(Path(os.path.abspath(out)).parent) or path_problem(out)
    if problem:
        raise CliError(f"--out {shown}: {problem}")
    try:
        check_write_target(out)
    except OSError as error:
        raise CliError(f"--out {shown}: {error.strerror}") from None
    if os.path.exists(out) and not force:
        raise CliError(f"{shown} already exists (use --force to overwrite)")
    parent = os.path.dirname(os.path.abspath(out))
    while not os.path.exists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)  # the folder that would hold the new folders
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"--out {shown}: cannot write in {printable(parent, 200)}")


class ProgressPrinter:
    """One line per result on stderr; a live progress line when stderr is a terminal."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self._line_open = False
        self.burn: BurnLogPrinter | None = None  # for --burn / --accept

    def _clear(self) -> None:
        if self._line_open:
            self.stream.write("\r\033[K")
            self._line_open = False

    def progress(self, fields: dict) -> None:
        if not self.live:
            return
        from pth_top.benches.client.rows import progress_message

        self._clear()
        self.stream.write(printable(f"[{fields.get('kernel')} {fields.get('device')}] "
                                    f"{100 * (fields.get('fraction') or 0):.0f}% {progress_message(fields)}", 100))
        self.stream.flush()
        self._line_open = True

    def line(self, text: str) -> None:
        self._clear()
        self.stream.write(printable(text) + "\n")
        self.stream.flush()

    def sample(self, fields: dict) -> None:
        if self.burn is not None:
            self.burn.sample(fields, self.line)


async def execute(request: RunRequest, python: str, printer: ProgressPrinter, stall_limit_s: float | None = None):
    """Run the child and fold its events into a record; LaunchError before anything ran."""
    import asyncio

    from pth_top.benches.client.bench_process import BenchProcess
    from pth_top.benches.client.rows import row_from_dict, summary_line
    from pth_top.benches.client.runs import RunRecord

    process = BenchProcess.for_request(python, request, stall_limit_s=stall_limit_s)
    record = RunRecord(python=process.python)
    await process.start()
    try:
        async for event in process.events():
            stored = record.apply(event)
            if event.kind == "progress":
                printer.progress(event.fields)
            elif event.kind == "sample":
                printer.sample(event.fields)
            elif event.kind == "result" and stored is not None:
                printer.line(summary_line(row_from_dict(stored)))
            elif event.kind == "error" and stored is not None and record.has_started:
                printer.line(summary_line(row_from_dict(stored)))  # before the start, the last line says why
        record.exit_code = await process.wait()
    except asyncio.CancelledError:
        record.cancelled = True
        await process.cancel()
        raise
    return record, process


def default_disk_dir() -> str:
    """The data dir, made if missing; when it cannot be made the disk kernel reports that as its error row."""
    from pth_top.configs.paths import user_data_dir

    make_folders(user_data_dir())
    return str(user_data_dir())


def make_folders(folder: Path) -> list[Path]:
    """Make `folder` and its missing parents; the folders made, outermost first ([] when none or it failed)."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    try:
        for made in reversed(missing):
            made.mkdir()
    except OSError:
        return []
    return missing[::-1]


def remove_empty_folders(folders: list[Path]) -> None:
    """Undo make_folders where the folders are still empty (a run that did not start leaves nothing on disk)."""
    for folder in reversed(folders):
        try:
            folder.rmdir()
        except OSError:
            return


def run(args: argparse.Namespace) -> int:
    if args.list:
        print(list_kernels())
        return 0
    if args.runs:
        return print_saved_runs()
    if args.open is not None:
        return print_saved_run(args.open, as_json=args.json)
    request = validate(args)
    import asyncio
    import dataclasses

    from pth_top.benches.client.spawn import LaunchError, resolve_python
    from pth_top.configs.paths import DATA_DIR_VARIABLE, UserDirError, check_override, user_data_dir

    try:
        check_override(DATA_DIR_VARIABLE)  # a relative PTH_TOP_DATA_DIR would scatter runs over working dirs
        python = resolve_python(args.python)  # before the data dir is made: a bad interpreter changes nothing on disk
    except (LaunchError, UserDirError) as error:
        raise CliError(str(error)) from None
    made_folders = [] if args.disk_dir else make_folders(user_data_dir())
    printer = ProgressPrinter()
    if request.burn_s is not None:
        from pth_top.tui.commands.bench_burn import BurnLogPrinter

        printer.burn = burn_printer = BurnLogPrinter(args.accept, request.burn_s)
        burn_printer.start()
    try:
        request = dataclasses.replace(request, disk_dir=request.disk_dir or str(user_data_dir()))
        record, process = asyncio.run(execute(request, python, printer, stall_limit_s=args.stall_limit))
    except LaunchError as error:
        remove_empty_folders(made_folders)
        raise CliError(str(error)) from None
    except KeyboardInterrupt:
        if printer.burn is not None:
            printer.burn.partial_report()
        raise
    finally:
        if printer.burn is not None:
            printer.burn.stop()
    setup_error = record.setup_error()
    if setup_error or not record.has_started:
        remove_empty_folders(made_folders)
    if setup_error:
        raise CliError(f"benchmark did not run: {printable(setup_error, 500)}", 2)
    if record.finished is None:
        if not record.has_started:
            raise CliError(f"benchmark did not run: {process.failure_reason()}", 2)
        print_record(record, args.json)
        raise CliError(f"benchmark failed: {process.failure_reason()}", 1)
    report: list[str] = printer.burn.conclude(record) if printer.burn is not None else []
    print_record(record, args.json)
    if report and not args.json:
        print("\n".join(["", *report]), flush=True)
    failed_writes = save_record(record, args, printer)
    return 0 if record.ok and not failed_writes and not (printer.burn and printer.burn.failed) else 1


def print_record(record, as_json: bool) -> None:
    from pth_top.benches.client.rows import text_table

    if as_json:
        print(json.dumps(record.to_json(), indent=1))
    else:
        print(text_table(record.rows + record.errors))
    sys.stdout.flush()


def save_record(record, args: argparse.Namespace, printer: ProgressPrinter) -> int:
    """Save the run in the data dir and to --out; each failure is one line. Returns how many failed."""
    from pth_top.benches.client.runs import save_run, write_run_to

    failed = 0
    try:
        printer.line(f"saved {save_run(record)}")
    except OSError as error:
        printer.line(f"pth-top: could not save the run in the data dir: {error.strerror or error}")
        failed += 1
    if args.out:
        try:
            printer.line(f"wrote {write_run_to(record, args.out, overwrite=args.force)}")
        except OSError as error:
            printer.line(f"pth-top: cannot write {args.out}: {error.strerror or error} (the old file is unchanged)")
            failed += 1
    return failed


def print_saved_runs() -> int:
    from pth_top.benches.client.runs import scan_runs

    runs = scan_runs(limit=10_000)
    for run in runs:
        print(f"{printable(run.path.name, 100)}  {run.label()}")
    if not runs:
        print("no saved runs")
    return 0


def print_saved_run(path: str, as_json: bool) -> int:
    from pth_top.benches.client.runs import RunFileError, load_run

    problem = path_problem(path)
    if problem:
        raise CliError(f"--open {printable(path, 200)}: {problem}")
    try:
        record = load_run(path)
    except RunFileError as error:
        raise CliError(f"cannot open the run: {error}") from None
    print_record(record, as_json)
    if not as_json:
        from pth_top.tui.commands.bench_burn import saved_report

        report = saved_report(record)
        if report:
            print("\n".join(report))
    return 0
