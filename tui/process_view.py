"""Which processes the table shows, in which order, and their cells (pure, tested without Textual)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Callable, Iterable, NamedTuple, Sequence

from rich.text import Text

from pth_top.sensors.model import ProcessSample
from pth_top.sensors.na import is_na
from pth_top.text import printable
from pth_top.tui.format import format_bytes, format_duration, format_percent

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

COMMAND_MAX_CHARS = 240
STATE_LETTERS = {
    "running": "R", "sleeping": "S", "disk-sleep": "D", "stopped": "T", "tracing-stop": "t",
    "zombie": "Z", "dead": "X", "idle": "I", "waking": "W", "parked": "P",
}


@dataclass(frozen=True, slots=True)
class ProcessColumn:
    key: str
    label: str
    width: int | None
    sort_value: Callable[[ProcessSample], SupportsRichComparison]
    descending_first: bool = True


PID_OF = attrgetter("pid")


def _number(value: float | None) -> float:
    return -math.inf if is_na(value) else float(value)


COLUMNS: tuple[ProcessColumn, ...] = (
    ProcessColumn("pid", "PID", 7, PID_OF, descending_first=False),
    ProcessColumn("user", "USER", 8, lambda p: p.user.lower(), descending_first=False),
    ProcessColumn("cpu", "CPU%", 5, attrgetter("cpu_percent")),
    ProcessColumn("mem", "MEM%", 5, attrgetter("memory_percent")),
    ProcessColumn("rss", "RES", 6, attrgetter("rss_bytes")),
    ProcessColumn("gpu_mem", "GPUMEM", 6, lambda p: _number(p.gpu_memory_used_bytes)),
    ProcessColumn("gpu_util", "SM%", 4, lambda p: _number(p.gpu_sm_util_percent)),
    ProcessColumn("gpu", "GPU", 3, lambda p: p.gpu_indices or (math.inf,), descending_first=False),
    ProcessColumn("state", "S", 1, attrgetter("state"), descending_first=False),
    ProcessColumn("time", "TIME+", 9, attrgetter("cpu_time_s")),
    # Blank (no container) sorts last in either direction's first press.
    ProcessColumn("container", "CONTAINER", 12, lambda p: p.container or "\uffff", descending_first=False),
    ProcessColumn("command", "Command", None, lambda p: p.command.lower(), descending_first=False),
)
COLUMN_BY_KEY = {column.key: column for column in COLUMNS}
GPU_COLUMN_KEYS = frozenset({"gpu_mem", "gpu"})


def visible_columns(
    show_gpu_columns: bool, show_gpu_util: bool = False, show_container: bool = False
) -> tuple[ProcessColumn, ...]:
    """The columns worth showing: GPU ones with GPUs, SM% where a GPU reports it, CONTAINER when one is seen."""
    hidden: set[str] = set()
    if not show_gpu_columns:
        hidden |= GPU_COLUMN_KEYS
    if not (show_gpu_columns and show_gpu_util):
        hidden.add("gpu_util")
    if not show_container:
        hidden.add("container")
    return tuple(column for column in COLUMNS if column.key not in hidden)


def container_label(container: str) -> str:
    """A cgroup container/job as the table shows it: the Docker id bare, "pod <uid>", "job <id>"."""
    kind, _, identifier = container.partition(":")
    return {"docker": identifier, "pod": f"pod {identifier}", "slurm": f"job {identifier}"}.get(kind, container)


@dataclass(frozen=True, slots=True)
class ProcessView:
    """How the user wants the table: sort, filter, tree mode, kernel threads, GPU-only, cursor following."""

    sort_column: str = "cpu"
    descending: bool = True
    filter_text: str = ""
    tree: bool = False
    # Kernel threads ([kworker/0:1] and the like) are hidden by default, as in htop.
    show_kernel_threads: bool = False
    gpu_only: bool = False
    # htop's "follow": the cursor stays on its process as rows move; otherwise on its row position.
    follow: bool = False

    def sorted_by(self, column_key: str) -> "ProcessView":
        """Sort by a column; choosing the current column again inverts the order."""
        if column_key == self.sort_column:
            return replace(self, descending=not self.descending)
        return replace(self, sort_column=column_key, descending=COLUMN_BY_KEY[column_key].descending_first)

    def cycled(self, step: int, columns: Sequence[ProcessColumn] = COLUMNS) -> "ProcessView":
        """Sort by the next (step 1) or previous (-1) of `columns`, the ones shown."""
        keys = [column.key for column in columns]
        if self.sort_column in keys:
            next_key = keys[(keys.index(self.sort_column) + step) % len(keys)]
        else:
            next_key = keys[0] if step > 0 else keys[-1]
        return replace(self, sort_column=next_key, descending=COLUMN_BY_KEY[next_key].descending_first)


class ProcessLine(NamedTuple):
    """One table line: a process and, in tree view, the branch drawn before its command."""

    process: ProcessSample
    tree_prefix: str = ""


def matches_filter(process: ProcessSample, filter_text: str) -> bool:
    if not filter_text:
        return True
    needle = filter_text.lower()
    command, user = process.command, process.user
    if "\\" in needle:
        # The table shows control characters as escapes (\x1b): a filter copied from the screen matches too.
        command, user = printable(command), printable(user)
    return needle in command.lower() or needle in user.lower() or needle == str(process.pid)


def visible_lines(processes: Iterable[ProcessSample], view: ProcessView) -> list[ProcessLine]:
    """Filter, then sort (flat) or nest children under parents (tree, siblings sorted)."""
    shown = [
        process for process in processes
        if (view.show_kernel_threads or not process.is_kernel_thread)
        and (not view.gpu_only or process.has_gpu_context)
        and matches_filter(process, view.filter_text)
    ]
    column = COLUMN_BY_KEY[view.sort_column]

    def ordered(items: Sequence[ProcessSample]) -> list[ProcessSample]:
        # Ties keep PID order so rows do not jitter between refreshes.
        by_pid = sorted(items, key=PID_OF)
        return sorted(by_pid, key=column.sort_value, reverse=view.descending)

    if not view.tree:
        return [ProcessLine(process) for process in ordered(shown)]
    pids = {process.pid for process in shown}
    children: dict[int, list[ProcessSample]] = {}
    roots = []
    for process in shown:
        if process.ppid in pids and process.ppid != process.pid:
            children.setdefault(process.ppid, []).append(process)
        else:
            roots.append(process)
    lines: list[ProcessLine] = []
    stack: list[tuple[ProcessSample, str, str]] = [
        (root, "", "") for root in reversed(ordered(roots))
    ]
    visited: set[int] = set()
    while stack:
        process, prefix, child_indent = stack.pop()
        if process.pid in visited:
            continue
        visited.add(process.pid)
        lines.append(ProcessLine(process, prefix))
        kids = ordered(children.get(process.pid, []))
        for position, child in reversed(list(enumerate(kids))):
            last = position == len(kids) - 1
            stack.append((child, child_indent + ("└─ " if last else "├─ "), child_indent + ("   " if last else "│  ")))
    return lines


def process_cells(line: ProcessLine, columns: Sequence[ProcessColumn] = COLUMNS) -> tuple[Text, ...]:
    """The table cells for one process, in `columns` order; GPU processes are highlighted.

    Names and users are any local user's text: made printable here, so no escape sequence reaches the terminal.
    """
    process = line.process
    gpu_style = "bold magenta" if process.has_gpu_context else ""
    cpu = process.cpu_percent
    cpu_style = "bold red" if cpu >= 90 else ("yellow" if cpu >= 50 else "")
    command = Text(line.tree_prefix, style="dim")
    command.append(printable(process.command[:COMMAND_MAX_CHARS]), style="bold" if process.has_gpu_context else "")
    cells = {
        "pid": Text(str(process.pid), style=gpu_style, justify="right"),
        "user": Text(printable(process.user[:8])),
        "cpu": Text(f"{cpu:.1f}", style=cpu_style, justify="right"),
        "mem": Text(f"{process.memory_percent:.1f}", justify="right"),
        "rss": Text(format_bytes(process.rss_bytes), justify="right"),
        "gpu_mem": Text(
            format_bytes(process.gpu_memory_used_bytes) if process.has_gpu_context else "",
            style=gpu_style,
            justify="right",
        ),
        "gpu_util": Text(
            format_percent(process.gpu_sm_util_percent).removesuffix("%") if process.has_gpu_context else "",
            style=gpu_style, justify="right",
        ),
        "gpu": Text(",".join(str(index) for index in process.gpu_indices), style=gpu_style),
        "state": Text(
            STATE_LETTERS.get(process.state, printable(process.state[:1])),
            style="green" if process.state == "running" else "",
        ),
        "time": Text(format_duration(process.cpu_time_s), justify="right"),
        "container": Text(printable(container_label(process.container)), style="cyan"),
        "command": command,
    }
    return tuple(cells[column.key] for column in columns)


def table_rows(
    processes: Iterable[ProcessSample], view: ProcessView, columns: Sequence[ProcessColumn] = COLUMNS
) -> list[tuple[str, tuple[Text, ...]]]:
    return [(str(line.process.pid), process_cells(line, columns)) for line in visible_lines(processes, view)]
