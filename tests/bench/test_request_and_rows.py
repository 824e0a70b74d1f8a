"""RunRequest: the eight run options declared once (argv round trip, hostile values); one row formatter."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pth_top.benches.client.rows import (
    COLUMNS,
    ErrorRow,
    ResultRow,
    format_quantity,
    format_row,
    row_from_dict,
    summary_line,
    text_table,
)
from pth_top.benches.run_request import RequestError, RunRequest

HOSTILE_DIRS = ["-rf", "--device=cuda:0", "a b", "x=y", " spaced ", "ü/β/数据", "line\nbreak", "\x1b]0;t\x07",
                "/" + "d" * 300, "--"]


@pytest.mark.parametrize("disk_dir", HOSTILE_DIRS)
def test_a_request_round_trips_through_argv_with_hostile_paths(disk_dir):
    request = RunRequest(device="cuda:10", suite="standard", kernels=("gemm", "disk"), scale=0.1 + 0.2,
                         time_cap_s=600.0, disk_dir=disk_dir, disk_size_mib=2**62, cpu_memory_budget_mib=1)
    assert RunRequest.from_argv(request.to_argv()) == request


def test_the_defaults_round_trip_and_leave_the_suite_defaults_to_the_child():
    assert RunRequest.from_argv(RunRequest().to_argv()) == RunRequest()
    assert RunRequest.from_argv([]) == RunRequest()


@given(disk_dir=st.text(min_size=1).filter(lambda text: "\0" not in text),
       scale=st.floats(min_value=1e-300, max_value=16.0),
       kernels=st.lists(st.sampled_from(["gemm", "disk", "membw", "h2d"]), max_size=4))
def test_any_valid_request_round_trips(disk_dir, scale, kernels):
    request = RunRequest(kernels=tuple(kernels), scale=scale, disk_dir=disk_dir)
    assert RunRequest.from_argv(request.to_argv()) == request


@pytest.mark.parametrize("fields, message", [
    ({"scale": float("nan")}, "--scale must be in (0, 16]"),
    ({"scale": float("inf")}, "--scale must be in (0, 16]"),
    ({"scale": 0.0}, "--scale must be in (0, 16]"),
    ({"scale": 17}, "--scale must be in (0, 16]"),
    ({"scale": True}, "--scale must be in (0, 16]"),
    ({"time_cap_s": -1.0}, "--time-cap must be in (0, 600]"),
    ({"disk_size_mib": 0}, "--disk-size-mib must be a whole number"),
    ({"cpu_memory_budget_mib": 1.5}, "--cpu-memory-budget-mib must be a whole number"),
    ({"cpu_memory_budget_mib": 2**40}, f"--cpu-memory-budget-mib {2**40} is more than this machine's"),
    ({"burn_s": 0.5}, "--burn must be a duration from 1s to 24h"),
    ({"device": "gpu0"}, "--device must be"),
    ({"device": "cuda:"}, "--device must be"),
    ({"device": "cuda:\u0663"}, "--device must be"),  # an Arabic-Indic digit: isdigit() but no CUDA index
    ({"suite": "huge"}, "--suite must be quick or standard"),
    ({"kernels": ("gemm\n",)}, "unknown kernel 'gemm\\n'"),
    ({"disk_dir": ""}, "--disk-dir must be a non-empty path"),
    ({"disk_dir": "a\0b"}, "--disk-dir must be a non-empty path"),
])
def test_an_out_of_range_request_is_one_line_naming_the_option(fields, message):
    with pytest.raises(RequestError, match=None) as raised:
        RunRequest(**fields)
    text = str(raised.value)
    assert message in text and "\n" not in text and "\x1b" not in text


@pytest.mark.parametrize("argv, message", [
    (["--scale=abc"], "invalid float value"),
    (["--scale=nan"], "--scale must be in (0, 16]"),
    (["--bogus"], "unrecognized arguments"),
    (["--kernel=nope"], "unknown kernel 'nope'"),
    (["--disk-size-mib=1e3"], "invalid int value"),
])
def test_bad_argv_is_a_request_error_not_a_system_exit(argv, message):
    with pytest.raises(RequestError) as raised:
        RunRequest.from_argv(argv)
    assert message in str(raised.value)


def test_the_cli_and_the_child_declare_the_same_options():
    from pth_top.benches.child.runner import build_parser

    cli = argparse.ArgumentParser()
    RunRequest.add_arguments(cli)
    child_options = {action.dest for action in build_parser()._actions} - {"help", "list_devices"}
    assert {action.dest for action in cli._actions} - {"help"} == child_options


@pytest.mark.parametrize("value, unit, shown", [
    (0.000596, "TFLOP/s", "596.0 MFLOP/s"),  # CPU GEMM: was "0.000596 TFLOP/s"
    (0.5, "TFLOP/s", "500.0 GFLOP/s"),
    (312.4, "TFLOP/s", "312.4 TFLOP/s"),
    (1500.0, "GB/s", "1.50 TB/s"),
    (0.25, "MB/s", "250.0 kB/s"),
    (0.0, "GB/s", "0 GB/s"),
    (12.3, "samples/s", "12.30 samples/s"),
    (3.0, "x", "3.00 x"),
    (None, "GB/s", "-"),
])
def test_a_value_reads_with_the_si_prefix_that_suits_it(value, unit, shown):
    assert format_quantity(value, unit) == shown


def test_one_wording_for_skipped_above_peak_noisy_and_error_rows():
    skipped = format_row(ResultRow("h2d", "cuda:0", "pinned", status="skipped", note="no GPU"))
    assert skipped.note == "skipped: no GPU" and skipped.value == "-"
    above = format_row(ResultRow("gemm", "cuda:0", "fp16", value=1000.0, unit="TFLOP/s", percent_of_peak=104.0,
                                 note="tensor cores", rel_iqr=0.3, noisy=True))
    assert above.note == "tensor cores; above peak (boost clock?)" and above.percent == "~104%! (noisy)"
    assert above.spread == "±15.0% noisy" and above.value == "1.00 PFLOP/s"
    error = format_row(ErrorRow(None, None, None, "BadOutput", "line \x1b[2J"))
    assert error.is_error and error.cells()[:4] == ("-", "-", "-", "ERROR") and "\x1b" not in error.note


def test_the_cli_table_and_its_progress_lines_use_the_screen_cells():
    stored = {"kernel": "gemm", "device": "cpu", "variant": "fp32", "status": "ok", "value": 0.000596,
              "unit": "TFLOP/s", "percent_of_peak": 12.0, "note": "", "rel_iqr": 0.01}
    row = row_from_dict(stored)
    table = text_table([stored, {"kernel": None, "device": None, "variant": None, "error_type": "UsageError",
                                 "message": "bad"}])
    header, result, error = table.splitlines()
    assert header.split() == [column for column in COLUMNS if column != "Δ%"]
    assert "596.0 MFLOP/s" in result and "12%" in result and error.endswith("UsageError: bad")
    assert summary_line(row) == "gemm cpu fp32: 596.0 MFLOP/s (12% of peak)"


def test_a_folder_named_like_an_option_keeps_one_spelling():
    assert RunRequest(disk_dir="./-rf").disk_dir == "-rf"
    assert "--disk-dir=./-rf" in RunRequest(disk_dir="-rf").to_argv()


def test_a_noisy_row_never_shows_a_bare_percent_of_peak():
    stored = {"kernel": "gemm", "device": "cpu", "variant": "fp32 1 thread", "status": "ok", "value": 0.085,
              "unit": "TFLOP/s", "percent_of_peak": 85.2, "rel_iqr": 0.4, "noisy": True}
    assert format_row(row_from_dict(stored)).percent == "~85% (noisy)"
    assert "~85% (noisy)" in text_table([stored])
    assert summary_line(row_from_dict(stored)) == "gemm cpu fp32 1 thread: 85.00 GFLOP/s (~85% of peak, noisy)"
    assert format_row(row_from_dict(dict(stored, noisy=False))).percent == "85%"


def test_a_noisy_row_says_so_on_the_screens_peak_bar():
    from pth_top.benches.client.runs import RunRecord
    from pth_top.tui.screens.bench_views import peak_bars

    record = RunRecord(rows=[
        {"kernel": "gemm", "device": "cpu", "variant": "fp32", "percent_of_peak": 85.0, "noisy": True},
        {"kernel": "gemm", "device": "cpu", "variant": "bf16", "percent_of_peak": 60.0, "noisy": False}])
    assert [bar.label for bar in peak_bars(record)] == ["gemm fp32 (noisy)", "gemm bf16"]


def test_a_row_from_two_samples_is_noisy_and_shows_no_spread_figure():
    row = ResultRow.from_dict({"kernel": "e2e_step", "device": "cpu", "variant": "eager", "value": 132.8,
                               "unit": "tokens/s", "rel_iqr": 0.002, "noisy": False, "samples": 2,
                               "percent_of_peak": 50.0})
    cells = format_row(row)
    assert row.noisy and cells.spread == "2 samples, noisy" and "±" not in cells.spread
    assert cells.percent == "~50% (noisy)"
    enough = ResultRow.from_dict({"kernel": "gemm", "device": "cpu", "variant": "fp32", "value": 1.0,
                                  "rel_iqr": 0.002, "noisy": False, "samples": 3})
    assert not enough.noisy and format_row(enough).spread == "±0.1%"


def _bench_args(*argv: str) -> argparse.Namespace:
    from pth_top.tui.commands import bench

    parser = argparse.ArgumentParser()
    bench.register(parser.add_subparsers())
    return parser.parse_args(["bench", *argv])


@pytest.mark.parametrize("argv, suite", [
    ((), "quick"),
    (("--kernel", "mamf"), "standard"),
    (("--kernel", "mamf", "--suite", "quick"), "quick"),
    (("--kernel", "gemm", "--scale", "0.5"), "standard"),
])
def test_a_chosen_kernel_runs_at_the_standard_scale_unless_told(argv, suite):
    from pth_top.tui.commands.bench import validate

    request = validate(_bench_args(*argv))
    assert request.suite == suite
    assert request.scale == (0.5 if "--scale" in argv else None)  # None: the suite's scale
