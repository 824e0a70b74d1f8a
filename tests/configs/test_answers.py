"""Answers validation: a corpus of bad files (tests/configs/bad_answers) and hypothesis-generated answers."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pth_top.configs.answers import FIELDS, Answers, answers_from_dict
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.part_types import SYSTEM_GPU_FORMS
from pth_top.configs.tomlsource import read_toml, tomllib

HERE = Path(__file__).parent
BAD_FILES = sorted((HERE / "bad_answers").glob("*.toml"))


def expectations(path: Path) -> dict[str, str]:
    header = path.read_bytes().decode("utf-8", errors="replace").splitlines()[:3]
    return dict(line[2:].split(": ", 1) for line in header)


def load(path: Path) -> Answers:
    data, text = read_toml(path)
    return answers_from_dict(data, path=path, text=text)


def test_good_answers_file_loads():
    answers = load(HERE / "good_answers.toml")
    assert answers.workload.preset == "gpt2-small" and answers.budget.amount == 15000.0


@pytest.mark.parametrize("path", BAD_FILES, ids=[path.stem for path in BAD_FILES])
def test_bad_answers_name_file_line_and_key(path):
    expected = expectations(path)
    with pytest.raises(ConfigFileError) as caught:
        load(path)
    error = caught.value
    message = str(error)
    assert message.startswith(str(path))
    assert expected["expect-reason"] in message
    if expected["expect-key"] != "none":
        assert error.key == expected["expect-key"]
    if expected["expect-line"] != "none":
        assert error.line == int(expected["expect-line"]), message
        assert f"{path}:{expected['expect-line']}: " in message


def test_a_missing_table_takes_its_defaults(tmp_path):
    # Review 12 finding 20: a file without [scale] or [budget] was refused ("missing table") though the help
    # said a section's keys may be left out.
    path = tmp_path / "short.toml"
    path.write_text('scenario = "personal_research"\n[workload]\npreset = "resnet50"\n', encoding="utf-8")
    answers = load(path)
    assert answers.workload.preset == "resnet50"
    assert (answers.task, answers.data, answers.scale, answers.budget) == (
        Answers().task, Answers().data, Answers().scale, Answers().budget)


def test_corpus_covers_the_issue_list():
    names = {path.stem for path in BAD_FILES}
    assert {"malformed", "wrong_type_batch", "unknown_key", "missing_scenario", "negative_dataset",
            "absurd_gpu_count", "zero_gpus", "nan_budget"} <= names


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-10**15, 10**15), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=12), st.lists(st.integers(), max_size=2))


def valid_value(spec):
    """A value that passes the field's own check (it may still clash with other fields)."""
    if spec.kind == "choice":
        return st.sampled_from(spec.choices)
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind == "int":
        return st.integers(int(spec.low or 0), int(min(spec.high or 10**6, 10**6)))
    if spec.kind == "float":
        return st.floats(spec.low or 0, min(spec.high or 1e6, 1e6))
    return st.sampled_from(["gpt2-small", "resnet50", "custom", "llama-7b", "lenet5", "vit-b16", "llama-70b"])


def field_value(spec):
    """Sometimes a valid value for the field, sometimes junk."""
    valid = valid_value(spec)
    return st.one_of(valid, valid, JUNK)


answer_tables = st.fixed_dictionaries({
    "scenario": st.one_of(st.sampled_from(["personal_research", "team_training", "inference_server"]), JUNK),
    **{section: st.fixed_dictionaries({}, optional={key: field_value(spec) for key, spec in specs.items()})
       for section, specs in FIELDS.items()},
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer_tables)
def test_generated_answers_are_accepted_or_rejected_cleanly(data):
    try:
        answers = answers_from_dict(data, path="generated.toml")
    except ConfigFileError as error:
        assert str(error).startswith("generated.toml")
        assert error.key
        return
    for section, specs in FIELDS.items():
        for key, spec in specs.items():
            value = answers.value(section, key)
            if spec.kind in ("int", "float"):
                assert math.isfinite(value) and spec.low <= value <= spec.high
            if spec.kind == "choice":
                assert value in spec.choices


# A card the buyer owns is a catalog id: another string is a clear error from recommend(), not a build.
OWNED_GPUS = st.sampled_from(["", "rtx-3090-24gb", "rtx-4060-ti-16gb", "a100-80gb-sxm"])
valid_answer_tables = st.fixed_dictionaries({
    "scenario": st.sampled_from(["personal_research", "team_training", "edge_deployment", "inference_server"]),
    **{section: st.fixed_dictionaries({}, optional={
        key: OWNED_GPUS if (section, key) == ("budget", "owned_gpu") else valid_value(spec)
        for key, spec in specs.items()}) for section, specs in FIELDS.items()},
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_answer_tables)
def test_valid_generated_answers_always_give_a_build(data):
    from pth_top.configs.recommend import recommend

    try:
        answers = answers_from_dict(data)
    except ConfigFileError:
        return
    build = recommend(answers, _catalog())
    # Owned SXM modules come in the server the buyer has: nothing is bought (3 x A100 SXM, a DGX A100 at 0).
    owned = _catalog().get(answers.budget.owned_gpu) if answers.budget.owned_gpu else None
    owned_server = owned is not None and owned["form"] in SYSTEM_GPU_FORMS and build.component("server") is not None
    assert build.components and (build.total_price_cny > 0 or owned_server)
    assert build.memory.total_bytes >= 0 and math.isfinite(build.power.sustained_w)


@functools.cache
def _catalog():
    from pth_top.configs.parts import load_catalog

    return load_catalog(Path("/nonexistent-user-catalog"))


def test_toml_round_trip_of_answers():
    answers = load(HERE / "good_answers.toml")
    import tomli_w

    again = answers_from_dict(tomllib.loads(tomli_w.dumps(answers.to_dict())))
    assert again == answers


def test_the_form_reads_limits_choices_and_help_from_the_structs():
    from pth_top.configs.answer_types import MAX_GPUS, Scale, Task

    gpu_count = FIELDS["scale"]["gpu_count"]
    assert (gpu_count.kind, gpu_count.low, gpu_count.high, gpu_count.default) == ("int", 1, MAX_GPUS, Scale().gpu_count)
    assert "GPUs in the machine" in gpu_count.help
    # Choices keep the order they are declared in (msgspec.inspect sorts them).
    assert FIELDS["task"]["recompute"].choices == ("none", "selective", "full") and Task().recompute == "none"
    with pytest.raises(ValueError, match="must be at most 8, got 9"):
        gpu_count.parse_text("9")
    # Audit T: a large bound read "must be at most 2e+06".
    with pytest.raises(ValueError, match="must be at most 2,000,000, got 3000000"):
        FIELDS["workload"]["sequence_length"].parse_text("3000000")
    assert Scale() == Answers().scale


def test_a_whole_float_is_a_whole_number_and_an_unknown_catalog_key_is_refused(tmp_path):
    text = (HERE / "good_answers.toml").read_text(encoding="utf-8").replace("batch_size = 8", "batch_size = 8.0")
    assert answers_from_dict(tomllib.loads(text)).workload.batch_size == 8
    from pth_top.configs.parts import load_catalog

    (tmp_path / "mine.toml").write_text('[[cpu]]\nid = "core-i5-12400f"\nweight_mm = 3\n', encoding="utf-8")
    with pytest.raises(ConfigFileError, match=r"mine.toml:3: cpu core-i5-12400f: weight_mm: unknown key \(expected"):
        load_catalog(tmp_path)
