"""The doctor context for this machine: real NVML, /proc, /sys, and a torch probe started at once."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from pth_top.doctor.context import DoctorContext
from pth_top.doctor.probe_runner import PendingProbe, ProbeError

PROBE_TIMEOUT_S = 120.0


def _raiser(error: ProbeError) -> Callable[[], dict[str, Any]]:
    def raise_error() -> dict[str, Any]:
        raise error

    return raise_error


def live_context(
    python: str | None = None,
    data_dir: Path | None = None,
    with_torch: bool = True,
    load_seconds: float = 0,
) -> DoctorContext:
    """A context for this machine; the torch probe starts now and runs while the other checks do."""
    chosen_python = python or sys.executable
    probe_source: Callable[[], dict[str, Any]] | None = None
    cancel_probe: Callable[[], None] | None = None
    if with_torch:
        try:
            pending = PendingProbe(chosen_python, PROBE_TIMEOUT_S, load_seconds)
            probe_source, cancel_probe = pending.result, pending.cancel
        except ProbeError as error:
            probe_source = _raiser(error)
    context = DoctorContext(
        probe_source=probe_source, cancel_probe=cancel_probe, python=chosen_python, python_chosen=python is not None,
    )
    if data_dir is not None:
        context.data_dir = data_dir
        context.data_dir_chosen = True
    return context
