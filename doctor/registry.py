"""Every doctor check, and `run_all`, which runs them so that one crashing check cannot stop the rest."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Iterable

from pth_top.doctor.context import DoctorContext
from pth_top.doctor.model import Finding, Group, Verdict, could_not_run
from pth_top.doctor.needs import TORCH_NEEDS, checked_needs, resolve

# `function(context, **needs)`: one keyword argument per need the check declares.
CheckFunction = Callable[..., "Verdict | list[Verdict]"]


@dataclass(frozen=True)
class Check:
    """A named check: `function(context, **needs)` returns one verdict, or one per subject (e.g. per GPU).

    A need that is missing (no NVML, no torch probe) gives its verdict without calling `function`.
    """

    check_id: str
    title: str
    group: Group
    why: str
    function: CheckFunction
    needs_torch: bool = False
    needs: tuple[str, ...] = ()

    def run(self, context: DoctorContext) -> list[Finding]:
        try:
            given: dict[str, Any] | Verdict = resolve(context, self.needs)
            outcome = given if isinstance(given, Verdict) else self.function(context, **given)
            verdicts = outcome if isinstance(outcome, list) else [outcome]
        except Exception as error:  # a broken check becomes a finding, never a crash
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            verdicts = [could_not_run(f"{type(error).__name__}: {reason}")]
        return [Finding.from_verdict(self.check_id, self.title, self.group, self.why, v) for v in verdicts]


def doctor_check(
    check_id: str, title: str, group: Group, why: str, needs_torch: bool = False, needs: Iterable[str] = (),
) -> Callable[[CheckFunction], Check]:
    """Turn a function into a Check; `all_checks` finds it in its module. A need of the probe implies needs_torch."""
    declared = checked_needs(needs)

    def decorate(function: CheckFunction) -> Check:
        return Check(check_id, title, group, why, function, needs_torch or bool(TORCH_NEEDS & set(declared)), declared)

    return decorate


def checks_in(module: ModuleType) -> list[Check]:
    """The module's checks, in the order they are defined."""
    return [value for value in vars(module).values() if isinstance(value, Check)]


def all_checks() -> list[Check]:
    from pth_top.doctor import gpu_checks, gpu_state_checks, host_checks, torch_checks

    return [*checks_in(gpu_checks), *checks_in(gpu_state_checks), *checks_in(host_checks), *checks_in(torch_checks)]


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
