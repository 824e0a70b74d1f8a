"""Recommendations: memory floor first, budget fitting, swaps, the guide's presets and their comments."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from pth_top.configs.answers import Answers
from pth_top.configs.guide import cite_guide
from pth_top.configs.parts import load_catalog
from pth_top.configs.presets import load_build_preset
from pth_top.configs.recommend import recommend, swap
from pth_top.configs.render import render_build_text
from pth_top.units import GIB
from tests.configs.builders import answers

TODAY = dt.date(2025, 7, 1)


def test_gpu_meets_the_memory_floor_and_build_fits_budget(catalog):
    chosen = answers(workload__preset="gpt2-xl", task__recompute="full", budget__amount=100000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.memory_fits
    assert build.total_price_cny <= build.budget_cny
    gpu = build.component("gpu")
    assert gpu.spec["memory_gib"] * GIB * 0.95 >= build.memory.total_bytes
    assert any("memory floor" in line and "§2.1" in line for line in gpu.reasoning)
    assert any("GPT-2 needs >= 24 GB" in line for line in gpu.reasoning)
    for role in ("gpu", "cpu", "motherboard", "memory_kit", "storage", "cooler", "psu"):
        assert build.component(role) is not None, role
        assert build.component(role).reasoning, role


def test_entry_budget_ranks_by_vram_per_yuan(catalog):
    build = recommend(answers(workload__preset="resnet18", budget__amount=7500.0), catalog, today=TODAY)
    assert "VRAM first" in " ".join(build.component("gpu").reasoning)
    assert build.total_price_cny <= 7500


def test_too_small_budget_warns_instead_of_failing(catalog):
    build = recommend(answers(workload__preset="llama-7b", budget__amount=3000.0), catalog, today=TODAY)
    assert any("over budget" in warning for warning in build.warnings)


def test_model_too_big_for_any_card_says_how_to_fix_it(catalog):
    chosen = answers(workload__preset="llama-70b", workload__batch_size=1, budget__amount=80000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert not build.memory_fits
    assert "no GPU in this catalog holds that much" in build.blockers[0] and "ZeRO-3/FSDP" in build.blockers[0]


def test_datacenter_tier_asks_for_ecc_memory(catalog):
    build = recommend(
        answers(workload__preset="llama-13b", task__recompute="full", scale__gpu_count=4, scale__sharding="zero3",
                budget__amount=600000.0), catalog, today=TODAY)
    assert build.component("memory_kit").spec["ecc"] is True
    assert build.component("gpu").spec["form"] in ("datacenter", "workstation")
    assert build.component("gpu").quantity == 4
    assert build.component("cpu").spec["cores_count"] >= 8


def test_inference_llm_ranks_by_bandwidth(catalog):
    build = recommend(answers(workload__preset="llama-7b", task__mode="inference", task__precision="int4",
                              workload__batch_size=1, budget__amount=20000.0), catalog, today=TODAY)
    assert "bandwidth" in " ".join(build.component("gpu").reasoning)
    assert build.memory.kv_cache_bytes > 0 and build.memory.gradients_bytes == 0


def test_edge_deployment_uses_a_shared_memory_module(catalog):
    base = answers(workload__preset="resnet18", workload__batch_size=1, task__mode="inference", task__precision="fp16")
    build = recommend(Answers(scenario="edge_deployment", workload=base.workload, task=base.task), catalog, today=TODAY)
    gpu = build.component("gpu")
    assert gpu.spec["form"] == "edge" and gpu.spec["memory_kind"] == "shared"
    assert build.component("cpu") is None and build.component("psu") is None
    assert any("shared by CPU and GPU" in line for line in gpu.reasoning)


def test_quiet_excludes_blower_and_passive_cards(catalog):
    build = recommend(answers(workload__preset="llama-7b", task__recompute="full", budget__amount=200000.0,
                              budget__noise="quiet"), catalog, today=TODAY)
    assert build.component("gpu").spec["cooling"] == "fans"


def test_power_limit_is_respected_when_possible(catalog):
    # 450 W: a passive L4 in a tower no longer counts (it needs a server chassis), so 400 W has no build.
    chosen = answers(workload__preset="gpt2-small", budget__amount=30000.0, budget__max_power_w=450)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.power.wall_draw_w <= 450


def test_swap_moves_to_the_next_alternative_and_recomputes(catalog):
    build = recommend(answers(), catalog, today=TODAY)
    first = build.component("gpu").part_id
    swapped = swap(build, "gpu", catalog, today=TODAY)
    options = build.alternatives["gpu"]
    assert swapped.component("gpu").part_id == options[options.index(first) + 1] != first
    assert swapped.pins["gpu"][0] == swapped.component("gpu").part_id
    ram = swap(build, "memory_kit", catalog, today=TODAY)
    assert ram.component("memory_kit").part_id != build.component("memory_kit").part_id
    assert ram.component("gpu").part_id == first
    # Swapping round the whole list comes back to the start.
    current = build
    for _ in build.alternatives["cooler"]:
        current = swap(current, "cooler", catalog, today=TODAY)
    assert current.component("cooler").part_id == build.component("cooler").part_id


def test_stale_prices_warn_after_180_days(catalog):
    fresh = recommend(answers(), catalog, today=dt.date(2025, 7, 1))
    stale = recommend(answers(), catalog, today=dt.date(2026, 11, 29))
    assert not any("older than 180 days" in warning for warning in fresh.warnings)
    assert any("older than 180 days" in warning for warning in stale.warnings)


def test_personal_guide_preset_keeps_its_parts_and_comments(catalog):
    preset = load_build_preset("guide-personal")
    build = recommend(
        preset.answers, catalog, pins=preset.pins, title=preset.title, comments=preset.comments, today=TODAY
    )
    ids = {component.role: component.part_id for component in build.components}
    assert ids["cpu"] == "ryzen-7-5800x" and ids["gpu"] == "rtx-3060-ti-8gb"
    assert ids["storage"] == "samsung-970-evo-plus-1tb" and ids["psu"] == "seasonic-focus-gx-650"
    assert build.component("memory_kit").spec["capacity_gib"] == 32
    assert any("3500 MB/s" in comment for comment in build.comments)
    assert any("3500 MB/s" in line for line in build.component("storage").reasoning)
    assert build.power.psu_capacity_w == 650 >= build.power.psu_required_w


def test_enterprise_guide_preset_flags_the_guides_errors(catalog):
    preset = load_build_preset("guide-enterprise")
    build = recommend(
        preset.answers, catalog, pins=preset.pins, title=preset.title, comments=preset.comments, today=TODAY
    )
    assert build.component("gpu").quantity == 4 and build.component("gpu").part_id == "a100-80gb-pcie"
    assert build.component("psu").quantity == 2
    warnings = " | ".join(build.warnings)
    assert "PCIe lanes" in warnings and "SAS" in warnings and "pairs only" in warnings
    assert "40c/80t" in " ".join(build.component("cpu").reasoning)
    assert any("redundant" in comment for comment in build.comments)
    assert build.power.sustained_w > 1500


def test_guide_corrections_come_from_the_catalogs_notes(catalog, tmp_path):
    preset = load_build_preset("guide-enterprise")
    build = recommend(preset.answers, catalog, pins=preset.pins, today=TODAY)
    assert cite_guide(catalog.get("xeon-platinum-8380").notes[0]) in build.component("cpu").reasoning
    # A user's note on a shipped part reaches the reasoning the same way (no part id is special in code).
    (tmp_path / "mine.toml").write_text(
        '[[cpu]]\nid = "xeon-platinum-8380"\nnotes = ["check the BIOS version first"]\n', encoding="utf-8")
    mine = recommend(preset.answers, load_catalog(tmp_path), pins=preset.pins, today=TODAY)
    assert "check the BIOS version first" in mine.component("cpu").reasoning
    assert not any("notes" in component.spec for component in mine.components)


def test_repeated_gpu_swaps_visit_every_allowed_gpu_once(catalog):
    # Issue 12 item 9: from the enterprise preset, `1` cycled A100 -> H100 -> H200 -> H100 and never reached the rest.
    preset = load_build_preset("guide-enterprise")
    build = recommend(preset.answers, catalog, pins=preset.pins, today=TODAY)
    allowed = build.alternatives["gpu"]
    seen = [build.component("gpu").part_id]
    for _ in range(len(allowed) - 1):
        build = swap(build, "gpu", catalog, today=TODAY)
        gpu = build.component("gpu")
        seen.append(gpu.part_id if gpu is not None else "none")
    assert sorted(seen) == sorted(allowed) and len(allowed) > 4


def test_reasoning_cites_guide_sections_by_title_and_never_builds_md(catalog):
    # Issue 12 item 10: "the guide" and "builds.md" are files a user does not have; the title says what is meant.
    preset = load_build_preset("guide-enterprise")
    build = recommend(preset.answers, catalog, pins=preset.pins, comments=preset.comments, today=TODAY)
    lines = [*build.reasoning, *build.warnings, *build.comments,
             *(line for component in build.components for line in component.reasoning)]
    assert not any("builds.md" in line for line in lines)
    assert any("guide §2.1 显存需求与模型规模 (GPU memory vs model size)" in line for line in lines)
    assert any("本地部署PyTorch硬件配置全解析" in line for line in build.reasoning)
    untitled = [line for line in lines if re.search(r"§\d+(\.\d+)?(?![\d.])(?! [\u4e00-\u9fff])", line)]
    assert untitled == []


def test_infeasible_request_says_so_first_and_leads_with_what_is_feasible(catalog):
    # Issue 12 item 7: a ¥10k 13B full fine-tune headlined a ¥270k H200 NVL that still did not fit.
    build = recommend(answers(workload__preset="llama-13b", budget__amount=10000.0), catalog, today=TODAY)
    assert not build.feasible
    assert build.blockers[0].startswith("not feasible within ¥10,000: needs ")
    assert build.reasoning[0] == build.blockers[0]
    assert "the largest card within budget" in build.blockers[0]
    assert build.total_price_cny <= 10000  # never headline a card far beyond the budget
    assert build.feasible_alternatives and "QLoRA" in build.feasible_alternatives[0]
    assert "within ¥10,000" in build.feasible_alternatives[0]
    text = render_build_text(build)
    assert text.startswith("NOT A RECOMMENDATION: not feasible within ¥10,000")
    assert text.index("Feasible instead") < text.index("Components")


def test_renting_is_compared_with_its_hourly_price_and_source(catalog):
    build = recommend(answers(workload__preset="gpt2-xl", budget__amount=20000.0), catalog, today=TODAY)
    rent = [line for line in build.feasible_alternatives if line.startswith("rent ")]
    assert rent and "/GPU-hour" in rent[0] and "as of 2026-05-07" in rent[0] and "Lambda" in rent[0]


def test_a_feasible_build_has_no_blockers_and_no_alternatives(catalog):
    build = recommend(answers(), catalog, today=TODAY)
    assert build.feasible and build.blockers == () and build.feasible_alternatives == ()
    assert not render_build_text(build).startswith("NOT A RECOMMENDATION")


def test_a_pinned_part_breaking_the_rules_is_a_blocker(catalog):
    # Issue 12 item 8: the enterprise preset fits 256 GiB of RAM under its own 320 GiB floor without a word.
    preset = load_build_preset("guide-enterprise")
    build = recommend(preset.answers, catalog, pins=preset.pins, today=TODAY)
    assert not build.feasible
    assert any(line.startswith("breaks its own rules: ") for line in build.blockers)
    # Used cards allowed (the A100s are end of life), the wizard's own parts hold the workload: that comes first. (At
    # 2026 China RAM prices its 320 GiB of RDIMMs put that build ~1 % over the preset's ¥500,000: ¥520,000 here.)
    used_answers = preset.answers.with_value("budget", "condition", "used").with_value("budget", "amount", 520000.0)
    used = recommend(used_answers, catalog, pins=preset.pins, today=TODAY)
    assert not used.feasible
    assert used.feasible_alternatives[0].startswith("the same answers without the pinned parts: ")


def test_tabular_data_gets_a_cpu_only_build_with_its_reason(catalog):
    chosen = answers(workload__preset="custom", workload__kind="generic", workload__parameters=1_000_000,
                     task__optimizer="sgd", data__kind="tabular", data__dataset_size_gb=2.0, budget__amount=8000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.component("gpu") is None and build.component("cpu") is not None
    assert build.feasible and build.total_price_cny <= 8000
    assert build.reasoning[0].startswith("CPU-only build: tabular data") and "scikit-learn" in build.reasoning[0]
    assert build.memory.cuda_context_bytes == 0
    assert "held in system RAM" in render_build_text(build)
    assert build.alternatives["gpu"][0] == "none"
    with_gpu = swap(build, "gpu", catalog, today=TODAY)
    assert with_gpu.component("gpu") is not None and with_gpu.component("gpu").part_id == build.alternatives["gpu"][1]


def test_raspberry_pi_gets_no_cuda_context(catalog):
    base = answers(workload__preset="lenet5", workload__batch_size=1, task__mode="inference", task__precision="fp32",
                   budget__amount=700.0)
    chosen = Answers(scenario="edge_deployment", workload=base.workload, task=base.task, budget=base.budget)
    build = recommend(chosen, catalog, pins={"gpu": ("raspberry-pi-4b-8gb", 1)}, today=TODAY)
    assert build.component("gpu").part_id == "raspberry-pi-4b-8gb"
    assert build.memory.cuda_context_bytes == 0


def test_gpus_not_sold_new_are_ranked_only_when_used_is_allowed(catalog):
    # B1's availability flags: end-of-life cards and export-licence cards are bought used in China, or not at all.
    unbuyable = {gpu.id for gpu in catalog.of_kind("gpu") if not gpu.buyable("new")}
    assert unbuyable
    new = recommend(answers(budget__amount=30000.0), catalog, today=TODAY)
    used = recommend(answers(budget__amount=30000.0, budget__condition="used"), catalog, today=TODAY)
    assert not unbuyable & set(new.alternatives["gpu"])
    assert unbuyable & set(used.alternatives["gpu"])


def test_zero_offload_sizes_ram_for_the_offloaded_states(catalog):
    chosen = answers(workload__preset="llama-7b", workload__batch_size=1, task__recompute="full",
                     scale__sharding="zero_offload", budget__amount=60000.0)
    build = recommend(chosen, catalog, today=TODAY)
    ram = build.component("memory_kit")
    assert build.memory.host_offload_bytes > 80 * GIB
    assert ram.quantity * ram.spec["capacity_gib"] * GIB >= build.memory.host_offload_bytes


def test_small_model_inference_gets_a_cheaper_cpu_only_build(catalog):
    # Issue 12 item 4: ResNet-18 inference is in the guide's 2 GB "small model" class (§2.1): no GPU needed.
    chosen = answers(workload__preset="resnet18", workload__batch_size=1, task__mode="inference",
                     task__precision="fp32", budget__amount=8000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.cpu_only and build.feasible and build.total_price_cny <= 8000
    assert build.reasoning[0].startswith("CPU-only build: small-model inference")
    assert "guide §2.1 显存需求与模型规模" in build.reasoning[0]
    served = recommend(Answers(scenario="inference_server", workload=chosen.workload, task=chosen.task,
                               budget=chosen.budget), catalog, today=TODAY)
    assert not served.cpu_only  # a serving box is sized for throughput: it keeps its GPU


def test_sxm_gpus_rank_when_the_catalog_sells_a_server_with_that_many(catalog):
    # B2's whole-server systems: 8 x H100 SXM come only as a DGX H100 (export licence: bought used in China).
    chosen = answers(workload__preset="llama-70b", workload__batch_size=8, task__recompute="full",
                     task__method="lora", scale__gpu_count=8, scale__sharding="zero3",
                     budget__amount=3_000_000.0, budget__condition="used")
    assert "h100-80gb-sxm" in recommend(chosen, catalog, today=TODAY).alternatives["gpu"]
    four = recommend(chosen.with_value("scale", "gpu_count", 4), catalog, today=TODAY)
    assert "h100-80gb-sxm" not in four.alternatives["gpu"]  # no 4-GPU H100 SXM server in the catalog


def test_swapping_to_cpu_only_keeps_other_pins_but_sizes_its_own_psus(catalog):
    pins = {"gpu": ("none", 0), "psu": ("superflower-leadex-vii-xg-1300", 2), "cpu": ("xeon-platinum-8380", 1)}
    build = recommend(answers(), catalog, pins=pins, today=TODAY)
    assert build.cpu_only and build.component("psu").quantity == 1
    assert build.reasoning[0] == build.blockers[0]
    assert build.reasoning[1].startswith("CPU-only build: chosen with the GPU swap key")
    # GPT-2 training on a CPU, pinned or not, is first said to be inadequate; the pinned parts' price follows.
    assert "a CPU-only PC is not adequate for training" in build.blockers[0]
    assert build.blockers[1].startswith("not feasible within ¥15,000: this build with its pinned parts costs ¥")


def test_the_first_blocker_names_the_card_it_compares_with(catalog):
    too_big = answers(workload__preset="llama-13b", budget__amount=10000.0)
    pinned = recommend(too_big, catalog, pins={"gpu": ("rtx-5060-ti-16gb", 0)}, today=TODAY)
    assert "needs " in pinned.blockers[0] and "the pinned NVIDIA GeForce RTX 5060 Ti 16GB has" in pinned.blockers[0]
    broke = recommend(too_big.with_value("budget", "amount", 1000.0), catalog, today=TODAY)
    assert "even the cheapest build (¥" in broke.blockers[0]


def test_a_pinned_gpu_not_sold_new_is_a_blocker_unless_used_is_allowed(catalog):
    preset = load_build_preset("guide-personal")  # its RTX 3060 Ti is end of life: used market only
    new = recommend(preset.answers, catalog, pins=preset.pins, today=TODAY)
    assert any("cannot be bought new" in line for line in new.blockers)
    used = recommend(preset.answers.with_value("budget", "condition", "used"), catalog, pins=preset.pins, today=TODAY)
    assert not any("cannot be bought new" in line for line in used.blockers)


def test_a_whole_server_build_is_priced_as_the_server(catalog):
    chosen = answers(workload__preset="llama-70b", workload__batch_size=8, task__recompute="full",
                     task__method="lora", scale__gpu_count=8, scale__sharding="zero3",
                     budget__amount=3_000_000.0, budget__condition="used")
    build = recommend(chosen, catalog, pins={"gpu": ("h100-80gb-sxm", 0)}, today=TODAY)
    server = build.component("system")
    assert server is not None and build.component("gpu").unit_price_cny == 0
    assert any("the server's chassis, fans and PSUs included" in line for line in build.reasoning)


def test_alternatives_stay_valid_answers_for_a_huge_batch(catalog):
    from pth_top.configs.answers import answers_from_dict, cross_field_problems

    chosen = answers(workload__preset="llama-7b", workload__batch_size=100_000, budget__amount=20000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.applicable_alternatives
    for _, alternative, _ in build.applicable_alternatives:
        assert answers_from_dict(alternative.to_dict()) == alternative  # each could be saved and loaded
        assert cross_field_problems(alternative) == []


def test_guide_citations_leave_other_papers_alone_and_never_double_guide() -> None:
    # Review 12 finding 9: "QLoRA §3" became the guide's RAM chapter; "The guide's §5.2" became "guide's guide".
    assert cite_guide("constants / 8 (QLoRA paper §3, arXiv:2305.14314)") == (
        "constants / 8 (QLoRA paper §3, arXiv:2305.14314)")
    assert cite_guide("The guide's §5.2 board").startswith("The guide's §5.2 扩展性设计 (expandability) board")
    assert "guide's own guide" not in cite_guide("the guide's own §2.1 recommends")
    assert cite_guide("(§2.1)") == "(guide §2.1 显存需求与模型规模 (GPU memory vs model size))"


def test_qlora_memory_line_cites_the_paper_not_the_guide(catalog):
    build = recommend(answers(workload__preset="llama-7b", task__method="qlora"), catalog, today=TODAY)
    qlora = [line for line in build.reasoning if line.startswith("QLoRA base")]
    assert qlora and "QLoRA paper §3, arXiv:2305.14314" in qlora[0]
    assert "内存与存储" not in qlora[0]


def test_gpu_swaps_wrap_round_to_the_cpu_only_entry(catalog):
    # Review 12 finding 19: the wrap after the last GPU went back to the first GPU, never to CPU-only.
    build = recommend(answers(workload__preset="resnet50", budget__amount=12000.0), catalog, today=TODAY)
    options = build.alternatives["gpu"]
    assert options[0] == "none"
    for _ in options:
        build = swap(build, "gpu", catalog, today=TODAY)
        if build.cpu_only:
            break
    assert build.cpu_only and build.alternatives["gpu"][0] == "none"
    assert swap(build, "gpu", catalog, today=TODAY).component("gpu").part_id == options[1]


def test_used_gpu_warning_points_to_the_acceptance_run(catalog):
    # Review 12 finding 12: GPU-Z is a Windows tool; pth-top's own acceptance run checks a card on Linux.
    build = recommend(answers(budget__condition="used"), catalog, today=TODAY)
    used = [warning for warning in build.warnings if warning.startswith("used GPUs")]
    assert used and "pth-top bench --accept" in used[0] and "GPU-Z" not in used[0]


def test_a_foreign_currency_budget_says_first_whose_market_the_prices_are(catalog):
    # Review 12 finding 14: a USD budget got China prices and export rules without a word; now it gets the US
    # market's (configs.market), and says so first.
    build = recommend(answers(budget__currency="USD", budget__amount=2500.0), catalog, today=TODAY)
    assert any("US market" in line for line in build.reasoning[:2])
    assert not any("market's" in line for line in recommend(answers(), catalog, today=TODAY).reasoning[:2])
    assert render_build_text(build).startswith("Prices and availability are the US market's")


@pytest.mark.parametrize("mode, data_kind", [("training", "tabular"), ("inference", "text")])
def test_cpu_only_builds_have_a_cpu_that_drives_a_display(catalog, mode, data_kind):
    # Review 12 finding 7: the i5-12400F and Ryzen 7 5800X have no integrated graphics: no picture at all.
    chosen = answers(workload__preset="bert-base", workload__batch_size=1, task__mode=mode, task__precision="fp32",
                     data__kind=data_kind, budget__amount=8000.0)
    build = recommend(chosen, catalog, today=TODAY, pins={"gpu": ("none", 0)})  # CPU-only, as the swap key picks it
    assert build.cpu_only
    cpu = catalog.get(build.component("cpu").part_id)
    assert cpu["integrated_graphics"], cpu.id
    assert any(line.startswith("display: ") for line in build.component("cpu").reasoning)


def test_every_desktop_cpu_says_whether_it_has_integrated_graphics(catalog):
    desktop = {cpu.id: cpu["integrated_graphics"] for cpu in catalog.of_kind("cpu") if cpu["platform"] == "desktop"}
    assert desktop["core-i5-12400f"] == "" and desktop["ryzen-7-5800x"] == ""
    assert desktop["ryzen-7-7700x"] and desktop["core-i7-13700k"]


def test_cpu_only_gpu_scale_training_is_not_a_recommendation_and_leads_with_renting(catalog):
    # Review 12 finding 8: CNN training on 150 GB of images came out as a CPU-only build with no infeasibility line.
    # With 2026 DRAM prices the CPU-only box (DDR5 for an iGPU CPU) costs more than an entry GPU box, so it is picked
    # here with the swap key: chosen or pinned, it is never a recommendation for this job.
    chosen = answers(workload__preset="resnet50", workload__batch_size=256, task__precision="amp_fp16",
                     data__kind="images", data__dataset_size_gb=150.0, budget__amount=9000.0)
    build = recommend(chosen, catalog, today=TODAY, pins={"gpu": ("none", 0)})
    assert build.cpu_only and build.blockers and not build.feasible
    assert build.reasoning[0] == build.blockers[0]
    assert "a CPU-only PC is not adequate for training" in build.blockers[0]
    assert build.feasible_alternatives[0].startswith("rent ")
    assert any(line.startswith("the same answers without the pinned parts") for line in build.feasible_alternatives)
    assert any("bfloat16, not fp16 AMP" in line for line in build.component("cpu").reasoning)
    # Tabular data stays an adequate CPU-only recommendation.
    tabular = recommend(answers(workload__preset="bert-base", workload__batch_size=1, task__precision="fp32",
                                data__kind="tabular", budget__amount=8000.0), catalog, today=TODAY)
    assert tabular.cpu_only and not tabular.blockers


def test_alternatives_keep_bf16_lora_before_qlora_and_offer_only_same_family_models(catalog):
    # Review 12 finding 13: QLoRA led although bf16 LoRA with checkpointing fit the same build, and a GPT-2 XL was
    # offered as "a smaller model" for a Llama-7B LoRA.
    build = recommend(answers(workload__preset="llama-7b", task__method="lora", workload__batch_size=8,
                              budget__amount=30000.0), catalog, today=TODAY)
    lines = build.feasible_alternatives
    assert build.blockers and lines
    recompute = next(i for i, line in enumerate(lines) if line.startswith("full recompute"))
    qlora = next(i for i, line in enumerate(lines) if line.startswith("QLoRA"))
    assert recompute < qlora
    assert not any("GPT-2" in line for line in lines)
    bigger = recommend(answers(workload__preset="llama-13b", task__method="full", budget__amount=10000.0), catalog,
                       today=TODAY)
    smaller = [line for line in bigger.feasible_alternatives if "smaller model" in line]
    assert all("smaller model of the same family, Llama-style 7B" in line for line in smaller)


def test_every_infeasible_request_gets_a_rent_line_even_beyond_one_cloud_gpu(catalog):
    # Review 12 finding 13: 13B full fine-tuning (~300 GiB per GPU) had no rent line: no single cloud GPU holds it.
    build = recommend(answers(workload__preset="llama-13b", task__method="full", budget__amount=10000.0), catalog,
                      today=TODAY)
    rent = [line for line in build.feasible_alternatives if line.startswith("rent ")]
    assert build.blockers and rent
    assert re.search(r"rent \d+ x .*ZeRO-3 across \d+ GPUs: [\d.]+ GiB per GPU at \$[\d.]+/GPU-hour", rent[0])


def test_model_family_groups_presets_that_substitute():
    from pth_top.configs.feasibility import model_family

    assert model_family("llama-13b") == model_family("llama-7b") == "llama"
    assert model_family("resnet50") == model_family("resnet18") == "resnet"
    assert model_family("llama3-8b") != model_family("llama-7b") and model_family("gpt2-xl") == "gpt2"


def test_ecc_and_workstation_form_are_preferences_for_one_personal_gpu(catalog):
    # Review 12 finding 1: 70B QLoRA on one 48 GB card at ¥80k was "infeasible" because the ¥50k tier forced a
    # Xeon-W/ECC platform; the card on a desktop platform is within budget.
    chosen = answers(workload__preset="llama-70b", workload__batch_size=1, task__method="qlora", task__lora_rank=16,
                     task__lora_targets="all_linear", task__recompute="full", budget__amount=80000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.blockers == () and build.total_price_cny <= 80000
    assert build.component("gpu").spec["memory_gib"] >= 48
    assert build.component("memory_kit").spec["ecc"] is False
    assert any("ECC" in line and "preferred" in line.replace("prefers", "preferred")
               for line in build.component("memory_kit").reasoning)


def test_eight_gpu_training_server_gets_training_cards_not_l4s(catalog):
    # Review 12 finding 1: 8 x L4 (121 TFLOPS, 300 GB/s) led a ¥600k ZeRO-3 training server: per card it is the
    # best value, but per yuan of the whole server (the host is a fixed cost) faster cards win.
    chosen = answers(workload__preset="llama-7b", workload__batch_size=32, task__recompute="full",
                     data__dataset_size_gb=500.0, scale__gpu_count=8, scale__sharding="zero3",
                     budget__amount=600000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.blockers == ()
    assert build.component("gpu").part_id != "l4-24gb"
    assert build.component("gpu").spec["bf16_dense_tflops"] > 121
    assert "whole build" in " ".join(build.component("gpu").reasoning)


def test_a_passive_card_never_goes_into_a_tower(catalog):
    # Review 12 finding 1: 2 x L4 (passive) in a Xeon-W tower with a 750 W ATX unit, with a warning only.
    for amount, count in ((60000.0, 2), (30000.0, 1)):
        chosen = answers(workload__preset="llama-7b", task__mode="inference", task__precision="int4",
                         scale__gpu_count=count, budget__amount=amount)
        build = recommend(chosen, catalog, today=TODAY)
        if build.component("gpu").spec["cooling"] == "passive":
            assert build.component("system") is not None and build.component("psu") is None


def test_a_card_without_the_answered_precision_is_not_a_candidate(catalog):
    # Review 12 finding 2: 4 x V100 (bf16 rate 0: Volta has no bf16) led a bf16 LoRA build, "ranked by BF16 TFLOPS".
    from pth_top.configs.ranking import ranked_gpus
    from pth_top.configs.recommend import _context
    from pth_top.configs.rules import load_rules

    chosen = answers(workload__preset="llama-13b", workload__batch_size=16, task__method="lora",
                     task__recompute="full", scale__gpu_count=4, budget__amount=100000.0, budget__condition="used")
    build = recommend(chosen, catalog, today=TODAY)
    assert not build.component("gpu").part_id.startswith("v100")
    bf16 = [gpu.id for gpu, _ in ranked_gpus(_context(chosen, catalog, load_rules(), {}))]
    assert bf16 and not any(gpu_id.startswith("v100") for gpu_id in bf16)
    fp16 = chosen.with_value("task", "precision", "amp_fp16")
    assert "v100-32gb-pcie" in [gpu.id for gpu, _ in ranked_gpus(_context(fp16, catalog, load_rules(), {}))]


def test_fits_needs_the_declared_margin_and_a_tight_fit_says_so(catalog):
    # Review 12 finding 5: 8 x 24 GB cards at 22.6 of 22.8 GiB (99 %) for a 70B LoRA, while the estimator is only
    # within ~5-15 % of published figures.
    from pth_top.configs.rules import load_rules

    margin = load_rules().gpu.estimate_margin_fraction
    assert margin >= 0.05
    chosen = answers(workload__preset="llama-7b", workload__batch_size=1, task__method="qlora",
                     task__recompute="full", budget__amount=30000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.blockers == ()
    need = build.memory.total_bytes
    if need * (1 + margin) <= build.gpu_usable_per_gpu_bytes:
        assert any(line.startswith("headroom:") for line in build.component("gpu").reasoning)
    else:
        assert any(warning.startswith("tight fit") for warning in build.warnings)
    # A 24 GB card is never picked at 99 % when the budget buys a card with room.
    big = answers(workload__preset="llama-70b", workload__batch_size=8, task__method="lora", task__recompute="full",
                  data__dataset_size_gb=500.0, scale__gpu_count=8, scale__sharding="fsdp", budget__amount=3000000.0)
    server = recommend(big, catalog, today=TODAY)
    assert server.blockers == ()
    assert server.memory.total_bytes * (1 + margin) <= server.gpu_usable_per_gpu_bytes


def test_infeasible_headline_card_is_the_largest_within_budget_and_matches_the_alternative(catalog):
    # Review 12 finding 10: the headline named the cheapest 16 GB card, alternative 1 another 16 GB card.
    chosen = answers(workload__preset="llama-13b", workload__batch_size=1, task__method="lora",
                     task__recompute="full", budget__amount=20000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.blockers
    reference = build.component("gpu")
    same_size = [line for line in build.feasible_alternatives  # one card: a 2-GPU ZeRO-3 machine is another build
                 if f"{reference.spec['memory_gib']:g}GB" in line and " x NVIDIA" not in line]
    assert same_size and all(reference.name in line for line in same_size), (reference.name, same_size)


def test_the_reference_build_of_an_infeasible_request_keeps_its_own_rules_when_one_can(catalog):
    # 4 x used RTX 5090 (no pair of ATX units feeds them) was the reference build while 4 x A10 in a server fit.
    chosen = answers(workload__preset="llama-7b", workload__batch_size=16, task__recompute="full",
                     scale__gpu_count=4, scale__sharding="zero3", budget__amount=150000.0, budget__condition="used")
    build = recommend(chosen, catalog, today=TODAY)
    assert build.blockers and not any("breaks its own rules" in line for line in build.blockers), build.blockers


def test_the_cheapest_build_that_holds_it_is_one_that_keeps_its_rules(catalog):
    # "not feasible within ¥100,000 ... the cheapest build whose GPU holds it costs ¥67,092": 4 x RTX 5090 that no
    # pair of ATX units feeds, so it was never a build.
    chosen = answers(workload__preset="llama-13b", workload__batch_size=16, task__method="lora",
                     task__recompute="full", scale__gpu_count=4, budget__amount=100000.0, budget__condition="used")
    build = recommend(chosen, catalog, today=TODAY)
    price = re.search(r"the cheapest build whose GPU holds it costs ¥([\d,]+)", build.blockers[0])
    assert price and float(price.group(1).replace(",", "")) > 100000, build.blockers[0]


def test_shared_memory_numbers_agree_and_a_single_board_is_no_gpu(catalog):
    # Review 12 finding 17: "8 GiB shared (3.8 usable at 95%)" disagreed with itself; "per GPU", "(8 GiB card)".
    base = answers(workload__preset="lenet5", workload__batch_size=1, task__mode="inference", task__precision="fp32",
                   budget__amount=700.0)
    chosen = Answers(scenario="edge_deployment", workload=base.workload, task=base.task, budget=base.budget)
    build = recommend(chosen, catalog, pins={"gpu": ("raspberry-pi-4b-8gb", 1)}, today=TODAY)
    floor = build.component("gpu").reasoning[0]
    assert "(3.8 usable: 8 - 4 GiB for the OS, x 95%)" in floor and "per GPU" not in floor
    text = render_build_text(build)
    assert "(8 GiB shared with the CPU): fits" in text and "GiB card" not in text and "Memory per GPU" not in text


def test_review_text_says_what_was_applied_and_explains_its_terms(catalog):
    # Review 12 finding 17: quiet / max-power answers were never echoed; jargon unexplained; "ZERO3" in capitals;
    # an infeasible build's price line read like an offer; a CPU-only build said "VRAM first".
    quiet = recommend(answers(workload__preset="gpt2-small", budget__noise="quiet", budget__max_power_w=900,
                              scale__sharding="zero3"), catalog, today=TODAY)
    assert any(line.startswith("noise 'quiet' applied") for line in quiet.reasoning)
    assert any(line.startswith("power limit 900 W applied: the build draws ~") for line in quiet.reasoning)
    assert any(line.startswith("ZeRO-3 divides by the GPU count") for line in quiet.warnings)
    terms = [line for line in quiet.reasoning if line.startswith("terms: ")]
    assert len(terms) == 1 and "micro-batch = " in terms[0] and "ZeRO-1/2/3 = " in terms[0]
    cpu_only = recommend(answers(workload__preset="bert-base", workload__batch_size=1, task__precision="fp32",
                                 data__kind="tabular", budget__amount=8000.0), catalog, today=TODAY)
    assert cpu_only.cpu_only and not any("VRAM first" in line for line in cpu_only.reasoning)
    infeasible = recommend(answers(workload__preset="llama-13b", budget__amount=10000.0), catalog, today=TODAY)
    assert infeasible.blockers
    assert any(line.startswith("price ") and "for reference only" in line for line in infeasible.reasoning)


def test_an_adequate_cpu_only_pc_over_budget_is_named_with_its_price(catalog):
    # Follows from finding 7: the cheapest CPU that drives a display may put the CPU-only PC over a small budget.
    build = recommend(answers(workload__preset="bert-base", workload__batch_size=1, task__mode="inference",
                              task__precision="fp32", budget__amount=4000.0), catalog, today=TODAY)
    if build.cpu_only:
        assert not build.blockers
    else:
        assert any(line.startswith("a CPU-only PC would do (small-model inference) but costs ¥")
                   for line in build.blockers)


def test_an_entry_cpu_only_box_takes_an_igpu_cpu_on_ddr4_and_says_where_its_price_is_from(catalog):
    # 2026 DRAM: DDR5 for an AM5 iGPU CPU made the CPU-only box dearer than a GPU box; the Core i5-12400 (UHD 730)
    # on DDR4 keeps a tabular box under 5,000 yuan: the CPU is chosen with its board and RAM, not by its own price
    # (a Ryzen 7 7700X costs 41 yuan less than it in China, but its AM5 board and DDR5 kit cost ~1,700 more).
    build = recommend(answers(workload__preset="custom", workload__kind="generic", workload__parameters=1_000_000,
                              task__optimizer="sgd", data__kind="tabular", data__dataset_size_gb=2.0,
                              budget__amount=5000.0), catalog, today=TODAY)
    assert build.cpu_only and build.feasible and build.total_price_cny <= 5000
    cpu = build.component("cpu")
    assert cpu.part_id == "core-i5-12400" and cpu.spec["integrated_graphics"]
    assert build.component("memory_kit").spec["memory_type"] == "DDR4"
    assert any("with its board and RAM" in line for line in cpu.reasoning), cpu.reasoning
    assert any(line.startswith("price ¥1,499: China market") for line in cpu.reasoning), cpu.reasoning


def test_the_board_is_chosen_with_its_ram_as_the_cpu_was(tmp_path):
    # A DDR5 LGA1700 board 99 yuan under the DDR4 one: with its DDR5 kit it costs more, so the tabular box keeps the
    # DDR4 board the i5-12400 was ranked on (review: the board was then chosen by its own price alone).
    cheap = '{ amount = 700, currency = "CNY", as_of = 2026-08-28, source = "https://example.com/a-shop" }'
    (tmp_path / "mine.toml").write_text(f'[[motherboard]]\nid = "asus-tuf-z790-plus-d5"\nprices = {{ cn = {cheap} }}\n',
                                        encoding="utf-8")
    catalog = load_catalog(tmp_path)
    build = recommend(answers(workload__preset="custom", workload__kind="generic", workload__parameters=1_000_000,
                              task__optimizer="sgd", data__kind="tabular", data__dataset_size_gb=2.0,
                              budget__amount=5000.0), catalog, today=TODAY)
    assert build.cpu_only and build.feasible
    assert build.component("memory_kit").spec["memory_type"] == "DDR4"
    assert build.component("motherboard").part_id != "asus-tuf-z790-plus-d5"
