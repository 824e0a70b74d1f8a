"""Build TOML: load-then-save is identical, saves are atomic and never overwrite silently, bad files are named."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pth_top.configs.answers import Answers
from pth_top.configs.build_file import SCHEMA_VERSION, dumps_build, load_build, loads_build, save_build
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.fileio import FileExistsRefused
from pth_top.configs.parts import load_catalog
from pth_top.configs.presets import load_build_preset
from pth_top.configs.recommend import recommend

CREATED = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
TODAY = dt.date(2025, 7, 1)


@pytest.fixture(scope="module")
def build(catalog):
    return recommend(Answers(), catalog, today=TODAY)


def test_save_then_load_then_save_is_identical(tmp_path, catalog, build):
    preset = load_build_preset("guide-enterprise")
    for item in (build, recommend(preset.answers, catalog, pins=preset.pins, title=preset.title,
                                  comments=preset.comments, today=TODAY)):
        target = tmp_path / f"{len(item.components)}-{item.title[:5]}.toml"
        path = save_build(item, target, created=CREATED, tool_version="0.1.0")
        loaded, created, version = load_build(path)
        assert (created, version) == (CREATED, "0.1.0")
        assert loaded == item
        assert dumps_build(loaded, created=created, tool_version=version) == path.read_text(encoding="utf-8")


def test_file_has_the_required_sections(build):
    text = dumps_build(build, created=CREATED, tool_version="0.1.0")
    for needle in ("schema_version = 2", "[feasibility]", "created = 2026-01-02", 'tool_version = "0.1.0"',
                   "[answers.workload]",
                   "[components.gpu]", "[components.gpu.spec]", "[memory]", "[power]", "[price]", "reasoning = [",
                   "warnings = ["):
        assert needle in text


def test_never_overwrites_without_permission(tmp_path, build):
    path = tmp_path / "builds" / "b.toml"
    save_build(build, path, created=CREATED, tool_version="0.1.0")
    before = path.read_bytes()
    other = recommend(Answers().with_value("workload", "preset", "resnet50"), load_catalog(Path("/none")), today=TODAY)
    with pytest.raises(FileExistsRefused):
        save_build(other, path, created=CREATED, tool_version="0.1.0")
    assert path.read_bytes() == before
    save_build(other, path, created=CREATED, tool_version="0.1.0", overwrite=True)
    assert path.read_bytes() != before
    assert [p.name for p in path.parent.iterdir()] == ["b.toml"]  # no temp files left


def test_unwritable_target_leaves_nothing(tmp_path, build):
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(OSError):
        save_build(build, blocker / "builds" / "b.toml", created=CREATED, tool_version="0.1.0")
    assert blocker.read_text(encoding="utf-8") == "x"
    assert [path.name for path in tmp_path.iterdir()] == ["a-file"]


@pytest.mark.parametrize(("change", "key", "reason"), [
    (("schema_version = 2", "schema_version = 7"), "schema_version", "unsupported schema_version"),
    (("schema_version = 2\n", ""), "schema_version", "missing key"),
    (('tool_version = "0.1.0"', "tool_version = 3"), "tool_version", "must be str"),
    (("quantity = 1", "quantity = 0"), "components.gpu.quantity", "at least 1"),
    (("gpu_count = 1", "gpu_count = 0"), "answers.scale.gpu_count", "at least 1"),
    (("sustained_w = ", "sustained_w = -1.0 #"), "power.sustained_w", ">= 0"),
    # A speed input is a number or a text: a negative number was an AttributeError (hypothesis found it).
    (("\ngpus = ", "\ngpus = -1 #"), "speed.inputs.gpus", ">= 0"),
    # A flag given as a number was an AttributeError too (hypothesis again).
    (("feasible = true", "feasible = 0"), "feasibility.feasible", "must be true or false"),
    # A market given as a number was an AttributeError (hypothesis, in a CI run).
    (('budget_cny = 15000.0\nmarket = "cn"', 'budget_cny = 15000.0\nmarket = 0'), "price.market",
     "must be one of cn, us, eu, got 0"),
    # Typed structs refuse what they do not declare (a typo was silently ignored before).
    (("sustained_w = ", "sustainde_w = 1.0\nsustained_w = "), "power.sustainde_w", "unknown key (expected one of"),
    (("[pins]\n", "[pins]\nnpu = { id = \"x\", quantity = 1 }\n"), "pins.npu", "pins are {id, quantity} tables"),
])
def test_bad_build_files_name_line_and_key(build, change, key, reason):
    text = dumps_build(build, created=CREATED, tool_version="0.1.0").replace(*change, 1)
    with pytest.raises(ConfigFileError) as caught:
        loads_build(text, "b.toml")
    assert caught.value.key == key and reason in str(caught.value)
    assert str(caught.value).startswith("b.toml")
    if "missing" not in reason:
        line = text.splitlines()[caught.value.line - 1]
        assert line.startswith(key.rsplit(".", 1)[-1])


V1_FILE = Path(__file__).with_name("build_files") / "v1_guide_personal.toml"


def test_a_version_1_file_still_loads_and_saves_as_the_current_version(tmp_path):
    # Version 1 had no [feasibility] table and no training method: the defaults (feasible, full) fill them in.
    build, created, version = load_build(V1_FILE)
    assert (created.year, version) == (2025, "0.1.0")
    assert build.feasible and build.blockers == () and build.feasible_alternatives == ()
    assert build.component("gpu").part_id == "rtx-3060-ti-8gb"
    saved = save_build(build, tmp_path / "b.toml", created=created, tool_version=version)
    assert f"schema_version = {SCHEMA_VERSION}" in saved.read_text(encoding="utf-8") and SCHEMA_VERSION == 2
    assert load_build(saved)[0] == build


def test_blockers_and_feasible_alternatives_round_trip(tmp_path, build):
    import dataclasses

    blocked = dataclasses.replace(
        build, blockers=("not feasible within ¥10,000: needs 200 GiB per GPU",),
        feasible_alternatives=("QLoRA: 9.8 GiB per GPU on RTX 4060 Ti 16GB, ¥8,900",),
    )
    path = save_build(blocked, tmp_path / "b.toml", created=CREATED, tool_version="0.1.0")
    assert "feasible = false" in path.read_text(encoding="utf-8")
    loaded = load_build(path)[0]
    assert loaded == blocked and not loaded.feasible
