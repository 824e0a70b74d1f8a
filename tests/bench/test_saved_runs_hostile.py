"""Corrupt files in the saved runs folder: one line each, listed as unreadable with the reason, never a crash."""

from __future__ import annotations

import json
import os

import pytest
from textual.widgets import OptionList

from pth_top.benches.client.runs import RunFileError, RunRecord, load_run, save_run, scan_runs
from pth_top.benches.protocol import Event
from pth_top.configs.paths import bench_runs_dir
from tests.bench.test_screen import BenchApp, wait_for


def good_run() -> dict:
    record = RunRecord(python="/usr/bin/python3")
    record.apply(Event("started", {"suite": "quick", "devices": ["cpu"], "metadata": {}, "kernels": []}))
    record.apply(Event("result", {"kernel": "gemm", "device": "cpu", "variant": "fp32", "value": 1.0,
                                  "unit": "TFLOP/s", "status": "ok"}))
    record.apply(Event("finished", {"ok": True, "results": 1, "errors": 0}))
    return record.to_json()


def with_changes(**changes) -> str:
    return json.dumps({**good_run(), **changes})


def with_row(**changes) -> str:
    data = good_run()
    data["rows"][0].update(changes)
    for name in [name for name, value in changes.items() if value is KeyError]:
        del data["rows"][0][name]
    return json.dumps(data)


CORRUPT_RUNS = {
    "empty": "",
    "truncated": with_changes()[:200],
    "garbage": "\x00\x01garbage\x1b[2J",
    "not an object": "[]",
    "wrong format": with_changes(format="something else"),
    "wrong version": with_changes(version=99),
    "version as text": with_changes(version="1"),
    "rows not a list": with_changes(rows={"kernel": "gemm"}),
    "row without kernel": with_row(kernel=KeyError),
    "kernel is a number": with_row(kernel=7),
    "value is text": with_row(value="fast"),
    "value is NaN": with_changes().replace('"value": 1.0', '"value": NaN'),
    "errors rows wrong": with_changes(errors=[{"kernel": "gemm"}]),
    "devices not strings": with_changes(devices=[1, 2]),
    "created_at a number": with_changes(created_at=5),
    "metadata cpu clock text": with_changes(metadata={"cpu": {"max_ghz": "3 GHz"}}),
    "deep nesting": '{"format": "pth-top-bench-run", "x": ' + "[" * 50_000 + "]" * 50_000 + "}",
}


@pytest.mark.parametrize("text", CORRUPT_RUNS.values(), ids=CORRUPT_RUNS.keys())
def test_a_corrupt_run_is_one_run_file_error_line(tmp_path, text):
    path = tmp_path / "bench-corrupt.json"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    with pytest.raises(RunFileError) as raised:
        load_run(path)
    message = str(raised.value)
    assert message.startswith("bench-corrupt.json: ") and "\n" not in message and "\x1b" not in message


def test_files_that_are_not_regular_or_not_text_are_run_file_errors(tmp_path):
    (tmp_path / "bench-dir.json").mkdir()
    os.mkfifo(tmp_path / "bench-fifo.json")
    (tmp_path / "bench-latin1.json").write_bytes(b"\xff\xfe{}")
    for name, reason in [("bench-dir.json", "directory"), ("bench-fifo.json", "not a regular file"),
                         ("bench-latin1.json", "not UTF-8")]:
        with pytest.raises(RunFileError, match=reason):
            load_run(tmp_path / name)


def test_the_runs_list_keeps_good_runs_and_says_why_bad_ones_are_unreadable(tmp_path):
    save_run(RunRecord.from_json(good_run()), tmp_path)
    (tmp_path / "bench-zzz-broken.json").write_text(with_row(kernel=KeyError))
    runs = scan_runs(tmp_path)
    assert [run.record is not None for run in runs] == [False, True]
    assert runs[0].label() == "unreadable: run.rows[0]: missing field 'kernel'"


def test_cli_lists_unreadable_runs_and_opening_one_is_exit_2(cli, capsys):
    folder = bench_runs_dir()
    good = save_run(RunRecord.from_json(good_run()))
    bad = folder / "bench-zzz-broken.json"
    bad.write_text(CORRUPT_RUNS["truncated"])
    assert cli(["bench", "--runs"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("bench-zzz-broken.json  unreadable: not JSON") and out[1].startswith(good.name)
    assert cli(["bench", "--open", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pth-top: cannot open the run: bench-zzz-broken.json: not JSON") and err.count("\n") == 1
    assert cli(["bench", "--open", str(good)]) == 0
    assert "gemm" in capsys.readouterr().out
    assert cli(["bench", "--open", "/" + "x" * 300]) == 2
    assert "File name too long" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["o", "c"])
async def test_the_screen_lists_unreadable_runs_greyed_out_and_opens_the_good_one(tmp_path, key):
    from pth_top.tui.screens.bench import BenchScreen

    save_run(RunRecord.from_json(good_run()), tmp_path)
    (tmp_path / "bench-zzz-broken.json").write_text(with_row(kernel=KeyError))  # was KeyError: 'kernel'
    screen = BenchScreen(python=str(tmp_path / "missing-python"), runs_folder=tmp_path)
    app = BenchApp(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: "Cannot list devices" in screen.status_text, timeout_s=30)
        await pilot.press(key)
        await wait_for(pilot, lambda: app.screen is not screen, timeout_s=30)
        options = app.screen.query_one(OptionList)
        assert options.option_count == 2
        assert options.get_option_at_index(0).disabled and "missing field 'kernel'" in str(
            options.get_option_at_index(0).prompt)
        assert not options.get_option_at_index(1).disabled
        options.focus()
        await pilot.press("down", "enter")
        loaded = (lambda: screen.record is not None) if key == "o" else (lambda: screen.baseline is not None)
        await wait_for(pilot, loaded, timeout_s=30)
        assert app.screen is screen


def test_a_runs_folder_under_a_file_is_one_line_naming_it_and_the_file_stays(tmp_path):
    from pth_top.configs.fileio import FolderRefused

    blocker = tmp_path / "data"
    blocker.write_text("mine\n")
    with pytest.raises(FolderRefused) as raised:
        save_run(RunRecord.from_json(good_run()), blocker / "bench-runs")
    assert raised.value.strerror == f"{blocker / 'bench-runs'} cannot be made: {blocker} is a file, not a directory"
    assert blocker.read_text() == "mine\n"
