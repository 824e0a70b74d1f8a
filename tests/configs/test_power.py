"""Power done properly: leads per card, ATX units that do not share load, redundant server PSUs, wall circuits."""

from __future__ import annotations

from pathlib import Path

import pytest

from pth_top.configs.answers import Answers
from pth_top.configs.assemble import assemble
from pth_top.configs.parts import Part, load_catalog
from pth_top.configs.power import gpu_leads, gpus_per_unit, power_limit_line, unit_loads
from pth_top.configs.recommend import _context
from pth_top.configs.rules import load_rules

RULES = load_rules()


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(Path("/nonexistent-user-catalog"))


def build(catalog, gpu_id: str, **changes):
    answers = Answers()
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        answers = answers.with_value(section, key, value)
    ctx = _context(answers, catalog, RULES, {})
    return assemble(ctx, catalog.get(gpu_id))


def test_four_rtx_5090s_name_their_leads_the_atx_units_and_the_circuit(catalog):
    # Issue 12 item 6: 4 x RTX 5090 got 3 x 1600 W ATX units with 3 native 16-pin leads, described as load-sharing.
    asm = build(catalog, "rtx-5090-32gb", scale__gpu_count=4, workload__preset="llama-7b", budget__amount=300000.0)
    psu, units = asm.chosen["psu"]
    assert psu["connectors_12vhpwr_count"] * units >= 4
    text = " | ".join(asm.reasons["psu"])
    assert "1 native 12V-2x6/12VHPWR lead" in text and "no adapters" in text
    assert "do not share load" in text and "each GPU takes all its leads from one unit" in text
    assert "load-sharing" not in text
    # ~3 kW from the wall: more than one 220 V / 10 A socket (2.2 kW), within one 16 A circuit (3.5 kW).
    assert 2200 < asm.wall_w <= 3520
    assert "16 A socket on its own 16 A circuit" in text and "GB 1002" in text
    assert any("circuit" in warning for warning in asm.warnings)
    assert asm.unsatisfied == []


def test_each_atx_unit_carries_whole_gpus_and_enough_native_leads(catalog):
    rtx5090 = catalog.get("rtx-5090-32gb")
    assert gpus_per_unit(4, 3) == [1, 1, 2]  # the first unit (board and CPU too) gets the fewest
    loads = unit_loads(rtx5090, 4, 2, host_w=400.0, single_required_w=0.0, rules=RULES)
    assert [load.gpu_count for load in loads] == [2, 2]
    assert loads[0].sustained_w == 2 * 575 + 400 and loads[1].sustained_w == 2 * 575
    assert loads[0].required_w >= loads[0].sustained_w / RULES.power.psu_max_load_fraction
    assert gpu_leads(rtx5090).native_16pin_count == 1
    assert gpu_leads(catalog.get("rtx-3090-24gb")).pcie_8pin_count == 2
    assert gpu_leads(catalog.get("a100-80gb-pcie")).pcie_8pin_count == 2  # CPU 8-pin input via NVIDIA's adapter


def test_a_single_gpu_pc_fits_one_ten_amp_socket(catalog):
    asm = build(catalog, "rtx-4090-24gb", workload__preset="gpt2-small", budget__amount=30000.0)
    assert asm.chosen["psu"][1] == 1
    assert any("fits one 10 A socket" in line for line in asm.reasons["psu"])
    assert not any("circuit" in warning for warning in asm.warnings)


def test_power_limit_is_suggested_only_where_its_cost_is_measured():
    card = Part(kind="gpu", id="card", name="Card", price_cny=1, price_as_of=RULES.currency.as_of, source="x",
                spec={"board_power_w": 350})
    # 200 W over a 2.2 kW socket at the wall, gold (0.90): 180 W DC over 4 GPUs = 45 W each -> 305 W (87 %).
    line = power_limit_line(card, 4, 2400, 2200, "gold", RULES)
    assert "nvidia-smi -pl 305" in line and "87%" in line and "pugetsystems.com" in line
    far = power_limit_line(card, 4, 3500, 2200, "gold", RULES)
    assert "nvidia-smi" not in far and "unmeasured" in far
    assert power_limit_line(None, 0, 3000, 2200, "gold", RULES) == ""
