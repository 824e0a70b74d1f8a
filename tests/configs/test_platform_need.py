"""The platform by need (not by budget), server chassis fit, RAM for staging, PSU transients, NVMe load time."""

from __future__ import annotations

import datetime as dt

from pth_top.configs.power import power_estimate
from pth_top.configs.recommend import recommend
from pth_top.configs.rules import load_rules
from pth_top.units import GIB
from tests.configs.builders import answers

TODAY = dt.date(2026, 5, 10)


def test_a_two_gpu_team_job_a_desktop_holds_gets_no_threadripper_or_xeon_w(catalog):
    # Two cards need 16 lanes and two slots: a desktop platform holds them; the ¥50k tier used to force Xeon-W/ECC.
    build = recommend(answers("team_training", workload__preset="gpt2-medium", scale__gpu_count=2,
                              budget__amount=60000.0), catalog, today=TODAY)
    assert build.component("cpu").spec["platform"] == "desktop", build.component("cpu").name
    assert build.component("memory_kit").spec["registered"] is False


def test_eight_open_air_consumer_cards_are_not_packed_into_a_passive_2u_server(catalog):
    build = recommend(answers(workload__preset="llama-7b", task__method="lora", scale__gpu_count=8,
                              budget__amount=400000.0), catalog, pins={"gpu": ("rtx-5070-12gb", 0)}, today=TODAY)
    assert not build.feasible
    blockers = " | ".join(build.blockers)
    assert "open-air" in blockers and "blower or passive" in blockers, blockers
    assert any("No Datacenter Deployment" in warning for warning in build.warnings)


def test_a_rule_keeping_build_over_budget_leads_open_air_cards_in_a_blower_only_server_within_it(catalog):
    """AutoAssign R-50-FPN as mmdetection trains it (configs/autoassign/README.md: 8 GPUs x 2 images, 4.08 GB, fp32)
    for a lab's CNY 150,000: 8 open-air RTX 5060 Ti cards within budget led, told only that the catalog's 8-GPU
    barebone takes blower or passive cards. 8 blower cards that hold it cost more: the refusal says so, and shows them
    (audit CP62)."""
    job = answers("team_training", workload__preset="custom", workload__kind="cnn", workload__layers=50,
                  workload__parameters=36_000_000, workload__dense_head="detection", workload__input_size_px=1033,
                  workload__batch_size=16, task__precision="fp32", task__optimizer="sgd", data__kind="images",
                  data__dataset_size_gb=19.0, data__images_count=118_287, scale__gpu_count=8,
                  budget__amount=150000.0)
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible
    assert build.component("gpu").spec["cooling"] in ("blower", "passive"), build.component("gpu").name
    assert build.blockers[0].startswith("not feasible within ¥150,000: the cheapest build that holds the workload")
    assert "open-air" in build.blockers[0] and build.total_price_cny > 150000.0
    # A card within budget that cannot hold the job keeps its memory line (review r74: 128 images, 28.2 GiB a GPU).
    larger = recommend(job.with_value("workload", "batch_size", 128), catalog, today=TODAY)
    assert "GiB usable" in larger.blockers[0] and "the build within it" not in larger.blockers[0], larger.blockers[0]


def test_a_70b_qlora_job_stages_a_shard_of_the_16_bit_checkpoint_not_all_of_it(catalog):
    # transformers quantizes a sharded checkpoint a 5 GB shard at a time (the QLoRA README fine-tunes GPT-NeoX-20B on a
    # free Colab): RAM for 140 GB of bf16 weights was asked for a 70B QLoRA.
    build = recommend(answers(workload__preset="llama-70b", workload__batch_size=1, task__method="qlora",
                              task__recompute="full", budget__amount=120000.0), catalog, today=TODAY)
    ram = build.component("memory_kit")
    gib = ram.quantity * ram.spec["capacity_gib"]
    assert gib < 70e9 * 2 / GIB
    assert any("shard of the 16-bit checkpoint" in line for line in ram.reasoning), ram.reasoning


def test_one_gpu_psu_covers_its_transient_peak():
    estimate = power_estimate(gpu_board_power_w=300, gpu_transient_peak_w=700, gpu_count=1, gpu_recommended_psu_w=0,
                              cpu_turbo_power_w=100, dimm_count=2, drive_count=1, fan_count=3, rules=load_rules())
    assert estimate.psu_required_w >= estimate.peak_w > estimate.sustained_w / 0.8
    assert "transient peak" in estimate.lines[1]


def test_large_weights_get_nvme_and_their_load_time(catalog):
    build = recommend(answers(workload__preset="llama-70b", workload__batch_size=1, task__mode="inference",
                              task__precision="bf16", data__dataset_size_gb=1.0, scale__gpu_count=2,
                              budget__amount=2_000_000.0), catalog, today=TODAY)
    storage = build.component("storage")
    assert storage.spec["interface"] == "nvme"
    assert any(line.startswith("load time:") and " s from this drive" in line for line in storage.reasoning)


def test_eight_96_gb_cards_in_a_512_gib_server_cap_the_ram_rule_of_thumb(catalog):
    # alignment-handbook's zephyr-7b-gemma SFT (gemma-7b full fine-tune, ZeRO-3 on 8 GPUs of 80 GB, batch 4 x 4 x
    # 2048) for $300,000: RAM >= GPU memory asked 768 GiB of the 8-slot barebone that holds 512, so only a DGX H100
    # ($240,000) was left. The job itself keeps nothing of the model in RAM: the rule yields to the platform.
    job = answers("team_training", workload__preset="custom", workload__kind="transformer",
                  workload__parameters=8_537_680_896, workload__layers=28, workload__hidden_size=3072,
                  workload__attention_heads=16, workload__kv_heads=16, workload__head_dim=256,
                  workload__intermediate_size=24576, workload__gated_mlp=True, workload__vocabulary_size=256_000,
                  workload__tied_embeddings=True, workload__sequence_length=2048, workload__batch_size=128,
                  task__precision="bf16", task__recompute="full", task__accumulation_steps=4,
                  data__dataset_size_gb=0.1, scale__gpu_count=8, scale__sharding="zero3",
                  budget__currency="USD", budget__amount=300_000.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.feasible and build.component("system") is not None, build.blockers
    assert build.component("system").part_id != "nvidia-dgx-h100" and build.total_price_cny < 0.5 * build.budget_cny
    kit = build.component("memory_kit")
    assert kit.spec["capacity_gib"] * kit.quantity <= build.component("system").spec["max_memory_gib"]
    assert any("yields to the platform" in line for line in kit.reasoning)


# Three used RTX 3090s for a 4-bit 70B in llama.cpp at 32k: the usual home rig (the cards on risers in an open frame).
# llama.cpp's default layer split passes one token's activations between cards: x8/x4/x4 costs ~3 % of decode
# (ggml-org/llama.cpp PR #4766), so the third card takes a desktop board's chipset x4 slot.
TRIPLE_3090 = {"workload__preset": "llama-70b", "workload__batch_size": 1, "workload__sequence_length": 32768,
               "task__mode": "inference", "task__precision": "int4", "scale__gpu_count": 3,
               "budget__currency": "USD", "budget__condition": "used", "budget__amount": 7000.0}


def test_three_cards_taking_turns_on_layers_fit_a_desktop_board_not_a_threadripper(catalog):
    build = recommend(answers(**TRIPLE_3090, task__serving_engine="llama_cpp"), catalog,
                      pins={"gpu": ("rtx-3090-24gb", 3)}, today=TODAY)
    assert build.feasible, build.blockers
    assert build.component("cpu").spec["platform"] == "desktop", build.component("cpu").name
    board = build.component("motherboard")
    assert board.spec["gpu_slots_count"] < 3 <= board.spec["gpu_slots_x4_count"]
    assert any("on the chipset's PCIe 4.0 x4 link" in line for line in board.reasoning), board.reasoning
    assert build.speed.inputs["link"] == "PCIe Gen4 x4"  # the narrowest card's link, said as such
    # One token's activations pass between the cards: an NVLink bridge would change nothing, so none is mentioned.
    assert not any("NVLink" in line for line in build.warnings), build.warnings
    # The Threadripper build it used to get was ~USD 8,500: over this budget, for lanes the job does not use.
    assert build.total_price_cny < build.budget_cny


def test_three_cards_splitting_each_layer_still_get_x8_slots(catalog):
    # vLLM's tensor parallel all-reduces every layer: each card keeps an x8 link, which takes a workstation's lanes.
    build = recommend(answers(**{**TRIPLE_3090, "budget__amount": 12000.0}, task__serving_engine="vllm"), catalog,
                      pins={"gpu": ("rtx-3090-24gb", 3)}, today=TODAY)
    board = build.component("motherboard")
    assert board.spec["gpu_slots_count"] >= 3 and build.component("cpu").spec["platform"] != "desktop"
    assert "x4" not in build.speed.inputs["link"]
    assert any("form 1 NVLink pair (bridges not in the parts" in line for line in build.warnings), build.warnings


def test_a_pair_of_nvlink_capable_cards_is_timed_over_the_pcie_the_build_buys(catalog):
    # Two used 3090s in vLLM's tensor parallel were timed over an NVLink bridge the build never bought or priced.
    build = recommend(answers(**{**TRIPLE_3090, "scale__gpu_count": 2, "budget__amount": 6000.0},
                              task__serving_engine="vllm"), catalog, pins={"gpu": ("rtx-3090-24gb", 2)}, today=TODAY)
    assert build.speed.inputs["link"].startswith("PCIe"), build.speed.inputs
    assert any("not in the parts or the price" in line for line in build.warnings), build.warnings


def test_a_small_job_gets_a_500_gb_drive_and_a_large_one_what_it_needs(catalog):
    # 2026 NAND prices: a 1 TB drive at ~2x a 500 GB one (EUR 108.61 the Kingston NV3 500GB, Greek retail); a 7B QLoRA
    # over a 1 GB dataset needs ~230 GB (the data twice, two copies of the weights, 200 GB for the OS and tools).
    small = recommend(answers(workload__preset="llama-7b", task__method="qlora", data__dataset_size_gb=1.0,
                              budget__currency="EUR", budget__amount=1500.0), catalog, today=TODAY)
    drive = small.component("storage")
    assert drive.spec["capacity_gb"] == 500 and drive.spec["interface"] == "nvme", drive.name
    assert not any("CONVERTED" in line for line in drive.reasoning), drive.reasoning  # the EU's own price
    large = recommend(answers(workload__preset="llama-7b", task__method="qlora", data__dataset_size_gb=400.0,
                              budget__currency="EUR", budget__amount=3000.0), catalog, today=TODAY)
    assert large.component("storage").spec["capacity_gb"] * large.component("storage").quantity >= 1000


def test_adapters_on_two_cards_take_a_chipset_slot_where_full_training_does_not(catalog):
    # Audit AG41: InternVL2-4B's LoRA (r16 on every linear layer, ~30M gradients a step) on two owned RTX 3090s with
    # EUR 1,500 for the rest was priced a EUR 531 x8/x8 board and called EUR 63 over; its gradients cross x4 in ms.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=3_820_000_000,
                  workload__layers=32, workload__hidden_size=3072, workload__attention_heads=32,
                  workload__kv_heads=32, workload__intermediate_size=8192, workload__gated_mlp=True,
                  workload__vocabulary_size=32064, workload__sequence_length=4096, workload__batch_size=16,
                  task__precision="bf16", task__recompute="full", task__accumulation_steps=8, task__method="lora",
                  task__lora_rank=16, task__lora_targets="all_linear", scale__gpu_count=2, scale__sharding="zero1",
                  budget__amount=1500.0, budget__currency="EUR", budget__owned_gpu="rtx-3090-24gb",
                  budget__owned_gpu_count=2)
    build = recommend(job, catalog, today=TODAY)
    assert build.feasible, build.blockers
    board = next(line for line in build.component("motherboard").reasoning if "GPU slot(s)" in line)
    assert "at x4+" in board and "adapters' or head's gradients" in board, board
    full = recommend(job.with_value("task", "method", "full"), catalog, today=TODAY)
    assert not any("x4+ for 2 GPU" in line for line in full.component("motherboard").reasoning)


def test_only_training_with_whole_weights_on_each_gpu_takes_the_x4_rule(catalog):
    # Review r68: a frozen backbone's head exchanges small gradients too; ZeRO-3 or FSDP gathers the weights each
    # micro-batch, so adapters under it keep x8.
    from types import SimpleNamespace

    from pth_top.configs.slots import gpu_link_lanes

    def lanes(**overrides: object) -> int:  # the rule reads the answers and the CPU rules alone
        job = answers(**{"workload__preset": "llama3-8b", "task__method": "lora", "scale__gpu_count": 2, **overrides})
        return gpu_link_lanes(SimpleNamespace(answers=job, rules=load_rules()))  # type: ignore[arg-type]

    assert lanes() == 4 and lanes(task__method="frozen") == 4
    assert lanes(scale__sharding="zero3") == 8 and lanes(scale__sharding="fsdp") == 8
    assert lanes(task__method="full") == 8


def test_a_desktops_second_and_later_nvme_drives_hang_off_its_chipset_not_the_cpus_lanes(catalog):
    # Audit CF59: Steel-LLM (1.12B from scratch on ~1T tokens, zhanshijinwat/Steel-LLM) on 2 GPUs for a CNY 60,000
    # student: 2 TB of data on NVMe drives were counted x4 each against a Ryzen 7 7700X's 24 lanes beside two cards at
    # x8, and the build bought an EPYC 7543P platform, ~CNY 15,000 it did not need.
    from pth_top.configs.compat import storage_lanes
    assert storage_lanes("nvme", 3, chipset=True) == 4 and storage_lanes("nvme", 3) == 12
    steel = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=1_120_000_000,
                    workload__layers=18, workload__hidden_size=1792, workload__attention_heads=32,
                    workload__kv_heads=32, workload__intermediate_size=1792, workload__gated_mlp=True,
                    workload__vocabulary_size=151936, workload__sequence_length=2048, workload__batch_size=256,
                    task__precision="bf16", task__accumulation_steps=32, data__dataset_size_gb=2000.0,
                    data__tokens_count=1_000_000_000_000, scale__gpu_count=2, scale__sharding="fsdp",
                    budget__amount=60000.0)
    build = recommend(steel, catalog, today=TODAY)
    cpu, storage = build.component("cpu"), build.component("storage")
    assert cpu is not None and cpu.spec["platform"] == "desktop", cpu.part_id
    assert storage is not None and storage.spec["interface"] == "nvme" and storage.quantity >= 2
