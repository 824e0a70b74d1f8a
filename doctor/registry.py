"""Every doctor check, and `run_all`, which runs them so that one crashing check cannot stop the rest."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Iterable

from pth_top.doctor.context import DoctorContext
from pth_top.doctor.model import Finding, Group, Verdict, could_not_run

CheckFunction = Callable[[DoctorContext], "Verdict | list[Verdict]"]


@dataclass(frozen=True)
class Check:
    """A named check: `function(context)` returns one verdict, or one per subject (e.g. per GPU)."""

    check_id: str
    title: str
    group: Group
    why: str
    function: CheckFunction
    needs_torch: bool = False

    def run(self, context: DoctorContext) -> list[Finding]:
        try:
            outcome = self.function(context)
            verdicts = outcome if isinstance(outcome, list) else [outcome]
        except Exception as error:  # a broken check becomes a finding, never a crash
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            verdicts = [could_not_run(f"{type(error).__name__}: {reason}")]
        return [Finding.from_verdict(self.check_id, self.title, self.group, self.why, v) for v in verdicts]


def doctor_check(
    check_id: str, title: str, group: Group, why: str, needs_torch: bool = False,
) -> Callable[[CheckFunction], Check]:
    """Turn a function into a Check; `all_checks` finds it in its module."""

    def decorate(function: CheckFunction) -> Check:
        return Check(check_id, title, group, why, function, needs_torch)

    return decorate


def checks_in(module: ModuleType) -> list[Check]:
    """The module's checks, in the order they are defined."""
    return [value for value in vars(module).values() if isinstance(value, Check)]


def all_checks() -> list[Check]:
    from pth_top.doctor import gpu_checks, host_checks, torch_checks

    return [*checks_in(gpu_checks), *checks_in(host_checks), *checks_in(torch_checks)]


def run_all(
    context: DoctorContext,
    checks: Iterable[Check] | None = None,
    on_finding: Callable[[Finding], None] | None = None,
) -> list[Finding]:
    """Run every check and return the findings in registry order.

    Checks that need the torch probe run last, so a probe started in the background overlaps the rest.
    """
    ordered = list(all_checks() if checks is None else checks)
    results: dict[int, list[Finding]] = {}
    for position in sorted(range(len(ordered)), key=lambda index: ordered[index].needs_torch):
        results[position] = ordered[position].run(context)
        if on_finding is not None:
            for finding in results[position]:
                on_finding(finding)
    return [finding for position in range(len(ordered)) for finding in results[position]]
