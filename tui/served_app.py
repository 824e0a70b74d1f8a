"""What `pth-top serve` runs for each browser tab: the dashboard (or fleet view) with read-only enforced.

textual-serve starts one of these per websocket with its web driver on stdin/stdout (no terminal).
Read-only is enforced here, in the app: kill refuses with a message, Bench and Wizard (which run
benchmarks and save files) refuse to open, the Doctor refuses its re-run under GPU load, h/i/c are
not saved, and processes show by name, not command line (arguments can carry secrets); `--allow-actions` lifts it.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from typing import Sequence

from pth_top.sensors.model import ProcessSample, Snapshot
from pth_top.tui.app import PthTopApp
from pth_top.tui.screens.doctor import DoctorScreen
from pth_top.tui.screens.monitor import MonitorScreen
from pth_top.tui.settings import DashboardSettings

READ_ONLY_NOTICE = "read-only browser view: {what} is off (the server was started without --allow-actions)"
# Modes whose actions change the machine or write files: benchmarks run on it, builds are saved.
ACTION_MODES = {"bench": "Bench", "wizard": "Wizard"}


def without_command_lines(snapshot: Snapshot) -> Snapshot:
    """The snapshot with each command line replaced by the process name: arguments can carry secrets."""
    processes = tuple(
        process if process.is_kernel_thread else replace(process, command=process.name or "?")
        for process in snapshot.processes
    )
    return replace(snapshot, processes=processes)


class ReadOnlyMonitorScreen(MonitorScreen):
    """The Monitor with every way to signal a process refused, h/i/c choices never saved, no command lines."""

    def _save_settings(self, settings: DashboardSettings) -> str | None:
        return None  # applied for this tab only: the settings file is the server user's, not the viewer's

    def take_snapshot(self, snapshot: Snapshot) -> None:
        super().take_snapshot(without_command_lines(snapshot))

    def action_kill(self) -> None:
        self.notify(READ_ONLY_NOTICE.format(what="kill"), severity="warning", markup=False)

    def _send_signal(self, process: ProcessSample, signal_number: int) -> None:
        self.notify(READ_ONLY_NOTICE.format(what="kill"), severity="error", markup=False)


# A read-only viewer's re-runs start a torch probe process each (~400 MB): at most one a minute per tab.
READ_ONLY_RERUN_INTERVAL_S = 60.0


class ReadOnlyDoctorScreen(DoctorScreen):
    """The Doctor, with the re-run that loads every GPU (`l`) refused and plain re-runs at most once a minute."""

    _last_run_s: float | None = None

    def action_rerun(self, load_seconds: float = 0) -> None:
        if load_seconds:
            self.notify(READ_ONLY_NOTICE.format(what="the re-run under GPU load"), severity="warning", markup=False)
            return
        now = time.monotonic()
        if self._last_run_s is not None and now - self._last_run_s < READ_ONLY_RERUN_INTERVAL_S:
            wait_s = READ_ONLY_RERUN_INTERVAL_S - (now - self._last_run_s)
            self.notify(f"read-only browser view: the checks re-run at most once a minute (again in {wait_s:.0f} s)",
                        severity="warning", markup=False)
            return
        self._last_run_s = now
        super().action_rerun()


class ServedApp(PthTopApp):
    """PthTopApp in a browser tab: alerts show as banners but are not delivered (each tab would send them again)."""

    DELIVERS_ALERTS = False


class ReadOnlyApp(ServedApp):
    """PthTopApp for an untrusted viewer: no kill, no Bench or Wizard, no GPU load (no benchmarks, no saved files)."""

    SCREENS = {"monitor": ReadOnlyMonitorScreen}
    MODES = {**PthTopApp.MODES, "doctor": ReadOnlyDoctorScreen}

    def switch_mode(self, mode: str):
        if mode in ACTION_MODES:
            self.notify(READ_ONLY_NOTICE.format(what=ACTION_MODES[mode]), severity="warning", markup=False)
            mode = self.current_mode
        return super().switch_mode(mode)


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    from pth_top.tui.commands.fleet import add_connection_arguments

    parser = argparse.ArgumentParser(prog="pth-top serve (child)")
    parser.add_argument("--allow-actions", action="store_true")
    parser.add_argument("--interval", type=float, default=1.0)
    add_connection_arguments(parser)
    return parser.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    if args.prometheus:
        from pth_top.tui.commands import CliError
        from pth_top.tui.commands.fleet import connection_from
        from pth_top.tui.screens.fleet import FleetApp

        try:
            connection = connection_from(args)
        except CliError as error:
            print(f"pth-top serve: {error}", file=sys.stderr)
            return 2
        FleetApp(connection, job=args.job, interval_s=max(args.interval, 1.0)).run()
        return 0
    from pth_top.tui.cli import start_dashboard

    start_dashboard(args.interval, ServedApp if args.allow_actions else ReadOnlyApp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
