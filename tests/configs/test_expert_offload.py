"""llama.cpp --cpu-moe (configs.expert_offload): a mixture of experts' routed experts in system RAM."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from pth_top.configs import speed as sp
from pth_top.configs import speed_build
from pth_top.configs.answers import answers_from_dict, cross_field_problems
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.memory import estimate_memory
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import recommend
from pth_top.units import GIB
from tests.configs.builders import GLM45_AIR, answers
from tests.configs.published_workloads import FLUX1_DEV, inference_custom

FLUX_INT8 = {**inference_custom({**FLUX1_DEV, "workload__frozen_precision": "bf16", "workload__denoising_steps": 28},
                                "int8")}

TODAY = dt.date(2026, 11, 1)


def gpt_oss_120b(offload: bool = True, **more):
    return answers(**{"workload__preset": "gpt-oss-120b", "workload__batch_size": 1, "workload__sequence_length": 4096,
                      "task__mode": "inference", "task__precision": "int4", "task__serving_engine": "llama_cpp",
                      "task__generated_tokens": 512, "task__expert_offload": offload, "budget__amount": 2500.0,
                      "budget__currency": "USD", **more})


def test_the_experts_leave_the_gpu_for_ram_and_the_ram_is_sized_for_them(catalog):
    job = gpt_oss_120b()
    shape = model_shape(job.workload)[0]
    # gpt-oss-120b: A = N - E + E x 4/128, so E = (116.8B - 5.1B) / (1 - 1/32) = 115.3B of its 116.8B.
    assert shape.routed_expert_parameters / 1e9 == pytest.approx(115.3, abs=0.1)
    offloaded, resident = estimate_memory(job, shape), estimate_memory(gpt_oss_120b(False), shape)
    assert offloaded.host_offload_bytes == pytest.approx(115.3e9 * 4.8 / 8, rel=0.01)  # Q4_K_M, llama.cpp's int4
    assert offloaded.weights_bytes == pytest.approx(resident.weights_bytes - offloaded.host_offload_bytes, abs=1)
    build = recommend(job, catalog, today=TODAY)
    assert build.feasible and build.component("gpu") is not None  # a GPU build, not a CPU-only PC
    kit = build.component("memory_kit")
    # The experts are a part of the file staged in RAM, not a second copy: 64 GiB + the OS, not 64 + 54.
    assert offloaded.host_offload_bytes / GIB + 4 <= kit.quantity * kit.spec["capacity_gib"] <= 96
    # One module a channel: two 64 GB kits cost less than the 96 GB one, but four DDR5 DIMMs run at 3,600 MT/s, and
    # the experts decode at the RAM's bandwidth (the 96 GB kit's money a GB/s is the lower).
    assert kit.quantity * kit.spec["modules_count"] == 2
    assert any("a GB/s of bandwidth" in line for line in kit.reasoning)


def test_the_platform_is_costed_with_the_kit_it_is_bought_with(catalog):
    # Review Z M3: the CPU and board were ranked on the cheapest kit (two 64 GB kits) while the build bought the
    # 96 GB one (the least money a GB/s): the platform's price must be the kit's that choose_ram buys.
    from pth_top.configs.assembly import part_price
    from pth_top.configs.ram_choice import board_with_ram_cost, kit_order
    from pth_top.configs.recommend import _context
    from pth_top.configs.rules import load_rules

    job = gpt_oss_120b()
    build = recommend(job, catalog, today=TODAY)
    ctx = _context(job, catalog, load_rules(), {})
    board, cpu = catalog.get(build.component("motherboard").part_id), catalog.get(build.component("cpu").part_id)
    kit = build.component("memory_kit")
    floor = kit.quantity * kit.spec["capacity_gib"] - 1  # a floor the bought kit holds
    best = kit_order(ctx, board, False, floor, cpu)[0]
    assert best[2].id == kit.part_id
    assert board_with_ram_cost(ctx, board, False, floor, cpu) == pytest.approx(part_price(ctx, board) + best[3])


def test_decode_reads_the_experts_from_the_builds_ram(catalog):
    job = gpt_oss_120b()
    shape = model_shape(job.workload)[0]
    card = sp.Device("16 GB card", 1, 896, 87.9, "dense FP16", tensor=True, fp32_tflops=43.9)

    def rate(ram_gb_per_s: float) -> float:
        device = dataclasses.replace(card, host_ram_gb_per_s=ram_gb_per_s)
        return speed_build.inference(job, shape, device).figures["decode_tokens_per_s_per_stream"]

    # 115.3B x 4/128 x 4.8 bit = 2.16 GB of experts a token at 0.55 of two DDR5-5600 channels: ~44 ms.
    assert 1 / rate(89.6) == pytest.approx(2.162e9 / (0.55 * 89.6e9) + 0.0027, rel=0.05)
    assert rate(2 * 89.6) > 1.7 * rate(89.6)  # the CPU's part dominates: twice the channels, near twice the speed
    assert "not predicted" in speed_build.inference(job, shape, card).summary[0]  # RAM unknown: no figure
    build = recommend(job, catalog, today=TODAY)
    assert "experts in system RAM" in build.speed.summary[0]
    assert any("of routed experts from RAM" in line for line in build.speed.formula)


def test_a_moe_too_big_for_the_budgets_card_is_offered_the_experts_in_ram_first(catalog):
    build = recommend(gpt_oss_120b(False), catalog, today=TODAY)
    assert not build.feasible
    assert build.feasible_alternatives[0].startswith("llama.cpp --cpu-moe") and "within $2,500" in \
        build.feasible_alternatives[0]
    # The way out names the card and price its answers build: both chosen by one chooser (review RW: it said an
    # RTX 5070 Ti at $2,362, and applying it built an RTX 4080 SUPER at $2,477).
    line, changed, pins = build.applicable_alternatives[0]
    applied = recommend(changed, catalog, pins=pins or None, today=TODAY)
    gpu = applied.component("gpu")
    assert f"fits {gpu.name}" in line and f"build ${applied.total_price_cny / applied.cny_per_unit:,.0f}" in line, \
        (line, gpu.name, applied.total_price_cny / applied.cny_per_unit)


LLAMA_CPP_INT4 = {"mode": "inference", "precision": "int4", "serving_engine": "llama_cpp"}


@pytest.mark.parametrize(("scenario", "task", "preset", "reason"), [
    ("personal_research", {"mode": "inference", "precision": "int4", "serving_engine": "vllm"}, "gpt-oss-120b",
     "llama.cpp's"),
    ("personal_research", {"mode": "training"}, "gpt-oss-120b", "llama.cpp's"),
    ("personal_research", LLAMA_CPP_INT4, "llama3-8b", "gpt-oss-120b"),  # the message lists the MoE presets
    ("edge_deployment", LLAMA_CPP_INT4, "gpt-oss-20b", "not at the edge"),
])
def test_expert_offload_out_of_place_is_one_clear_error(scenario, task, preset, reason):
    table = {"scenario": scenario, "workload": {"preset": preset}, "task": {**task, "expert_offload": True}}
    with pytest.raises(ConfigFileError) as caught:
        answers_from_dict(table, path="a.toml")
    assert caught.value.key == "task.expert_offload" and reason in str(caught.value)


def test_a_gpu_sharing_its_memory_with_the_cpu_holds_the_experts_too(catalog):
    # DeepSeek-V3's experts in "system RAM" on a DGX Spark are in the same 128 GB: 4-bit, it does not fit there.
    job = answers(**{"workload__preset": "deepseek-v3", "workload__batch_size": 1, "workload__sequence_length": 4096,
                     "task__mode": "inference", "task__precision": "int4", "task__serving_engine": "llama_cpp",
                     "task__expert_offload": True, "budget__amount": 9000.0, "budget__currency": "USD"})
    build = recommend(job, catalog, pins={"gpu": ("dgx-spark-128gb", 1)}, today=TODAY)
    assert not build.memory_fits
    offloaded = recommend(job, catalog, pins={"gpu": ("rtx-5090-32gb", 1)}, today=TODAY)
    assert offloaded.memory_fits  # a dedicated card holds the rest; the experts go to its host's RAM


def test_a_cpu_only_pc_holds_what_either_offload_would_have_kept_in_ram(catalog):
    from pth_top.configs.cpu_only import cpu_context
    from pth_top.configs.recommend import _context
    from pth_top.configs.rules import load_rules

    for job in (gpt_oss_120b(), answers(**{**FLUX_INT8, "task__pipeline_offload": True})):
        ctx = _context(job, catalog, load_rules(), {})
        assert cpu_context(ctx).memory.total_bytes >= ctx.memory.host_offload_bytes


def test_experts_in_ram_buy_the_fastest_ram_the_budget_allows(catalog):
    # llama.cpp -cmoe decodes gpt-oss's experts from RAM: ~20 tokens/s for the 20b beside a Ryzen 9 5900X on
    # dual-channel DDR4-3200 (github.com/ggml-org/llama.cpp/discussions/15396). The cheapest platform is that DDR4
    # one; an AM5 board and a DDR5-6000 kit read the experts ~1.9x as fast, and $2,000 buys them for the 120b.
    job = answers(workload__preset="gpt-oss-120b", workload__sequence_length=4096, workload__batch_size=1,
                  task__mode="inference", task__precision="int4", task__serving_engine="llama_cpp",
                  task__generated_tokens=512, task__expert_offload=True, budget__currency="USD", budget__amount=2000.0)
    build = recommend(job, catalog, today=TODAY)
    kit = build.component("memory_kit")
    assert build.feasible and kit.spec["memory_type"] == "DDR5" and build.total_price_cny <= build.budget_cny
    assert any("the decode rate follows its bandwidth" in line for line in build.component("cpu").reasoning)
    tight = recommend(job.with_value("budget", "amount", 1800.0), catalog, today=TODAY)
    assert tight.feasible and tight.component("memory_kit").spec["memory_type"] == "DDR4"
    assert build.speed.figures["decode_tokens_per_s_per_stream"] > 1.5 * tight.speed.figures[
        "decode_tokens_per_s_per_stream"]
    # The 20b: $1,500 buys a card that holds every expert, at its own bandwidth and on the cheapest platform
    # (review QQ: an RTX 5080 holding them all was sold as "experts in RAM" on AM5 and DDR5); the user's own 8 GB
    # card, pinned, gets the fast platform.
    small = job.with_value("workload", "preset", "gpt-oss-20b").with_value("budget", "amount", 1500.0)
    whole = recommend(small, catalog, today=TODAY)
    assert whole.feasible and whole.memory.host_offload_bytes == 0, whole.memory.formula
    assert whole.component("memory_kit").spec["memory_type"] == "DDR4"
    assert whole.speed.figures["decode_tokens_per_s_per_stream"] > 100
    assert "experts in system RAM" not in whole.speed.summary[0]
    assert any("--cpu-moe is not needed on this card" in line for line in whole.memory.formula)
    pinned = recommend(small, catalog, pins={"gpu": ("rtx-5060-8gb", 1)}, today=TODAY)
    assert pinned.component("memory_kit").spec["memory_type"] == "DDR5"


def test_a_custom_mixture_of_experts_gives_its_expert_counts_and_gets_cpu_moe(catalog):
    # GLM-4.5-Air (zai-org/GLM-4.5-Air config.json: 128 routed experts, 8 a token, 106B with 12B active): its GGUF
    # Q4_K_M (~60 GB) with the experts in RAM needs ~11 GB of VRAM (lmstudio-ai/lmstudio-bug-tracker#897). A custom MoE
    # could not use --cpu-moe, so EUR 3,000 of used parts got only renting.
    job = answers(**GLM45_AIR, workload__experts_count=128, workload__experts_per_token=8,
                  workload__sequence_length=32768, workload__batch_size=1, task__mode="inference",
                  task__precision="int4", task__serving_engine="llama_cpp", budget__currency="EUR",
                  budget__amount=3000.0, budget__condition="used")
    said = recommend(job, catalog, today=TODAY).feasible_alternatives
    assert said and said[0].startswith("llama.cpp --cpu-moe"), said
    offloaded = recommend(job.with_value("task", "expert_offload", True), catalog, today=TODAY)
    # Most of the 60 GB of experts stay in RAM; a used 24 GB card takes the layers its free memory holds (--n-cpu-moe).
    assert offloaded.feasible and offloaded.memory.host_offload_bytes > 40e9
    assert offloaded.memory.total_bytes <= offloaded.gpu_usable_per_gpu_bytes
    half = job.with_value("workload", "experts_per_token", 0)
    assert [key for _, key, _ in cross_field_problems(half)] == ["experts_per_token"]


def test_a_moe_asked_on_several_gpus_is_offered_one_card_with_its_experts_in_ram(catalog):
    # Mixtral-8x22B (mistralai config.json: 140.6B, 39.2B active, 8 experts, 2 a token) Q4_K_M on 4 used GPUs for
    # $6,000: --cpu-moe on the 4 cards left each 1.8 GiB of work for $5,746; with the experts in RAM one card holds
    # the rest.
    job = answers("personal_research", workload__preset="custom", workload__parameters=140_630_071_296,
                  workload__active_parameters=39_158_800_384, workload__experts_count=8,
                  workload__experts_per_token=2, workload__layers=56, workload__hidden_size=6144,
                  workload__attention_heads=48, workload__kv_heads=8, workload__intermediate_size=16384,
                  workload__gated_mlp=True, workload__vocabulary_size=32768, workload__sequence_length=8192,
                  workload__batch_size=1, task__mode="inference", task__precision="int4",
                  task__serving_engine="llama_cpp", task__quantization="gguf_q4_k_m", scale__gpu_count=4,
                  budget__currency="USD", budget__amount=6000.0, budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    said = build.feasible_alternatives
    assert not build.feasible and any(line.startswith("one GPU with llama.cpp --cpu-moe") for line in said), said
    assert not any(line.startswith("llama.cpp --cpu-moe") for line in said), said
    # Timed on its build's RAM (review QQ), ~70 GB of experts at a desktop's: after the ways out that decode faster.
    moe = next(line for line in said if line.startswith("one GPU with llama.cpp --cpu-moe"))
    assert "slower than reading" in moe and "slower than reading" not in said[0], said


def test_experts_cross_the_pcie_link_the_board_wires_not_the_one_the_cpu_gives(catalog):
    # A Ryzen 7000 gives Gen5 lanes, but the B650-PLUS wires its x16 GPU slot at Gen4 (ASUS techspec): the experts a
    # -cmoe prefill streams in cross ~31.5 GB/s, not 63, so the first token takes twice as long.
    job = gpt_oss_120b(workload__sequence_length=32768)
    pins = {"gpu": ("rtx-5080-16gb", 1), "cpu": ("ryzen-7-7700x", 1)}
    gen4 = recommend(job, catalog, today=TODAY, pins={**pins, "motherboard": ("asus-tuf-b650-plus", 1)})
    gen5 = recommend(job, catalog, today=TODAY, pins={**pins, "motherboard": ("asus-proart-x870e-creator", 1)})
    assert gen4.component("cpu").spec["pcie_generation"] == 5 == gen4.component("gpu").spec["pcie_generation"]
    assert any("PCIe 4.0" in line or "Gen4" in line for line in gen4.component("motherboard").reasoning)
    first_token = [build.speed.figures["first_token_s"] for build in (gen4, gen5)]
    assert first_token[0] > 1.5 * first_token[1], first_token



def test_the_experts_of_as_many_layers_as_fit_stay_on_the_card(catalog):
    # llmfit#778: DeepSeek-Coder-V2-Lite on an 8 GB card with --n-cpu-moe 16 decodes at 49.6 tokens/s; all experts
    # in RAM leave ~5 GB of the card empty and decode at ~half that.
    from pth_top.configs.memory_inference import experts_kept_on_gpus

    job = answers(**{"workload__preset": "gpt-oss-20b", "workload__batch_size": 1, "workload__sequence_length": 4096,
                     "task__mode": "inference", "task__precision": "int4", "task__serving_engine": "llama_cpp",
                     "task__generated_tokens": 256, "task__expert_offload": True, "budget__amount": 1500.0,
                     "budget__currency": "USD", "budget__condition": "used"})
    shape = model_shape(job.workload)[0]
    everything = estimate_memory(job, shape)
    per_layer = everything.host_offload_bytes / shape.layers
    kept = experts_kept_on_gpus(everything, shape, 5.5 * per_layer, 1)
    assert kept.host_offload_bytes == pytest.approx(everything.host_offload_bytes - 5 * per_layer, abs=2)
    assert kept.weights_bytes == pytest.approx(everything.weights_bytes + 5 * per_layer, abs=2)
    assert any(f"--n-cpu-moe {shape.layers - 5}:" in line for line in kept.formula)
    assert experts_kept_on_gpus(everything, shape, 0.5 * per_layer, 1) == everything  # no room: all in RAM

    build = recommend(job, catalog, pins={"gpu": ("rtx-3060-ti-8gb", 1)}, today=TODAY)
    assert build.feasible
    in_ram = build.memory.host_offload_bytes
    assert 0 < in_ram < everything.host_offload_bytes  # some layers' experts on the card, the rest in RAM
    assert build.memory.total_bytes * 1.1 <= build.gpu_usable_per_gpu_bytes  # with the estimator's margin
    assert any("--n-cpu-moe" in line for line in build.memory.formula)
    share = in_ram / everything.host_offload_bytes
    device = speed_build.device_for(build.component("gpu").spec, "8 GB", 1, job, shape, None)
    device = dataclasses.replace(device, host_ram_gb_per_s=51.2)

    def rate(in_ram_share: float) -> float:
        out = speed_build.inference(job, shape, dataclasses.replace(device, experts_in_ram_share=in_ram_share))
        return out.figures["decode_tokens_per_s_per_stream"]

    assert rate(share) > 1.3 * rate(1.0)  # the experts on the card are read at its bandwidth, not the RAM's
    first = {s: speed_build.inference(job, shape, dataclasses.replace(device, experts_in_ram_share=s))
             .figures["first_token_s"] for s in (share, 1.0)}
    assert first[share] < first[1.0]  # and only the RAM's cross PCIe for a prompt


def test_a_prompt_copies_the_experts_over_the_main_cards_link_not_a_chipset_slots(catalog):
    # Audit RR: WizardLM-2-8x22B on two owned 3090s, the second in a B550's chipset slot (Gen3 x4): its 32k prompt was
    # timed at 17 min over that link, where llama.cpp offloads the matmuls to its main device in the CPU's x16 slot
    # (llama.cpp#11397's rig: ~100 tokens/s of prompt, ~3 min).
    job = answers(workload__preset="custom", workload__parameters=140_620_634_112,
                  workload__active_parameters=39_100_000_000, workload__layers=56, workload__hidden_size=6144,
                  workload__attention_heads=48, workload__kv_heads=8, workload__intermediate_size=16384,
                  workload__vocabulary_size=32000, workload__gated_mlp=True, workload__experts_count=8,
                  workload__experts_per_token=2, workload__sequence_length=32768, workload__batch_size=1,
                  task__mode="inference", task__precision="int4", task__serving_engine="llama_cpp",
                  task__quantization="gguf_q4_k_m", task__generated_tokens=200, task__kv_cache_dtype="fp8",
                  task__expert_offload=True, budget__amount=1500.0, budget__currency="USD",
                  budget__owned_gpu="rtx-3090-24gb", budget__owned_gpu_count=2)
    build = recommend(job, catalog, pins={"motherboard": ("asus-tuf-b550-plus", 1)}, today=TODAY)
    assert any("chipset" in line for line in build.component("motherboard").reasoning)
    assert any("over PCIe at 0.79 x 31.5 GB/s" in line for line in build.speed.formula), build.speed.formula
    assert build.speed.figures["first_token_s"] < 5 * 60
