"""Helpers for the benchmark tests: run kernels in-process at tiny sizes and collect their events.

Only tests that need torch skip without it: they ask for the `torch` fixture (directly, through
`run_kernels`, or with `@pytest.mark.usefixtures("torch")` when they start a real child in this interpreter).
"""

from __future__ import annotations

import pytest

from pth_top.benches.catalog import KERNELS_BY_NAME, KernelSpec
from pth_top.benches.child.runner import plan, run_suite
from pth_top.benches.protocol import decode_line, encode_event

TINY_SCALE = 0.01
TINY_TIME_CAP_S = 0.05


@pytest.fixture
def torch():
    """torch, or a skip where this interpreter has none (the benchmark child needs it, the rest does not)."""
    return pytest.importorskip("torch")


@pytest.fixture
def cli(monkeypatch):
    """`pth-top`'s main with only the bench command loaded."""
    from pth_top.tui import cli as cli_module

    monkeypatch.setattr(cli_module, "COMMAND_MODULES", ("pth_top.tui.commands.bench",))
    return cli_module.main


def run_in_process(specs: list[KernelSpec], tmp_path, devices=("cpu",)) -> tuple[int, list]:
    events = []

    def emit(kind: str, **fields) -> None:
        events.append(decode_line(encode_event(kind, **fields)))  # through the wire format

    options = {"disk_dir": str(tmp_path), "disk_size_mib": 8, "cpu_memory_budget_mib": 16}
    code = run_suite(plan(specs, list(devices)), emit, scale=TINY_SCALE, time_cap_s=TINY_TIME_CAP_S,
                     options=options, devices=list(devices))
    return code, events


@pytest.fixture
def run_kernels(tmp_path, torch):
    def run(*names: str, devices=("cpu",)):
        return run_in_process([KERNELS_BY_NAME[name] for name in names], tmp_path, devices)
    return run
