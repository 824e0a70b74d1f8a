"""`pth-top bench`: run the torch benchmarks headless; progress on stderr, table or JSON on stdout."""

from __future__ import annotations

import argparse
import json
import sys

from pth_top.tui.commands import CliError

DEVICE_HELP = "cpu, cuda:N, or all (default cpu)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run torch benchmarks (GEMM, memory bandwidth, AMP steps, disk ...) headless",
        description="Run torch kernel benchmarks in a subprocess and compare them with the hardware's peak. "
                    "Every run is saved as JSON in the user data folder.",
    )
    parser.add_argument("--device", default="cpu", help=DEVICE_HELP)
    parser.add_argument("--suite", choices=("quick", "standard"), default="quick",
                        help="quick (~30 s on a small CPU) or standard (a few minutes)")
    parser.add_argument("--kernel", action="append", default=[], metavar="NAME",
                        help="run only this kernel (repeatable; see --list)")
    parser.add_argument("--json", action="store_true", help="print the run as JSON instead of a table")
    parser.add_argument("--out", metavar="FILE", help="also write the run's JSON to FILE")
    parser.add_argument("--force", action="store_true", help="let --out overwrite an existing file")
    parser.add_argument("--python", metavar="PATH",
                        help="interpreter whose torch to benchmark, e.g. your training venv's python")
    parser.add_argument("--list", action="store_true", help="list the kernels and exit")
    parser.add_argument("--scale", type=float, help="size multiplier (default: the suite's)")
    parser.add_argument("--time-cap", type=float, metavar="SECONDS", help="time cap per measurement")
    parser.add_argument("--disk-dir", metavar="DIR", help="folder for the disk test's temp file (default: data dir)")
    parser.add_argument("--disk-size-mib", type=int, metavar="MIB", help="disk test file size (default 1024 x scale)")
    parser.add_argument("--cpu-memory-budget-mib", type=int, metavar="MIB",
                        help="max_batch on CPU: memory budget standing in for device memory (default 2048 x scale)")
    parser.set_defaults(func=run)


def list_kernels() -> str:
    from pth_top.benches.catalog import KERNELS, SUITES

    lines = []
    for spec in KERNELS:
        suites = ",".join(name for name, members in SUITES.items() if spec.name in members)
        lines.append(f"{spec.name:<11} {spec.unit:<10} {'/'.join(spec.devices):<9} {suites:<15} {spec.summary}")
    return "\n".join(lines)


def validate(args: argparse.Namespace) -> None:
    from pth_top.benches.catalog import KERNELS_BY_NAME

    unknown = [name for name in args.kernel if name not in KERNELS_BY_NAME]
    if unknown:
        raise CliError(f"unknown kernel {unknown[0]!r} (known: {', '.join(KERNELS_BY_NAME)})")
    device = args.device
    if not (device in ("cpu", "all", "cuda") or (device.startswith("cuda:") and device[5:].isdigit())):
        raise CliError(f"--device must be {DEVICE_HELP}, got {device!r}")
    if args.scale is not None and not 0 < args.scale <= 16:
        raise CliError(f"--scale must be in (0, 16], got {args.scale}")
    if args.time_cap is not None and not 0 < args.time_cap <= 600:
        raise CliError(f"--time-cap must be in (0, 600] seconds, got {args.time_cap}")
    if args.disk_size_mib is not None and args.disk_size_mib < 1:
        raise CliError("--disk-size-mib must be at least 1")
    if args.cpu_memory_budget_mib is not None and args.cpu_memory_budget_mib < 1:
        raise CliError("--cpu-memory-budget-mib must be at least 1")
    if args.out and args.force is False:
        from pathlib import Path

        if Path(args.out).exists():
            raise CliError(f"{args.out} already exists (use --force to overwrite)")


class ProgressPrinter:
    """One line per result on stderr; a live progress line when stderr is a terminal."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self._line_open = False

    def _clear(self) -> None:
        if self._line_open:
            self.stream.write("\r\033[K")
            self._line_open = False

    def progress(self, fields: dict) -> None:
        if not self.live:
            return
        eta = fields.get("eta_s")
        eta_text = f" eta {eta:.0f}s" if isinstance(eta, (int, float)) else ""
        self._clear()
        self.stream.write(f"[{fields.get('kernel')} {fields.get('device')}] "
                          f"{100 * (fields.get('fraction') or 0):.0f}%{eta_text} {fields.get('message', '')}"[:100])
        self.stream.flush()
        self._line_open = True

    def line(self, text: str) -> None:
        self._clear()
        self.stream.write(text + "\n")
        self.stream.flush()


def result_line(row: dict, format_value, format_percent) -> str:
    head = f"{row['kernel']} {row['device']} {row['variant']}"
    if row.get("status") != "ok":
        return f"{head}: skipped ({row.get('note')})"
    text = f"{head}: {format_value(row.get('value'))} {row.get('unit', '')}"
    if row.get("percent_of_peak") is not None:
        text += f" ({format_percent(row['percent_of_peak'])} of peak)"
    return text


async def execute(args: argparse.Namespace, printer: ProgressPrinter):
    import asyncio

    from pth_top.benches.launcher import BenchProcess, run_arguments
    from pth_top.benches.report import format_percent, format_value
    from pth_top.benches.runs import RunRecord
    from pth_top.configs.paths import user_data_dir

    disk_dir = args.disk_dir
    if disk_dir is None:
        disk_dir = str(user_data_dir())
        user_data_dir().mkdir(parents=True, exist_ok=True)
    process = BenchProcess(args.python, run_arguments(
        device=args.device, suite=args.suite, kernels=args.kernel, scale=args.scale, time_cap_s=args.time_cap,
        disk_dir=disk_dir, disk_size_mib=args.disk_size_mib, cpu_memory_budget_mib=args.cpu_memory_budget_mib))
    record = RunRecord(python=process.python)
    await process.start()
    try:
        async for event in process.events():
            stored = record.apply(event)
            if event.kind == "progress":
                printer.progress(event.fields)
            elif event.kind == "result" and stored is not None:
                printer.line(result_line(stored, format_value, format_percent))
            elif event.kind == "error" and stored is not None and stored.get("kernel"):
                printer.line(f"{stored['kernel']} {stored['device']} {stored.get('variant') or ''}: "
                             f"ERROR {stored.get('error_type')}: {stored.get('message')}")
        record.exit_code = await process.wait()
    except asyncio.CancelledError:
        record.cancelled = True
        await process.cancel()
        raise
    return record, process


def run(args: argparse.Namespace) -> int:
    if args.list:
        print(list_kernels())
        return 0
    validate(args)
    import asyncio

    from pth_top.benches.launcher import LaunchError
    from pth_top.benches.report import text_table
    from pth_top.benches.runs import save_run, write_run_to
    from pth_top.configs.fileio import FileExistsRefused

    printer = ProgressPrinter()
    try:
        record, process = asyncio.run(execute(args, printer))
    except LaunchError as error:
        raise CliError(str(error)) from None
    if record.finished is None:
        usage = [error for error in record.errors if not error.get("kernel")]
        reason = usage[0]["message"] if usage else process.failure_reason()
        raise CliError(f"benchmark did not run: {reason}", 2 if usage or record.exit_code in (2, 3) else 1)
    top_level = [error for error in record.errors if not error.get("kernel")]
    if top_level:
        raise CliError(top_level[0]["message"], 2)
    saved = save_run(record)
    printer.line(f"saved {saved}")
    if args.out:
        try:
            written = write_run_to(record, args.out, overwrite=args.force)
        except FileExistsRefused as error:
            raise CliError(str(error)) from None
        except OSError as error:
            raise CliError(f"cannot write {args.out}: {error.strerror or error}", 1) from None
        printer.line(f"wrote {written}")
    if args.json:
        print(json.dumps(record.to_json(), indent=1))
    else:
        print(text_table(record.rows + record.errors))
    return 0 if record.ok else 1
