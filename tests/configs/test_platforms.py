"""Platforms around the GPUs: CPU-only PCs, 3-8 GPU workstations and servers, edge storage, rules never broken quietly."""

from __future__ import annotations

from pathlib import Path

import pytest

from pth_top.configs.answers import Answers
from pth_top.configs.assemble import assemble
from pth_top.configs.assembly import Context
from pth_top.configs.compat import compatibility_blockers
from pth_top.configs.parts import load_catalog
from pth_top.configs.recommend import _context
from pth_top.configs.rules import load_rules
from pth_top.units import GIB


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(Path("/nonexistent-user-catalog"))


def context(catalog, pins=None, **changes) -> Context:
    answers = Answers()
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        answers = answers.with_value(section, key, value)
    return _context(answers, catalog, load_rules(), pins or {})


def test_cpu_only_build_has_no_gpu_and_holds_the_model_in_ram(catalog):
    ctx = context(catalog, workload__preset="llama-7b", task__mode="inference", task__precision="int8",
                  workload__batch_size=1, budget__amount=6000.0)
    asm = assemble(ctx, None)
    assert "gpu" not in asm.chosen
    assert {"cpu", "motherboard", "memory_kit", "storage", "cooler", "psu"} <= set(asm.chosen)
    kit, quantity = asm.chosen["memory_kit"]
    assert kit["capacity_gib"] * quantity >= ctx.memory.total_bytes / GIB + ctx.rules.ram.os_reserve_gib
    assert asm.unsatisfied == []
    assert asm.total_cny <= 6000
    assert "CPU-only" in asm.reasons["cpu"][0]
    assert not any("GPU(s) need" in line for line in asm.reasons["cpu"])
