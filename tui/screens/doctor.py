"""The Doctor screen: setup findings grouped and coloured, the selected one explained.

`r` re-runs the checks, `l` re-runs them with the GPUs under load (for the PCIe link check).
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pth_top.doctor.context import DoctorContext
from pth_top.doctor.model import Finding, Status
from pth_top.doctor.report import STATUS_SYMBOLS, collapsible, findings_by_group, short_title, summary_line
from pth_top.widgets.key_bar import KeyBar

STATUS_STYLES = {
    Status.PASS: "green",
    Status.WARN: "yellow",
    Status.FAIL: "bold red",
    Status.NOT_APPLICABLE: "dim",
    Status.COULD_NOT_RUN: "magenta",
}
TITLE_WIDTH = 28
LOAD_SECONDS = 5.0


def _live_context(load_seconds: float = 0) -> DoctorContext:
    from pth_top.doctor.live import live_context

    return live_context(load_seconds=load_seconds)


def finding_row(finding: Finding) -> Text:
    """One list line: status symbol, title (and subject), measured value; never wraps."""
    title = short_title(finding)
    if len(title) > TITLE_WIDTH:
        title = title[: TITLE_WIDTH - 1] + "…"
    row = Text(no_wrap=True, overflow="ellipsis")
    row.append(f"{STATUS_SYMBOLS[finding.status]} ", style=STATUS_STYLES[finding.status])
    row.append(f"{title:<{TITLE_WIDTH}} ")
    row.append(finding.value, style="dim" if finding.status is Status.NOT_APPLICABLE else "")
    return row


def collapsed_detail(members: list[Finding]) -> Text:
    detail = Text()
    detail.append(members[0].group.value, style="bold")
    detail.append("  N/A", style=STATUS_STYLES[Status.NOT_APPLICABLE])
    detail.append(f"\n{members[0].value}\n")
    detail.append("Checks: ", style="bold")
    detail.append(", ".join(finding.title for finding in members))
    return detail


def finding_detail(finding: Finding) -> Text:
    detail = Text()
    detail.append(finding.title, style="bold")
    if finding.subject:
        detail.append(f" [{finding.subject}]")
    detail.append("  ")
    detail.append(finding.status.value.upper(), style=STATUS_STYLES[finding.status])
    detail.append(f"\n{finding.value}\n")
    detail.append("Why: ", style="bold")
    detail.append(finding.why)
    if finding.fix:
        detail.append("\nFix: ", style="bold")
        detail.append(finding.fix)
    return detail


class DoctorScreen(Screen):
    """Runs every doctor check in a thread worker and lists the findings."""

    DEFAULT_CSS = """
    DoctorScreen { layout: vertical; }
    DoctorScreen #doctor-status { height: 1; padding: 0 1; background: $panel; }
    DoctorScreen #doctor-findings { height: 1fr; border: none; text-wrap: nowrap; text-overflow: ellipsis; }
    DoctorScreen #doctor-detail-box { height: 9; border-top: solid $primary; }
    DoctorScreen #doctor-detail { padding: 0 1; }
    """
    BINDINGS = [
        Binding("r", "rerun", "Re-run checks", id="doctor.rerun"),
        Binding("l", f"rerun({LOAD_SECONDS:g})", "Re-run under GPU load", id="doctor.rerun_loaded"),
        Binding("escape", "back", "Monitor", id="doctor.back"),
    ]

    class ChecksFinished(Message):
        def __init__(self, run_number: int, findings: tuple[Finding, ...], gpu_count: int) -> None:
            super().__init__()
            self.run_number = run_number
            self.findings = findings
            self.gpu_count = gpu_count

    class ChecksStarted(Message):
        """The worker built its context (and started the probe); the screen keeps it to cancel on close."""

        def __init__(self, run_number: int, context: DoctorContext) -> None:
            super().__init__()
            self.run_number = run_number
            self.context = context

    class ChecksFailed(Message):
        def __init__(self, run_number: int, reason: str) -> None:
            super().__init__()
            self.run_number = run_number
            self.reason = reason

    def __init__(self, context_factory: Callable[[float], DoctorContext] | None = None) -> None:
        """`context_factory(load_seconds)` builds the context; the default looks at this machine."""
        super().__init__()
        self._context_factory = context_factory or _live_context
        self._run_number = 0
        self.findings: tuple[Finding, ...] = ()
        self._collapsed: dict[str, list[Finding]] = {}
        self.running = False
        self._running_context: DoctorContext | None = None
        # Until a run has listed the GPUs, loading them is not offered.
        self.gpu_count = 0

    def compose(self) -> ComposeResult:
        yield Static("", id="doctor-status", markup=False)
        yield OptionList(id="doctor-findings")
        with VerticalScroll(id="doctor-detail-box"):
            yield Static("", id="doctor-detail", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        self.action_rerun()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Loading the GPUs is offered only where a run has found some."""
        if action == "rerun" and parameters and parameters[0] and not self.gpu_count:
            return False
        return True

    def action_rerun(self, load_seconds: float = 0) -> None:
        if self.running:
            return
        self.running = True
        self._run_number += 1
        waiting = f"loading the GPUs for {load_seconds:g} s" if load_seconds else "the torch probe takes a few seconds"
        self.query_one("#doctor-status", Static).update(f"Running checks… ({waiting})")
        self.run_checks(self._run_number, load_seconds)

    def action_back(self) -> None:
        self.app.switch_mode("monitor")

    def on_unmount(self) -> None:
        if self._running_context is not None:
            self._running_context.cancel()

    @work(thread=True, exclusive=True, exit_on_error=False, group="doctor", name="doctor-checks")
    def run_checks(self, run_number: int, load_seconds: float) -> None:
        """Build the context (which starts the torch probe subprocess), run every check, post the result."""
        from pth_top.doctor.gpus import list_gpus
        from pth_top.doctor.registry import run_all

        try:
            context = self._context_factory(load_seconds)
            if not self.post_message(self.ChecksStarted(run_number, context)):
                context.cancel()  # the screen closed while the probe started: nobody will cancel it later
                context.nvml.shutdown()
                return
            try:
                findings = run_all(context)
                gpu_count = len(list_gpus(context) or ())
            finally:
                context.nvml.shutdown()
        except Exception as error:  # a broken context must not kill the dashboard
            self.post_message(self.ChecksFailed(run_number, f"{type(error).__name__}: {error}"))
            return
        self.post_message(self.ChecksFinished(run_number, tuple(findings), gpu_count))

    @on(ChecksStarted)
    def remember_context(self, message: ChecksStarted) -> None:
        if message.run_number == self._run_number and self.running:
            self._running_context = message.context

    @on(ChecksFinished)
    def show_findings(self, message: ChecksFinished) -> None:
        if message.run_number != self._run_number:
            return
        self.running = False
        self._running_context = None
        self.gpu_count = message.gpu_count
        self.refresh_bindings()
        option_list = self.query_one("#doctor-findings", OptionList)
        previous = option_list.highlighted_option.id if option_list.highlighted_option else None
        self.findings = message.findings
        options: list[Option] = []
        self._collapsed = {}
        for group, members in findings_by_group(self.findings):
            options.append(Option(Text(group.value, style="bold underline"), disabled=True))
            if collapsible(members):
                option_id = f"group:{group.name}"
                self._collapsed[option_id] = members
                row = Text(f"- {len(members)} checks not applicable: {members[0].value}", style="dim")
                options.append(Option(row, id=option_id))
                continue
            for index, finding in enumerate(self.findings):
                if finding.group is group:
                    options.append(Option(finding_row(finding), id=str(index)))
        option_list.clear_options()
        option_list.add_options(options)
        ids = [option.id for option in options if option.id is not None]
        first_problem = next(
            (str(i) for i, f in enumerate(self.findings) if f.status in (Status.FAIL, Status.WARN)), None,
        )
        target = previous if previous in ids else first_problem or (ids[0] if ids else None)
        if target is not None:
            option_list.highlighted = option_list.get_option_index(target)
        load_hint = "  l: under GPU load" if self.gpu_count else ""
        self.query_one("#doctor-status", Static).update(f"{summary_line(self.findings)}   r: re-run{load_hint}")

    @on(ChecksFailed)
    def show_failure(self, message: ChecksFailed) -> None:
        if message.run_number != self._run_number:
            return
        self.running = False
        self._running_context = None
        self.query_one("#doctor-status", Static).update(f"Checks could not run: {message.reason}   r: re-run")

    @on(OptionList.OptionHighlighted, "#doctor-findings")
    def explain_finding(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is None:
            return
        detail = self.query_one("#doctor-detail", Static)
        if event.option.id in self._collapsed:
            detail.update(collapsed_detail(self._collapsed[event.option.id]))
            return
        finding = self.findings[int(event.option.id)]
        detail.update(finding_detail(finding))
