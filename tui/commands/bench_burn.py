"""`pth-top bench --burn DURATION` and `--accept`: the request they make, their live log and their reports."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING

from pth_top.text import printable
from pth_top.tui.commands import CliError

if TYPE_CHECKING:
    from pth_top.benches.client.accept import HealthWatch
    from pth_top.benches.client.runs import RunRecord
    from pth_top.benches.run_request import RunRequest

BURN_KERNELS = ("burn",)
ACCEPT_KERNELS = ("burn", "vram_test")


def default_device(args: argparse.Namespace) -> str:
    """--device when given; else every device for a burn or an acceptance, the CPU for the rest."""
    if args.device is not None:
        return args.device
    return "all" if args.burn is not None or args.accept else "cpu"


def burn_request(args: argparse.Namespace, request: RunRequest) -> RunRequest:
    """The request with the burn's (and the acceptance's) kernels and duration; CliError when --kernel clashes."""
    from pth_top.benches.client.accept import ACCEPT_BURN_S

    if not args.accept and request.burn_s is None:
        return request
    if request.kernels:
        raise CliError("--burn and --accept choose their own kernels; leave out --kernel")
    if args.accept:
        return dataclasses.replace(request, kernels=ACCEPT_KERNELS, burn_s=request.burn_s or ACCEPT_BURN_S)
    return dataclasses.replace(request, kernels=BURN_KERNELS)


def saved_report(record: RunRecord) -> list[str]:
    """A saved run's burn report and verdict lines (`--open`), rebuilt from the burn row; [] for other runs."""
    from pth_top.benches.client.burn import BurnLog

    burn_row = next((row for row in record.rows if row.get("kernel") == "burn"), None)
    details = burn_row.get("details") if burn_row else None
    if not isinstance(details, dict) or "burn_log" not in details:
        return []
    lines = ["", *BurnLog.from_json(details["burn_log"]).report_lines()]
    acceptance = details.get("acceptance")
    found = acceptance.get("verdicts") if isinstance(acceptance, dict) else None
    for verdict in found if isinstance(found, list) else ():
        if isinstance(verdict, dict):
            lines.append(f"{verdict.get('device')}  {verdict.get('name')}  {str(verdict.get('level')).upper()}")
            lines.extend(f"  {line}" for line in verdict.get("lines") or () if isinstance(line, str))
            reasons = [reason for reason in verdict.get("reasons") or () if isinstance(reason, str)]
            lines.append(f"  verdict {verdict.get('level')}: {'; '.join(reasons)}")
    return [printable(line, 600) for line in lines]


class BurnLogPrinter:
    """The burn's part of the CLI: a line per device and second on stderr, the report (and verdicts) at the end."""

    def __init__(self, accept: bool, burn_s: float) -> None:
        from pth_top.benches.client.accept import HealthWatch
        from pth_top.benches.client.burn import BurnLog

        self.log = BurnLog()
        self.burn_s = burn_s
        self.health: HealthWatch | None = HealthWatch() if accept else None
        self.failed = False

    def sample(self, fields: dict, write_line) -> None:
        write_line(self.log.add(fields).live_line())

    def start(self) -> None:
        if self.health is not None:
            self.health.start()

    def stop(self) -> None:
        if self.health is not None:
            self.health.stop()

    def partial_report(self) -> None:
        """Ctrl-C: the report of the seconds burnt so far (the child is already gone)."""
        print("\n".join(["cancelled: partial report", *self.log.report_lines()]), flush=True)

    def conclude(self, record: RunRecord) -> list[str]:
        """Fold the log (and verdicts) into the burn row's details for the saved run; the report's lines."""
        from pth_top.benches.client.accept import verdict_page, verdicts
        from pth_top.benches.client.burn import attach_burn_log

        lines = attach_burn_log(record, self.log)
        burn_row = next((row for row in record.rows if row.get("kernel") == "burn"), None)
        if self.health is not None:
            found = verdicts(record, self.log, self.health)
            self.failed = any(verdict.level == "fail" for verdict in found)
            lines += ["", *verdict_page(found, self.burn_s)]
            if burn_row is not None:
                burn_row.setdefault("details", {})["acceptance"] = {
                    "verdicts": [verdict.as_dict() for verdict in found], "health": self.health.to_json()}
        return [printable(line, 600) for line in lines]
