"""Plain-text formatting of run rows for the headless CLI and the screen. Imports no torch."""

from __future__ import annotations

from pth_top.text import printable


def format_value(value: float | None) -> str:
    if value is None:
        return "-"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def format_percent(percent: float | None) -> str:
    if percent is None:
        return "-"
    return f"{percent:.0f}%" + ("!" if percent > 100 else "")


def format_spread(row: dict) -> str:
    rel_iqr = row.get("rel_iqr")
    if rel_iqr is None:
        return "-"
    return f"±{100 * rel_iqr / 2:.1f}%" + (" noisy" if row.get("noisy") else "")


def format_delta(delta: float | None) -> str:
    return "-" if delta is None else f"{delta:+.1f}%"


TABLE_COLUMNS = ("kernel", "device", "variant", "value", "unit", "% peak", "spread", "note")


def row_cells(row: dict) -> tuple[str, ...]:
    """A row's table cells, each terminal-safe (kernel names, notes and messages come from the child)."""
    return tuple(printable(cell, 300) for cell in _raw_cells(row))


def _raw_cells(row: dict) -> tuple[str, ...]:
    if "error_type" in row:
        return (str(row.get("kernel") or "-"), str(row.get("device") or "-"), str(row.get("variant") or "-"),
                "ERROR", "", "", "", f"{row.get('error_type')}: {row.get('message')}")
    note = row.get("note") or ""
    if row.get("status") == "skipped":
        note = f"skipped: {note}"
    elif row.get("percent_of_peak") is not None and row["percent_of_peak"] > 100:
        note = (note + "; " if note else "") + "above peak (boost clock?)"
    return (str(row.get("kernel")), str(row.get("device")), str(row.get("variant")), format_value(row.get("value")),
            str(row.get("unit") or ""), format_percent(row.get("percent_of_peak")), format_spread(row), note)


def text_table(rows: list[dict]) -> str:
    cells = [TABLE_COLUMNS] + [row_cells(row) for row in rows]
    widths = [max(len(line[index]) for line in cells) for index in range(len(TABLE_COLUMNS) - 1)]
    lines = []
    for line in cells:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(line[:-1], widths)) + "  " + line[-1])
    return "\n".join(line.rstrip() for line in lines)
