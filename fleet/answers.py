"""The shapes of Prometheus's answers, declared once and checked where the bytes are decoded.

Whatever a Prometheus (or anything posing as one) sends, what comes out is well formed: every string
printable and at most LABEL_MAX_CHARS long, every value a finite reading of plausible size or None.
A series or target of the wrong shape (or with more than MAX_LABELS_PER_SERIES labels) is skipped and
counted; the rest of the answer stands. An answer of more than MAX_LABELS_PER_ANSWER labels is refused.
"""

from __future__ import annotations

import math
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

Labels = dict[str, str]
Series = tuple[Labels, Union[float, None]]
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


class _Targets(msgspec.Struct):
    activeTargets: list[msgspec.Raw]


class _Target(msgspec.Struct):
    labels: msgspec.Raw
    scrapeInterval: str = ""


_ENVELOPE = msgspec.json.Decoder(_Envelope)
_VECTOR = msgspec.json.Decoder(_Vector)
_SAMPLE = msgspec.json.Decoder(_Sample)
_TARGETS = msgspec.json.Decoder(_Targets)
_TARGET = msgspec.json.Decoder(_Target)
_LABELS = msgspec.json.Decoder(dict[str, str])


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
        self.left -= len(decoded)
        if self.left < 0:
            raise AnswerError(f"an answer of more than {MAX_LABELS_PER_ANSWER} labels, more than the view reads")
        return {text(name): text(value) for name, value in decoded.items()}



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

def vector_series(data: msgspec.Raw) -> tuple[list[Series], int] | None:
    """An instant vector's series as (labels, reading) and how many were malformed; None if no vector.

    AnswerError if it holds more than MAX_SERIES series.
    """
    try:
        vector = _VECTOR.decode(data)
    except _BAD_JSON:
        return None
    if vector.resultType != "vector":
        return None
    if len(vector.result) > MAX_SERIES:
        raise AnswerError(f"an answer of {len(vector.result)} series, more than the {MAX_SERIES} the view reads")
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
