"""What a check declares it needs (`@doctor_check(..., needs=("gpus",))`), handed to it as a keyword argument.

Each need is read once per run (context.memo) and, when it is missing, gives the verdict the check gives.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from pth_top.doctor.context import DoctorContext, ProbeOutcome
from pth_top.doctor.gpus import list_gpus, nvml_unavailable_reason
from pth_top.doctor.model import Verdict, could_not_run, not_applicable


def _gpus(context: DoctorContext) -> Any:
    """The GPUs NVML lists (maybe none); n/a without NVML."""
    gpus = list_gpus(context)
    return not_applicable(nvml_unavailable_reason(context)) if gpus is None else gpus


def probe_missing(probe: ProbeOutcome) -> Verdict | None:
    """n/a when the probe was skipped, could not run when it failed; None when it answered."""
    if probe.skipped:
        return not_applicable(probe.error or "torch checks skipped")
    if probe.data is None:
        return could_not_run(probe.error or "no torch probe")
    return None


def _probe(context: DoctorContext) -> Any:
    """The torch probe's JSON; n/a also when the probe says torch is unusable (torch.installed says why)."""
    probe = context.torch_probe()
    missing = probe_missing(probe)
    if missing is not None:
        return missing
    return not_applicable(probe.error) if probe.error else probe.data


def _probe_or_na(context: DoctorContext) -> Any:
    """The torch probe's JSON for a check about something else (the GPUs): n/a whenever there is none."""
    probe = context.torch_probe()
    if probe.data is None or probe.error:
        return not_applicable(probe.error or "no torch probe")
    return probe.data


NEEDS: dict[str, Callable[[DoctorContext], Any]] = {"gpus": _gpus, "probe": _probe, "probe_or_na": _probe_or_na}
# Needs that wait for the torch probe: their checks run last (see registry.run_all).
TORCH_NEEDS = frozenset({"probe", "probe_or_na"})


def checked_needs(needs: Iterable[str]) -> tuple[str, ...]:
    """`needs` as a tuple; ValueError naming an unknown one (a mistake in a registration)."""
    needs = tuple(needs)
    unknown = [need for need in needs if need not in NEEDS]
    if unknown:
        raise ValueError(f"unknown doctor check needs {unknown}; known: {', '.join(NEEDS)}")
    return needs


def resolve(context: DoctorContext, needs: tuple[str, ...]) -> dict[str, Any] | Verdict:
    """need -> its value, in declared order; the first missing need's verdict instead."""
    given: dict[str, Any] = {}
    for need in needs:
        value = NEEDS[need](context)
        if isinstance(value, Verdict):
            return value
        given[need] = value
    return given
