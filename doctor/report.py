"""Doctor findings as a readable grouped text report or a versioned JSON document."""

from __future__ import annotations

import datetime
import textwrap
from typing import Any, Iterable, Sequence

from pth_top.doctor.model import Finding, Group, Status, summarise

REPORT_SCHEMA = "pth-top.doctor"
REPORT_SCHEMA_VERSION = 1
STATUS_SYMBOLS = {
    Status.PASS: "✔",
    Status.WARN: "!",
    Status.FAIL: "✘",
    Status.NOT_APPLICABLE: "-",
    Status.COULD_NOT_RUN: "?",
}
TITLE_WIDTH = 36


def short_title(finding: Finding) -> str:
    """The title plus the subject's short name ("Temperature [GPU 1]"); the full subject is in the detail."""
    if not finding.subject:
        return finding.title
    return f"{finding.title} [{finding.subject.split(' (')[0]}]"


def exit_code_for(findings: Iterable[Finding]) -> int:
    """1 when any check failed, else 0."""
    return 1 if any(finding.status is Status.FAIL for finding in findings) else 0


def summary_line(findings: Sequence[Finding]) -> str:
    counts = summarise(findings)
    shown = [(status, count) for status, count in counts.items() if count or status in ("pass", "warn", "fail")]
    return ", ".join(f"{count} {status}" for status, count in shown)


def findings_by_group(findings: Sequence[Finding]) -> list[tuple[Group, list[Finding]]]:
    grouped = [(group, [f for f in findings if f.group is group]) for group in Group]
    return [(group, members) for group, members in grouped if members]


def collapsible(members: Sequence[Finding]) -> bool:
    """True when a group is nothing but n/a findings for one reason (e.g. every GPU check without a driver)."""
    return (
        len(members) > 1
        and all(f.status is Status.NOT_APPLICABLE for f in members)
        and len({f.value for f in members}) == 1
    )


def _wrap(label: str, text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=width, initial_indent=f"      {label}: ", subsequent_indent=" " * (8 + len(label)))


def format_text(findings: Sequence[Finding], width: int = 100) -> str:
    lines = [f"pth-top doctor: {summary_line(findings)}", ""]
    for group, members in findings_by_group(findings):
        lines.append(group.value)
        if collapsible(members):
            lines.append(f"  - {len(members)} checks not applicable: {members[0].value}")
            lines.append("")
            continue
        for finding in members:
            lines.append(f"  {STATUS_SYMBOLS[finding.status]} {short_title(finding):<{TITLE_WIDTH}} {finding.value}")
            if finding.status in (Status.WARN, Status.FAIL):
                lines.extend(_wrap("why", finding.why, width))
                if finding.fix:
                    lines.extend(_wrap("fix", finding.fix, width))
        lines.append("")
    lines.append("Legend: ✔ pass  ! warn  ✘ fail  - not applicable  ? could not run")
    return "\n".join(lines)


def to_json_document(findings: Sequence[Finding], python: str | None, data_dir: str) -> dict[str, Any]:
    return {
        "schema": REPORT_SCHEMA,
        "schema_version": REPORT_SCHEMA_VERSION,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": python,
        "data_dir": data_dir,
        "exit_code": exit_code_for(findings),
        "summary": summarise(findings),
        "findings": [finding.to_json() for finding in findings],
    }
