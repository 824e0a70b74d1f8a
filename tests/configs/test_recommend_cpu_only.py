"""Recommendations without a discrete GPU: CPU-only builds, their display and RAM, and shared-memory boards."""

from __future__ import annotations

import re

import pytest

from pth_top.configs.answers import Answers, cross_field_problems
from pth_top.configs.parts import load_catalog
from pth_top.configs.recommend import recommend, swap
from pth_top.configs.render import render_build_text
from pth_top.configs.rules import budget_in_cny, load_rules
from tests.configs.builders import GLM45_AIR, QWEN25_3B, answers
from tests.configs.test_recommend import TODAY


def test_edge_deployment_uses_a_shared_memory_module(catalog):
    base = answers(workload__preset="resnet18", workload__batch_size=1, task__mode="inference", task__precision="fp16")
    build = recommend(Answers(scenario="edge_deployment", workload=base.workload, task=base.task), catalog, today=TODAY)
    gpu = build.component("gpu")
    assert gpu.spec["form"] == "edge" and gpu.spec["memory_kind"] == "shared"
    assert build.component("cpu") is None and build.component("psu") is None
    assert any("shared by CPU and GPU" in line for line in gpu.reasoning)


def test_tabular_data_gets_a_cpu_only_build_with_its_reason(catalog):
    chosen = answers(workload__preset="custom", workload__kind="generic", workload__parameters=0,
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
    # Small in memory is not small in compute (audit YB): Cascade R-CNN R-50 at COCO size, 490 GFLOP an image in
    # 0.3 GiB, runs about one a second on a desktop CPU (mmdetection's V100: 16.1 FPS); it keeps its GPU.
    detector = answers(workload__preset="custom", workload__kind="cnn", workload__parameters=69_170_000,
                       workload__input_size_px=1033, workload__forward_gflops_per_sample=490.0,
                       workload__batch_size=1, task__mode="inference", task__precision="fp32",
                       budget__currency="USD", budget__amount=4000.0)
    assert not recommend(detector, catalog, today=TODAY).cpu_only
    # Nor an encoder's (audit ZD): distil-whisper large-v3 (756M, 1,500 audio frames a 30 s window: ~2.3 TFLOP) in
    # 2 GiB; faster-whisper's README runs 13 min of audio in 26 s on an 8 GB RTX 3070 Ti.
    whisper = answers(workload__preset="custom", workload__parameters=756_000_000, workload__layers=34,
                      workload__decoder_layers=2, workload__hidden_size=1280, workload__attention_heads=20,
                      workload__sequence_length=1500, workload__decoder_sequence_length=448,
                      workload__vocabulary_size=51866, workload__batch_size=1, task__mode="inference",
                      task__precision="fp16", task__generated_tokens=224, data__kind="audio",
                      budget__currency="USD", budget__amount=1200.0)
    assert not recommend(whisper, catalog, today=TODAY).cpu_only
    # Review ZR: an encoder's time on the CPU decides, not a CNN's GFLOP cap: BERT-base at 128 tokens (~22 GFLOP
    # without its embedding rows) and ViT-B/16 keep the CPU-only PC, BERT-base at 512 tokens does not.
    for preset, tokens, cpu_only in (("bert-base", 128, True), ("vit-b16", 0, True), ("bert-base", 512, False)):
        encoder = answers(workload__preset=preset, workload__sequence_length=tokens, workload__batch_size=1,
                          task__mode="inference", task__precision="fp32", budget__amount=8000.0)
        assert recommend(encoder, catalog, today=TODAY).cpu_only == cpu_only, (preset, tokens)


def test_swapping_to_cpu_only_keeps_other_pins_but_sizes_its_own_psus(catalog):
    pins = {"gpu": ("none", 0), "psu": ("superflower-leadex-vii-xg-1300", 2), "cpu": ("xeon-platinum-8380", 1)}
    build = recommend(answers(), catalog, pins=pins, today=TODAY)
    assert build.cpu_only and build.component("psu").quantity == 1
    assert build.reasoning[0] == build.blockers[0]
    assert build.reasoning[1].startswith("CPU-only build: chosen with the GPU swap key")
    # GPT-2 training on a CPU, pinned or not, is first said to be inadequate; the pinned parts' price follows.
    assert "a CPU-only PC is not adequate for training" in build.blockers[0]
    assert build.blockers[1].startswith("not feasible within ¥15,000: this build with its pinned parts costs ¥")


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
                     data__kind="images", data__dataset_size_gb=150.0, budget__amount=9600.0)
    build = recommend(chosen, catalog, today=TODAY, pins={"gpu": ("none", 0)})
    assert build.cpu_only and build.blockers and not build.feasible
    assert build.reasoning[0] == build.blockers[0]
    assert "a CPU-only PC is not adequate for training" in build.blockers[0]
    assert build.feasible_alternatives[0].startswith("rent ")
    assert any(line.startswith("the same answers without the pinned parts") for line in build.feasible_alternatives)
    assert any("bfloat16, not fp16 AMP" in line for line in build.component("cpu").reasoning)
    # Trees on tabular data stay an adequate CPU-only recommendation.
    tabular = recommend(answers(workload__preset="custom", workload__kind="generic", workload__parameters=0,
                                data__kind="tabular", budget__amount=8000.0), catalog, today=TODAY)
    assert tabular.cpu_only and not tabular.blockers


def test_shared_memory_numbers_agree_and_a_single_board_is_no_gpu(catalog):
    # Review 12 finding 17: "8 GiB shared (3.8 usable at 95%)" disagreed with itself; "per GPU", "(8 GiB card)".
    base = answers(workload__preset="lenet5", workload__batch_size=1, task__mode="inference", task__precision="fp32",
                   budget__amount=700.0)
    chosen = Answers(scenario="edge_deployment", workload=base.workload, task=base.task, budget=base.budget)
    build = recommend(chosen, catalog, pins={"gpu": ("raspberry-pi-4b-8gb", 1)}, today=TODAY)
    floor = build.component("gpu").reasoning[0]
    assert "(5.7 usable: 8 - 2 GiB for the OS, x 95%)" in floor and "per GPU" not in floor
    text = render_build_text(build)
    assert "(8 GiB shared with the CPU): fits" in text and "GiB card" not in text and "Memory per GPU" not in text


def test_an_adequate_cpu_only_pc_over_budget_is_named_with_its_price(catalog):
    # Follows from finding 7: the cheapest CPU that drives a display may put the CPU-only PC over a small budget.
    build = recommend(answers(workload__preset="bert-base", workload__batch_size=1, task__mode="inference",
                              task__precision="fp32", budget__amount=4000.0), catalog, today=TODAY)
    # Over budget, it is still the nearest build: the closest parts shown, the GPU build it beats on price named.
    assert build.cpu_only
    nearest = r"costs ¥[\d,]+, a CPU-only PC; the cheapest GPU build costs ¥"
    assert build.feasible or re.search(nearest, build.blockers[0]), build.blockers


def test_an_entry_cpu_only_box_takes_an_igpu_cpu_on_ddr4_and_says_where_its_price_is_from(catalog):
    # 2026 DRAM: DDR5 for an AM5 iGPU CPU made the CPU-only box dearer than a GPU box; an iGPU CPU on DDR4 keeps a
    # tabular box under 5,000 yuan: the CPU is chosen with its board and RAM, not by its own price (a Ryzen 7 7700X
    # costs 41 yuan less than the Core i5-12400 in China, but its AM5 board and DDR5 kit cost ~1,700 more); the
    # Ryzen 5 5500GT on a ~366-yuan A520 board costs less than the i5-12400 on its 799-yuan B760.
    build = recommend(answers(workload__preset="custom", workload__kind="generic", workload__parameters=0,
                              task__optimizer="sgd", data__kind="tabular", data__dataset_size_gb=2.0,
                              budget__amount=5000.0), catalog, today=TODAY)
    assert build.cpu_only and build.feasible and build.total_price_cny <= 5000
    cpu = build.component("cpu")
    assert cpu.part_id == "ryzen-5-5500gt" and cpu.spec["integrated_graphics"]
    assert build.component("memory_kit").spec["memory_type"] == "DDR4"
    assert any("with its board and RAM" in line for line in cpu.reasoning), cpu.reasoning
    assert any(line.startswith("price ¥1,100: CONVERTED from the EU new price") for line in cpu.reasoning), \
        cpu.reasoning


def test_the_board_is_chosen_with_its_ram_as_the_cpu_was(tmp_path):
    # A DDR5 LGA1700 board 99 yuan under the DDR4 one: with its DDR5 kit it costs more, so the tabular box keeps the
    # DDR4 board the i5-12400 was ranked on (review: the board was then chosen by its own price alone).
    cheap = '{ amount = 700, currency = "CNY", as_of = 2026-08-28, source = "https://example.com/a-shop" }'
    (tmp_path / "mine.toml").write_text(f'[[motherboard]]\nid = "asus-tuf-z790-plus-d5"\nprices = {{ cn = {cheap} }}\n',
                                        encoding="utf-8")
    catalog = load_catalog(tmp_path)
    build = recommend(answers(workload__preset="custom", workload__kind="generic", workload__parameters=0,
                              task__optimizer="sgd", data__kind="tabular", data__dataset_size_gb=2.0,
                              budget__amount=5000.0), catalog, today=TODAY)
    assert build.cpu_only and build.feasible
    assert build.component("memory_kit").spec["memory_type"] == "DDR4"
    assert build.component("motherboard").part_id != "asus-tuf-z790-plus-d5"


def qwen25_3b_int4_edge(budget_usd: float) -> Answers:
    """Qwen2.5-3B (config.json's shape) int4 at 4k tokens, one stream, on an edge box."""
    return answers("edge_deployment", **QWEN25_3B, workload__sequence_length=4096, workload__batch_size=1,
                   task__mode="inference", task__precision="int4", data__dataset_size_gb=0.0,
                   budget__amount=budget_usd, budget__currency="USD")


def test_an_orin_nano_boots_from_a_microsd_card_so_a_small_budget_gets_it_not_a_pi(catalog):
    # For $500: with an NVMe drive the Orin Nano Super ($399) was over budget and a Pi 4 (~1 token/s, an hour to the
    # first token) was chosen; its kit boots from microSD (NVIDIA's user guide).
    build = recommend(qwen25_3b_int4_edge(500.0), catalog, today=TODAY)
    assert build.feasible and build.component("gpu").part_id == "jetson-orin-nano-super-8gb"
    assert build.component("storage").spec["interface"] == "sd"
    assert build.speed.figures["decode_tokens_per_s_per_stream"] > 10
    roomy = recommend(qwen25_3b_int4_edge(800.0), catalog, today=TODAY)  # ranked fastest first: the rest buys none
    assert any("no faster module for this job is within the budget" in line for line in roomy.reasoning)
    assert not any("best value card" in line for line in roomy.reasoning)


def test_a_tabular_data_set_is_held_in_ram_three_times_over(catalog):
    # XGBoost on a 40 GB table: the data frame and the DMatrix built from it take ~3x (LauraeDS's notes; pandas alone
    # 5-10x, McKinney), so 16 GB of RAM is not a build an engineer would sign.
    job = answers(workload__preset="custom", workload__kind="generic", workload__parameters=0,
                  workload__batch_size=1024, task__precision="fp32", data__dataset_size_gb=40.0, data__kind="tabular",
                  budget__amount=700.0, budget__currency="USD")
    build = recommend(job, catalog, today=TODAY)
    kit, count = build.component("memory_kit"), build.component("memory_kit").quantity
    assert kit.spec["capacity_gib"] * count >= 40 * 3 + 4
    assert any("the 40 GB table held in memory x 3" in line for line in kit.reasoning)
    small = recommend(answers(workload__preset="custom", workload__kind="generic", workload__parameters=0,
                              data__dataset_size_gb=2.0, data__kind="tabular", budget__amount=700.0,
                              budget__currency="USD"), catalog, today=TODAY)
    assert small.feasible and small.component("memory_kit").spec["capacity_gib"] >= 16


def test_tabular_training_on_the_cpu_buys_the_most_cores_the_budget_allows(catalog):
    # XGBoost on UCI HIGGS (11M rows x 28 features, an 8 GB CSV) for USD 1,500: the cheapest 6-core PC left half the
    # budget unspent while its own line said more cores buy speed. With USD 800 the cheapest PC is what there is.
    def cpu_build(amount: float):
        job = answers(workload__preset="custom", workload__kind="generic", workload__parameters=0,
                      workload__batch_size=1, task__precision="fp32", data__dataset_size_gb=8.0, data__kind="tabular",
                      budget__currency="USD", budget__amount=amount)
        return recommend(job, catalog, today=TODAY)

    roomy, tight = cpu_build(1500.0), cpu_build(800.0)
    assert roomy.cpu_only and tight.cpu_only
    assert roomy.component("cpu").spec["cores_count"] >= 16
    assert tight.component("cpu").spec["cores_count"] <= 8
    assert roomy.total_price_cny <= budget_in_cny(1500, "USD", load_rules())
    assert any("the most cores x clock" in line for line in roomy.component("cpu").reasoning)
    assert not any("the most cores x clock" in line for line in tight.component("cpu").reasoning)


def test_gpu_scale_training_under_the_cheapest_gpu_build_is_never_shown_a_cpu_only_pc(catalog):
    # Answer.AI's Llama 2 70B QLoRA on four 24 GB cards at $6,000, used: no GPU build is within budget, and a $950 PC
    # was the "closest build" and the first thing "feasible instead". The closest build is a GPU build.
    job = answers(workload__preset="llama-70b", workload__sequence_length=2048, workload__batch_size=4,
                  task__method="qlora", task__lora_rank=64, task__lora_targets="all_linear", task__recompute="full",
                  scale__gpu_count=4, scale__sharding="fsdp", budget__currency="USD", budget__amount=6000.0,
                  budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible and not build.cpu_only and build.component("gpu") is not None
    assert not any("CPU-only" in line for line in (*build.blockers, *build.feasible_alternatives))


def test_a_language_model_too_slow_on_the_cpu_is_not_offered_a_cpu_only_pc_on_price(catalog):
    # Mistral Large 2411 (mistralai config.json: 122.6B, 88 layers) Q4_K_M on 4 used GPUs for $5,000: no 4-GPU build
    # is within budget, and a $1,018 PC decoding at 0.9 tokens/s was the feasible build.
    job = answers("personal_research", workload__preset="custom", workload__parameters=122_610_069_504,
                  workload__layers=88, workload__hidden_size=12288, workload__attention_heads=96,
                  workload__kv_heads=8, workload__head_dim=128, workload__intermediate_size=28672,
                  workload__gated_mlp=True, workload__vocabulary_size=32768, workload__sequence_length=16384,
                  workload__batch_size=1, task__mode="inference", task__precision="int4",
                  task__serving_engine="llama_cpp", task__quantization="gguf_q4_k_m", scale__gpu_count=4,
                  budget__currency="USD", budget__amount=5000.0, budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible and build.component("gpu") is not None
    assert not any("CPU-only" in line for line in build.feasible_alternatives)


def test_a_pc_whose_speed_is_not_predicted_is_not_offered_on_price(catalog):
    # Kolors (Kwai: an SDXL-class 2.58B UNet, 6,761 GFLOP a pass, and ChatGLM3-6B) at 1024 px in fp16 for CNY 12,000:
    # a CNY 4,856 CPU-only PC was the second way out, "no GPU build within the budget holds the workload", after a
    # GPU build within it, with no time for an image a CPU takes minutes over.
    job = answers("personal_research", workload__preset="custom", workload__kind="transformer",
                  workload__parameters=2_580_000_000, workload__layers=70, workload__hidden_size=1280,
                  workload__attention_heads=20, workload__intermediate_size=5120, workload__sequence_length=4352,
                  workload__forward_gflops_per_sample=6761.0, workload__denoising_steps=50,
                  workload__classifier_free_guidance=True, workload__frozen_parameters=6_330_000_000,
                  workload__frozen_precision="fp16", workload__batch_size=1, task__mode="inference",
                  task__precision="fp16", data__kind="images", budget__currency="CNY", budget__amount=12000.0)
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible and build.feasible_alternatives
    assert not any("CPU-only" in line for line in build.feasible_alternatives), build.feasible_alternatives


@pytest.mark.parametrize("preset", ["bert-base", "resnet50"])
def test_an_encoder_or_cnn_server_on_a_small_budget_still_gets_a_cpu_only_pc(catalog, preset):
    # Their CPU speed is not predicted either, but a CPU runs a forward pass of them in milliseconds: not "unknown".
    build = recommend(answers("inference_server", workload__preset=preset, workload__batch_size=8,
                              task__mode="inference", task__precision="fp16", budget__amount=850.0,
                              budget__currency="USD"), catalog, today=TODAY)
    assert build.feasible and build.cpu_only, build.blockers


def test_lenet_on_mnist_is_trained_on_a_cpu_only_pc_not_sent_to_rent_a_gpu(catalog):
    # The guide's small class (LeNet, 2 GB) on MNIST-sized data (0.1 GB): a CPU trains it; "rent an A10" is not an
    # answer an engineer would sign. ImageNet-sized data keeps needing a GPU (the test above).
    job = answers(workload__preset="lenet5", workload__batch_size=64, data__kind="images", data__dataset_size_gb=0.1,
                  budget__amount=5000.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.feasible and build.cpu_only, build.blockers
    assert any(line.startswith("CPU-only build: small-model training") for line in build.reasoning)


def test_a_tabular_job_needs_no_parameter_count(catalog):
    # XGBoost on a 2 GB table (szilard/GBM-perf's airline set): trees have no parameter count to give; the build is
    # sized by the table. Any other custom model still needs one.
    job = answers(workload__preset="custom", workload__kind="generic", workload__parameters=0, data__kind="tabular",
                  data__dataset_size_gb=2.0, budget__amount=6000.0)
    assert not cross_field_problems(job)
    assert recommend(job, catalog, today=TODAY).cpu_only
    images = job.with_value("data", "kind", "images")
    assert [key for _, key, _ in cross_field_problems(images)] == ["parameters"]


def test_a_small_llm_on_the_cpu_gets_the_entry_cpu_its_ram_bandwidth_decodes_on(catalog):
    # deemwar-products/llama-cpu-benchmarks (2026-05-20): Phi-4-mini (3.8B) Q4_K_M, stock llama.cpp, on a 6-core Xeon
    # E-2176G (dual-channel DDR4-2666, 42.7 GB/s): 10.62 tokens/s. Decode reads the weights once a token (its tied
    # embedding whole, as the LM head), so the
    # entry 6-core PC does it; the 8-core tier with a liquid cooler priced it over a $700 budget, leaving rental.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=3_836_021_760,
                  workload__layers=32, workload__hidden_size=3072, workload__attention_heads=24, workload__kv_heads=8,
                  workload__intermediate_size=8192, workload__gated_mlp=True, workload__vocabulary_size=200_064,
                  workload__tied_embeddings=True, workload__sequence_length=2048, workload__batch_size=1,
                  task__mode="inference",
                  task__precision="int4", task__serving_engine="llama_cpp", budget__currency="USD",
                  budget__amount=700.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.feasible and build.component("gpu") is None
    cpu = build.component("cpu")
    assert cpu.spec["cores_count"] < 8 and any("memory bandwidth sets its speed" in line for line in cpu.reasoning)
    published = 10.62 * 51.2 / 42.7  # scaled to the build's dual-channel DDR4-3200
    assert build.speed.figures["decode_tokens_per_s_per_stream"] == pytest.approx(published, rel=0.35)
    # A budget that buys faster RAM buys it: the CPU-only PC at $1,200 is AM5 with DDR5, decoding ~1.9x as fast.
    roomy = recommend(job.with_value("budget", "amount", 1200.0), catalog, pins={"gpu": ("none", 0)}, today=TODAY)
    assert roomy.component("memory_kit").spec["memory_type"] == "DDR5" and roomy.total_price_cny <= roomy.budget_cny
    assert roomy.speed.figures["decode_tokens_per_s_per_stream"] > 1.5 * build.speed.figures[
        "decode_tokens_per_s_per_stream"]


def test_a_cpu_only_pc_holds_the_whole_model_whatever_gpu_count_was_asked(catalog):
    # GLM-4.5-Air Q4_K_M (106B, 12B active; its GGUF ~60 GB) asked on 3 GPUs with EUR 2,500: the CPU-only PC was sized
    # for a third of the model (21.8 GiB) and given 32 GB of RAM, which cannot load it.
    # At 4k (~6 tokens/s from dual-channel DDR5) the PC is offered, the 3-GPU builds in budget (8-12 GB cards) holding
    # none of it; at 32k it decodes at 3.5, too slow to be offered, and one used card with the experts in RAM is.
    job = answers(**GLM45_AIR, workload__sequence_length=4096, workload__batch_size=1, task__mode="inference",
                  task__precision="int4", task__serving_engine="llama_cpp", scale__gpu_count=3,
                  budget__currency="EUR", budget__amount=2500.0, budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    # The PC is the build, or the first way out (never after renting: a machine in budget that runs it comes first).
    assert build.component("gpu") is None or build.feasible_alternatives[0].startswith("a CPU-only PC"), \
        build.feasible_alternatives
    pc = recommend(job, catalog, pins={"gpu": ("none", 0)}, today=TODAY)
    kit = pc.component("memory_kit")
    assert kit.spec["capacity_gib"] * kit.quantity >= 64 and pc.memory.total_bytes > 60 * 2**30
    assert pc.feasible and pc.total_price_cny <= pc.budget_cny
    long = recommend(job.with_value("workload", "sequence_length", 32768).with_value("workload", "experts_count", 128)
                     .with_value("workload", "experts_per_token", 8), catalog, today=TODAY)
    assert long.component("gpu") is not None and not long.feasible
    assert any(line.startswith("one GPU with llama.cpp --cpu-moe") for line in long.feasible_alternatives), \
        long.feasible_alternatives


def test_only_a_decoding_language_model_gets_the_cpu_tier_set_by_ram_bandwidth(catalog):
    # An encoder's or a CNN's forward pass is compute-bound: a CPU-only BERT keeps the guide's tiers and is not told
    # that decode reads every weight from RAM.
    bert = answers(workload__preset="bert-large", workload__batch_size=8, task__mode="inference",
                   task__precision="fp32", budget__currency="USD", budget__amount=700.0)
    build = recommend(bert, catalog, pins={"gpu": ("none", 0)}, today=TODAY)
    assert build.component("gpu") is None
    assert not any("memory bandwidth sets its speed" in line for line in build.component("cpu").reasoning)


def test_a_cpu_only_language_model_build_names_the_faster_one_card_build_within_budget(catalog):
    # GLM-4.5-Air Q4 at 8k, EUR 2,300 used, asked on 3 GPUs: the CPU-only PC decodes ~5.5 tokens/s from DDR5; one
    # used RTX 3090 with the routed experts in RAM (llama.cpp --cpu-moe) decodes over twice that within budget, and
    # is named before it: as a CPU-only build's "faster within budget", or as the first way out.
    job = answers(**GLM45_AIR, workload__experts_count=128, workload__experts_per_token=8,
                  workload__sequence_length=8192, workload__batch_size=1, task__mode="inference",
                  task__precision="int4", task__serving_engine="llama_cpp", scale__gpu_count=3,
                  budget__currency="EUR", budget__amount=2300.0, budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    faster = [line for line in build.warnings if line.startswith("faster within budget: one ")] \
        if build.component("gpu") is None else build.feasible_alternatives[:1]
    assert len(faster) == 1 and "expert_offload" in faster[0] and "--cpu-moe" in faster[0], faster
    assert build.component("gpu") is None or build.feasible_alternatives[1].startswith("a CPU-only PC")
    other = recommend(job.with_value("scale", "gpu_count", 1).with_value("task", "expert_offload", True), catalog,
                      today=TODAY)
    cpu_only = build.speed.figures["decode_tokens_per_s_per_stream"] if build.component("gpu") is None else \
        float(build.feasible_alternatives[1].split("(~")[1].split(" tokens/s")[0])
    assert other.feasible and other.speed.figures["decode_tokens_per_s_per_stream"] >= 2 * cpu_only


def test_a_cpu_only_pc_just_over_budget_that_decodes_well_is_named(catalog):
    # OLMoE-1B-7B (allenai config.json: 6.9B, 1.3B active, 64 experts, 8 a token) Q4_K_M for EUR 600: the PC just
    # over it decodes ~32 tokens/s from DDR4, but the build only named a GPU PC and renting. At EUR 500 the EUR 572 PC
    # (a Ryzen 5 5500GT on an A520 board) is that PC.
    job = answers("personal_research", workload__preset="custom", workload__parameters=6_919_000_000,
                  workload__active_parameters=1_280_000_000, workload__experts_count=64,
                  workload__experts_per_token=8, workload__layers=16, workload__hidden_size=2048,
                  workload__attention_heads=16, workload__kv_heads=16, workload__intermediate_size=1024,
                  workload__gated_mlp=True, workload__vocabulary_size=50304, workload__sequence_length=4096,
                  workload__batch_size=1, task__mode="inference", task__precision="int4",
                  task__serving_engine="llama_cpp", task__quantization="gguf_q4_k_m", task__generated_tokens=512,
                  budget__currency="EUR", budget__amount=500.0)
    # And where the GPU PC is dearer still, the CPU-only PC is the closest build.
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible and build.cpu_only, build.blockers
    assert "costs €572, a CPU-only PC; the cheapest GPU build costs €991" in build.blockers[0], build.blockers
    assert build.speed.figures["decode_tokens_per_s_per_stream"] > 20


def test_a_cpu_only_pc_within_budget_follows_the_gpu_lever_where_no_card_in_budget_holds_the_model(catalog):
    # Qwen3.5-35B-A3B Q4_K_M at 32k (its config.json shape) for $1,500, used cards: the budget's cards are too small,
    # one used 12 GB card with --cpu-moe or two with an fp8 KV cache (the second in a chipset slot) hold it,
    # and the ~$924 CPU-only PC within budget is offered after them; it was "$-509 over".
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=35_000_000_000,
                  workload__active_parameters=3_000_000_000, workload__experts_count=256,
                  workload__experts_per_token=8, workload__layers=40, workload__hidden_size=2048,
                  workload__attention_heads=16, workload__kv_heads=2, workload__head_dim=256,
                  workload__gated_mlp=True, workload__vocabulary_size=248_320, workload__sequence_length=32768,
                  workload__batch_size=1, task__mode="inference", task__precision="int4",
                  task__quantization="gguf_q4_k_m", task__serving_engine="llama_cpp", budget__currency="USD",
                  budget__amount=1500.0, budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible and not any("CPU-only PC would do" in line for line in build.blockers), build.blockers
    lines = build.feasible_alternatives
    assert "within $1,500" in lines[0] and ("--cpu-moe" in lines[0] or "fits 2 x" in lines[0]), lines
    # Minutes to prefill 32k tokens on its cores: after the GPU builds, and said (audit YJ2).
    cpu = [line for line in lines if line.startswith("a CPU-only PC, $")]
    assert cpu and "tokens/s a stream" in cpu[0] and "first token after a 32,768-token prompt" in cpu[0], lines


def test_a_cpu_only_pc_keeps_the_estimators_margin_in_ram(catalog):
    # SmallThinker-21B-A3B in Q4_0 (its card: 11.47 GiB; here 11.8 GiB, + llama.cpp's 0.3 GiB compute buffer) for EUR
    # 900: 11.8 + 4 GiB for the OS filled a 16 GiB kit to the byte, paged out by the first browser; with the GPU's 10 %
    # margin it needs a 32 GB kit.
    chosen = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=21_500_000_000,
                     workload__active_parameters=3_000_000_000, workload__experts_count=64,
                     workload__experts_per_token=6, workload__layers=52, workload__hidden_size=2560,
                     workload__attention_heads=28, workload__kv_heads=4, workload__head_dim=128,
                     workload__intermediate_size=768, workload__vocabulary_size=151936,
                     workload__sequence_length=4096, workload__batch_size=1, task__mode="inference",
                     task__precision="int4", task__quantization="gguf_q4_0", task__serving_engine="llama_cpp",
                     task__generated_tokens=512, budget__amount=900.0, budget__currency="EUR")
    build = recommend(chosen, catalog, today=TODAY)
    assert build.cpu_only and build.feasible, build.blockers
    model_gib = build.memory.total_bytes / 2**30
    assert 15.5 < model_gib + 4 < 16.5  # the case: model + OS about a 16 GiB kit, 0.1 GiB over it now
    kit = build.component("memory_kit")
    ram_gib = kit.spec["capacity_gib"] * kit.quantity
    assert ram_gib >= model_gib * 1.1 + 4, ram_gib


def test_a_cpu_only_decode_fills_every_memory_channel_of_a_server_cpu(catalog):
    # Phi-4 14B Q4_K_M under llama.cpp on an EPYC 9554: 28.74 tokens/s with all 12 channels of DDR5 filled
    # (ahelpme.com/?p=6685); the cheapest kit for the 16 GiB floor filled 4, a third of the bandwidth the decode reads.
    chosen = answers(workload__preset="custom", workload__parameters=14_659_507_200, workload__layers=40,
                     workload__hidden_size=5120, workload__attention_heads=40, workload__kv_heads=10,
                     workload__intermediate_size=17920, workload__gated_mlp=True, workload__vocabulary_size=100352,
                     workload__sequence_length=4096, workload__batch_size=1, task__mode="inference",
                     task__precision="int4", task__serving_engine="llama_cpp", task__quantization="gguf_q4_k_m",
                     budget__currency="USD", budget__amount=12000.0)
    build = recommend(chosen, catalog, today=TODAY, pins={"gpu": ("none", 0), "cpu": ("epyc-9554", 1)})
    kit = build.component("memory_kit")
    assert kit.spec["modules_count"] * kit.quantity == 12
    assert any("each of the 12 memory channels" in line for line in kit.reasoning)


def test_a_neural_network_on_a_table_streams_it_and_gets_a_gpu(catalog):
    # FT-Transformer's default shape (3 blocks, d 192, 8 heads; Gorishniy et al. arXiv:2106.11959 table 13) on a 300 GB
    # table: a network reads its table in batches (NVIDIA's DLRM reads Criteo's 1 TB from binary files), so it is no
    # XGBoost job held 3x in 904 GiB of RAM on a CPU-only PC or an 8-GPU barebone (audit YC2).
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=5_000_000,
                  workload__layers=3, workload__hidden_size=192, workload__attention_heads=8,
                  workload__sequence_length=30, workload__batch_size=1024, data__kind="tabular",
                  data__dataset_size_gb=300.0, budget__amount=3000.0, budget__currency="USD")
    build = recommend(job, catalog, today=TODAY)
    assert build.feasible and not build.cpu_only and build.component("gpu") is not None
    kit = build.component("memory_kit")
    assert kit.spec["capacity_gib"] * kit.quantity < 300
    assert not any("table held in memory" in line for line in kit.reasoning)
    # Trees have no parameter count; a generic model with one is a network (an MLP), as in review AD's 200M one.
    trees = job.with_value("workload", "kind", "generic").with_value("workload", "parameters", 0) \
        .with_value("data", "dataset_size_gb", 8.0)
    assert recommend(trees, catalog, today=TODAY).cpu_only
    mlp = recommend(trees.with_value("workload", "parameters", 200_000_000).with_value("data", "dataset_size_gb", 30.0),
                    catalog, today=TODAY)
    assert not mlp.cpu_only and not any("table held in memory" in line
                                        for line in mlp.component("memory_kit").reasoning)


def test_a_small_embedding_server_runs_on_a_cpu_only_pc_at_its_predicted_rate(catalog):
    # all-MiniLM-L6-v2 (22.7M: 6 layers of 384, 12 heads, MLP 1536, V 30,522) serving 16-token sentences in batches of
    # 32 for CNY 5,000: sentence-transformers lists it at ~750 sentences/s on a CPU. A server was held to the 8-core
    # tier with a 240 mm cooler (CNY 5,459, over) and sent to rent an A10; with a stated 750/s the PC was dropped, as
    # its inputs a second were not predicted (audit YG2).
    job_fields = dict(workload__preset="custom", workload__kind="transformer", workload__parameters=22_713_216,
                      workload__layers=6, workload__hidden_size=384, workload__attention_heads=12,
                      workload__vocabulary_size=30522, workload__intermediate_size=1536, workload__encoder_only=True,
                      workload__sequence_length=16, workload__batch_size=32, task__mode="inference",
                      task__precision="fp32", budget__amount=5000.0)
    job = answers("inference_server", **job_fields)
    build = recommend(job, catalog, today=TODAY)
    assert build.feasible and build.cpu_only and build.component("cpu").spec["cores_count"] < 8
    assert build.speed.figures["samples_per_s"] > 750 and "inputs/s on the CPU's cores" in build.speed.summary[0]
    stated = recommend(job.with_value("task", "target_samples_per_s", 750.0), catalog, today=TODAY)
    assert stated.feasible and stated.cpu_only, stated.blockers
    beyond = recommend(job.with_value("task", "target_samples_per_s", 5000.0), catalog, today=TODAY)
    assert not beyond.cpu_only
    # A stated rate picks the cores that meet it, not the cheapest 6-core PC (review AE); one they meet only at their
    # bound, over PyTorch's listed share of it, gets the GPU build the budget buys (audit CY65).
    faster = recommend(answers(**{**job_fields, "task__target_samples_per_s": 2000.0, "budget__amount": 8000.0}),
                       catalog, today=TODAY)
    assert not faster.cpu_only and faster.feasible and faster.speed.figures["samples_per_s"] >= 2000


def test_a_cpu_only_pc_that_takes_minutes_to_a_first_token_comes_after_the_gpu_builds_and_says_so(catalog):
    # Audit YJ2: Qwen3-Coder-30B-A3B (config.json: 48 layers of 2048, 32 heads, 4 KV heads of 128, 128 experts, 8 a
    # token) in Q4_K_M at 128k with an 8-bit KV cache for $3,500: the $924 CPU-only PC came second, before GPU builds
    # within budget, with no word of its hours-long prefill of a 131k-token prompt.
    job = answers(workload__preset="custom", workload__parameters=30_532_122_624,
                  workload__active_parameters=3_300_000_000, workload__experts_count=128,
                  workload__experts_per_token=8, workload__layers=48, workload__hidden_size=2048,
                  workload__attention_heads=32, workload__kv_heads=4, workload__head_dim=128,
                  workload__intermediate_size=768, workload__gated_mlp=True, workload__vocabulary_size=151_936,
                  workload__sequence_length=131_072, workload__batch_size=1, task__mode="inference",
                  task__precision="int4", task__quantization="gguf_q4_k_m", task__serving_engine="llama_cpp",
                  task__kv_cache_dtype="fp8", task__generated_tokens=1024, budget__amount=3500.0,
                  budget__currency="USD")
    lines = recommend(job, catalog, today=TODAY).feasible_alternatives
    cpu = [index for index, line in enumerate(lines) if line.startswith("a CPU-only PC")]
    assert cpu and "first token after a 131,072-token prompt in ~" in lines[cpu[0]], lines
    builds = [index for index, line in enumerate(lines) if "within $3,500" in line]
    assert builds and max(builds) < cpu[0], lines


def test_a_small_model_whose_epoch_takes_minutes_on_the_cores_is_trained_on_a_gpu(catalog):
    # Audit XA5: nanoGPT's shakespeare-char model (6 x 384, block 256; 10.7M parameters on 1M tokens, ~71 TFLOP an
    # epoch) fits 2 GiB on 1 MB of data, and USD 1,500 bought a $622 CPU PC; its README runs it ~3 min on an A100 and
    # shrinks it for a CPU. An epoch over a minute on the cores makes it a GPU's; LeNet on MNIST stays a CPU's.
    nanogpt = answers(workload__preset="custom", workload__kind="transformer", workload__layers=6,
                      workload__hidden_size=384, workload__attention_heads=6, workload__vocabulary_size=65,
                      workload__sequence_length=256, workload__batch_size=64, task__mode="training",
                      task__precision="bf16", data__kind="text", data__dataset_size_gb=0.001,
                      data__tokens_count=1_003_854, budget__amount=1500.0, budget__currency="USD",
                      budget__condition="used")
    build = recommend(nanogpt, catalog, today=TODAY)
    assert build.feasible and not build.cpu_only, build.reasoning[:3]
    lenet = recommend(answers(workload__preset="lenet5", workload__batch_size=64, data__kind="images",
                              data__images_count=60_000, data__dataset_size_gb=0.05, budget__amount=5000.0),
                      catalog, today=TODAY)
    line = next(line for line in lenet.reasoning if line.startswith("CPU-only build: small-model training"))
    assert "an epoch of 60,000 images (data.images_count) on its cores" in line


def test_a_decoder_generating_in_pytorch_is_not_sold_a_cpu_only_pc(catalog):
    # Audit XW12: ChatTTS (a 20-layer GPT of 768 generating ~1,400 audio tokens under generate(); its README asks for a
    # 4 GB GPU) for CNY 6,000 was sold a CPU-only PC, "~0 ms an input", timed at llama.cpp's CPU rate it has no port
    # for. One forward pass does not time a generation, nor llama.cpp's rate generate()'s.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__layers=20,
                  workload__hidden_size=768, workload__attention_heads=12, workload__intermediate_size=3072,
                  workload__gated_mlp=True, workload__vocabulary_size=21_178, workload__sequence_length=1600,
                  workload__frozen_parameters=100_000_000, workload__batch_size=1, task__mode="inference",
                  task__precision="fp16", task__serving_engine="hf_generate", task__generated_tokens=1400,
                  data__kind="audio", budget__amount=6000.0, budget__currency="CNY")
    build = recommend(job, catalog, today=TODAY)
    assert not build.cpu_only and build.feasible, build.blockers
    assert build.component("gpu").part_id == "rtx-3060-12gb", build.component("gpu").part_id


def test_a_small_cnn_at_a_stated_camera_rate_is_timed_on_the_cpu_and_gets_the_cpu_only_pc(catalog):
    # Audit XZ13: RTMPose-m (3.86 GFLOP; ONNX Runtime on an i7-11700, 11.06 ms, 90 FPS) for a 30 FPS camera with
    # EUR 700: a CNN's CPU rate was not predicted, so the stated rate ruled out the EUR 740 PC, and the closest build
    # was an RTX 5060 PC for EUR 1,065.
    job = answers(workload__preset="custom", workload__kind="cnn", workload__parameters=13_590_000,
                  workload__input_size_px=222, workload__forward_gflops_per_sample=3.86, workload__batch_size=1,
                  task__mode="inference", task__precision="fp32", task__target_samples_per_s=30.0,
                  data__kind="images", data__dataset_size_gb=1.0, budget__amount=700.0, budget__currency="EUR")
    build = recommend(job, catalog, today=TODAY)
    assert build.component("gpu") is None and build.component("cpu") is not None
    assert 30 < build.speed.figures["samples_per_s"] < 120
    assert "ONNX Runtime" in " ".join(build.speed.formula)


def test_whisper_base_under_any_gpu_build_gets_a_cpu_only_pc_that_runs_it_in_whisper_cpp(catalog):
    # Audit ZF19: Whisper base (74M; 6 + 6 layers of 512) at $700 was refused and sent to rent an A10, its generate()
    # "needing a GPU"; whisper.cpp encodes its 30 s window in 1.1-1.6 s on 2018 desktop and laptop cores (issue #89).
    job = answers(workload__preset="custom", workload__parameters=74_000_000, workload__layers=12,
                  workload__decoder_layers=6, workload__hidden_size=512, workload__attention_heads=8,
                  workload__intermediate_size=2048, workload__vocabulary_size=51865, workload__sequence_length=1500,
                  workload__decoder_sequence_length=448, workload__tied_embeddings=True, workload__batch_size=1,
                  task__mode="inference", task__precision="fp16", task__generated_tokens=224, data__kind="audio",
                  budget__currency="USD", budget__amount=700.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.cpu_only and build.feasible, build.blockers
    assert any("in whisper.cpp" in line for line in build.reasoning)
    assert build.speed.figures["first_token_s"] < 1.6  # faster than a 2018 CPU's window
    # The window runs through the encoder's 6 of the 12 layers alone (audit ZI20: Whisper medium's through all).
    line = next(line for line in build.speed.formula if line.startswith("first token:"))
    assert "the encoder's 2N x 1,500 prompt tokens" in line and line.startswith("first token: 0.125 TFLOP"), line


def test_a_small_speech_model_gets_a_cpu_only_pc_within_600_euros_timed_as_it_is_counted(catalog):
    # Audit ZU36: Moonshine Tiny Streaming (34M, int8, 6 + 6 layers of 320), which its README runs in 69 ms on Linux
    # x86 and 237 ms on a Raspberry Pi 5, was refused at EUR 600 (the cheapest CPU-only PC EUR 740, on a EUR 207 B760
    # board) and sent to rent an A10; its decode was timed with bitsandbytes' GPU kernels, its weights GGUF Q8_0.
    job = answers(workload__preset="custom", workload__parameters=34_000_000, workload__layers=12,
                  workload__decoder_layers=6, workload__hidden_size=320, workload__attention_heads=8,
                  workload__vocabulary_size=32768, workload__sequence_length=416, workload__decoder_sequence_length=64,
                  workload__batch_size=1, task__mode="inference", task__precision="int8", data__kind="audio",
                  budget__currency="EUR", budget__amount=600.0)
    for engine in ("auto", "hf_generate"):  # whatever engine is answered, a CPU runs it in ggml
        build = recommend(job.with_value("task", "serving_engine", engine), catalog, today=TODAY)
        assert build.cpu_only and build.feasible, build.blockers
        assert build.component("cpu").spec["integrated_graphics"], build.component("cpu").part_id
        assert not any("bitsandbytes" in line for line in build.speed.formula), build.speed.formula
        # Its 30 s window through the encoder within the Pi 5's published 237 ms, as GGUF Q8_0 reads.
        assert build.speed.figures["decode_tokens_per_s_per_stream"] > 0
        assert build.speed.figures["first_token_s"] < 0.237, build.speed.figures


def test_a_4_bit_decoder_under_generate_is_offered_its_gguf_on_a_cpu_only_pc_before_renting(catalog):
    # Audit ZF19: Yi-6B-Chat-4bits (AWQ, transformers generate(); 01-ai's docs: 4 GB, an RTX 3060) for a CNY 5,000
    # student: no GPU build within budget, and the only way out was an A10 by the hour.
    job = answers(workload__preset="custom", workload__layers=32, workload__hidden_size=4096,
                  workload__attention_heads=32, workload__kv_heads=4, workload__intermediate_size=11008,
                  workload__gated_mlp=True, workload__vocabulary_size=64000, workload__sequence_length=4096,
                  workload__batch_size=1, task__mode="inference", task__precision="int4",
                  task__quantization="awq_g128", task__serving_engine="hf_generate", task__generated_tokens=512,
                  data__kind="text", budget__currency="CNY", budget__amount=5000.0)
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible
    line, changed, pins = build.applicable_alternatives[0]
    assert line.startswith("the same model as llama.cpp's GGUF Q4_K_M"), build.feasible_alternatives
    assert build.feasible_alternatives[1].startswith("rent ")
    on_cpu = recommend(changed, catalog, pins=pins, today=TODAY)
    assert on_cpu.cpu_only and on_cpu.total_price_cny <= 5000
    assert on_cpu.speed.figures["decode_tokens_per_s_per_stream"] >= 5


def test_a_cpu_only_pc_short_of_a_stated_rate_is_offered_at_its_rate_before_renting(catalog):
    # Audit ZK22: Lightweight OpenPose (arXiv:1811.12004: 4.1M parameters, 9 G multiply-adds at 368 px, 15.5 GFLOP at
    # the 456 x 256 it timed) for a 25 FPS webcam on $700 was sent to rent an A10; the PC's rate was never said. At
    # $600 no GPU build is within it (a used RTX 3060's is $696), and the $517 PC is.
    job = answers(workload__preset="custom", workload__kind="cnn", workload__parameters=4_100_000,
                  workload__forward_gflops_per_sample=15.5, workload__input_size_px=342, workload__batch_size=1,
                  task__mode="inference", task__precision="fp32", task__target_samples_per_s=25.0,
                  data__kind="images", data__dataset_size_gb=1.0, budget__currency="USD", budget__amount=600.0)
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible
    line, changed, pins = build.applicable_alternatives[0]
    assert line.startswith("a CPU-only PC, $") and "short of the 25 asked" in line, build.feasible_alternatives
    assert build.feasible_alternatives[1].startswith("rent ")
    on_cpu = recommend(changed, catalog, pins=pins, today=TODAY)
    assert on_cpu.cpu_only and on_cpu.feasible and on_cpu.total_price_cny <= budget_in_cny(600.0, "USD", load_rules())
    assert 12.5 <= changed.task.target_samples_per_s <= on_cpu.speed.figures["samples_per_s"]


def test_a_cpu_only_pc_that_decodes_slowly_is_offered_before_renting_and_said_slow(catalog):
    # Audit ZQ24: a 13B Q4_K_M in llama.cpp for EUR 700-800, where a Ryzen 7 5800X with DDR4 is reported at 4-6
    # tokens/s (specpicks, 2026): a PC at ~4.3 from DDR4-3200 was dropped as under the 5 a reader keeps up with, and the
    # only way out was renting an A10.
    job = answers(workload__preset="llama-13b", workload__sequence_length=2048, workload__batch_size=1,
                  task__mode="inference", task__precision="int4", task__quantization="gguf_q4_k_m",
                  task__serving_engine="llama_cpp", task__generated_tokens=512, budget__currency="EUR",
                  budget__amount=800.0)
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible
    line, changed, pins = build.applicable_alternatives[0]
    assert line.startswith("a CPU-only PC, €") and ", slow: ~" in line, build.feasible_alternatives
    assert changed == job and build.feasible_alternatives[1].startswith("rent ")
    assert 2.5 <= recommend(changed, catalog, pins=pins, today=TODAY).speed.figures[
        "decode_tokens_per_s_per_stream"] < 5
    tighter = recommend(job.with_value("budget", "amount", 550.0), catalog, today=TODAY)  # the PC: EUR 572
    assert any(line.startswith("a CPU-only PC would do (it decodes ~") and "slow" in line
               for line in tighter.blockers), tighter.blockers


def test_a_cpu_encoder_that_meets_a_stated_rate_by_its_upper_bound_only_says_so(catalog):
    # Audit ZS25: all-mpnet-base-v2 (12 x 768, MLP 3,072) at 128 tokens, 20 chunks a second for $800: a $622 PC at ~25
    # by llama.cpp's prefill rate, an upper bound; sentence-transformers lists PyTorch at about half that rate.
    job = answers("inference_server", workload__preset="custom", workload__kind="transformer",
                  workload__encoder_only=True, workload__layers=12, workload__hidden_size=768,
                  workload__attention_heads=12, workload__intermediate_size=3072, workload__vocabulary_size=30527,
                  workload__sequence_length=128, workload__batch_size=32, task__mode="inference",
                  task__precision="fp32", task__target_samples_per_s=20.0, data__dataset_size_gb=5.0,
                  budget__currency="USD", budget__amount=800.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.cpu_only and build.speed.figures["samples_per_s"] >= 20
    assert any(line.startswith("the stated 20 inputs/s is met by this rate's upper bound only") for line in
               build.warnings), build.warnings
    lower = recommend(job.with_value("task", "target_samples_per_s", 10.0), catalog, today=TODAY)
    assert not any("upper bound only" in line for line in lower.warnings)


def test_a_rate_no_build_is_predicted_to_run_at_does_not_rule_out_the_cpu_only_pc(catalog):
    # Audit ZY27: Silero VAD (a ~2 MB model, "one audio chunk (30+ ms) takes less than 1 ms on a single CPU thread",
    # snakers4/silero-vad README) for 100 chunks a second on EUR 800 was refused the EUR 740 PC, whose rate, like any
    # GPU's for a model given by its count over audio, is not predicted, and sent to rent an A10.
    job = answers(workload__preset="custom", workload__kind="generic", workload__parameters=500_000,
                  workload__batch_size=1, task__mode="inference", task__precision="fp32",
                  task__target_samples_per_s=100.0, data__kind="audio", data__dataset_size_gb=1.0,
                  budget__currency="EUR", budget__amount=800.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.cpu_only and build.feasible, build.blockers
    assert any(line.startswith("task.target_samples_per_s = 100 is not checked") for line in build.warnings)


def test_a_server_of_a_small_encoder_at_a_rate_its_cores_meet_gets_the_cpu_only_pc(catalog):
    # Audit ZI31: bge-small-en-v1.5 (12 x 384, MLP 1,536) over 449-token passages for 5 a second on EUR 1,200 got an
    # RTX 5060 PC at EUR 1,163; an 8-core Cascade Lake embeds ~10 a second in sentence-transformers, ~20 in ONNX
    # (michaelfeil/infinity docs/benchmarking.md, 256 sentences of 115,000 tokens a request).
    job = answers("inference_server", workload__preset="custom", workload__kind="transformer",
                  workload__encoder_only=True, workload__parameters=33_400_000, workload__layers=12,
                  workload__hidden_size=384, workload__attention_heads=12, workload__intermediate_size=1536,
                  workload__vocabulary_size=30522, workload__sequence_length=449, workload__batch_size=32,
                  task__mode="inference", task__precision="fp32", task__target_samples_per_s=5.0,
                  data__dataset_size_gb=5.0, budget__currency="EUR", budget__amount=1200.0)
    build = recommend(job, catalog, today=TODAY)
    # A server with no stated rate is not timed against its traffic: a GPU build, as before.
    unstated = recommend(job.with_value("task", "target_samples_per_s", 0.0), catalog, today=TODAY)
    assert build.cpu_only and build.feasible and not unstated.cpu_only, build.blockers
    assert build.total_price_cny < 0.7 * unstated.total_price_cny
    # Sized as the PC runs it, its batch in PyTorch, not as vLLM filling 90 % of a GPU it does not have.
    assert not any("vLLM" in line for line in build.memory.formula), build.memory.formula


def test_a_stated_rate_an_encoder_meets_on_the_cores_only_at_their_bound_gets_a_gpu(catalog):
    """Paraformer-large (220M, non-autoregressive ASR) for 62 utterances a second (FunASR's Triton run on one V100) for
    CNY 60,000: a Core Ultra 9 PC bounded at ~69 a second was the build, where FunASR's CPU tables give 30.5 in
    libtorch and 43-48 in ONNX fp32 on a 16-core Xeon; PyTorch's listed share of the bound is held to the rate
    (audit CY65)."""
    job = answers("inference_server", workload__preset="custom", workload__parameters=220_000_000,
                  workload__layers=66, workload__hidden_size=512, workload__attention_heads=4,
                  workload__intermediate_size=2048, workload__vocabulary_size=8404, workload__sequence_length=84,
                  workload__encoder_only=True, workload__batch_size=60, task__mode="inference",
                  task__precision="fp32", task__target_samples_per_s=62.0, data__kind="audio",
                  data__dataset_size_gb=1.2, budget__amount=60000.0)
    build = recommend(job, catalog, today=TODAY)
    assert not build.cpu_only and build.component("gpu") is not None
