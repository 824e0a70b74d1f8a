"""Result and error rows of a run, and the one formatter the CLI table, its progress lines and the screen use.

Imports no torch. Every cell is terminal-safe: kernel names, notes and messages come from the child.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pth_top.benches.protocol import MIN_TRUSTED_SAMPLES
from pth_top.text import printable

# Prefixes a value is rescaled over, so 0.000596 TFLOP/s reads 596 MFLOP/s.
SI_PREFIXES = ("", "k", "M", "G", "T", "P", "E")
SCALABLE_BASE_UNITS = ("FLOP/s", "B/s")
ABOVE_PEAK_NOTE = "above peak (boost clock?)"
COLUMNS = ("kernel", "device", "variant", "value", "%peak", "Δ%", "spread", "note")
CELL_CHARS = 300


@dataclass(frozen=True)
class ResultRow:
    """One measured (or skipped) variant, as the child sent it plus the parent's % of peak."""

    kernel: str
    device: str
    variant: str
    status: str = "ok"
    value: float | None = None
    unit: str = ""
    percent_of_peak: float | None = None
    note: str = ""
    rel_iqr: float | None = None
    noisy: bool = False
    samples: int | None = None  # timed samples behind the value (None: not said)

    @property
    def too_few_samples(self) -> bool:
        return self.samples is not None and self.samples < MIN_TRUSTED_SAMPLES

    @classmethod
    def from_dict(cls, row: dict) -> "ResultRow":
        note = str(row.get("note") or "")
        if row.get("kernel") == "memory":  # the wizard's estimate beside the measured peak
            from pth_top.benches.client.memory_check import comparison_note

            note = "; ".join(part for part in (comparison_note(row), note) if part)
        return cls(kernel=str(row.get("kernel")), device=str(row.get("device")), variant=str(row.get("variant")),
                   status=str(row.get("status") or "ok"), value=_number(row.get("value")),
                   unit=str(row.get("unit") or ""), percent_of_peak=_number(row.get("percent_of_peak")),
                   note=note, rel_iqr=_number(row.get("rel_iqr")), noisy=bool(row.get("noisy")),
                   samples=_count(row.get("samples")))._with_sample_check()

    def _with_sample_check(self) -> "ResultRow":
        """A row timed from fewer than MIN_TRUSTED_SAMPLES samples is noisy whatever its IQR says."""
        if not self.too_few_samples:
            return self
        from dataclasses import replace

        return replace(self, noisy=True)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kernel, self.device, self.variant)


@dataclass(frozen=True)
class ErrorRow:
    """A variant, kernel or whole run that failed (kernel/device/variant None when it is not one kernel's)."""

    kernel: str | None
    device: str | None
    variant: str | None
    error_type: str
    message: str

    @classmethod
    def from_dict(cls, row: dict) -> "ErrorRow":
        def optional(name: str) -> str | None:
            return None if row.get(name) is None else str(row.get(name))

        return cls(kernel=optional("kernel"), device=optional("device"), variant=optional("variant"),
                   error_type=str(row.get("error_type")), message=str(row.get("message")))

    @property
    def key(self) -> tuple[str, str, str]:
        return (str(self.kernel), str(self.device), str(self.variant))


Row = ResultRow | ErrorRow


def row_from_dict(row: dict) -> Row:
    """A stored row (record.rows or record.errors item) as its typed row."""
    return ErrorRow.from_dict(row) if "error_type" in row else ResultRow.from_dict(row)


def _number(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def format_number(value: float) -> str:
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def format_quantity(value: float | None, unit: str) -> str:
    """Value and unit, the SI prefix chosen so the number reads 1 to 999 ("596 MFLOP/s", not "0.000596 TFLOP/s")."""
    if value is None:
        return "-"
    prefix, base = _split_unit(unit)
    if base is None or value == 0:
        return f"{format_number(value)} {unit}".rstrip()
    exponent = SI_PREFIXES.index(prefix) * 3 + math.floor(math.log10(abs(value)) + 1e-9)
    step = max(0, min(len(SI_PREFIXES) - 1, exponent // 3))
    scaled = value * 10.0 ** (3 * (SI_PREFIXES.index(prefix) - step))
    return f"{format_number(scaled)} {SI_PREFIXES[step]}{base}"


def _split_unit(unit: str) -> tuple[str, str | None]:
    """("T", "FLOP/s") for "TFLOP/s"; ("", None) for a unit that is not rescaled (samples/s, x)."""
    for base in SCALABLE_BASE_UNITS:
        if unit.endswith(base) and unit[: -len(base)] in SI_PREFIXES:
            return unit[: -len(base)], base
    return "", None


def format_percent(percent: float | None, noisy: bool = False) -> str:
    """"85%"; "104%!" above peak; "~85% (noisy)" when the samples spread too far to trust the figure."""
    if percent is None:
        return "-"
    text = f"{percent:.0f}%" + ("!" if percent > 100 else "")
    return f"~{text} (noisy)" if noisy else text


def format_spread(row: ResultRow) -> str:
    if row.too_few_samples:
        return f"{row.samples} sample{'s' if row.samples != 1 else ''}, noisy"
    if row.rel_iqr is None:
        return "-"
    return f"±{100 * row.rel_iqr / 2:.1f}%" + (" noisy" if row.noisy else "")


def format_delta(delta: float | None) -> str:
    return "-" if delta is None else f"{delta:+.1f}%"


@dataclass(frozen=True)
class RowCells:
    """A row's cells in COLUMNS order, each one terminal-safe line."""

    kernel: str
    device: str
    variant: str
    value: str
    percent: str
    delta: str
    spread: str
    note: str
    is_error: bool = False

    def cells(self, *, with_delta: bool = True) -> tuple[str, ...]:
        delta = (self.delta,) if with_delta else ()
        return (self.kernel, self.device, self.variant, self.value, self.percent, *delta, self.spread, self.note)


def format_row(row: Row, delta: float | None = None) -> RowCells:
    """The one wording of a row: value with unit, % of peak, Δ% against a baseline, spread, note."""
    if isinstance(row, ErrorRow):
        return RowCells(_cell(row.kernel or "-"), _cell(row.device or "-"), _cell(row.variant or "-"), value="ERROR",
                        percent="", delta="", spread="", note=_cell(f"{row.error_type}: {row.message}"), is_error=True)
    note = row.note
    if row.status == "skipped":
        note = f"skipped: {note}"
    elif row.percent_of_peak is not None and row.percent_of_peak > 100:
        note = f"{note}; {ABOVE_PEAK_NOTE}" if note else ABOVE_PEAK_NOTE
    return RowCells(_cell(row.kernel), _cell(row.device), _cell(row.variant),
                    _cell(format_quantity(row.value, row.unit)), format_percent(row.percent_of_peak, row.noisy),
                    format_delta(delta), format_spread(row), _cell(note))


def _cell(text: str) -> str:
    return printable(text, CELL_CHARS)


def text_table(rows: list[dict]) -> str:
    """The CLI's table of a run's rows (no Δ% column: the CLI does not compare)."""
    header = tuple(column for column in COLUMNS if column != "Δ%")
    lines = [header] + [format_row(row_from_dict(row)).cells(with_delta=False) for row in rows]
    widths = [max(len(line[index]) for line in lines) for index in range(len(header) - 1)]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line[:-1], widths, strict=True)) + "  " + line[-1]
            for line in lines]
    return "\n".join(line.rstrip() for line in text)


def summary_line(row: Row) -> str:
    """One line for a row as it arrives (the CLI's progress on stderr)."""
    cells = format_row(row)
    where = " ".join(part for part in (cells.kernel, cells.device, cells.variant) if part != "-")
    if isinstance(row, ErrorRow):
        return f"{where or 'benchmark output'}: ERROR {cells.note}"
    if row.status != "ok":
        return f"{where}: {cells.note}"
    peak = f" ({cells.percent.removesuffix(' (noisy)')} of peak{', noisy' if row.noisy else ''})" \
        if row.percent_of_peak is not None else ""
    return f"{where}: {cells.value}{peak}" + (f"; {cells.note}" if cells.note else "")


def progress_message(fields: dict) -> str:
    """A progress event's message with its ETA ("write eta 12s"), for the CLI's live line and the screen."""
    eta = fields.get("eta_s")
    eta_text = f" eta {eta:.0f}s" if isinstance(eta, (int, float)) and eta > 0 else ""
    return f"{fields.get('message') or ''}{eta_text}".strip()
