"""A vector answer decoded at once (the fast way, for small well-formed answers) gives exactly what decoding it
series by series gives: the same series, labels made printable and cut, readings, skipped and refused ones;
and the readings keyed straight from it are those keyed from its series."""

from __future__ import annotations

import json

import msgspec
import pytest

from pth_top.fleet import answers
from pth_top.fleet.answers import (
    LABEL_MAX_CHARS,
    MAX_LABELS_PER_SERIES,
    AnswerError,
    keyed,
    keyed_readings,
    vector_series,
)
from pth_top.text import printable

ODD_STRINGS = [
    "host-0001:9824", "\x1b]2;owned\x07", "tab\there", "del\x7f", "caf\u00e9", "\u202eevil",
    "back\\slash", 'a "quoted" one', "x" * LABEL_MAX_CHARS, "y" * (LABEL_MAX_CHARS + 1), "z" * 5000, "",
]


def answer(series: list[object], result_type: str = "vector") -> msgspec.Raw:
    return msgspec.Raw(json.dumps({"resultType": result_type, "result": series}).encode())


def sample(labels: dict[str, object], value: object = "0.5") -> dict[str, object]:
    return {"metric": labels, "value": [1700000000.5, value]}


def series_by_series(data: msgspec.Raw, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as patched:
        patched.setattr(answers, "WHOLE_DECODE_MAX_BYTES", -1)
        return vector_series(data)


def assert_keyed_the_same(data: msgspec.Raw, monkeypatch: pytest.MonkeyPatch) -> None:
    """keyed_readings, whichever way it decodes, is keyed() of the series, for each key label the view uses."""
    decoded = series_by_series(data, monkeypatch)
    assert decoded is not None
    for label in ("gpu", "hostname", ""):
        expected = (keyed(decoded[0], label), decoded[1])
        assert keyed_readings(data, label) == expected
        with monkeypatch.context() as patched:
            patched.setattr(answers, "WHOLE_DECODE_MAX_BYTES", -1)
            assert keyed_readings(data, label) == expected


@pytest.mark.parametrize("odd", ODD_STRINGS)
def test_a_label_is_shown_printable_and_cut_whichever_way_it_is_decoded(odd, monkeypatch):
    data = answer([sample({"instance": odd, "gpu": "0", odd: "name"}), sample({"instance": "h:1", "gpu": "1"})])
    decoded = vector_series(data)
    assert decoded == series_by_series(data, monkeypatch)
    assert decoded is not None
    (first, _), (second, _) = decoded[0]
    shown = printable(odd, LABEL_MAX_CHARS)
    assert first == {"instance": shown, "gpu": "0", shown: "name"} and second == {"instance": "h:1", "gpu": "1"}
    assert all(len(text) <= LABEL_MAX_CHARS and text.isprintable() for text in [*first, *first.values()])
    assert_keyed_the_same(answer([sample({"instance": odd, "gpu": odd, "hostname": odd}, "2"),
                                  sample({"instance": odd, "gpu": "1"}, "3"), sample({"gpu": odd})]), monkeypatch)


@pytest.mark.parametrize("value, reading", [("0.5", 0.5), ("NaN", None), ("+Inf", None), ("-Inf", None),
                                            ("1e19", None), ("-3", -3.0), ("no number", None), ("", None)])
def test_readings_whichever_way(value, reading, monkeypatch):
    data = answer([sample({"instance": "h:1", "gpu": "0"}, value)])
    assert vector_series(data) == series_by_series(data, monkeypatch) == ([({"instance": "h:1", "gpu": "0"},
                                                                            reading)], 0)
    assert_keyed_the_same(data, monkeypatch)


@pytest.mark.parametrize("odd_series, kept, malformed", [
    ([sample({f"l{number}": "" for number in range(MAX_LABELS_PER_SERIES + 1)})], 1, 1),  # too many labels
    ([sample({f"l{number}": "" for number in range(MAX_LABELS_PER_SERIES)})], 2, 0),
    ([sample({"instance": "h:2", "gpu": 7})], 1, 1),  # a label that is no string
    ([{"metric": {"instance": "h:2"}, "value": [1, "0.5", 2]}], 1, 1),
    (["a string", None, 5, {"value": [1, "1"]}], 1, 4),
    ([sample({"instance": "h:2", "gpu": "0"}) | {"deep": json.loads("[" * 500 + "]" * 500)}], 2, 0),
])
def test_odd_series_are_skipped_and_counted_whichever_way(odd_series, kept, malformed, monkeypatch):
    data = answer([sample({"instance": "h:1", "gpu": "0"}), *odd_series])
    decoded = vector_series(data)
    assert decoded == series_by_series(data, monkeypatch)
    assert decoded is not None and (len(decoded[0]), decoded[1]) == (kept, malformed)
    assert_keyed_the_same(data, monkeypatch)


def test_an_answer_of_another_type_is_no_vector_whichever_way(monkeypatch):
    data = answer([{"metric": {"instance": "h:1"}, "values": [[1, "1"]]}], result_type="matrix")
    assert vector_series(data) is None and series_by_series(data, monkeypatch) is None


def test_too_many_labels_in_one_answer_are_refused(monkeypatch):
    """Past the label cap the answer is refused; a cap no small answer reaches, so lowered here to reach it."""
    monkeypatch.setattr(answers, "MAX_LABELS_PER_ANSWER", 5)
    data = answer([sample({"instance": f"h:{number}", "gpu": "0"}) for number in range(3)])
    with pytest.raises(AnswerError, match="more than 5 labels"):
        vector_series(data)
    with pytest.raises(AnswerError, match="more than 5 labels"):
        series_by_series(data, monkeypatch)
    with pytest.raises(AnswerError, match="more than 5 labels"):
        keyed_readings(data, "gpu")
