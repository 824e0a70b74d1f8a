"""The Jobs view: one row per job (sensors/jobs.py), sortable; Enter lists the selected job's processes."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from pth_top.sensors.gpu_flags import STUCK, GpuFlag
from pth_top.sensors.model import JobSample, ProcessSample, Snapshot
from pth_top.sensors.na import is_na
from pth_top.text import printable
from pth_top.tui.format import format_bytes, format_duration, format_number
from pth_top.tui.panels.gpu_activity import flag_mark
from pth_top.tui.screens.table_sort import SortedByColumn, sort_bindings
from pth_top.widgets.key_bar import KeyBar
from pth_top.widgets.row_table import RowTable, TableColumn

JOULES_PER_KWH = 3.6e6
# (key, label, width); None takes the rest.
COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("job", "JOB", None), ("user", "USER", 9), ("gpus", "GPUS", 7), ("gpu_mem", "GPU MEM", 8),
    ("sm", "SM ACT", 7), ("power", "POWER", 7), ("time", "TIME", 9), ("energy", "ENERGY", 9), ("cost", "COST", 9),
)
NUMERIC = ("gpu_mem", "sm", "power", "time", "energy", "cost")


def job_key(job: JobSample) -> str:
    return f"{job.kind}:{job.job_id}"


def cost(job: JobSample, price_per_kwh: float | None) -> float | None:
    """What its energy cost at `price_per_kwh`; None without a price or an energy reading."""
    if price_per_kwh is None or is_na(job.energy_j):
        return None
    return job.energy_j / JOULES_PER_KWH * price_per_kwh


def job_flag(job: JobSample, flags: Mapping[int, GpuFlag]) -> GpuFlag | None:
    """The flag of the job's GPUs (the GPU rows' STUCK / SLOW): a stuck one first."""
    raised = [flags[index] for index in job.gpu_indices if index in flags]
    return min(raised, key=lambda flag: (flag.kind != STUCK, flag.gpu_index)) if raised else None


def format_energy(joules: object) -> str:
    if is_na(joules) or not isinstance(joules, (int, float)):
        return "N/A"
    return f"{joules / 3.6e6:.2f}kWh" if joules >= 3.6e5 else f"{joules / 1000:.1f}kJ"


class JobsScreen(SortedByColumn, Screen):
    """The app's snapshots reach it through `show` (MonitorScreen forwards them while it is on top)."""

    sort_keys = tuple(key for key, _label, _width in COLUMNS)

    AUTO_FOCUS = "#jobs-table"
    BINDINGS = [
        Binding("escape,j", "app.pop_screen", "Back", id="jobs.back"),
        Binding("enter", "show_processes", "Processes", id="jobs.processes"),
        *sort_bindings("jobs"),
    ]
    DEFAULT_CSS = """
    JobsScreen #jobs-title { height: 1; padding: 0 1; background: $panel; }
    JobsScreen #jobs-table { height: 1fr; }
    """

    def __init__(self, snapshot: Snapshot | None, price_per_kwh: float | None, currency: str,
                 flags: Mapping[int, GpuFlag] | None = None) -> None:
        super().__init__()
        self._snapshot = snapshot
        self._flags: Mapping[int, GpuFlag] = flags or {}
        self.price_per_kwh = price_per_kwh
        self.currency = currency
        self.sort_key = "gpu_mem"
        self.descending = True
        self._jobs: dict[str, JobSample] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="jobs-title")
        yield RowTable(id="jobs-table")
        yield KeyBar()

    def on_mount(self) -> None:
        self._set_columns()
        if self._snapshot is not None:
            self.show(self._snapshot)

    def _set_columns(self) -> None:
        columns = []
        for key, label, width in COLUMNS:
            arrow = ("▼" if self.descending else "▲") if key == self.sort_key else ""
            shown = f"COST {self.currency}" if key == "cost" else label
            columns.append(TableColumn(key, Text(shown + arrow), width))
        self.query_one(RowTable).set_columns(columns)

    def show(self, snapshot: Snapshot, flags: Mapping[int, GpuFlag] | None = None) -> None:
        """Draw a sample; `flags` (GPU index -> flag, from the Monitor's GPU panel) mark the jobs on those GPUs."""
        self._snapshot = snapshot
        if flags is not None:
            self._flags = flags
        jobs = sorted(snapshot.jobs, key=self._sort_value(snapshot.timestamp_s), reverse=self.descending)
        self._jobs = {job_key(job): job for job in jobs}
        price = "no price: set [jobs] energy_price_per_kwh" if self.price_per_kwh is None else (
            f"{self.price_per_kwh:g} {self.currency}/kWh")
        title = f"Jobs: {len(jobs)}   power and energy shared equally by the jobs on a GPU   {price}"
        self.query_one("#jobs-title", Static).update(Text(title, no_wrap=True, overflow="ellipsis"))
        at_s = snapshot.timestamp_s
        self.query_one(RowTable).sync_rows(list(self._jobs), lambda key: self._cells(self._jobs[key], at_s))

    def _sort_value(self, at_s: float) -> Callable[[JobSample], tuple]:
        def value(job: JobSample) -> tuple:
            numbers: dict[str, object] = {
                "gpu_mem": job.gpu_memory_used_bytes, "sm": job.sm_active_ratio, "power": job.power_draw_w,
                "time": job.running_time_s(at_s), "energy": job.energy_j, "cost": job.energy_j,
            }
            if self.sort_key in NUMERIC:
                number = numbers[self.sort_key]
                return (not is_na(number), 0.0 if is_na(number) else number, job_key(job))
            text = {"job": job_key(job), "user": job.user, "gpus": ",".join(map(str, job.gpu_indices))}
            return (text[self.sort_key], job_key(job))
        return value

    def _cells(self, job: JobSample, at_s: float) -> Sequence[Text]:
        spent = cost(job, self.price_per_kwh)
        energy = format_energy(job.energy_j)
        if job.energy_method == "power x time":
            energy += "~"
        sm = job.sm_active_ratio
        name = Text(printable(job_key(job)), no_wrap=True, overflow="ellipsis")
        flag = job_flag(job, self._flags)
        if flag is not None:
            # The mark first, so that a long job id cannot push it out of the column.
            word, style = flag_mark(flag)
            name = Text.assemble((word, style), " ", name, no_wrap=True, overflow="ellipsis")
        return (
            name,
            Text(printable(job.user), no_wrap=True, overflow="ellipsis"),
            Text(",".join(map(str, job.gpu_indices)) or "-", no_wrap=True, overflow="ellipsis"),
            Text(format_bytes(job.gpu_memory_used_bytes), justify="right"),
            Text("N/A" if is_na(sm) else f"{100 * sm:.0f}%", justify="right"),
            Text(format_number(job.power_draw_w, "W"), justify="right"),
            Text(format_duration(job.running_time_s(at_s)), justify="right"),
            Text(energy, justify="right"),
            Text("-" if spent is None else f"{spent:.2f}", justify="right"),
        )

    def resort(self) -> None:
        self._resort()

    def _resort(self) -> None:
        self._set_columns()
        if self._snapshot is not None:
            self.show(self._snapshot)

    def action_show_processes(self) -> None:
        key = self.query_one(RowTable).highlighted_key
        if key is None or self._snapshot is None or key not in self._jobs:
            self.notify("no job selected", severity="warning")
            return
        job = self._jobs[key]
        pids = set(job.pids)
        members = [process for process in self._snapshot.processes if process.pid in pids]
        self.app.push_screen(JobProcessesScreen(job, members, self._snapshot.timestamp_s))


class JobProcessesScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,q", "dismiss", "Close", id="job_processes.close")]
    DEFAULT_CSS = """
    JobProcessesScreen { align: center middle; }
    JobProcessesScreen > VerticalScroll {
        width: 96%; height: 90%; border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, job: JobSample, processes: list[ProcessSample], at_s: float) -> None:
        super().__init__()
        self.job = job
        self.processes = processes
        self.at_s = at_s

    def compose(self) -> ComposeResult:
        job = self.job
        title = f"{printable(job_key(job))}  {len(self.processes)} processes"
        if job.container:
            title += f"  {printable(job.container)}"
        if job.namespace:
            title += f"  namespace {printable(job.namespace)}"
        table = Table(title=Text(title), title_justify="left", box=None, padding=(0, 1, 0, 0), expand=True)
        for name, justify in (("PID", "right"), ("USER", "left"), ("GPUS", "left"), ("GPU MEM", "right"),
                              ("TIME", "right"), ("COMMAND", "left")):
            table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis",  # type: ignore[arg-type]
                             ratio=1 if name == "COMMAND" else None)
        for process in self.processes:
            table.add_row(*(Text(cell) for cell in (
                str(process.pid), printable(process.user), ",".join(map(str, process.gpu_indices)) or "-",
                format_bytes(process.gpu_memory_used_bytes), format_duration(process.running_time_s(self.at_s)),
                printable(process.command, limit=300),
            )))
        with VerticalScroll():
            yield Static(table)
