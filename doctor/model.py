"""The common result type of every doctor check."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable


class Status(str, Enum):
    """How a check came out; `value` is what the JSON report carries."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    NOT_APPLICABLE = "n/a"
    COULD_NOT_RUN = "could not run"


class Group(str, Enum):
    """Where a finding is listed in the report and on the screen."""

    GPU = "GPU & driver"
    HOST = "Host"
    TORCH = "Torch"


@dataclass(frozen=True)
class Verdict:
    """What a check function returns: one outcome, optionally about one subject (e.g. "GPU 0").

    `why` defaults to the check's own explanation; set it when this outcome needs a different one.
    """

    status: Status
    value: str
    fix: str = ""
    subject: str = ""
    why: str = ""


@dataclass(frozen=True)
class Finding:
    """A verdict labelled with the check that produced it."""

    check_id: str
    title: str
    group: Group
    status: Status
    value: str
    why: str
    fix: str = ""
    subject: str = ""

    @classmethod
    def from_verdict(cls, check_id: str, title: str, group: Group, why: str, verdict: Verdict) -> "Finding":
        return cls(
            check_id=check_id, title=title, group=group, status=verdict.status, value=verdict.value,
            why=verdict.why or why, fix=verdict.fix, subject=verdict.subject,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check_id,
            "title": self.title,
            "group": self.group.value,
            "subject": self.subject or None,
            "status": self.status.value,
            "value": self.value,
            "why": self.why,
            "fix": self.fix or None,
        }


def passed(value: str, subject: str = "") -> Verdict:
    return Verdict(Status.PASS, value, "", subject)


def warned(value: str, fix: str, subject: str = "") -> Verdict:
    return Verdict(Status.WARN, value, fix, subject)


def failed(value: str, fix: str, subject: str = "") -> Verdict:
    return Verdict(Status.FAIL, value, fix, subject)


def not_applicable(reason: str, subject: str = "") -> Verdict:
    return Verdict(Status.NOT_APPLICABLE, reason, "", subject)


def could_not_run(reason: str, subject: str = "") -> Verdict:
    return Verdict(Status.COULD_NOT_RUN, f"could not run: {reason}", "", subject)


def summarise(findings: Iterable[Finding]) -> dict[str, int]:
    """Count of findings per status value, every status present (zero when none)."""
    counts = {status.value: 0 for status in Status}
    for finding in findings:
        counts[finding.status.value] += 1
    return counts
