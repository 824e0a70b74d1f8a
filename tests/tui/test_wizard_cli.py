"""`pth-top wizard --answers` and `pth-top build show|check`, headless, through tui.cli.main."""

from __future__ import annotations

import sys
import types
from dataclasses import replace
from pathlib import Path

import pytest

from pth_top.configs.build_file import load_build
from pth_top.configs.paths import builds_dir
from pth_top.tui import cli
from tests.fakes.snapshots import FixedSource, make_snapshot

HERE = Path(__file__).parent.parent / "configs"
GOOD = HERE / "good_answers.toml"
BAD_FILES = sorted((HERE / "bad_answers").glob("*.toml"))


@pytest.fixture(autouse=True)
def only_our_commands(monkeypatch):
    # Other subcommands are written concurrently; these tests need only the wizard's two.
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("pth_top.tui.commands.wizard", "pth_top.tui.commands.build"))


def test_headless_wizard_writes_a_build_that_parses(tmp_path, capsys):
    out = tmp_path / "build.toml"
    assert cli.main(["wizard", "--answers", str(GOOD), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    build, _, _ = load_build(out)
    assert build.answers.workload.preset == "gpt2-small"
    assert build.component("gpu").name in printed and f"saved {out}" in printed


def test_default_location_is_the_builds_folder(capsys):
    assert cli.main(["wizard", "--answers", str(GOOD)]) == 0
    saved = list(builds_dir().glob("*.toml"))
    assert len(saved) == 1 and "gpt2-small" in saved[0].name


def test_existing_file_needs_force(tmp_path, capsys):
    out = tmp_path / "build.toml"
    out.write_text("keep me", encoding="utf-8")
    assert cli.main(["wizard", "--answers", str(GOOD), "--out", str(out)]) == 2
    assert "already exists (use --force" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "keep me"
    assert cli.main(["wizard", "--answers", str(GOOD), "--out", str(out), "--force"]) == 0
    assert load_build(out)[0].answers.scenario == "personal_research"


def test_preset_headless(tmp_path, capsys):
    out = tmp_path / "enterprise.toml"
    assert cli.main(["wizard", "--preset", "guide-enterprise", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Xeon Platinum 8380" in text and "PM1643" in text and "Comments on this preset" in text
    assert cli.main(["wizard", "--preset", "nope", "--out", str(out)]) == 2


@pytest.mark.parametrize("path", BAD_FILES, ids=[path.stem for path in BAD_FILES])
def test_bad_answers_exit_2_with_one_line_and_nothing_written(tmp_path, capsys, path):
    out = tmp_path / "out" / "build.toml"
    assert cli.main(["wizard", "--answers", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pth-top: {path}") and err.count("\n") == 1
    assert "Traceback" not in err
    assert not out.exists() and not (tmp_path / "out").exists()


def test_unwritable_out_is_a_clean_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    assert cli.main(["wizard", "--answers", str(GOOD), "--out", str(blocker / "sub" / "b.toml")]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert blocker.read_text(encoding="utf-8") == "x"


def test_force_never_turns_a_fifo_or_a_device_into_a_file(tmp_path, capsys):
    import os
    import stat

    fifo = tmp_path / "fifo"  # a FIFO stands for /dev/null, which root would otherwise replace
    os.mkfifo(fifo)
    assert cli.main(["wizard", "--answers", str(GOOD), "--out", str(fifo), "--force"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a regular file (a device, FIFO or socket); not written over" in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_missing_answers_file(tmp_path, capsys):
    assert cli.main(["wizard", "--answers", str(tmp_path / "nope.toml")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_out_without_answers_is_a_usage_error(capsys):
    assert cli.main(["wizard", "--out", "x.toml"]) == 2


def test_wizard_without_a_terminal_refuses(capsys):
    assert cli.main(["wizard"]) == 2
    assert "not a terminal" in capsys.readouterr().err


def test_build_show_and_check(tmp_path, capsys, monkeypatch):
    out = tmp_path / "b.toml"
    cli.main(["wizard", "--answers", str(GOOD), "--out", str(out)])
    capsys.readouterr()
    assert cli.main(["build", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "Memory per GPU" in shown and "PSU required" in shown and "Warnings" in shown
    fake_sampler = types.ModuleType("pth_top.sensors.sampler")
    monkeypatch.setitem(sys.modules, "pth_top.sensors.sampler", fake_sampler)
    fake_sampler.Sampler = lambda: FixedSource(make_snapshot(gpu_count=2))
    assert cli.main(["build", "check", str(out)]) == 0
    checked = capsys.readouterr().out
    assert "MEETS" in checked and "GPU memory" in checked
    fake_sampler.Sampler = lambda: FixedSource(make_snapshot(gpu_count=0))
    assert cli.main(["build", "check", str(out)]) == 0
    assert "UNKNOWN" in capsys.readouterr().out
    small = make_snapshot(gpu_count=1)
    fake_sampler.Sampler = lambda: FixedSource(replace(small, host=replace(small.host, logical_cpu_count=1)))
    assert cli.main(["build", "check", str(out)]) == 1
    assert "MISSES  CPU" in capsys.readouterr().out


def test_build_show_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("schema_version = 1\ncreated = 2026-01-01T00:00:00Z\n", encoding="utf-8")
    assert cli.main(["build", "show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "tool_version" in err


def test_preset_without_a_terminal_saves_to_the_builds_folder(capsys):
    assert cli.main(["wizard", "--preset", "guide-personal"]) == 0
    saved = list(builds_dir().glob("*.toml"))
    assert len(saved) == 1 and load_build(saved[0])[0].component("cpu").part_id == "ryzen-7-5800x"


def test_build_check_reports_a_sensor_failure(tmp_path, capsys, monkeypatch):
    out = tmp_path / "b.toml"
    cli.main(["wizard", "--answers", str(GOOD), "--out", str(out)])
    capsys.readouterr()

    class BrokenSampler:
        def sample(self):
            raise RuntimeError("no /proc")

    fake_sampler = types.ModuleType("pth_top.sensors.sampler")
    fake_sampler.Sampler = BrokenSampler
    monkeypatch.setitem(sys.modules, "pth_top.sensors.sampler", fake_sampler)
    assert cli.main(["build", "check", str(out)]) == 1
    assert capsys.readouterr().err == "pth-top: cannot read this machine: RuntimeError: no /proc\n"


def test_an_infeasible_request_says_so_first_in_the_wizard_and_in_build_show(tmp_path, capsys):
    # Issue 12 item 7: the first line says plainly that the goal is not feasible, then what is.
    answers = tmp_path / "answers.toml"
    answers.write_text('scenario = "personal_research"\n[workload]\npreset = "llama-13b"\n[task]\n[data]\n[scale]\n'
                       "[budget]\namount = 10000.0\n", encoding="utf-8")
    out = tmp_path / "build.toml"
    assert cli.main(["wizard", "--answers", str(answers), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("NOT A RECOMMENDATION: not feasible within ¥10,000")
    assert printed.index("Feasible instead") < printed.index("Components")
    assert cli.main(["build", "show", str(out)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].startswith(str(out)) and shown[2].startswith("NOT A RECOMMENDATION: not feasible within ¥10,000")


def test_the_review_step_leads_with_the_blockers():
    from pth_top.configs.answers import Answers
    from pth_top.configs.parts import load_catalog
    from pth_top.configs.recommend import recommend
    from pth_top.tui.wizard.review import build_text

    chosen = Answers().with_value("workload", "preset", "llama-13b").with_value("budget", "amount", 10000.0)
    text = build_text(recommend(chosen, load_catalog(Path("/nonexistent-user-catalog")))).plain
    assert text.startswith("NOT A RECOMMENDATION: not feasible within ¥10,000")
    assert text.index("Feasible instead") < text.index("Components")
