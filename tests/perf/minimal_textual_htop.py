"""A minimal Textual htop, the framework's floor for dashboard_overhead.py (not part of pth-top).

    /work/venv/bin/python tests/perf/minimal_textual_htop.py [--interval 1]

Per-core meters, memory, the top 20 processes by CPU in a DataTable, refreshed by a timer that calls
psutil on the UI loop (deliberately naive: it is the floor, not a design to copy). `q` quits.
"""

from __future__ import annotations

import argparse

import psutil
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

BAR_WIDTH = 40
TOP_PROCESSES = 20


def bar(label: str, percent: float, suffix: str = "") -> Text:
    filled = round(BAR_WIDTH * percent / 100)
    return Text(f"{label:>4} [{'|' * filled:<{BAR_WIDTH}}] {percent:5.1f}% {suffix}")


class MinimalHtop(App):
    CSS = "DataTable { height: 1fr; } .meter { height: 1; }"
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, interval_s: float) -> None:
        super().__init__()
        self.interval_s = interval_s
        self.core_count = psutil.cpu_count() or 1

    def compose(self) -> ComposeResult:
        for core in range(self.core_count):
            yield Static(classes="meter", id=f"core-{core}")
        yield Static(classes="meter", id="memory")
        yield Static(classes="meter", id="tasks")
        yield DataTable(cursor_type="row")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("PID", "USER", "CPU%", "MEM%", "RSS MiB", "COMMAND")
        psutil.cpu_percent(percpu=True)
        self.refresh_data()
        self.set_interval(self.interval_s, self.refresh_data)

    def refresh_data(self) -> None:
        for core, percent in enumerate(psutil.cpu_percent(percpu=True)):
            self.query_one(f"#core-{core}", Static).update(bar(str(core), percent))
        memory = psutil.virtual_memory()
        used_gib, total_gib = memory.used / 2**30, memory.total / 2**30
        self.query_one("#memory", Static).update(bar("Mem", memory.percent, f"{used_gib:.1f}/{total_gib:.1f} GiB"))
        attrs = ["pid", "username", "cpu_percent", "memory_percent", "memory_info", "name"]
        processes = [process.info for process in psutil.process_iter(attrs)]
        self.query_one("#tasks", Static).update(Text(f"Tasks: {len(processes)} total"))
        top = sorted(processes, key=lambda info: info["cpu_percent"] or 0.0, reverse=True)[:TOP_PROCESSES]
        table = self.query_one(DataTable)
        table.clear()
        for info in top:
            rss_mib = info["memory_info"].rss / 2**20 if info["memory_info"] else 0.0
            table.add_row(
                str(info["pid"]), info["username"] or "?", f"{info['cpu_percent'] or 0.0:.1f}",
                f"{info['memory_percent'] or 0.0:.1f}", f"{rss_mib:.1f}", Text(info["name"] or ""),
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=1.0, help="refresh interval in seconds")
    MinimalHtop(parser.parse_args().interval).run()
