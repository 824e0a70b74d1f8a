"""The shapes of Prometheus's answers, declared once and checked where the bytes are decoded.

Whatever a Prometheus (or anything posing as one) sends, what comes out is well formed: every string
printable and at most LABEL_MAX_CHARS long, every value a finite reading of plausible size or None.
A series or target of the wrong shape (or with more than MAX_LABELS_PER_SERIES labels) is skipped and
counted; the rest of the answer stands. An answer of more than MAX_LABELS_PER_ANSWER labels is refused.
"""

from __future__ import annotations

import math
import re
from typing import Callable, TypeVar, Union

import msgspec

from pth_top.text import printable

# Longer than any real hostname, host:port, GPU model or command name; a longer one is cut.
LABEL_MAX_CHARS = 256
# No GPU or host reading comes near (bytes, watts, counts); a bigger one is no reading, so sums stay finite.
MAX_READING = 1e18
# 12,500 hosts of 8 GPUs; past it, decoding alone would take seconds and hundreds of MB (each query, at once).
MAX_SERIES = 100_000
# pth-top's series have at most 8 labels; service discovery adds a few. A series with more is skipped.
MAX_LABELS_PER_SERIES = 64
# The view's biggest answer, 2,000 hosts x 8 GPUs, holds 16,000 series of ~6 labels (~100,000): 4x that.
MAX_LABELS_PER_ANSWER = 400_000
# Cut of a server's error text or of a body that is no API answer, in the one error line.
DETAIL_MAX_CHARS = 200
# A label takes at least 5 bytes ("":""), so an answer this small holds at most MAX_LABELS_PER_ANSWER of them:
# decoded whole at once, it costs no more memory than the series the view may keep of it.
WHOLE_DECODE_MAX_BYTES = 5 * MAX_LABELS_PER_ANSWER

Labels = dict[str, str]
Series = tuple[Labels, Union[float, None]]
# Readings by (instance, a second label's value: the GPU, or '' for a host's).
Readings = dict[tuple[str, str], float]
# msgspec raises RecursionError on JSON nested deeper than the interpreter's limit, even in skipped fields.
_BAD_JSON = (msgspec.DecodeError, RecursionError)
Item = TypeVar("Item")
Kept = TypeVar("Kept")


class AnswerError(ValueError):
    """The answer is not what the API promises; the message is one printable line."""


class _Envelope(msgspec.Struct):
    status: str
    data: msgspec.Raw = msgspec.Raw(b"null")
    errorType: str = ""
    error: str = ""


class _Vector(msgspec.Struct):
    resultType: str
    result: list[msgspec.Raw]


class _Sample(msgspec.Struct):
    metric: msgspec.Raw
    value: tuple[Union[float, str], str]


# gc=False: no cycle can run through these, so the collector need not track the many made per answer.
class _TypedValue(msgspec.Struct, array_like=True, forbid_unknown_fields=True, gc=False):
    at: Union[float, str]
    text: str


class _TypedSample(msgspec.Struct, gc=False):
    metric: dict[str, str]
    value: _TypedValue


class _TypedVector(msgspec.Struct, gc=False):
    resultType: str
    result: list[_TypedSample]


class _Targets(msgspec.Struct):
    activeTargets: list[msgspec.Raw]


class _Target(msgspec.Struct):
    labels: msgspec.Raw
    scrapeInterval: str = ""


_ENVELOPE = msgspec.json.Decoder(_Envelope)
_VECTOR = msgspec.json.Decoder(_Vector)
_SAMPLE = msgspec.json.Decoder(_Sample)
_TYPED_VECTOR = msgspec.json.Decoder(_TypedVector)
_TARGETS = msgspec.json.Decoder(_Targets)
_TARGET = msgspec.json.Decoder(_Target)
_LABELS = msgspec.json.Decoder(dict[str, str])
# A run of more than LABEL_MAX_CHARS bytes after a quote: where a JSON string may be too long to show whole.
_LONG_RUN = re.compile(rb'"[^"]{%d}' % (LABEL_MAX_CHARS + 1))


def text(value: str) -> str:
    """A string from Prometheus as it may be shown or printed anywhere: printable and bounded."""
    return printable(value, LABEL_MAX_CHARS)


def reading(value: str) -> float | None:
    """A sample's value string as a float; NaN, infinities and implausible magnitudes become None (no reading)."""
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and abs(number) <= MAX_READING else None


def api_data(body: bytes, status_code: int, source: str) -> msgspec.Raw:
    """The still-encoded `data` of a successful API answer; AnswerError naming what came instead."""
    try:
        envelope = _ENVELOPE.decode(body)
    except _BAD_JSON:
        shown = body[:DETAIL_MAX_CHARS // 2].decode("utf-8", "replace")
        raise AnswerError(printable(
            f"HTTP {status_code} from {source}, not a Prometheus API answer: {shown!r}")) from None
    if envelope.status != "success":
        kind = envelope.errorType
        what = "bad query" if kind == "bad_data" else f"Prometheus error {printable(kind[:40]) or status_code}"
        raise AnswerError(printable(f"{what}: {envelope.error[:DETAIL_MAX_CHARS]}"))
    return envelope.data


class _LabelBudget:
    """Decodes an answer's label sets: None for a malformed or oversized one; AnswerError past the answer's cap."""

    def __init__(self) -> None:
        self.left = MAX_LABELS_PER_ANSWER

    def labels(self, raw: msgspec.Raw) -> Labels | None:
        """The label set, printable and cut; decoded one at a time, so an oversized one is dropped at once."""
        try:
            decoded = _LABELS.decode(raw)
        except _BAD_JSON:
            return None
        if len(decoded) > MAX_LABELS_PER_SERIES:
            return None
        self.spend(len(decoded))
        return {text(name): text(value) for name, value in decoded.items()}

    def spend(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise AnswerError(f"an answer of more than {MAX_LABELS_PER_ANSWER} labels, more than the view reads")



def _each_item(items: list[msgspec.Raw], decoder: msgspec.json.Decoder[Item], raw_labels: Callable[[Item], msgspec.Raw],
               build: Callable[[Labels, Item], Kept]) -> list[Kept]:
    """Each item decoded on its own under one label budget; a malformed item or label set is left out."""
    kept: list[Kept] = []
    budget = _LabelBudget()
    for raw in items:
        try:
            item = decoder.decode(raw)
        except _BAD_JSON:
            continue
        labels = budget.labels(raw_labels(item))
        if labels is not None:
            kept.append(build(labels, item))
    return kept


def _check_series_count(count: int) -> None:
    if count > MAX_SERIES:
        raise AnswerError(f"an answer of {count} series, more than the {MAX_SERIES} the view reads")


def _plain(data: bytes) -> bool:
    """True if every JSON string in `data` is as text() would leave it: printable ASCII, none longer than
    LABEL_MAX_CHARS. No escape, no DEL, no byte past ASCII (msgspec refuses raw control characters)."""
    return data.isascii() and b"\\" not in data and b"\x7f" not in data and _LONG_RUN.search(data) is None


_AnyVector = TypeVar("_AnyVector", _Vector, _TypedVector)


def _decoded_vector(decoder: msgspec.json.Decoder[_AnyVector], data: msgspec.Raw) -> _AnyVector | None:
    """The answer as an instant vector; None for bad JSON or another result type. AnswerError past MAX_SERIES."""
    try:
        vector = decoder.decode(data)
    except _BAD_JSON:
        return None
    if vector.resultType != "vector":
        return None
    _check_series_count(len(vector.result))
    return vector


def _typed_samples(data: msgspec.Raw) -> tuple[list[_TypedSample], int] | None:
    """The series of a small vector answer with every one well formed, decoded at once, and how many of them
    were left out; None for any other answer.

    The checks of the series-by-series way: AnswerError past MAX_SERIES series or MAX_LABELS_PER_ANSWER
    labels; a series of more than MAX_LABELS_PER_SERIES labels left out (and counted).
    """
    if len(data) > WHOLE_DECODE_MAX_BYTES:
        return None
    vector = _decoded_vector(_TYPED_VECTOR, data)
    if vector is None:
        return None
    kept = [sample for sample in vector.result if len(sample.metric) <= MAX_LABELS_PER_SERIES]
    _LabelBudget().spend(sum(len(sample.metric) for sample in kept))
    return kept, len(vector.result) - len(kept)


def _whole_vector(data: msgspec.Raw) -> tuple[list[Series], int] | None:
    """vector_series of a small answer with every series well formed; None for any other."""
    typed = _typed_samples(data)
    if typed is None:
        return None
    samples, skipped = typed
    if _plain(bytes(data)):
        return [(sample.metric, reading(sample.value.text)) for sample in samples], skipped
    return [({text(name): text(value) for name, value in sample.metric.items()}, reading(sample.value.text))
            for sample in samples], skipped


def keyed(series: list[Series], label: str) -> Readings:
    """Readings by (instance, the value of `label`; '' with no label); a series with no reading left out."""
    return {(labels.get("instance", ""), labels.get(label, "") if label else ""): value
            for labels, value in series if value is not None}


def keyed_readings(data: msgspec.Raw, label: str) -> tuple[Readings, int] | None:
    """keyed() of vector_series(data) and how many series were malformed; None if no vector.

    A small, well-formed answer goes straight from its decoded series to the readings: no series list,
    and only the two labels of the key made printable (text() makes no other name equal to them).
    """
    typed = _typed_samples(data)
    if typed is None:
        decoded = _series_by_series(data)
        return None if decoded is None else (keyed(decoded[0], label), decoded[1])
    samples, skipped = typed
    plain = _plain(bytes(data))
    readings: Readings = {}
    for sample in samples:
        value = reading(sample.value.text)
        if value is not None:
            metric = sample.metric
            key = (metric.get("instance", ""), metric.get(label, "") if label else "")
            readings[key if plain else (text(key[0]), text(key[1]))] = value
    return readings, skipped


def vector_series(data: msgspec.Raw) -> tuple[list[Series], int] | None:
    """An instant vector's series as (labels, reading) and how many were malformed; None if no vector.

    A small, well-formed answer is decoded at once; any other series by series, so one malformed or
    oversized series is skipped alone. AnswerError if it holds more than MAX_SERIES series.
    """
    whole = _whole_vector(data)
    return whole if whole is not None else _series_by_series(data)


def _series_by_series(data: msgspec.Raw) -> tuple[list[Series], int] | None:
    """vector_series one series at a time: a malformed or oversized series is skipped alone."""
    vector = _decoded_vector(_VECTOR, data)
    if vector is None:
        return None
    series = _each_item(vector.result, _SAMPLE, lambda sample: sample.metric,
                        lambda labels, sample: (labels, reading(sample.value[1])))
    return series, len(vector.result) - len(series)


def target_intervals(data: msgspec.Raw) -> tuple[list[tuple[Labels, str]], int] | None:
    """/api/v1/targets as (labels, scrape interval text) per target and how many were malformed; None if none."""
    try:
        targets = _TARGETS.decode(data)
    except _BAD_JSON:
        return None
    if len(targets.activeTargets) > MAX_SERIES:
        raise AnswerError(f"{len(targets.activeTargets)} targets, more than the {MAX_SERIES} the view reads")
    result = _each_item(targets.activeTargets, _TARGET, lambda target: target.labels,
                        lambda labels, target: (labels, text(target.scrapeInterval)))
    return result, len(targets.activeTargets) - len(result)
