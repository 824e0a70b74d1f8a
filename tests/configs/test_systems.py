"""Server units for 5-8 GPUs: PCIe cards in a barebone, SXM GPUs as a whole HGX/DGX system (issue 12, platforms).

Catalog figures come from configs/catalog/systems.toml, each with its source there (Gigabyte G292-Z20 rev A00: 8
double-width slots, 300 W lead per slot, 2 x 2,200 W PSUs 2+0; DGX B200: 6 x 3.3 kW, 14.3 kW; HGX H200 8-GPU
server: CNY 1.5 million in China, January 2026).
"""

from __future__ import annotations

from pth_top.configs.assemble import assemble
from pth_top.configs.assembly import Context
from pth_top.configs.compat import compatibility_blockers, compatibility_problems
from pth_top.configs.parts import Catalog
from pth_top.configs.platforms import system_options
from pth_top.configs.recommend import _context, recommend
from pth_top.configs.rules import load_rules
from pth_top.units import GIB
from tests.configs.builders import answers
from tests.configs.published_workloads import MINIMAX_M1_1M, TODAY

BAREBONE = "gigabyte-g292-z20-a00"


def context(catalog, pins=None, **changes) -> Context:
    return _context(answers(**changes), catalog, load_rules(), pins or {})


def eight(catalog, gpu_id, **changes):
    request = {"scale__gpu_count": 8, "workload__preset": "llama-7b", "budget__amount": 800000.0, **changes}
    ctx = context(catalog, **request)
    return ctx, assemble(ctx, catalog.get(gpu_id))


def test_eight_l20_cards_are_built_around_a_server_barebone_within_its_rules(catalog):
    ctx, asm = eight(catalog, "l20-48gb")
    chassis, quantity = asm.chosen["system"]
    assert (chassis.id, quantity) == (BAREBONE, 1)
    # The barebone brings board, PSUs, fans and heatsink: no desktop board, ATX PSU or cooler is bought.
    assert not {"motherboard", "psu", "cooler"} & set(asm.chosen)
    cpu, sockets = asm.chosen["cpu"]
    assert cpu["socket"] == "SP3" and sockets == 1 and cpu["tdp_w"] <= 280
    assert asm.unsatisfied == [] and compatibility_blockers(asm.chosen, asm.psu_required_w) == []
    gpu = catalog.get("l20-48gb")
    assert asm.unit_prices["gpu"] * 8 == gpu.price_cny * 8 and asm.total_cny <= 800000
    assert asm.total_cny == sum(asm.unit_prices[role] * qty for role, (_, qty) in asm.chosen.items())
    kit, kits = asm.chosen["memory_kit"]
    assert kit["registered"] and kit["modules_count"] * kits <= 8  # the barebone's 8 DIMM slots


def test_non_redundant_server_psus_count_both_units_and_need_a_16a_circuit(catalog):
    _, asm = eight(catalog, "l20-48gb")
    # 2 x 2,200 W, 2+0: both carry the load, so capacity is both units, and losing one stops the server.
    assert asm.psu_capacity_w == 2 * 2200 >= asm.psu_required_w
    power = " | ".join(asm.power_lines)
    assert "2+0" in power and "not redundant" in power
    # ~2.7 kW from the wall: above one 220 V / 10 A socket (2,200 W), within one 16 A circuit (3,520 W).
    assert 2200 < asm.wall_w <= 3520
    assert any("one dedicated 16 A circuit" in line for line in asm.warnings), asm.warnings


def test_redundant_psus_count_only_the_carrying_units_and_a_14kw_system_needs_3_phase(catalog):
    _, asm = eight(catalog, "b200-180gb-sxm", budget__amount=4000000.0)
    assert asm.chosen["system"][0].id == "nvidia-dgx-b200"
    assert asm.psu_capacity_w == 5 * 3300  # 6 units, 5+1: the spare adds no capacity
    power = " | ".join(asm.power_lines)
    assert "5+1" in power and "not N+R" in power
    # 14.3 kW is 4.06 x a 16 A circuit: each A/B feed needs 5 of them, or a 3-phase PDU.
    assert "5 x 16 A circuits per feed" in power and "or a 3-phase 380 V rack PDU per feed" in power
    # In the US: 240 V / 30 A circuits at NEC's 80 % (5,760 W), 3 a feed, or 208 V 3-phase.
    _, us = eight(catalog, "b200-180gb-sxm", budget__amount=600000.0, budget__currency="USD")
    power = " | ".join(us.power_lines)
    assert "3 x 30 A (NEMA L6-30) circuits per feed" in power and "3-phase 208 V" in power, power


def test_cards_the_barebone_cannot_take_are_never_presented_as_fine(catalog):
    _, consumer = eight(catalog, "rtx-4090-24gb")
    text = " | ".join(consumer.unsatisfied)
    assert "3 slots wide" in text and "450 W" in text, text
    _, pro = eight(catalog, "rtx-pro-6000-blackwell-server-96gb")
    text = " | ".join(pro.unsatisfied)
    # 8 x 600 W cards: each slot's lead gives 300 W and two 2,200 W PSUs give 4,400 W.
    assert "draws 600 W" in text and "4,400 W, below" in text, text


def test_eight_h200_sxm_is_the_hgx_system_sold_new_in_china_under_its_licence(catalog):
    # The US licence of January 2026 lets the HGX H200 be sold in China (at CNY 1.5 million, php.xlycwl.com).
    _, asm = eight(catalog, "h200-141gb-sxm", budget__amount=2000000.0)
    system, quantity = asm.chosen["system"]
    assert (system.id, quantity) == ("hgx-h200-8gpu", 1)
    assert asm.total_cny == system.price_cny == 1500000
    assert asm.unsatisfied == []
    assert not [line for line in asm.warnings if line.startswith("availability:")]


def test_a_corpus_larger_than_a_servers_drives_is_warned_not_a_refusal(catalog):
    # Audit ZY: Nemotron-4 15B's 8T-token corpus (arXiv:2402.16819), ~32 TB, over the HGX H200's 30.7 TB of drives
    # refused the server that holds the job; drives go in its bays, or the data is read from network storage.
    _, asm = eight(catalog, "h200-141gb-sxm", budget__amount=2000000.0, data__dataset_size_gb=32_000.0)
    assert asm.chosen["system"][0].id == "hgx-h200-8gpu" and asm.unsatisfied == []
    assert any(line.startswith("storage: ") and " GB below the floor" in line for line in asm.warnings), asm.warnings


def test_a_servers_ram_holds_what_training_offloads_to_the_cpu(catalog):
    # Audit ZV: DBRX's ZeRO-3 CPU offload puts 1,960 GiB of states in host RAM; an HGX or DGX server's RAM was checked
    # against its GPUs' memory only. A 200B model's 16 B a parameter (3 TB) is over the HGX H200's 2 TB: refused.
    big = dict(workload__preset="custom", workload__parameters=200_000_000_000, workload__layers=96,
               workload__hidden_size=12288, workload__attention_heads=96, task__mode="training", task__method="full",
               task__recompute="full", scale__sharding="fsdp_offload", budget__amount=2_000_000.0)
    ctx, asm = eight(catalog, "h200-141gb-sxm", **big)
    assert ctx.memory.host_offload_bytes > asm.chosen["system"][0]["memory_gib"] * GIB
    assert any("RAM" in line and "offloaded" in line for line in asm.unsatisfied), asm.unsatisfied


def test_a_servers_ram_holds_the_weights_an_engine_stages_as_a_pcs_does(catalog):
    # Review AB: the server's floor counts what the job holds in RAM with the PC's own function. A 1.1T-parameter
    # model's 2 TB of bf16 weights over an HGX H200's 2,048 GiB: vLLM streams its shards, and so does generate() over
    # 8 GPUs through accelerate's device map (audit AI42), so neither is held to them.
    big = dict(workload__preset="custom", workload__parameters=1_100_000_000_000, workload__layers=96,
               workload__hidden_size=12288, workload__attention_heads=96, task__mode="inference",
               task__precision="bf16", budget__amount=2_000_000.0)
    for engine in ("hf_generate", "vllm"):
        _, streamed = eight(catalog, "h200-141gb-sxm", task__serving_engine=engine, **big)
        assert not any("RAM" in line for line in streamed.unsatisfied), (engine, streamed.unsatisfied)


def test_eight_h20_come_in_their_hgx_server_and_say_new_supply_is_not_assured(catalog):
    # Audit YQ2: no server carried the H20, so the China market's HGX part was never priced (MiniMax's vLLM guide
    # runs MiniMax-M1 on 8 x H20). Its server is priced now, and says where the H20 is not sold new.
    _, asm = eight(catalog, "h20-96gb", budget__amount=2000000.0)
    assert asm.chosen["system"][0].id == "hgx-h20-8gpu" and asm.unsatisfied == []
    line = " | ".join(asm.warnings)
    assert "not sold new in China" in line and "alternatives:" in line and system_name(catalog, BAREBONE) in line


def test_eight_mi300x_say_plainly_no_server_is_priced_and_name_the_alternative(catalog):
    _, asm = eight(catalog, "mi300x-192gb", budget__amount=2000000.0)
    assert "system" not in asm.chosen
    line = " | ".join(asm.unsatisfied)
    assert "comes only inside a whole server" in line and "alternatives:" in line, line


def test_one_oam_module_names_a_card_for_a_pc_not_an_eight_gpu_barebone(catalog):
    # A one-card job pinned to the MI300X (no server in the catalog): the way out is a card a PC holds, not one card
    # in an 8-GPU 2U barebone; a passive card, which needs a server's airflow, is never the PC's.
    ctx = context(catalog, workload__preset="llama-7b", budget__amount=300000.0, budget__condition="used")
    line = " | ".join(assemble(ctx, catalog.get("mi300x-192gb")).unsatisfied)
    alternative = line.split("alternatives: ")[1]
    assert "in a PC built around them" in alternative and system_name(catalog, BAREBONE) not in alternative, line
    card = next(part for part in catalog.of_kind("gpu") if alternative.startswith(f"1 x {part.name} ("))
    assert card["cooling"] != "passive", card.id


def test_system_options_is_what_the_ranking_can_offer(catalog):
    ctx = context(catalog, scale__gpu_count=8)
    assert [part.id for part, _ in system_options(ctx, catalog.get("h200-141gb-sxm"))] == ["hgx-h200-8gpu"]
    assert [part.id for part, _ in system_options(ctx, catalog.get("l20-48gb"))] == [BAREBONE]
    assert system_options(ctx, catalog.get("rtx-4090-24gb")) == []
    four = context(catalog, scale__gpu_count=4)
    assert system_options(four, catalog.get("h200-141gb-sxm")) == []


def test_the_wizard_reaches_a_server_for_eight_gpus(catalog):
    # Before: 8 PCIe GPUs had no board in the catalog and every 8-GPU build was unbuildable.
    build = recommend(answers(scale__gpu_count=8, scale__sharding="zero3", workload__preset="llama-7b",
                              budget__amount=800000.0), catalog)
    assert build.component("system") is not None and build.component("system").part_id == BAREBONE
    assert build.component("motherboard") is None
    assert build.blockers == () and build.total_price_cny <= 800000


def test_three_passive_cards_go_into_the_server_not_a_desktop_case(catalog):
    ctx, asm = eight(catalog, "l20-48gb", scale__gpu_count=4)
    assert ctx.gpu_count == 4 and asm.chosen["system"][0].id == BAREBONE
    _, blower = eight(catalog, "rtx-6000-ada-48gb", scale__gpu_count=4)
    # Blower cards may stay on a workstation board, but only with at most two ATX units (review 12 finding 6).
    assert "system" in blower.chosen or blower.chosen["psu"][1] <= 2
    _, one_passive = eight(catalog, "l4-24gb", scale__gpu_count=1)
    assert one_passive.chosen["system"][0].id == BAREBONE  # review 12 finding 1: never a passive card in a tower


def test_without_a_barebone_in_the_catalog_the_desktop_path_says_what_does_not_fit(catalog):
    bare = Catalog({part_id: part for part_id, part in catalog.parts.items() if not part.get("barebone", False)})
    ctx = context(bare, scale__gpu_count=8, workload__preset="llama-7b", budget__amount=800000.0)
    asm = assemble(ctx, bare.get("l20-48gb"))
    assert "system" not in asm.chosen and "motherboard" in asm.chosen
    assert asm.unsatisfied, "8 cards on a desktop board must never read as fine"


def system_name(catalog, part_id: str) -> str:
    return catalog.get(part_id).name



def test_the_server_line_keeps_a_space_between_the_role_and_the_name(catalog):
    from pth_top.configs.render import component_line

    build = recommend(answers(scale__gpu_count=8, scale__sharding="zero3", workload__preset="llama-7b",
                              budget__amount=800_000.0), catalog)
    line = component_line("system", build, with_id=False)
    assert line.startswith("Server ") and not line.startswith("Server system"), line


def test_a_barebone_wires_its_own_gpu_slots_and_an_epyc_has_no_chipset(catalog):
    # Review 12 finding 15: "8 GPUs at x16 + 4 for storage = 132 > EPYC 7543's 128: ... storage hangs off the
    # chipset" on a G292-Z20, whose GPU slots sit behind PCIe switches (systems.toml), on an SoC without a chipset.
    _, asm = eight(catalog, "l20-48gb")
    assert asm.chosen["system"][0].id == BAREBONE
    assert not any("PCIe lanes" in line for line in compatibility_problems(asm.chosen))
    epyc, board = catalog.get("epyc-7543p"), catalog.get("supermicro-h12ssl-i")
    drives = catalog.get("samsung-980-pro-2tb")
    chosen = {"gpu": (catalog.get("rtx-6000-ada-48gb"), 7), "cpu": (epyc, 1), "motherboard": (board, 1),
              "storage": (drives, 5)}  # 7 x 16 + 5 x 4 = 132 > 128 lanes
    lanes = [line for line in compatibility_problems(chosen) if "PCIe lanes" in line]
    assert lanes and "chipset" not in lanes[0].replace("no chipset", "") and "x8" in lanes[0]


def test_a_china_buyer_short_of_an_hgx_h200_is_offered_the_h20_server_minimaxs_guide_names(catalog):
    # Audit YQ2: MiniMax-M1 (experts in FP8, one 1M-token request) needs 59 GiB a GPU. At CNY 1.2M the wizard said
    # "not feasible" and offered int4 weights or 8 used A100s; MiniMax's vLLM guide runs it on 8 x H20, whose server
    # (about CNY 1.11M) the catalog did not have.
    build = recommend(answers("inference_server", **MINIMAX_M1_1M), catalog, today=TODAY)
    h20 = next((line for line in build.feasible_alternatives if "8 x NVIDIA H20 96GB" in line), "")
    assert "fits 8 x NVIDIA H20 96GB" in h20 and "within ¥1,200,000" in h20, build.feasible_alternatives
