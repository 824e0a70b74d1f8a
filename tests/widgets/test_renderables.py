"""The widgets' drawing, tested as pure functions."""

import math

from pth_top.widgets.core_grid import CoreReading, grid_lines, is_compact
from pth_top.widgets.history_chart import ChartSeries, chart_text
from pth_top.widgets.meter import MeterSegment, meter_text


def test_meter_fills_in_proportion_and_keeps_value_inside_brackets():
    text = meter_text("Mem", [MeterSegment(0.5, "green"), MeterSegment(0.25, "yellow")], 25, "8G")
    assert len(text.plain) == 25
    assert text.plain.startswith("Mem[") and text.plain.endswith("8G]")
    inner = text.plain[4:-1]
    assert inner == "|" * 15 + "   8G"
    styles_by_offset = {offset: span.style for span in text.spans for offset in range(span.start, span.end)}
    assert [styles_by_offset[4 + i] for i in (0, 9, 10, 14)] == ["green", "green", "yellow", "yellow"]


def test_meter_never_overflows_and_ignores_nan():
    text = meter_text("x", [MeterSegment(3.0, "red"), MeterSegment(math.nan, "blue")], 10, "")
    assert len(text.plain) == 10 and text.plain.count("|") == 7
    assert meter_text("long label", [], 5, "100%").plain == "long label[]"


def cores(count):
    return [CoreReading(str(i), (MeterSegment(i / count, "green"),), i / count) for i in range(count)]


def test_core_meters_fill_columns_then_fold_into_heat_cells():
    lines = grid_lines(cores(8), width=100)
    assert len(lines) == 2 and all(len(line.plain) <= 100 for line in lines)
    assert is_compact(64, 200, compact_from=64, max_meter_rows=100)
    compact = grid_lines(cores(128), width=120)
    assert len(compact) == 128 // (120 // 4) + 1 and "[" not in compact[0].plain


def test_too_many_meter_rows_fold_into_heat_cells():
    assert not is_compact(16, 80, compact_from=64, max_meter_rows=8)
    assert is_compact(16, 80, compact_from=64, max_meter_rows=3)
    assert len(grid_lines(cores(16), 80, max_meter_rows=3)) == 1


def test_chart_draws_lines_with_a_legend_and_skips_gaps():
    values = tuple(float(i % 100) for i in range(50)) + (math.nan,) * 3
    text = chart_text([ChartSeries("CPU", values, "green")], width=50, height=10, title="CPU %")
    lines = text.plain.splitlines()
    assert lines[0].startswith("CPU % ━ CPU")
    assert len(lines) == 10
    assert any(ch in text.plain for ch in "⣀⠤⠒⠉")


def test_a_long_history_is_cut_to_one_point_per_column_keeping_spikes_and_gaps():
    from pth_top.widgets.history_chart import _points

    values = [10.0] * 300
    values[100] = 95.0
    values[200:215] = [math.nan] * 15
    points = _points(ChartSeries("CPU", tuple(values), "green"), x_step_s=1.0, max_points=50)
    assert len(points) < 50, "the all-gap runs are left out"
    assert max(value for _, value in points) == 95.0
    assert points[-1][0] == 0.0 and points[0][0] == -294.0
    assert [x for x, _ in points] == sorted(x for x, _ in points)
    short = _points(ChartSeries("CPU", (1.0, math.nan, 3.0), "green"), x_step_s=0.5, max_points=50)
    assert short == [(-1.0, 1.0), (0.0, 3.0)]


def test_a_spike_in_a_long_history_still_reaches_the_top_of_the_chart():
    values = [10.0] * 600
    values[300] = 95.0
    lines = chart_text([ChartSeries("CPU", tuple(values), "green")], width=60, height=12).plain.splitlines()
    top_rows = lines[2] + lines[3]
    assert any("\u2801" <= ch <= "\u28ff" for ch in top_rows), "an averaged cut would flatten the spike to ~18 %"


def test_chart_without_enough_points_says_so_and_tiny_chart_is_empty():
    assert "collecting" in chart_text([ChartSeries("CPU", (1.0,), "green")], 40, 8).plain
    assert chart_text([], 5, 2).plain == ""


def test_level_sparkline_uses_a_fixed_scale_and_shows_gaps():
    from pth_top.widgets.level_sparkline import sparkline_text

    assert sparkline_text([0.0, 50.0, 100.0, math.nan, 250.0], 5).plain == "▁▄█ █"
    assert sparkline_text([100.0] * 10, 4).plain == "████"
    assert sparkline_text([10.0], 3).plain == "  ▁"


def test_chart_loads_plotext_without_building_its_manual():
    """In a fresh interpreter: the chart draws, and plotext's documentation sections were never imported."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from widgets.history_chart import ChartSeries, chart_text\n"
        "text = chart_text([ChartSeries('CPU', (10.0, 60.0, 30.0), 'green')], 50, 10)\n"
        "assert any(ch in text.plain for ch in '⠁⠂⠄⡀⢀⠈⠐⠠'), text.plain\n"
        "assert 'plotext' in sys.modules\n"
        "doc_modules = ('plotext._doc.sections', 'plotext._doc.tools')\n"
        "print(sorted(name for name in sys.modules if name.startswith(doc_modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
