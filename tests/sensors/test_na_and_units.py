"""One test for a missing reading (is_na) and one set of byte units (pth_top.units)."""

from __future__ import annotations

import dataclasses
import math
import pickle

import pytest

from pth_top import units
from pth_top.sensors.history import History
from pth_top.sensors.na import NA, is_na
from pth_top.sensors.units import format_bytes, format_duration, format_number, format_rate
from tests.fakes.snapshots import make_snapshot


@pytest.mark.parametrize("value", [NA, None, math.nan, float("nan"), pickle.loads(pickle.dumps(NA))])
def test_missing_readings(value):
    assert is_na(value)


@pytest.mark.parametrize("value", [0, 0.0, -1, False, "", "N/A", math.inf, -math.inf, 1e-300, (), []])
def test_real_readings_even_falsy_or_infinite(value):
    assert not is_na(value)


@pytest.mark.parametrize("formatter", [format_bytes, format_rate, format_duration, format_number])
@pytest.mark.parametrize("value", [NA, None, math.nan])
def test_every_formatter_prints_a_missing_reading_as_na(formatter, value):
    assert formatter(value) == "N/A"


def test_units_are_powers_of_1024():
    assert (units.KIB, units.MIB, units.GIB, units.TIB, units.PIB) == tuple(1024**power for power in range(1, 6))


@pytest.mark.parametrize(("value", "text"), [
    (0, "0 B"), (1023, "1023 B"), (units.KIB, "1.0 KiB"), (1536, "1.5 KiB"),
    (99.9 * units.MIB, "99.9 MiB"), (150 * units.GIB, "150 GiB"), (1023 * units.GIB, "1023 GiB"),
    (units.TIB, "1.0 TiB"), (2048 * units.PIB, "2048 PiB"), (-3 * units.GIB, "-3.0 GiB"),
])
def test_bytes_keep_three_significant_digits(value, text):
    assert format_bytes(value) == text


def test_history_turns_missing_and_infinite_readings_into_gaps():
    snapshot = make_snapshot()
    history = History(capacity=4)
    for cpu_percent in (NA, math.nan, math.inf, 12.5):
        history.append(dataclasses.replace(snapshot, cpu=dataclasses.replace(snapshot.cpu, total_percent=cpu_percent)))
    assert [math.isnan(value) for value in history.cpu_percent] == [True, True, True, False]
    assert history.cpu_percent[-1] == 12.5
