"""Property tests: any TOML-able data or any bytes given to the answers, build and catalog loaders either
loads or raises ConfigFileError (the one input-error type), never anything else; what loads is usable."""

from __future__ import annotations

import datetime as dt
import functools
import tempfile
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pth_top.configs.answers import Answers, answers_from_dict
from pth_top.configs.build_file import build_from_dict, build_to_dict, dumps_build, load_build, loads_build
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.parts import BUILTIN_CATALOG_DIR, load_catalog
from pth_top.configs.recommend import recommend
from pth_top.configs.render import render_build_text
from pth_top.configs.tomlsource import read_toml
from pth_top.doctor.build_check import check_build
from pth_top.text import printable
from tests.configs.test_answers import valid_answer_tables
from tests.fakes.snapshots import make_snapshot

PROPERTY_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CREATED = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)

# Leaves TOML can hold, with the awkward ones over-represented: out-of-range ints, NaN/inf, control characters.
LEAVES = st.one_of(
    st.booleans(), st.integers(-(2**70), 2**70), st.sampled_from([0, -1, 1, 2**63, -(2**63) - 1, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["", "\x1b]52;c;eA==\x07", "a\nb"]),
    st.dates(), st.datetimes(timezones=st.just(dt.timezone.utc)),
)
KEYS = st.one_of(st.text(max_size=12), st.sampled_from(["id", "spec", "quantity", "gpu", "memory_gib", "capacity_gib"]))
TOML_VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
                           max_leaves=12)
TOML_TABLES = st.dictionaries(KEYS, TOML_VALUES, max_size=6)
# What a number in a spec is most often replaced with: the sizes that divide, overflow or print as ¥inf.
NUMBER_EDGES = st.sampled_from([0, 0.0, 1e-300, 0.5, -1, -0.0, 1e308, 2**63 - 1, float("inf"), float("nan")])


@functools.cache
def catalog():
    return load_catalog(Path("/nonexistent-user-catalog"))


@functools.cache
def good_build_dict() -> dict[str, Any]:
    build = recommend(Answers(), catalog(), today=dt.date(2025, 7, 1))
    return build_to_dict(build, created=CREATED, tool_version="0.1.0")


@functools.cache
def shipped_entries() -> dict[str, dict[str, Any]]:
    entries = {}
    for path in sorted(BUILTIN_CATALOG_DIR.glob("*.toml")):
        data, _ = read_toml(path)
        for kind, parts in data.items():
            entries.setdefault(kind, {**parts[0], "id": f"user-{kind}"})
    return entries


def paths_in(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path into nested dicts/lists (a mutation point)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths_in(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths_in(item, (*prefix, index))
    return found


def mutated(original: Any, draw) -> Any:
    """A deep copy of `original` with one to three values replaced by arbitrary TOML data, or removed."""
    import copy

    data = copy.deepcopy(original)
    for _ in range(draw(st.integers(1, 3))):
        points = paths_in(data)
        if not points:
            break
        path = draw(st.sampled_from(points))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        current = parent[path[-1]]
        if isinstance(parent, dict) and draw(st.booleans()) and draw(st.booleans()):
            del parent[path[-1]]
        elif isinstance(current, (int, float)) and not isinstance(current, bool) and draw(st.booleans()):
            parent[path[-1]] = draw(NUMBER_EDGES)
        else:
            parent[path[-1]] = draw(TOML_VALUES)
    return data


def as_toml(data: dict[str, Any]) -> str:
    try:
        return tomli_w.dumps(data)
    except (TypeError, ValueError):  # tomli_w has no form for a few shapes (e.g. a datetime key): not a file anyone has
        assume(False)
        raise


def assert_terminal_safe(text: str) -> None:
    assert printable(text.replace("\n", "")) == text.replace("\n", "")


@PROPERTY_SETTINGS
@given(TOML_TABLES)
def test_any_table_is_answers_or_a_config_error(data):
    try:
        answers_from_dict(data, path="a.toml")
    except ConfigFileError as error:
        assert_terminal_safe(str(error))


@PROPERTY_SETTINGS
@given(st.data())
def test_a_mutated_answers_table_is_answers_or_a_config_error(data):
    answers = mutated(Answers().to_dict(), data.draw)
    text = as_toml(answers)
    try:
        loaded = answers_from_dict(answers, path="a.toml", text=text)
    except ConfigFileError as error:
        assert_terminal_safe(str(error))
        return
    try:
        recommend(loaded, catalog(), today=dt.date(2025, 7, 1))
    except ValueError:  # a well-formed workload that no build can serve is a one-line error
        pass


@PROPERTY_SETTINGS
@given(st.data())
def test_a_mutated_build_file_loads_usable_or_is_a_config_error(data):
    text = as_toml(mutated(good_build_dict(), data.draw))
    try:
        build, _, _ = loads_build(text, "b.toml")
    except ConfigFileError as error:
        assert_terminal_safe(str(error))
        return
    # What loads can be shown and checked (M6: the spec was trusted and crashed `build check`).
    assert_terminal_safe(render_build_text(build))
    for gpu_count in (0, 1):
        check_build(build, make_snapshot(gpu_count=gpu_count))


@PROPERTY_SETTINGS
@given(TOML_TABLES)
def test_any_table_is_a_build_or_a_config_error(data):
    try:
        build_from_dict(data, path="b.toml", text=as_toml(data))
    except ConfigFileError as error:
        assert_terminal_safe(str(error))


def assert_user_catalog_loads_usable_or_fails_cleanly(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "mine.toml").write_text(text, encoding="utf-8")
        try:
            loaded = load_catalog(Path(folder))
        except ConfigFileError as error:
            assert_terminal_safe(str(error))
            return
    # A catalog that loads never crashes the recommender (M5: capacity_gib = 0 was a ZeroDivisionError).
    for answers in (Answers(), Answers(scenario="team_training").with_value("scale", "gpu_count", 4)):
        try:
            recommend(answers, loaded, today=dt.date(2025, 7, 1))
        except ValueError:
            pass


@PROPERTY_SETTINGS
@given(st.data())
def test_a_mutated_user_catalog_loads_usable_or_is_a_config_error(data):
    kind = data.draw(st.sampled_from(sorted(shipped_entries())))
    entry = mutated(shipped_entries()[kind], data.draw)
    assert_user_catalog_loads_usable_or_fails_cleanly(as_toml({kind: [entry]}))


@pytest.mark.parametrize("value", [0, 1e-300])
def test_every_number_of_every_kind_at_zero_or_tiny_loads_usable_or_is_a_config_error(value):
    for kind, entry in sorted(shipped_entries().items()):
        for key, number in entry.items():
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                assert_user_catalog_loads_usable_or_fails_cleanly(as_toml({kind: [{**entry, key: value}]}))


@PROPERTY_SETTINGS
@given(TOML_TABLES)
def test_any_table_as_a_user_catalog_loads_or_is_a_config_error(data):
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "mine.toml").write_text(as_toml(data), encoding="utf-8")
        try:
            load_catalog(Path(folder))
        except ConfigFileError as error:
            assert_terminal_safe(str(error))


@PROPERTY_SETTINGS
@given(st.one_of(
    st.binary(max_size=300),
    st.builds(lambda head, tail: head + tail, st.binary(max_size=40),
              st.sampled_from([b"a = 1", b"[gpu]\nid = 1", b"x = [[[[", b"\xff\xfe"])),
))
def test_any_bytes_are_loaded_or_a_config_error_by_every_loader(raw):
    from pth_top.tui.commands.wizard import read_answers_file

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mine.toml"
        path.write_bytes(raw)
        for load in (read_answers_file, load_build, lambda _: load_catalog(Path(folder))):
            try:
                load(path)
            except ConfigFileError as error:
                assert_terminal_safe(str(error))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_answer_tables)
def test_every_build_the_wizard_can_write_loads_back(table):
    try:
        answers = answers_from_dict(table)
        build = recommend(answers, catalog(), today=dt.date(2025, 7, 1))
    except ValueError:  # ConfigFileError included: answers that clash, or a workload no build can hold
        return
    loaded, _, _ = loads_build(dumps_build(build, created=CREATED, tool_version="0.1.0"), "b.toml")
    assert loaded.components == build.components and loaded.answers == build.answers
