import math

from pth_top.sensors.na import NA
from pth_top.tui.format import format_bytes, format_duration, format_number, format_percent, format_rate, format_uptime


def test_bytes_use_binary_units_like_htop():
    assert format_bytes(512) == "512B"
    assert format_bytes(3.5 * 1024**2) == "3.5M"
    assert format_bytes(80 * 1024**3) == "80.0G"
    assert format_bytes(150 * 1024**3) == "150G"


def test_missing_values_print_na():
    for formatter in (format_bytes, format_rate, format_percent, format_number, format_duration):
        assert formatter(NA) == "N/A"
        assert formatter(math.nan) == "N/A"


def test_durations_and_uptime():
    assert format_duration(75.5) == "1:15.50"
    assert format_duration(2 * 3600 + 61) == "2h01:01"
    assert format_duration(3 * 86400 + 5 * 3600) == "3d05h"
    assert format_uptime(3 * 86400 + 3661) == "3 days, 01:01:01"
    assert format_uptime(59) == "00:00:59"
