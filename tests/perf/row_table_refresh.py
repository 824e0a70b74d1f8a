"""RowTable before vs after the move to ScrollView: the cost of a 1 Hz update of a 1000-row table.

    .venv/bin/python tests/perf/row_table_refresh.py [--updates 100] [--old-rev REV | --old FILE]

Both tables show 40 rows of 1000 (a 120x41 headless terminal); each update calls `sync_rows` with 10 of
the visible rows changed, then lets the app paint. `steady` keeps the row count, `churn` adds or drops
a row below the screen on every update (a process starting or exiting), `repaint` changes nothing but
repaints the whole table (as a focus change or a resize does). Reported per update: CPU ms of `sync_rows`
alone, CPU ms of `sync_rows` plus the paint, lines rendered, and rows whose cells were built.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from rich.text import Text
from textual.app import App, ComposeResult

from pth_top.widgets import row_table as new_row_table

REPOSITORY = Path(__file__).resolve().parents[2]
# The last commit whose RowTable drew and scrolled itself (a plain Widget on the line API).
PRE_SCROLLVIEW_REV = "2d07d1f"
ROW_COUNT = 1000
TERMINAL_SIZE = (120, 41)  # the header and 40 rows
CHANGED_ROWS_PER_UPDATE = 10


def load_module_from(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def old_module(old_file: Path | None, old_rev: str) -> ModuleType:
    if old_file is None:
        shown = subprocess.run(["git", "-C", str(REPOSITORY), "show", f"{old_rev}:widgets/row_table.py"],
                               capture_output=True, text=True)
        if shown.returncode != 0:
            raise ValueError(f"git cannot show widgets/row_table.py at {old_rev!r}: {shown.stderr.strip()}")
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
            handle.write(shown.stdout)
        try:
            return load_module_from(Path(handle.name), "row_table_before_scrollview")
        finally:
            Path(handle.name).unlink()
    if not old_file.is_file():
        raise ValueError(f"no such file: {old_file}")
    return load_module_from(old_file, "row_table_before_scrollview")


def cells(key: str, update: int) -> tuple[Text, ...]:
    return (Text(key, justify="right"), Text("alice"), Text(f"{update % 100:.1f}", justify="right"),
            Text(f"python worker-{key} --flag"))


SCENARIOS = ("steady", "churn", "repaint")


def updates(update_count: int, scenario: str):
    """(keys, cells by key) per update: 10 visible rows change each time (none for `repaint`); with
    `churn` one row comes or goes below the screen."""
    keys = [str(pid) for pid in range(ROW_COUNT)]
    cells_by_key = {key: cells(key, 0) for key in keys}
    for update in range(1, update_count + 1):
        cells_by_key = dict(cells_by_key)
        for offset in range(CHANGED_ROWS_PER_UPDATE if scenario != "repaint" else 0):
            key = keys[(update * CHANGED_ROWS_PER_UPDATE + offset) % (TERMINAL_SIZE[1] - 1)]
            cells_by_key[key] = cells(key, update)
        if scenario == "churn":
            extra = str(ROW_COUNT)
            keys = keys[:-1] if keys[-1] == extra else keys + [extra]
            cells_by_key.setdefault(extra, cells(extra, update))
        yield list(keys), cells_by_key


async def measure(module: ModuleType, update_count: int, scenario: str) -> dict[str, float]:
    class TableApp(App):
        def compose(self) -> ComposeResult:
            yield module.RowTable()

    app = TableApp()
    async with app.run_test(size=TERMINAL_SIZE) as pilot:
        table = app.query_one(module.RowTable)
        table.set_columns([module.TableColumn("pid", Text("PID"), 7), module.TableColumn("user", Text("USER"), 8),
                           module.TableColumn("cpu", Text("CPU%"), 5), module.TableColumn("cmd", Text("Command"))])
        first_keys = [str(pid) for pid in range(ROW_COUNT)]
        table.sync_rows(first_keys, lambda key: cells(key, 0))
        await pilot.pause()
        rendered_lines = built_rows = 0
        original_render_line = table.render_line

        def counting_render_line(y: int):
            nonlocal rendered_lines
            rendered_lines += 1
            return original_render_line(y)

        table.render_line = counting_render_line
        sync_cpu_s = update_cpu_s = 0.0
        for keys, cells_by_key in updates(update_count, scenario):
            def cells_of(key: str, cells_by_key=cells_by_key):
                nonlocal built_rows
                built_rows += 1
                return cells_by_key[key]

            started_cpu_s = time.process_time()
            table.sync_rows(keys, cells_of)
            if scenario == "repaint":
                table.refresh()
            synced_cpu_s = time.process_time()
            await pilot.pause()
            sync_cpu_s += synced_cpu_s - started_cpu_s
            update_cpu_s += time.process_time() - started_cpu_s
    return {"sync_ms": 1000 * sync_cpu_s / update_count, "update_ms": 1000 * update_cpu_s / update_count,
            "lines": rendered_lines / update_count, "built": built_rows / update_count}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=100, help="sync_rows calls per table and scenario")
    parser.add_argument("--old-rev", default=PRE_SCROLLVIEW_REV, help="git revision of the old widgets/row_table.py")
    parser.add_argument("--old", type=Path, help="the old row_table.py as a file (instead of --old-rev)")
    arguments = parser.parse_args(argv)
    if arguments.updates < 1:
        print("row_table_refresh: --updates must be at least 1", file=sys.stderr)
        return 2
    try:
        old = old_module(arguments.old, arguments.old_rev)
    except (ValueError, OSError) as error:
        print(f"row_table_refresh: {error}", file=sys.stderr)
        return 2
    print(f"{ROW_COUNT} rows, {TERMINAL_SIZE[1] - 1} on screen, {CHANGED_ROWS_PER_UPDATE} changed per update, "
          f"{arguments.updates} updates; CPU ms per update")
    print(f"{'table':<22} {'scenario':<8} {'sync_rows':>9} {'sync+paint':>10} {'lines drawn':>11} {'rows built':>10}")
    for label, module in (("before (Widget)", old), ("after (ScrollView)", new_row_table)):
        for scenario in SCENARIOS:
            result = asyncio.run(measure(module, arguments.updates, scenario))
            print(f"{label:<22} {scenario:<8} {result['sync_ms']:9.3f} "
                  f"{result['update_ms']:10.3f} {result['lines']:11.1f} {result['built']:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
