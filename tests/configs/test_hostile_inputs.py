"""Defects found by a hostile run (issue 10: M5, M6, L1-L6, config part), each pinned by a test."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import tracemalloc
import types
from pathlib import Path

import pytest

from pth_top.configs.answers import Answers
from pth_top.configs.build_file import dumps_build, load_build, loads_build
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.fileio import MAX_READ_BYTES
from pth_top.configs.parts import load_catalog
from pth_top.configs.recommend import recommend
from pth_top.configs.tomlsource import read_toml
from pth_top.tui import cli
from pth_top.units import MIB
from tests.fakes.snapshots import FixedSource, make_snapshot
from tests.waiting import wait_until

HERE = Path(__file__).parent
GOOD_ANSWERS = HERE / "good_answers.toml"
CREATED = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
RAM_KIT = """[[memory_kit]]
id = "tiny-kit"
name = "Tiny kit"
price_cny = 100
price_as_of = 2026-01-01
source = "https://example.com/kit"
memory_type = "DDR5"
capacity_gib = {capacity}
modules_count = 2
speed_mt_per_s = 6000
ecc = false
registered = false
"""


@pytest.fixture(autouse=True)
def only_our_commands(monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("pth_top.tui.commands.wizard", "pth_top.tui.commands.build"))


@pytest.fixture(scope="module")
def good_build_text() -> str:
    build = recommend(Answers(), load_catalog(Path("/nonexistent")), today=dt.date(2025, 7, 1))
    return dumps_build(build, created=CREATED, tool_version="0.1.0")


def user_catalog(text: str) -> Path:
    folder = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / "catalog"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mine.toml").write_text(text, encoding="utf-8")
    return folder / "mine.toml"


def refused(argv: list[str], capsys) -> str:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and err.startswith("pth-top: "), (code, out, err)
    assert "Traceback" not in err and not RAW_CONTROL.search(out + err)
    return err


# M5: a user catalog part with capacity_gib = 0 (or tiny) was a ZeroDivisionError / OverflowError.
@pytest.mark.parametrize("capacity", ["0", "1e-300", "0.5"])
def test_a_zero_or_tiny_ram_kit_names_file_line_and_key(tmp_path, capsys, capacity):
    path = user_catalog(RAM_KIT.format(capacity=capacity))
    err = refused(["wizard", "--answers", str(GOOD_ANSWERS), "--out", str(tmp_path / "b.toml")], capsys)
    assert f"{path}:8: memory_kit tiny-kit: capacity_gib: must be at least 1" in err
    assert not (tmp_path / "b.toml").exists()


async def test_the_wizard_screen_shows_a_bad_catalog_instead_of_crashing():
    from textual.widgets import Static

    from pth_top.tui.wizard_app import WizardApp

    path = user_catalog(RAM_KIT.format(capacity="0"))
    app = WizardApp(preset="guide-personal")

    def screen_text() -> str:
        return " ".join(str(static.render()) for static in app.screen.query(Static))

    async with app.run_test(size=(120, 40)) as pilot:
        # The preset opens in the review step, which recommends from the catalog (a ZeroDivisionError before).
        await wait_until(pilot, lambda: "capacity_gib" in screen_text(), what="the catalog error on screen")
        assert f"{path}:8" in screen_text() and "capacity_gib: must be at least 1" in screen_text()


# M6: build check trusted the component spec.
def test_build_check_refuses_an_empty_cpu_spec(tmp_path, capsys, monkeypatch, good_build_text):
    spec_start = good_build_text.index("[components.cpu.spec]\n") + len("[components.cpu.spec]\n")
    text = good_build_text[:spec_start] + good_build_text[good_build_text.index("[components.motherboard]"):]
    (tmp_path / "b.toml").write_text(text, encoding="utf-8")
    fake_sampler = types.ModuleType("pth_top.sensors.sampler")
    fake_sampler.Sampler = lambda: FixedSource(make_snapshot(gpu_count=1))
    monkeypatch.setitem(sys.modules, "pth_top.sensors.sampler", fake_sampler)
    err = refused(["build", "check", str(tmp_path / "b.toml")], capsys)
    assert "components.cpu.spec" in err and "missing key" in err


def test_a_text_gpu_memory_is_refused_before_any_arithmetic(good_build_text):
    text = re.sub(r"^memory_gib = .*$", 'memory_gib = "80"', good_build_text, count=1, flags=re.M)
    tracemalloc.start()
    try:
        with pytest.raises(ConfigFileError, match='components.gpu.spec.memory_gib: must be a number'):
            loads_build(text, "b.toml")
        peak_bytes = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak_bytes < 64 * MIB  # "80" * GIB was a 2 GiB string


# L1: integers beyond 64 bits, pins/alternatives of the wrong shape, deep nesting.
@pytest.mark.parametrize(("change", "fragment"), [
    (("quantity = 1", "quantity = 9223372036854775808"), "components.gpu.quantity: integer out of range"),
    (("quantity = 1", "quantity = " + "7" * 4400), "integer too long"),
    (("schema_version = 2", "schema_version = 2\npins = 3"), "pins: must be a table"),
    (("schema_version = 2", 'schema_version = 2\nalternatives = ["x"]'), "alternatives: must be a table"),
    (("[alternatives]\ncpu = [", "[alternatives]\ncpu = 5\nold = ["), "alternatives.cpu: alternatives are lists"),
    (("[pins]\n", "[pins]\ncpu = 5\n"), "pins.cpu: pins are {id, quantity} tables"),
])
def test_odd_build_values_are_config_errors(good_build_text, change, fragment):
    text = good_build_text
    for table in ("pins", "alternatives"):  # a top-level key cannot share its name with a table below
        if change[1].startswith("schema_version = 2\n" + table):
            text = re.sub(rf"^\[{table}\]\n(?:(?!\[).*\n)*", "", text, flags=re.M)
    with pytest.raises(ConfigFileError) as caught:
        loads_build(text.replace(*change, 1), "b.toml")
    assert fragment in str(caught.value)


def test_deeply_nested_answers_are_refused():
    text = GOOD_ANSWERS.read_text(encoding="utf-8").replace("batch_size = 8", "batch_size = " + "[" * 5000 + "]" * 5000)
    with pytest.raises(ConfigFileError, match="nested deeper"):
        from pth_top.configs.tomlsource import parse_toml

        parse_toml(text, "a.toml")


# L2: reads are capped and regular files only.
def test_device_fifo_and_oversized_files_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.toml"
    big.write_bytes(b"# x\n" * (MAX_READ_BYTES // 4 + 1))
    for path, reason in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"), (big, "larger than")):
        with pytest.raises(ConfigFileError, match=reason):
            read_toml(path)


def test_the_cap_holds_for_a_file_whose_size_is_not_known_in_advance():
    from pth_top.configs.fileio import UnreadableFile, read_regular_file

    assert os.stat("/proc/self/maps").st_size == 0  # procfs reports no size: only the reading loop can stop it
    with pytest.raises(UnreadableFile, match="larger than 16 bytes"):
        read_regular_file("/proc/self/maps", max_bytes=16)


def test_build_show_of_a_fifo_returns_without_a_writer(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # A subprocess, so a regression hangs only it (killed at the deadline) and not the test run.
    result = subprocess.run([sys.executable, "-m", "pth_top.tui.cli", "build", "show", str(fifo)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "not a regular file" in result.stderr


# L3: names and versions from a build file reach the terminal escaped.
def test_escape_sequences_in_a_valid_build_are_shown_escaped(tmp_path, capsys, monkeypatch, good_build_text):
    hostile = "\\u001b]52;c;cHduZWQ=\\u0007name\\nline\\u009b"
    text = re.sub(r'^name = "(.*)"$', lambda _: f'name = "{hostile}"', good_build_text, count=1, flags=re.M)
    text = text.replace('tool_version = "0.1.0"', 'tool_version = "\\u001b[2J"')
    text = text.replace('title = ""', f'title = "{hostile}"')
    (tmp_path / "b.toml").write_text(text, encoding="utf-8")
    assert cli.main(["build", "show", str(tmp_path / "b.toml")]) == 0
    shown = capsys.readouterr().out
    assert "\\x1b]52;c;cHduZWQ=\\x07name\\x0aline\\x9b" in shown and "\\x1b[2J" in shown
    assert not RAW_CONTROL.search(shown)
    fake_sampler = types.ModuleType("pth_top.sensors.sampler")
    fake_sampler.Sampler = lambda: FixedSource(make_snapshot(gpu_count=1))
    monkeypatch.setitem(sys.modules, "pth_top.sensors.sampler", fake_sampler)
    cli.main(["build", "check", str(tmp_path / "b.toml")])
    checked = capsys.readouterr().out
    assert "\\x1b]52" in checked and not RAW_CONTROL.search(checked)


def test_a_key_with_escapes_in_an_answers_file_is_escaped(tmp_path, capsys):
    answers = tmp_path / "a.toml"
    answers.write_text(GOOD_ANSWERS.read_text(encoding="utf-8") + '\n"\\u001b]0;title\\u0007" = 1\n', encoding="utf-8")
    err = refused(["wizard", "--answers", str(answers)], capsys)
    assert "\\x1b]0;title\\x07" in err


# L4: the wizard wrote integers beyond int64 that other parsers reject.
def test_a_workload_beyond_64_bit_bytes_is_refused_not_written(tmp_path, capsys):
    text = GOOD_ANSWERS.read_text(encoding="utf-8").replace('preset = "gpt2-small"', (
        'preset = "custom"\nkind = "transformer"\nlayers = 1024\nhidden_size = 131072\nattention_heads = 1024\n'
        "sequence_length = 2000000\nvocabulary_size = 10000000")).replace("batch_size = 8", "batch_size = 1000000")
    answers = tmp_path / "huge.toml"
    answers.write_text(text.replace("flash_attention = true", "flash_attention = false"), encoding="utf-8")
    err = refused(["wizard", "--answers", str(answers), "--out", str(tmp_path / "b.toml")], capsys)
    assert "beyond what any machine or build file holds" in err and not (tmp_path / "b.toml").exists()


def test_what_the_wizard_writes_for_a_huge_dataset_build_show_reads(tmp_path, capsys):
    answers = tmp_path / "big.toml"
    huge = GOOD_ANSWERS.read_text(encoding="utf-8").replace("dataset_size_gb = 20.0", "dataset_size_gb = 1e7")
    # A team server (ECC workstation board, U.2 bays) rather than a desktop board with its few M.2 slots.
    huge = huge.replace('scenario = "personal_research"', 'scenario = "team_training"')
    answers.write_text(huge.replace("amount = 15000.0", "amount = 1e10"), encoding="utf-8")
    assert cli.main(["wizard", "--answers", str(answers), "--out", str(tmp_path / "b.toml")]) == 0
    assert load_build(tmp_path / "b.toml")[0].component("storage").quantity > 64  # hundreds of drives: absurd, yet real
    capsys.readouterr()
    assert cli.main(["build", "show", str(tmp_path / "b.toml")]) == 0


# L5: inf/NaN/negative prices were printed as ¥inf, ¥nan.
@pytest.mark.parametrize("value", ["inf", "nan", "-1.0", "-inf"])
def test_build_show_refuses_odd_prices(tmp_path, capsys, good_build_text, value):
    text = re.sub(r"^total_cny = .*$", f"total_cny = {value}", good_build_text, count=1, flags=re.M)
    (tmp_path / "b.toml").write_text(text, encoding="utf-8")
    err = refused(["build", "show", str(tmp_path / "b.toml")], capsys)
    assert "price.total_cny" in err and "¥" not in err
