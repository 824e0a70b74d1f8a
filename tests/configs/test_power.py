"""Power done properly: leads per card, ATX units that do not share load, redundant server PSUs, wall circuits."""

from __future__ import annotations

import datetime as dt

from pth_top.configs.assemble import assemble
from pth_top.configs.parts import Part
from pth_top.configs.power import gpu_leads, gpus_per_unit, heat_line, power_limit_line, unit_loads
from pth_top.configs.recommend import _context, recommend
from pth_top.configs.rules import load_rules
from tests.configs.builders import answers

RULES = load_rules()


def build(catalog, gpu_id: str, **changes):
    ctx = _context(answers(**changes), catalog, RULES, {})
    return assemble(ctx, catalog.get(gpu_id))


def test_two_rtx_5090s_take_two_atx_units_that_do_not_share_load(catalog):
    # Issue 12 item 6: several ATX units were described as load-sharing.
    asm = build(catalog, "rtx-5090-32gb", scale__gpu_count=2, workload__preset="llama-7b", budget__amount=300000.0)
    psu, units = asm.chosen["psu"]
    assert units == 2 and psu["connectors_12vhpwr_count"] * units >= 2
    text = " | ".join(asm.reasons["psu"])
    assert "1 native 12V-2x6/12VHPWR lead" in text and "no adapters" in text
    assert "do not share load" in text and "each GPU takes all its leads from one unit" in text
    assert "dual-PSU workstation case" in text and "load-sharing" not in text
    assert asm.unsatisfied == []


def test_a_tower_never_gets_more_than_two_atx_units(catalog):
    # Review 12 finding 6: 4 x RTX 5090 got 4 ATX units in one tower; a tower holds two, and no catalog pair feeds
    # 4 x 575 W cards (no server chassis takes them either: its slot leads give 300 W), so the build says so.
    asm = build(catalog, "rtx-5090-32gb", scale__gpu_count=4, workload__preset="llama-7b", budget__amount=300000.0)
    assert asm.chosen["psu"][1] <= 2
    assert any("at most 2 ATX units" in line for line in asm.unsatisfied), asm.unsatisfied
    # ~2.4 kW from the wall: more than one 220 V / 10 A socket (2.2 kW), within one 16 A circuit (3.5 kW).
    three = build(catalog, "rtx-5090-32gb", scale__gpu_count=3, workload__preset="llama-7b", budget__amount=300000.0)
    assert 2200 < three.wall_w <= 3520
    text = " | ".join(three.reasons["psu"])
    assert "one 16 A socket on its own circuit" in text and "GB 1002" in text
    assert any("circuit" in warning for warning in three.warnings)


def test_four_rtx_4090s_run_on_two_atx_3_units_that_ride_their_peaks(catalog):
    # Audit YR2: a unit with two 4090s and the host was sized for 600 W x 2 x 1.1 + the host (~1,670 W) at its rating,
    # above any 1,600 W unit, so 4 owned 4090s got no build; an ATX 3 unit carries those 10-20 ms peaks over its rating.
    asm = build(catalog, "rtx-4090-24gb", scale__gpu_count=4, workload__preset="llama-7b", budget__amount=300000.0)
    psu, units = asm.chosen["psu"]
    assert units == 2 and psu["capacity_w"] == 1600 and psu["atx_version"] != "2.x", psu.id
    assert asm.unsatisfied == []
    assert any("1.2x an ATX 3 unit's rating" in line for line in asm.reasons["psu"])
    assert any("2 of the 4 cards take the 16-pin adapter in their box" in line for line in asm.warnings)
    # Sustained load still counts at 80 %: 4 x 575 W RTX 5090s do not fit two 1,600 W units (above).


def test_no_desktop_case_claim_without_a_source():
    # Review 12 finding 6: "above 1500 W a desktop case is not enough" had no source and contradicted the build.
    line = heat_line(2000.0, 8, RULES)
    assert "~2,000 W of heat" in line and "desktop case is not enough" not in line


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


def test_a_us_buyer_gets_120_volt_circuits_at_80_percent_and_an_eu_buyer_230_volt_schuko(catalog):
    # NEC 210.23(A)(1): a cord-connected load draws at most 80 % of its circuit, 1,440 W on a 15 A / 120 V one.
    one = build(catalog, "rtx-4090-24gb", workload__preset="gpt2-small", budget__amount=5000.0, budget__currency="USD")
    text = " | ".join(one.reasons["psu"])
    assert one.wall_w <= 1440 and "fits one 15 A (NEMA 5-15) socket" in text and "GB 1002" not in text
    assert "15 A (NEMA 5-15) at 120 V = 1,440 W" in text
    # ~1.6 kW: an ordinary 220 V socket in China carries it; a US 15 A circuit does not, a 20 A one (1,920 W) does.
    two = build(catalog, "rtx-5090-32gb", scale__gpu_count=2, workload__preset="llama-7b", budget__amount=40000.0,
                budget__currency="USD")
    assert 1440 < two.wall_w <= 1920 and two.unsatisfied == [], (two.wall_w, two.unsatisfied)
    text = " | ".join(two.reasons["psu"])
    assert "above one 15 A (NEMA 5-15) socket: needs one 20 A (NEMA 5-20) socket on its own circuit" in text
    assert any("NEMA 5-20" in warning for warning in two.warnings)
    china = build(catalog, "rtx-5090-32gb", scale__gpu_count=2, workload__preset="llama-7b", budget__amount=300000.0)
    assert any("fits one 10 A socket" in line for line in china.reasons["psu"])
    # EU: the same pair fits one Schuko socket, at the 10 A (2,300 W) it carries for hours, not its 16 A rating.
    eu = build(catalog, "rtx-5090-32gb", scale__gpu_count=2, workload__preset="llama-7b", budget__amount=40000.0,
               budget__currency="EUR")
    assert any("fits one 16 A Schuko socket" in line and "16 A Schuko at 230 V = 2,300 W" in line
               for line in eu.reasons["psu"])


def test_power_limit_is_suggested_only_where_its_cost_is_measured():
    card = Part(kind="gpu", id="card", name="Card", price_cny=1, price_as_of=RULES.currency.as_of, source="x",
                spec={"board_power_w": 350})
    # 200 W over a 2.2 kW socket at the wall, gold (0.90): 180 W DC over 4 GPUs = 45 W each -> 305 W (87 %).
    line = power_limit_line(card, 4, 2400, 2200, "gold", RULES)
    assert "nvidia-smi -pl 305" in line and "87%" in line and "pugetsystems.com" in line
    # Review 12 finding 6: below 80 % no measured throughput cost is known, so no limit is proposed at all.
    assert power_limit_line(card, 4, 3500, 2200, "gold", RULES) == ""
    assert power_limit_line(None, 0, 3000, 2200, "gold", RULES) == ""


def test_one_unit_with_two_native_leads_beats_two_cheaper_units(catalog):
    # 2 x RTX PRO 4000 (140 W, one 16-pin each): two 750 W units were ¥101 cheaper than one 1,300 W unit with two
    # 16-pin leads, but a second ATX unit needs a dual-PSU case and adapter. A native lead a card comes before the
    # adapter in the box (review ZS): an 850 W unit with one native lead and the adapter is not chosen.
    asm = build(catalog, "rtx-pro-4000-blackwell-24gb", scale__gpu_count=2, workload__preset="llama-7b",
                task__method="qlora", budget__amount=60000.0)
    psu, units = asm.chosen["psu"]
    assert units == 1 and psu["connectors_12vhpwr_count"] >= 2, (psu.id, units)
    assert any("the 2 native 16-pin (12V-2x6) leads the cards take" in line for line in asm.reasons["psu"])
    assert not any("adapter in their box" in line for line in asm.warnings)


def test_16_pin_cards_beyond_the_native_leads_take_the_boxed_adapter(catalog):
    # Audit ZK: 3 x RTX 4090 or 5090 were refused: no pair of ATX units in the catalog has three native 16-pin leads,
    # and every card was made to take one. NVIDIA's box has an adapter from four PCIe 8-pin leads.
    for card in ("rtx-4090-24gb", "rtx-5090-32gb"):
        asm = build(catalog, card, scale__gpu_count=3, workload__preset="llama-7b", task__method="qlora",
                    budget__amount=200000.0)
        psu, units = asm.chosen["psu"]
        assert not asm.unsatisfied and "system" not in asm.chosen, asm.unsatisfied
        # Two units each with native leads where their rating now carries the peaks (the 4090s); else the adapter.
        assert units == 2 and (psu["connectors_12vhpwr_count"] * units >= 3 or any(
            "the 16-pin adapter in their box" in line for line in asm.warnings)), psu.id


def test_outlets_sort_larger_circuits_and_every_market_has_a_supply():
    from pth_top.configs.mains import largest, mains_of, outlets

    us = mains_of(RULES.power.mains, "us")
    assert [round(outlet.continuous_w) for outlet in outlets(us)] == [1440, 1920, 5760]
    assert largest(us).name == "30 A (NEMA L6-30)"
    eu = outlets(mains_of(RULES.power.mains, "eu"))
    assert [round(outlet.continuous_w) for outlet in eu] == [2300, 7360]  # Schuko's 10 A for hours; CEE's 32 A
    assert {market: bool(outlets(mains_of(RULES.power.mains, market))) for market in ("cn", "us", "eu")} == {
        "cn": True, "us": True, "eu": True}


def test_the_compatibility_check_takes_the_boxed_adapter_where_one_comes(catalog):
    # Review ZS: a card with no native lead takes its boxed adapter (3 PCIe 8-pin for a 450 W RTX 4090); a data-centre
    # 16-pin card (the L20) comes with none, and a unit with no native lead feeds no 16-pin card.
    from pth_top.configs.compat import compatibility_blockers

    def power_blockers(gpu_id: str, psu_id: str, gpus: int, units: int) -> list[str]:
        chosen = {"gpu": (catalog.get(gpu_id), gpus), "psu": (catalog.get(psu_id), units)}
        return [line for line in compatibility_blockers(chosen) if line.startswith("power:")]

    assert power_blockers("rtx-4090-24gb", "seasonic-prime-px-1600-atx3", 3, 2) == []
    assert power_blockers("rtx-4090-24gb", "superflower-leadex-titanium-1600", 2, 2)  # no native lead
    assert "a data-centre card comes with no adapter" in power_blockers("l20-48gb", "seasonic-prime-px-1600-atx3",
                                                                        3, 2)[0]


def test_fewer_units_first_then_a_native_lead_a_card_and_a_tower_on_adapters_where_a_server_costs_more(catalog):
    # Review ZT: 3 x RTX PRO 4000 (140 W) got two 1,300 W units with a native lead each, where one unit feeds the
    # third card on the one-lead adapter in its box; 5 of them pinned went to a CNY 136,868 server over budget,
    # where the tower on adapters is within CNY 125,000. Six still go to the server: it costs less than that tower.
    three = build(catalog, "rtx-pro-4000-blackwell-24gb", scale__gpu_count=3, workload__preset="llama-7b",
                  task__method="qlora", budget__amount=60000.0)
    assert three.chosen["psu"][1] == 1 and any("1 separate PCIe 8-pin leads each" in line for line in three.warnings)
    job = answers("team_training", workload__preset="resnet50", data__kind="images", data__dataset_size_gb=100.0,
                  scale__gpu_count=5, budget__amount=125000.0)
    five = recommend(job, catalog, pins={"gpu": ("rtx-pro-4000-blackwell-24gb", 5)}, today=dt.date(2026, 11, 1))
    assert five.feasible and five.component("system") is None and five.component("psu") is not None, five.blockers
    six = recommend(job.with_value("scale", "gpu_count", 6).with_value("budget", "amount", 300000.0), catalog,
                    pins={"gpu": ("rtx-pro-4000-blackwell-24gb", 6)}, today=dt.date(2026, 11, 1))
    assert six.component("system") is not None
