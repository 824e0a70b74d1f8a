"""The speed prediction: its formulas, measured ceilings, slow-job warnings, the [speed] table and its text."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from pth_top.configs import speed as sp
from pth_top.configs import speed_build, speed_forward
from pth_top.configs.answer_types import Data, Scale, Task, Workload
from pth_top.configs.answers import Answers, cross_field_problems
from pth_top.configs.build_file import dumps_build, load_build, loads_build, save_build
from pth_top.configs.memory import estimate_memory
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import recommend, swap
from pth_top.configs.render import render_build_text
from pth_top.configs.speed_comm import (
    ALLREDUCE_LINK_FRACTION,
    allreduce_gb_per_s,
    communication,
    exposed_seconds,
    tensor_parallel_prefill_seconds,
)
from pth_top.configs.speed_reads import decode_bandwidth_fraction, decode_reads, prefill_flops
from tests.configs.builders import answers
from tests.configs.published_speeds import POWERMOE_3B as PUBLISHED_POWERMOE
from tests.configs.published_speeds import catalog_gpu, powermoe_samples_per_s
from tests.configs.test_build_file import V1_FILE

CREATED = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
TODAY = dt.date(2026, 1, 2)
ONE_GPU = sp.Device("test GPU", 1, 1000.0, 100.0, "dense BF16 tensor", tensor=True)
LLAMA = model_shape(Workload(preset="llama3-8b"))[0]


def test_decode_is_the_achieved_bandwidth_over_the_bytes_read_per_token():
    out = sp.decode(10e9, 0.0, 1, 2 * 5e9, ONE_GPU)
    assert out.figures["decode_tokens_per_s_per_stream"] == pytest.approx(
        sp.DECODE_BANDWIDTH_FRACTION * 1000 / 10)
    batched = sp.decode(10e9, 1e9, 4, 2 * 5e9, ONE_GPU)  # a step reads the weights once, each stream's KV once
    step_s = (10e9 + 4 * 1e9) / (sp.DECODE_BANDWIDTH_FRACTION * 1000e9)
    assert batched.figures["decode_tokens_per_s_aggregate"] == pytest.approx(4 / step_s)
    assert batched.figures["decode_tokens_per_s_per_stream"] == pytest.approx(1 / step_s)


def test_a_large_batch_is_capped_by_compute():
    out = sp.decode(1e9, 0.0, 100_000, 2 * 5e9, ONE_GPU)
    cap = sp.PREFILL_COMPUTE_FRACTION * 100e12 / (2 * 5e9)
    assert out.figures["decode_tokens_per_s_aggregate"] == pytest.approx(cap)
    assert any("capped by compute" in line for line in out.formula)


def test_tensor_parallel_bandwidth_adds_up_less_the_link_efficiency():
    nvlink = dataclasses.replace(ONE_GPU, count=4, link="NVLink", nvlink=True)
    pcie = dataclasses.replace(ONE_GPU, count=4, link="PCIe Gen4 x16")
    single, _ = sp.achieved_bandwidth(ONE_GPU)
    assert sp.achieved_bandwidth(nvlink)[0] == pytest.approx(4 * single * sp.TENSOR_PARALLEL_EFFICIENCY["nvlink"])
    assert sp.achieved_bandwidth(pcie)[0] == pytest.approx(4 * single * sp.TENSOR_PARALLEL_EFFICIENCY["pcie"])
    assert sp.achieved_bandwidth(pcie)[0] < sp.achieved_bandwidth(nvlink)[0]


def test_first_token_is_the_prefill_flops_at_the_prefill_fraction():
    seconds, line = sp.prefill_seconds(60e12, 1e9, ONE_GPU)
    assert seconds == pytest.approx(60e12 / (sp.PREFILL_COMPUTE_FRACTION * 100e12))
    assert "first token" in line and "TFLOP" in line


def test_a_long_prompts_attention_runs_at_the_attention_fraction():
    # 60 TFLOP of which 40 attention (QK^T and AV over a long prompt): its core reaches 0.4, not the matmuls' 0.6.
    seconds, line = sp.prefill_seconds(60e12, 1e9, ONE_GPU, attention_flops=40e12)
    assert seconds == pytest.approx(20e12 / (sp.PREFILL_COMPUTE_FRACTION * 100e12)
                                    + 40e12 / (sp.PREFILL_ATTENTION_FRACTION * 100e12))
    assert sp.PREFILL_ATTENTION_FRACTION < sp.PREFILL_COMPUTE_FRACTION and "attention 40 TFLOP" in line


def test_a_tensor_parallel_prefill_waits_for_two_all_reduces_a_layer():
    # NIM's Llama 3.3 70B FP8 on 2 x H100 SXM, 5,000-token prompt: 160 all-reduces of 5,000 x 8,192 x 2 B over NVLink
    # (450 GB/s x 0.77) add ~38 ms to the matmuls; NIM publishes 407 ms, the matmuls alone gave 0.34 s (-17 %).
    from tests.configs.published_speeds import nim_70b
    pair = dataclasses.replace(ONE_GPU, count=2, link="NVLink", link_gb_per_s=450.0, nvlink=True)
    seconds, line = tensor_parallel_prefill_seconds(80, 8192, 5000, pair)
    assert seconds == pytest.approx(2 * 80 * 5000 * 8192 * 2 * 2 * (1 / 2) / (450e9 * ALLREDUCE_LINK_FRACTION))
    assert "all-reduces" in line
    assert tensor_parallel_prefill_seconds(80, 8192, 5000, ONE_GPU)[0] == 0.0
    assert tensor_parallel_prefill_seconds(80, 8192, 5000, dataclasses.replace(pair, layer_split=True))[0] == 0.0
    assert nim_70b(1)["first_token_s"] == pytest.approx(0.40677, rel=0.1)


def test_training_flops_per_token():
    n, layers, h, s = 1e9, 24, 2048, 2048
    attention = 12 * layers * h * s
    assert sp.transformer_flops_per_token(n, layers, h, s, "full", "none")[0] == pytest.approx(6 * n + attention)
    # Full recompute runs the forward twice: x 4/3.
    assert sp.transformer_flops_per_token(n, layers, h, s, "full", "full")[0] == pytest.approx(
        (6 * n + attention) * 4 / 3)
    assert sp.transformer_flops_per_token(n, layers, h, s, "lora", "none")[0] == pytest.approx(4 * n + attention)
    assert sp.transformer_flops_per_token(n, layers, h, s, "frozen", "full")[0] == pytest.approx(
        2 * n + attention / 3)
    assert sp.sample_flops_per_step(8e9, "full", "none")[0] == pytest.approx(24e9)


def test_a_decoders_training_attends_half_its_tokens_an_encoders_all():
    # A causal kernel (FlashAttention, SDPA) skips the masked scores: Llama-2-7B at 64K counted them all and came out
    # ~6,950 tokens/s on 8 A100s where EasyContext's README gives 10,240 (audit AL43); ~10,650 at half.
    job = answers(workload__preset="llama-7b", workload__batch_size=1, task__mode="training")
    shape = dataclasses.replace(model_shape(job.workload)[0], sequence_length=65536)
    decoder, text, _, _ = speed_build.training_work(job, shape)
    encoder, _, _, _ = speed_build.training_work(job, dataclasses.replace(shape, encoder_only=True))
    per_token = 12 * 32 * 4096
    assert encoder - decoder == pytest.approx(per_token * 65536 / 2 * 65536, rel=1e-3)
    assert "causal attention over 65,536 tokens" in text
    # A DiT over latent patches (images without a vocabulary, or said single-stream) attends every token both ways
    # (audit AQ45: Hunyuan-DiT's fine-tune was timed "causal attention over 4,096 tokens, half the scores").
    images = job.with_value("data", "kind", "images")
    for dit in (dataclasses.replace(shape, vocabulary_size=0), dataclasses.replace(shape, single_stream_dit=True)):
        assert speed_build.attended_keys(dit, over_text=False) == (65536, False)
        assert speed_build.training_work(images, dit)[0] == pytest.approx(encoder, rel=1e-3)
    assert speed_build.attended_keys(dataclasses.replace(shape, vocabulary_size=0), over_text=True)[1]  # a text decoder


def test_communication_volumes_and_overlap():
    data_parallel = communication("none", 8, 1e9, 1e9, 2.0, 4)
    assert data_parallel.collective_bytes == pytest.approx(2 * 7 / 8 * 1e9 * 2)  # once per step, not per micro
    fsdp = communication("fsdp", 8, 1e9, 1e9, 2.0, 1)
    assert fsdp.collective_bytes == pytest.approx(1.5 * data_parallel.collective_bytes)  # ZeRO paper: 1.5x
    assert communication("fsdp", 8, 1e9, 1e9, 2.0, 4).collective_bytes == pytest.approx(4 * fsdp.collective_bytes)
    # Under no_sync the gradients reduce-scatter once a step; the weights are still gathered every micro-batch.
    held = communication("fsdp", 8, 1e9, 1e9, 2.0, 4, held_whole=True).collective_bytes
    assert held == pytest.approx(7 / 8 * (4 * 2 * 1e9 * 2 + 1 * 1e9 * 2))
    link = dataclasses.replace(ONE_GPU, count=8, link="PCIe Gen4 x16", link_gb_per_s=31.5)
    comm_s = data_parallel.collective_bytes / (31.5 * ALLREDUCE_LINK_FRACTION * 1e9)
    assert exposed_seconds(data_parallel, 3 * comm_s, link, 31.5) == 0.0  # hidden behind backward (2/3)
    assert exposed_seconds(data_parallel, 0.0, link, 31.5) == pytest.approx(comm_s)
    offload = communication("zero_offload", 1, 1e9, 1e9, 2.0, 1)
    assert offload.host_bytes == pytest.approx(4e9) and exposed_seconds(offload, 10.0, ONE_GPU, 31.5) > 0
    # ZeRO-2 partitions the gradients, so DeepSpeed reduces them in every micro-batch's backward (audit II: Qwen-7B
    # with 8 micro-batches over two PCIe cards was timed one all-reduce a step); ZeRO-1 reduces at the boundary.
    assert communication("zero1", 8, 1e9, 1e9, 2.0, 4).collective_bytes == data_parallel.collective_bytes
    assert communication("zero2", 8, 1e9, 1e9, 2.0, 4).collective_bytes == pytest.approx(7 / 8 * 1e9 * (4 * 2 + 2))
    assert communication("zero2", 8, 1e9, 1e9, 2.0, 1).collective_bytes == data_parallel.collective_bytes
    # Audit AZ48: a QLoRA base's FSDP gathers move its NF4 weights, 0.5 B each, not 16-bit ones (a 70B's 69,068M
    # weights x 2 B added ~12 min a step over a Gen3 x4 slot that are not spent).
    qlora = communication("fsdp", 2, 69e9, 0.2e9, 2.0, 1, weight_bytes=0.5)
    assert qlora.collective_bytes == pytest.approx(1 / 2 * (2 * 69e9 * 0.5 + 0.2e9 * 2.0))
    assert "x 0.5 B" in qlora.text


@pytest.mark.parametrize(("micro_batch", "published_ratio"), [
    # LitGPT's config_hub/finetune/README.md, one A10G, bf16, Alpaca2k at up to 512 tokens: QLoRA's runtime over
    # LoRA's for the same model and micro-batch: falcon-7b and stablelm-3b at 1 (50.85/24.84, 25.86/13.07 min),
    # llama-2-7b and mistral-7b at 2 (45.67/32.82, 44.75/31.00), phi-2 and phi-3 at 4 (4.51/3.78, 7.47/6.46),
    # tiny-llama at 8 (8.70/8.09).
    (1, 2.02), (2, 1.42), (4, 1.18), (8, 1.075),
])
def test_qlora_pays_its_dequantization_a_micro_batch_so_small_ones_pay_most(micro_batch, published_ratio):
    # Audit ZV: Gemma-7B QLoRA at micro-batch 1 on an A10G was ~4x fast, a flat 0.78 of LoRA's rate (these rows fit
    # speed_dequant's 0.4; a flat factor cannot give their shape). The A10G: 600 GB/s, ~70 dense BF16 TFLOP/s; ~400
    # tokens a sample, where LoRA's predicted 0.29 s a sample is LitGPT's 0.27 for Llama 2 7B.
    a10g = sp.Device("A10G", 1, 600.0, 70.0, "dense BF16 tensor", tensor=True)
    steps = []
    for method in ("lora", "qlora"):
        job = Answers(workload=Workload(preset="llama-7b", batch_size=micro_batch),
                      task=Task(mode="training", precision="bf16", method=method, lora_targets="attention"))
        shape = dataclasses.replace(build_shape(job), sequence_length=400)
        steps.append(speed_build.training(job, shape, a10g, 31.5).figures["step_s"])
    assert steps[1] / steps[0] == pytest.approx(published_ratio, rel=0.1)


def test_geforce_cards_all_reduce_through_host_memory():
    # No P2P on GeForce cards (NVIDIA/nccl-tests#287): 8 x RTX 5090 reach 28 GB/s busbw, 4 reach 35 (NVIDIA/nccl#1639),
    # where Gen5 x16 at 0.77 would be 48.5. A workstation card on the same link keeps its P2P; a Gen4 GeForce's link
    # is under the cap already.
    gen5 = dataclasses.replace(ONE_GPU, count=8, link="PCIe Gen5 x16", link_gb_per_s=63.0, peer_to_peer=False)
    assert allreduce_gb_per_s(gen5)[0] == 28.0 and "nccl#1639" in allreduce_gb_per_s(gen5)[1]
    assert allreduce_gb_per_s(dataclasses.replace(gen5, count=4))[0] == 35.0
    assert allreduce_gb_per_s(dataclasses.replace(gen5, peer_to_peer=True))[0] == pytest.approx(63.0 * 0.77)
    gen4 = dataclasses.replace(gen5, link="PCIe Gen4 x16", link_gb_per_s=31.5)
    assert allreduce_gb_per_s(gen4)[0] == pytest.approx(31.5 * 0.77)
    train = Answers(workload=Workload(preset="llama3-8b"))  # the catalog's GeForce cards are the ones without P2P
    assert not catalog_gpu("rtx-5090-32gb", train, 8).peer_to_peer
    assert catalog_gpu("rtx-pro-6000-blackwell-96gb", train, 8).peer_to_peer


def test_a_build_predicts_decode_and_first_token(catalog):
    answers = Answers(scenario="inference_server", workload=Workload(preset="llama-7b", batch_size=4),
                      task=Task(mode="inference", precision="bf16"))
    build = recommend(answers, catalog, today=TODAY)
    figures, gpu = build.speed.figures, build.component("gpu")
    assert figures["decode_tokens_per_s_per_stream"] > 0 and figures["first_token_s"] > 0
    assert figures["decode_tokens_per_s_aggregate"] == pytest.approx(4 * figures["decode_tokens_per_s_per_stream"])
    assert build.speed.ceilings == "datasheet" and build.speed.inputs["gpu"] == gpu.part_id
    assert build.speed.inputs["bandwidth_gb_per_s"] == gpu.spec["bandwidth_gb_per_s"]
    assert 1 <= len(build.speed.summary) <= 3 and "tokens/s per stream" in build.speed.summary[0]


def test_training_builds_give_tokens_or_images_per_second_and_an_epoch(catalog):
    text = recommend(Answers(workload=Workload(preset="gpt2-small")), catalog, today=TODAY)
    assert text.speed.figures["training_tokens_per_s"] > 0 and text.speed.figures["epoch_hours"] > 0
    images = recommend(Answers(workload=Workload(preset="resnet50", batch_size=64),
                               task=Task(precision="amp_fp16"), data=Data(kind="images")),
                       catalog, today=TODAY)
    assert images.speed.figures["training_samples_per_s"] > 0 and "images/s" in images.speed.summary[0]
    assert any("8.18 GFLOP forward" in line for line in images.speed.formula)


def test_measured_ceilings_replace_the_datasheet_for_the_same_gpu_only(catalog):
    answers = Answers(scenario="inference_server", workload=Workload(preset="llama-7b", batch_size=1),
                      task=Task(mode="inference", precision="bf16"))
    datasheet = recommend(answers, catalog, today=TODAY)
    gpu = datasheet.component("gpu")
    measured = speed_build.MeasuredCeilings(gpu.part_id, "2026-01-01 (bench-x.json)",
                                            {"bf16_dense_tflops": 10.0}, bandwidth_gb_per_s=100.0)
    build = recommend(answers, catalog, today=TODAY, measured=measured)
    assert build.speed.ceilings == "measured by the bench run 2026-01-01 (bench-x.json)"
    assert build.speed.inputs["bandwidth_gb_per_s"] == 100.0 and build.speed.inputs["tflops"] == 10.0
    assert "measured" in build.speed.summary[-1]
    share = decode_bandwidth_fraction(16.0) / sp.BENCH_BANDWIDTH_FRACTION  # bf16 weights
    per_stream = build.speed.figures["decode_tokens_per_s_per_stream"]
    assert per_stream < datasheet.speed.figures["decode_tokens_per_s_per_stream"]
    assert any(f"{share:.2f} x 100 GB/s (measured)" in line for line in build.speed.formula)
    other = dataclasses.replace(measured, part_id="not-this-gpu")
    assert recommend(answers, catalog, today=TODAY, measured=other).speed.ceilings == "datasheet"
    swapped = swap(build, "gpu", catalog, today=TODAY)  # the ceilings follow the build; a new GPU is datasheet
    assert swapped.measured == measured and swapped.speed.ceilings == "datasheet"


def test_a_cards_own_decode_fraction_holds_with_measured_bandwidth_too():
    # The H20 reaches 0.38 of its datasheet bandwidth decoding (gpus.toml); a bench copy of 3,480 GB/s (0.87 of it)
    # must not put it back at the common 0.65 / 0.87 of the measured figure.
    h20 = dataclasses.replace(ONE_GPU, bandwidth_gb_per_s=4000.0, decode_bandwidth_fraction=0.38)
    measured = dataclasses.replace(h20, bandwidth_gb_per_s=3480.0, measured_bandwidth=True)
    datasheet_gb_per_s, _ = sp.achieved_bandwidth(h20)
    measured_gb_per_s, text = sp.achieved_bandwidth(measured)
    assert measured_gb_per_s == pytest.approx(datasheet_gb_per_s) and "own decode fraction" in text


def test_measured_all_reduce_bus_bandwidth_applies_at_its_gpu_count():
    spec = {"bf16_dense_tflops": 100.0, "fp32_tflops": 10.0, "bandwidth_gb_per_s": 1000.0, "pcie_generation": 4,
            "nvlink": "none", "form": "consumer", "software": "cuda"}
    answers = Answers(scale=Scale(gpu_count=2))
    measured = speed_build.MeasuredCeilings("x", "run", busbw_gb_per_s=9.0, busbw_gpus=2)
    assert speed_build.device_for(spec, "x", 2, answers, LLAMA, measured).busbw_gb_per_s == 9.0
    assert speed_build.device_for(spec, "x", 4, answers, LLAMA, measured).busbw_gb_per_s == 0.0
    assert speed_build.device_for(spec, "x", 2, answers, LLAMA, None).link == "PCIe Gen4 x16"


def test_speed_table_round_trips_and_old_files_load_without_one(tmp_path, catalog):
    build = recommend(Answers(), catalog, today=TODAY)
    path = save_build(build, tmp_path / "b.toml", created=CREATED, tool_version="0.1.0")
    text = path.read_text(encoding="utf-8")
    assert "[speed]" in text and "[speed.figures]" in text and "training_tokens_per_s" in text
    loaded = load_build(path)[0]
    assert loaded == build and loaded.speed.figures == build.speed.figures
    assert dumps_build(loaded, created=CREATED, tool_version="0.1.0") == text
    old = load_build(V1_FILE)[0]
    assert old.speed.summary == () and "not predicted (a build file written before" in render_build_text(old)
    bad = text.replace("[speed.figures]\n", "[speed.figures]\nbogus = -1.0\n")
    with pytest.raises(ValueError, match="speed.figures"):
        loads_build(bad)


def test_build_show_text_has_the_speed_and_its_formula(catalog):
    build = recommend(Answers(), catalog, today=TODAY)
    text = render_build_text(build)
    section = text.split("\nSpeed\n", 1)[1].split("\n\n", 1)[0]
    assert build.speed.summary[0] in section and build.speed.formula[0] in section
    assert "datasheet ceilings" in section


def test_cpu_only_builds_say_no_prediction(catalog):
    trees = Answers(data=Data(kind="tabular")).with_value("workload", "preset", "custom")
    build = recommend(trees.with_value("workload", "kind", "generic").with_value("workload", "parameters", 0), catalog,
                      today=TODAY)
    assert build.cpu_only
    assert build.speed.summary[0].startswith("not predicted for a CPU-only build") and not build.speed.figures


def test_a_model_given_by_its_parameters_alone_is_not_timed_but_over_a_table(catalog):
    # Audit ZV26: Tacotron 2 (NVIDIA DeepLearningExamples: 28.2M parameters, an LSTM decoder over ~800 mel frames a
    # clip, 20,992 mels/s on a V100 at AMP batch 128, ~6 min an epoch) was timed at 2N FLOPs a clip: "one epoch
    # (12,500 clips) in ~0.023 s". Audit ZP34: StyleGAN3-T (~51M) at 1024 px, 6.4 images/s on an A100 (NVlabs/
    # stylegan3 docs/configs.md), came out ~138,000 at 2N an image. A table's MLP passes its weights once a row.
    job = answers("small_lab", workload__preset="custom", workload__kind="generic", workload__parameters=28_200_000,
                  workload__batch_size=128, task__precision="amp_fp16", data__kind="audio", data__dataset_size_gb=3.6,
                  budget__currency="EUR", budget__amount=8000.0)
    for kind in ("audio", "images", "text"):
        build = recommend(job.with_value("data", "kind", kind), catalog, today=TODAY)
        assert build.speed.summary[0].startswith("not predicted for a model given by its parameter count alone")
        assert not build.speed.figures.get("training_samples_per_s"), build.speed.figures
    table = recommend(job.with_value("data", "kind", "tabular"), catalog, today=TODAY)
    assert table.speed.figures.get("training_samples_per_s"), table.speed.summary


def test_a_model_given_by_its_parameters_alone_is_no_small_job_for_a_cpu(catalog):
    # Audit ZP34: GPT-SoVITS's SoVITS stage (~80M over audio; its tutorial asks for 6 GB of a GPU) for CNY 5,000 was
    # sold a CPU-only PC, "a CPU trains it, cheaper than any GPU build", at a made-up ~0.51 s an epoch.
    job = answers(workload__preset="custom", workload__kind="generic", workload__parameters=80_000_000,
                  workload__batch_size=8, task__precision="amp_fp16", data__kind="audio", data__dataset_size_gb=0.5,
                  budget__currency="CNY", budget__amount=5000.0)
    build = recommend(job, catalog, today=TODAY)
    assert not (build.cpu_only and build.feasible), build.speed.summary


def build_shape(answers: Answers):
    from pth_top.configs.presets import model_shape

    return model_shape(answers.workload)[0]


def test_gen5_cards_in_a_gen4_server_link_at_gen4(catalog):
    # 8 RTX PRO 4500 (PCIe 5.0) in the G292-Z20 around an EPYC 7003 (PCIe 4.0): the slots run at Gen4, ~24 GB/s.
    job = answers(workload__preset="llama-70b", workload__batch_size=8, task__method="lora", task__recompute="full",
                  scale__gpu_count=8, budget__amount=1500000.0)
    build = recommend(job, catalog, today=TODAY, pins={"gpu": ("rtx-pro-4500-blackwell-32gb", 8)})
    assert build.component("gpu").spec["pcie_generation"] == 5 and build.component("cpu").spec["pcie_generation"] == 4
    assert build.speed.inputs["link"] == "PCIe Gen4 x16" and build.speed.inputs["link_gb_per_s"] < 32
    spec = build.component("gpu").spec
    assert speed_build.device_for(spec, "x", 8, job, LLAMA, None).link == "PCIe Gen5 x16"


def test_a_moe_batch_reads_the_union_of_its_streams_experts_not_their_sum(catalog):
    # DeepSeek-V3 (37B of 671B active, 8 of 256 routed experts a token): 16 streams read the ~17B always used once
    # and ~40 % of the routed experts under uniform routing, where the sum of their experts (16 x 37B, 88 %)
    # double-counts the experts they share.
    job = answers(scenario="inference_server", workload__preset="deepseek-v3", workload__batch_size=16,
                  task__mode="inference", task__precision="int8")
    shape, _ = model_shape(job.workload)
    reads = decode_reads(job, shape)
    assert 0.38 < reads.read_bytes / reads.weight_bytes < 0.45 and "expected union" in reads.line
    one = decode_reads(answers(scenario="inference_server", workload__preset="deepseek-v3", workload__batch_size=1,
                               task__mode="inference", task__precision="int8"), shape)
    assert 0.04 < one.read_bytes / one.weight_bytes < 0.07  # one stream: its own experts only


def test_mla_attention_is_counted_at_its_own_width_not_the_hidden_size():
    # DeepSeek-V3's MLA: 128 heads x (192 q.k + 128 v) dims, 4 x 20,480 FLOPs per query-key pair a layer, where the
    # hidden size (7,168) would undercount attention ~2.9x at long prompts.
    shape, _ = model_shape(Workload(preset="deepseek-v3", sequence_length=32768))
    assert shape.attention_flops_width == 20480 and shape.hidden_size == 7168
    attention = 4.0 * 61 * 20480 * 32768 * 32768 / 2
    assert prefill_flops(shape, 32768) == 2.0 * 37e9 * 32768 + attention
    dense, _ = model_shape(Workload(preset="llama-7b"))
    assert dense.attention_flops_width == dense.hidden_size  # multi-head attention: the hidden size


def test_a_cnn_trained_in_fp32_on_a_geforce_runs_tf32_tensor_cores_at_half_the_amp_rate(catalog):
    # PyTorch runs cuDNN convolutions in TF32 by default (torch.backends.cudnn.allow_tf32 = True); an RTX 4090's
    # TF32 peak equals its FP32 one (82.6 TFLOP/s) and FP16 with FP32 accumulate doubles it (165.2; Ada whitepaper).
    # FP32 on CUDA cores at the V100's 0.55 made fp32 look ~1.5x faster than AMP.
    def images_per_s(precision: str) -> float:
        build = recommend(answers(workload__preset="resnet50", workload__batch_size=256, task__precision=precision,
                                  budget__amount=60000.0), catalog, pins={"gpu": ("rtx-4090-24gb", 1)}, today=TODAY)
        return build.speed.figures["training_samples_per_s"]

    assert images_per_s("amp_fp16") == pytest.approx(2 * images_per_s("fp32"), rel=0.05)


def test_an_epoch_counts_the_images_or_tokens_given_rather_than_reading_them_from_the_size(catalog):
    # COCO train2017: 118,287 images in 19.3 GB, ~163 KB each; read at ImageNet's ~110 KB an image it looked 173k.
    job = dict(workload__preset="resnet50", workload__batch_size=256, task__precision="amp_fp16",
               data__kind="images", data__dataset_size_gb=19.3, budget__amount=60000.0)
    counted = recommend(answers(**job, data__images_count=118_287), catalog, today=TODAY)
    rate = counted.speed.figures["training_samples_per_s"]
    assert counted.speed.figures["epoch_hours"] == pytest.approx(118_287 / rate / 3600, rel=1e-3)
    assert any("118,287 images (data.images_count)" in line for line in counted.speed.summary)
    tokens = recommend(answers(workload__preset="gpt2-small", data__tokens_count=9_000_000_000), catalog, today=TODAY)
    assert tokens.speed.figures["epoch_hours"] == pytest.approx(
        9e9 / tokens.speed.figures["training_tokens_per_s"] / 3600, rel=1e-3)
    # An audio encoder's positions are its frames: LibriSpeech clean-100's ~100 h at 50 frames/s is 18.1M (wav2vec2).
    audio = recommend(answers(workload__preset="custom", workload__parameters=317_000_000, workload__layers=24,
                              workload__hidden_size=1024, workload__attention_heads=16, workload__kv_heads=16,
                              workload__encoder_only=True, workload__sequence_length=1225, workload__batch_size=4,
                              task__precision="amp_fp16", data__kind="audio", data__tokens_count=18_100_000),
                      catalog, today=TODAY)
    assert audio.speed.figures["epoch_hours"] == pytest.approx(
        18.1e6 / audio.speed.figures["training_tokens_per_s"] / 3600, rel=1e-3)


def test_a_vision_transformer_is_timed_in_images_not_tokens(catalog):
    # ViT-B/16 on ImageNet-1k (DeiT's recipe, batch 1024): its 197 tokens are one image's patches.
    job = answers("team_training", workload__preset="vit-b16", workload__batch_size=1024, data__kind="images",
                  data__dataset_size_gb=147.0, data__images_count=1_281_167, scale__gpu_count=4,
                  budget__currency="USD", budget__amount=40000.0)
    build = recommend(job, catalog, today=TODAY)
    line = build.speed.summary[0]
    images = build.speed.figures["training_images_per_s"]
    assert line.startswith(f"~{images:,.0f} images/s training (") and "197 per image" in line, line
    assert images * 197 == pytest.approx(build.speed.figures["training_tokens_per_s"])


def test_a_job_slower_than_one_image_a_second_says_its_rate_not_zero():
    # ViT-B/16 over 32,769 patches an image on a 100 TFLOP/s card: under an image a second, which the summary gives in
    # two figures rather than "~0 images/s".
    job = answers(workload__preset="vit-b16", workload__batch_size=1, data__kind="images")
    shape = dataclasses.replace(model_shape(job.workload)[0], sequence_length=32_769)
    out = speed_build.training(job, shape, ONE_GPU, 31.5)
    images = out.figures["training_images_per_s"]
    assert images < 1 and out.summary[0].startswith(f"~{images:.2g} images/s training ("), out.summary
    assert (sp.rate_text(0.4237), sp.rate_text(7.25), sp.rate_text(1234.5)) == ("0.42", "7.2", "1,234")
    assert sp.rate_text(1.2e-05) == "under 0.01"


def test_two_cards_on_a_desktop_cpu_are_timed_over_the_x8_links_its_lanes_give(catalog):
    # A 24-lane desktop CPU gives two cards x8 each beside an NVMe drive (compat's lanes note): tensor parallel's
    # all-reduces cross x8 links, at half an x16 link's rate.
    job = answers("inference_server", workload__preset="llama-70b", workload__batch_size=1,
                  workload__sequence_length=8192, task__mode="inference", task__precision="int4",
                  task__serving_engine="vllm", scale__gpu_count=2, budget__amount=60000.0)
    build = recommend(job, catalog, today=TODAY)
    cpu, gpu = build.component("cpu"), build.component("gpu")
    assert gpu.quantity == 2 and cpu.spec["pcie_lanes_count"] < 2 * 16 + 4
    assert build.speed.summary[-1].endswith("2 GPUs over PCIe Gen" + str(min(gpu.spec["pcie_generation"],
                                                                             cpu.spec["pcie_generation"])) + " x8")
    assert any("GPUs run at x8" in line for line in build.warnings)


def test_a_custom_cnn_is_timed_at_its_own_forward_flops_when_given():
    # YOLOv8s: 28.6 GFLOPs at 640 px (Ultralytics' model table); ResNet-50's FLOPs per saved activation made it 66.8,
    # 2.3x too slow a detector for an edge buyer with a frame-rate target.
    base = dict(workload__preset="custom", workload__kind="cnn", workload__parameters=11_200_000,
                workload__input_size_px=640, workload__batch_size=1, task__mode="inference", task__precision="fp16",
                data__kind="video")
    given = answers("edge_deployment", workload__forward_gflops_per_sample=28.6, **base)
    shape = model_shape(given.workload)[0]
    flops, line = speed_forward.forward_flops_per_sample(given, shape)
    assert flops == 28.6e9 and "workload.forward_gflops_per_sample" in line
    unknown = answers("edge_deployment", **base)
    scaled, _ = speed_forward.forward_flops_per_sample(unknown, model_shape(unknown.workload)[0])
    assert scaled > 2 * flops
    out = speed_build.inference(given, shape, ONE_GPU)
    assert out.figures["samples_per_s"] == pytest.approx(100e12 * sp.CNN_TENSOR_FRACTION / 28.6e9)
    preset = answers(workload__preset="resnet50", workload__forward_gflops_per_sample=1.0)  # its published count wins
    assert not cross_field_problems(preset)
    assert speed_forward.forward_flops_per_sample(preset, model_shape(preset.workload)[0])[0] > 4e9


def test_yolov8m_on_an_orin_nano_super_meets_the_frame_rate_tensorrt_gives_it(catalog):
    # the0807/YOLOv8-ONNX-TensorRT: YOLOv8m FP16 engine at 30 FPS on an Orin Nano at 625 MHz; the Super runs its GPU at
    # 1.02 GHz (67 sparse INT8 TOPS = 16.7 TFLOP/s dense FP16), so a 30 FPS target is met. Rated at 8.6 it made 21.
    job = answers("edge_deployment", workload__preset="custom", workload__kind="cnn", workload__parameters=25_900_000,
                  workload__input_size_px=640, workload__forward_gflops_per_sample=78.9, workload__batch_size=1,
                  task__mode="inference", task__precision="fp16", data__kind="video", data__dataset_size_gb=1.0,
                  budget__currency="USD", budget__amount=600.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.component("gpu").part_id == "jetson-orin-nano-super-8gb"
    assert build.speed.figures["samples_per_s"] >= 30


def test_a_forward_flop_count_the_speed_model_does_not_use_is_named_in_the_build(catalog):
    # The speed model times a transformer from its shape and a preset CNN from its published count; a given
    # forward_gflops_per_sample there changed nothing, without a word.
    transformer = answers(workload__preset="llama3-8b", workload__forward_gflops_per_sample=16.0)
    line = [w for w in recommend(transformer, catalog, today=TODAY).warnings if "forward_gflops_per_sample" in w]
    assert line and "not used" in line[0] and "custom CNN" in line[0]
    preset = answers(workload__preset="resnet50", workload__forward_gflops_per_sample=1.0)
    line = [w for w in recommend(preset, catalog, today=TODAY).warnings if "forward_gflops_per_sample" in w]
    assert line and "published 8.18 GFLOPs" in line[0]
    custom = answers("edge_deployment", workload__preset="custom", workload__kind="cnn",
                     workload__parameters=11_200_000, workload__input_size_px=640, workload__batch_size=1,
                     workload__forward_gflops_per_sample=28.6, task__mode="inference", task__precision="fp16",
                     data__kind="video")
    assert not [w for w in recommend(custom, catalog, today=TODAY).warnings if "forward_gflops_per_sample" in w]


def test_decode_reads_a_copied_kv_cache_on_every_gpu():
    # DeepSeek-R1 on 8 GPUs with SGLang keeps MLA's latent cache whole on each: every GPU reads every stream's cache,
    # so 4 streams at 131k decode slower than a split cache would; llama.cpp's layer split reads each once.
    job = answers("inference_server", workload__preset="deepseek-v3", workload__batch_size=4,
                  workload__sequence_length=131_072, task__mode="inference", task__precision="int8",
                  task__quantization="fp8", task__serving_engine="sglang")
    shape = model_shape(job.workload)[0]
    eight = sp.Device("8 GPUs", 8, 4800.0, 989.0, "dense FP16 tensor", tensor=True, link="NVLink",
                      link_gb_per_s=450.0, nvlink=True, fp32_tflops=67.0)
    tensor_parallel = speed_build.inference(job, shape, eight)
    assert any("KV cache read x 8" in line for line in tensor_parallel.formula)
    split = speed_build.inference(job, dataclasses.replace(shape, attention_width=0, kv_heads=8), eight)
    assert tensor_parallel.figures["decode_tokens_per_s_per_stream"] < split.figures["decode_tokens_per_s_per_stream"]


@pytest.mark.parametrize(("batch", "gpus", "fraction"), [(256, 1, sp.IMAGE_ENCODER_FORWARD_FRACTION),
                                                          (255, 1, sp.ENCODER_FORWARD_FRACTION),
                                                          (256, 8, sp.ENCODER_FORWARD_FRACTION),
                                                          (2048, 8, sp.IMAGE_ENCODER_FORWARD_FRACTION)])
def test_an_image_encoder_reaches_the_large_batch_rate_on_each_gpus_share(batch, gpus, fraction):
    # Review U: the 256-image threshold was taken on the whole batch, so 256 images over 8 GPUs (32 each) were timed
    # at timm's batch-1,024 rate.
    job = Answers(workload=Workload(preset="vit-b16", batch_size=batch), task=Task(mode="inference", precision="fp16"),
                  data=Data(kind="images"))
    shape = model_shape(job.workload)[0]
    device = dataclasses.replace(ONE_GPU, count=gpus)
    rate = speed_forward.forward_speed(job, shape, device).figures["samples_per_s"]
    flops, _ = speed_forward.forward_flops(shape, shape.sequence_length)
    assert rate == pytest.approx(fraction * 100e12 * gpus / flops, rel=1e-6)


def test_bitsandbytes_weights_decode_slower_than_16_bit_under_generate():
    # Audit T: LLM.int8() under generate() was timed from its bytes, twice 16-bit's rate, where it decodes 2.1-5x slower
    # (Llama 7B on an RTX 3090: 32.89 ms a token in fp16, 154.55 in int8, bitsandbytes#347); GGUF and AWQ are not.
    def rate(precision: str, engine: str = "hf_generate") -> float:
        job = Answers(workload=Workload(preset="llama-7b", batch_size=1),
                      task=Task(mode="inference", precision=precision, serving_engine=engine))
        gpu = catalog_gpu("rtx-3090-24gb", job)
        return speed_build.inference(job, build_shape(job), gpu).figures["decode_tokens_per_s_per_stream"]
    bf16, int8, nf4 = rate("bf16"), rate("int8"), rate("int4")
    assert bf16 / 5 < int8 < bf16 / 2 and int8 < nf4 < bf16
    assert rate("int4", "llama_cpp") > 2 * bf16 and rate("int8", "vllm") > 1.5 * bf16


def test_a_slow_generate_over_several_gpus_is_told_to_split_its_layers_not_buy_bandwidth():
    # Audit ZA: BLOOM-176B under generate() on 8 x A100 (~4 tokens/s, HF's blog 4.34) was told to buy bandwidth.
    from tests.configs.published_speeds import BLOOM_176B, catalog_gpu

    job = Answers(workload=Workload(preset="custom", batch_size=1),
                  task=Task(mode="inference", precision="bf16", generated_tokens=100, serving_engine="hf_generate"))
    out = speed_build.inference(job, BLOOM_176B, catalog_gpu("a100-80gb-sxm", job, 8))
    slow = next(line for line in out.warnings if line.startswith("slow: ~"))
    assert "vLLM or SGLang (task.serving_engine) split each layer over the 8 GPUs" in slow, slow
    # Review ZR: not over 3, which do not divide its 112 heads (vLLM refuses to start).
    three = speed_build.inference(job, BLOOM_176B, catalog_gpu("a100-80gb-sxm", job, 3))
    assert not any("vLLM or SGLang" in line for line in three.warnings), three.warnings


def test_llm_int8s_cost_is_a_calls_so_a_large_model_pays_less_of_it():
    # Audit ZA: BLOOM-176B's LLM.int8() decode on 4 x A100 is 1.23x its bf16 time (HF's BLOOM inference blog), where
    # a flat 6x the 16-bit read gave 0.70 tokens/s against 3.52; Llama 7B's stays ~4.7x (bitsandbytes#347).
    from tests.configs.published_speeds import BLOOM_176B, decode

    def ratio(model, part, gpus, preset="custom"):
        bf16, int8 = (decode(model, precision, part, 100, preset=preset, engine="hf_generate", gpus=gpus,
                             quantization="bnb_int8" if precision == "int8" else "auto")[
            "decode_tokens_per_s_per_stream"] for precision in ("bf16", "int8"))
        return bf16 / int8
    assert ratio(BLOOM_176B, "a100-80gb-sxm", 4) < 2.0
    assert ratio(build_shape(Answers(workload=Workload(preset="llama-7b"))), "rtx-3090-24gb", 1, "llama-7b") > 3.5


def test_generate_dispatches_each_layer_from_python_and_engines_with_graphs_do_not():
    # Qwen3-8B at batch 1 on an H20: 45.32 tokens/s under transformers, 81.73 under SGLang (speed_benchmark.md); the
    # bytes alone allow ~95. generate() adds ~0.4 ms a layer; a GPU-less device has no such term.
    gpu = dataclasses.replace(ONE_GPU, fp32_tflops=40.0)
    eager = sp.decode(16e9, 0.0, 1, 16e9, gpu, layers=36, eager=True)
    graphed = sp.decode(16e9, 0.0, 1, 16e9, gpu, layers=36)
    step = 1 / eager.figures["decode_tokens_per_s_per_stream"] - 1 / graphed.figures["decode_tokens_per_s_per_stream"]
    assert step == pytest.approx(36 * sp.HF_GENERATE_LAYER_S) and "eager dispatch" in eager.formula[0]
    cpu = dataclasses.replace(ONE_GPU, fp32_tflops=0.0)
    assert sp.decode(16e9, 0.0, 1, 16e9, cpu, layers=36, eager=True).figures == \
        sp.decode(16e9, 0.0, 1, 16e9, cpu, layers=36).figures


def test_a_teacher_or_reference_model_adds_its_forward_to_each_training_step():
    # Audit T: a frozen model beside a language model's training (a distillation teacher, DPO's reference model) runs
    # its forward over the same tokens each step, 2 x N_frozen a token; the step counted the trained model only.
    def step_s(frozen: int, kind: str = "text") -> float:
        job = Answers(workload=Workload(preset="llama-7b", batch_size=8, frozen_parameters=frozen),
                      task=Task(mode="training", precision="bf16"), data=Data(kind=kind))
        return speed_build.training(job, build_shape(job), ONE_GPU, 31.5).figures["step_s"]
    alone, with_reference = step_s(0), step_s(6_738_415_616)
    assert 1.25 < with_reference / alone < 1.34  # (6N + 2N) / 6N, less the attention term both share
    assert step_s(6_738_415_616, "images") == alone  # a diffusion model's conditioners run over other inputs


def test_a_lora_dpo_reference_without_adapters_runs_the_base_forward_and_holds_no_copy():
    # Audit BL52: TRL's DPOTrainer given a peft_config and no ref_model takes the base with its adapters off as the
    # reference: NeuralHermes' QLoRA DPO was 1.33x fast without its forward, and 4 GiB over with it as a frozen copy.
    def built(reference: bool) -> tuple[float, int]:
        job = Answers(workload=Workload(preset="mistral-7b", batch_size=8, sequence_length=1536),
                      task=Task(mode="training", precision="bf16", method="qlora", recompute="full",
                                reference_without_adapters=reference), data=Data(kind="text"))
        shape = build_shape(job)
        return (speed_build.training(job, shape, ONE_GPU, 31.5).figures["step_s"],
                estimate_memory(job, shape).total_bytes)
    (alone, alone_bytes), (with_reference, reference_bytes) = built(False), built(True)
    assert 1.25 < with_reference / alone < 1.4 and reference_bytes == alone_bytes
    full = Answers(workload=Workload(preset="mistral-7b"), task=Task(mode="training", reference_without_adapters=True))
    assert any(field == "reference_without_adapters" for _, field, _ in cross_field_problems(full))
    both = Answers(workload=Workload(preset="mistral-7b", frozen_parameters=7_241_732_096),
                   task=Task(mode="training", method="qlora", reference_without_adapters=True), data=Data(kind="text"))
    assert any(field == "reference_without_adapters" for _, field, _ in cross_field_problems(both))  # review r72


def test_wider_weights_decode_nearer_the_bandwidth():
    # llama.cpp's 7B on an RTX 4090 and 3090 (pull 4766): Q4_0 (4.5 bits) 0.65, Q8_0 (8.5) 0.75, F16 0.80; 4-bit
    # AWQ (4.16 bits) at Q4_0's (the under-4-bit GGUF formats' own scale: tests/configs/test_low_bit_gguf.py).
    assert [decode_bandwidth_fraction(bits) for bits in (2.0, 4.16, 4.5, 8.5, 16.0, 32.0)] == \
        pytest.approx([0.65, 0.65, 0.65, 0.75, 0.80, 0.80])
    assert decode_bandwidth_fraction(6.5) == pytest.approx(0.70)  # linear between the points
    assert decode_bandwidth_fraction(16.0, moe=True) == pytest.approx(0.80 * sp.MOE_DECODE_BANDWIDTH_FRACTION / 0.65)


def test_a_cnns_data_parallel_training_keeps_what_nvidias_tables_show_on_8_gpus():
    # Audit SS: Mask R-CNN on 8 V100s was +41 % (linear); NVIDIA's CNN tables scale 8 GPUs to 6.3-6.9x one.
    from tests.configs.published_speeds import train

    one = train("resnet50", 0, "a100-80gb-sxm", batch=256, precision="amp_fp16", data="images")
    eight = train("resnet50", 0, "a100-80gb-sxm", batch=2048, gpus=8, precision="amp_fp16", data="images")
    assert 6.3 <= eight / one <= 6.9
    two = train("resnet50", 0, "a100-80gb-sxm", batch=512, gpus=2, precision="amp_fp16", data="images")
    assert 1.85 <= two / one <= 1.95


def test_a_slow_moe_under_generate_is_told_to_change_engine_not_card():
    # Review RV: Qwen3-30B-A3B under generate() spends ~90 % of a step in the experts' Python loop, yet the slow line
    # advised a card with more bandwidth.
    from tests.configs.published_speeds import catalog_gpu, shape

    job = Answers(workload=Workload(preset="qwen3-30b-a3b", batch_size=1),
                  task=Task(mode="inference", precision="bf16", generated_tokens=256, serving_engine="hf_generate",
                            experts_loop=True))
    out = speed_build.inference(job, shape("qwen3-30b-a3b", 1024), catalog_gpu("h100-80gb-sxm", job))
    assert any("generate() loops over the experts" in line for line in out.warnings), out.warnings


def test_a_moe_decode_mostly_in_generates_expert_loop_says_so_though_not_slow():
    # Audit ZX27: Qwen1.5-MoE-A2.7B (24 layers, 60 experts, 4 a token; 14.3B, 2.7B active) under generate() with its
    # loop, ~7 tokens/s on an A100, 90 % of each token in the loop: nothing said, as 7 is over the slow line.
    from tests.configs.published_speeds import catalog_gpu

    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=14_315_000_000,
                  workload__active_parameters=2_690_000_000, workload__experts_count=60,
                  workload__experts_per_token=4, workload__layers=24, workload__hidden_size=2048,
                  workload__attention_heads=16, workload__kv_heads=16, workload__intermediate_size=11264,
                  workload__gated_mlp=True, workload__vocabulary_size=151_936, workload__sequence_length=1540,
                  workload__batch_size=1, task__mode="inference", task__precision="bf16",
                  task__serving_engine="hf_generate", task__experts_loop=True, task__generated_tokens=40)
    out = speed_build.inference(job, build_shape(job), catalog_gpu("a100-80gb-sxm", job))
    assert out.figures["decode_tokens_per_s_per_stream"] > sp.SLOW_DECODE_TOKENS_PER_S
    assert any(line.startswith("generate() loops over the experts in Python: 24 layers x 60 experts")
               and "vLLM, SGLang" in line for line in out.warnings), out.warnings


def test_generate_loops_over_a_mixtures_experts_only_where_answered():
    # Transformers 5's generate() runs a mixture's experts as grouped GEMMs (grouped_mm, its default), no Python loop
    # a step: the loop that held Qwen3-30B-A3B to 1.89 tokens/s on an H20 in 4.51.3 is charged only under
    # task.experts_loop; without it the step is its reads, generate()'s dispatch and the routing.
    from tests.configs.published_speeds import catalog_gpu, shape

    job = Answers(workload=Workload(preset="qwen3-30b-a3b", batch_size=1),
                  task=Task(mode="inference", precision="bf16", generated_tokens=2048, serving_engine="hf_generate"))
    gpu = catalog_gpu("h20-96gb", job)
    grouped = speed_build.inference(job, shape("qwen3-30b-a3b", 1), gpu)
    looped = speed_build.inference(job.with_value("task", "experts_loop", True), shape("qwen3-30b-a3b", 1), gpu)
    assert looped.figures["decode_tokens_per_s_per_stream"] < 2.5
    assert grouped.figures["decode_tokens_per_s_per_stream"] > 8 * looped.figures["decode_tokens_per_s_per_stream"]
    assert "expert routing" in " ".join(grouped.formula) and "loop over them" not in " ".join(grouped.formula)
    assert not any("generate() loops over the experts" in line for line in grouped.warnings), grouped.warnings


@pytest.mark.parametrize(("preset", "layers", "gflops", "gpu", "published"), [
    # NVIDIA DeepLearningExamples ConvNets READMEs (NGC 21.03), batch 1: ResNet-50 FP32 on a V100, 96 img/s (10.37 ms);
    # ResNeXt101-32x4d AMP on a T4, 51.14 img/s (19.48 ms), where the GPU's rate gives ~770.
    ("resnet50", 0, 0.0, "v100-16gb-sxm2", 96.0),
    ("custom", 101, 16.0, "t4-16gb", 51.14),
])
def test_eager_pytorch_at_batch_1_is_the_hosts_launch_rate_not_the_cards(preset, layers, gflops, gpu, published):
    shape_answers = dict(workload__preset=preset, workload__batch_size=1, task__mode="inference",
                         task__precision="fp16")
    if preset == "custom":
        shape_answers.update(workload__kind="cnn", workload__parameters=44_200_000, workload__layers=layers,
                             workload__forward_gflops_per_sample=gflops, workload__input_size_px=224)
    job = answers(**shape_answers)
    out = speed_build.inference(job, model_shape(job.workload)[0], catalog_gpu(gpu, job))
    floor = next(line for line in out.warnings if line.startswith("eager launch floor:"))
    slowest, fastest = (float(rate.replace(",", "")) for rate in floor.split(" whatever the card, ~")[1]
                        .split(" samples/s")[0].split("-"))
    assert slowest * 0.9 <= published <= fastest and slowest <= out.figures["samples_per_s"] <= fastest, floor
    # Compiled (task.forward_runtime), the forward pass runs at the card's rate: no floor.
    compiled = job.with_value("task", "forward_runtime", "compiled")
    card = speed_build.inference(compiled, model_shape(compiled.workload)[0], catalog_gpu(gpu, compiled))
    assert card.figures["samples_per_s"] > 5 * published and not card.warnings
    # One input on 8 GPUs is no faster than on one (review XA: it read 8x).
    spread = job.with_value("scale", "gpu_count", 8)
    floor_8 = next(line for line in speed_build.inference(spread, model_shape(spread.workload)[0], catalog_gpu(
        gpu, spread, 8)).warnings if line.startswith("eager launch floor:"))
    assert floor_8.split(" whatever the card, ")[1].split(" samples/s")[0] == \
        floor.split(" whatever the card, ")[1].split(" samples/s")[0], (floor, floor_8)
    # A batch whose GPU time passes the launches' has no floor to warn of.
    large = job.with_value("workload", "batch_size", 256)
    assert not any(line.startswith("eager launch floor") for line in
                   speed_build.inference(large, model_shape(large.workload)[0], catalog_gpu(gpu, large)).warnings)


def test_an_encoder_decoders_training_formula_names_its_methods_count():
    # Audit YC: a LoRA of an encoder-decoder was timed at 4N a token but its formula said 6N.
    job = answers(workload__preset="custom", workload__parameters=3_000_000_000, workload__layers=48,
                  workload__hidden_size=1024, workload__attention_heads=32, workload__vocabulary_size=32128,
                  workload__sequence_length=512, workload__decoder_layers=24, workload__decoder_sequence_length=128,
                  workload__batch_size=8, task__method="lora")
    lines = speed_build.training(job, model_shape(job.workload)[0], catalog_gpu("a100-80gb-sxm", job), 31.5).formula
    line = next(text for text in lines if "encoder-decoder" in text)
    assert "4N + 12*L*h*s a side" in line and "6N" not in line, line


def test_an_encoder_decoders_counted_corpus_is_samples_of_its_input_tokens():
    # Audit XD6: nanoT5's T5-v1.1-base pretraining, 65,536 steps of 128 x 512 input tokens (4.29B, PiotrNawrot/nanoT5),
    # got "1M samples in ~5.3 h" and no epoch, so a month-long run never met the slow-run warning.
    job = answers(workload__preset="custom", workload__layers=24, workload__decoder_layers=12,
                  workload__hidden_size=768, workload__attention_heads=12, workload__intermediate_size=2048,
                  workload__gated_mlp=True, workload__vocabulary_size=32128, workload__sequence_length=512,
                  workload__decoder_sequence_length=114, workload__batch_size=128, data__kind="text",
                  data__tokens_count=65_536 * 128 * 512)
    out = speed_build.training(job, model_shape(job.workload)[0], catalog_gpu("a100-80gb-sxm", job), 31.5)
    samples = 65_536 * 128
    assert out.figures["epoch_hours"] * 3600 == pytest.approx(samples / out.figures["training_samples_per_s"])
    assert f"{samples:,} samples of 512 input tokens" in out.summary[0]


def test_transformers_expert_loop_is_timed_only_where_answered():
    # Transformers 5 runs a mixture's experts as grouped GEMMs by default (experts_implementation "grouped_mm"); 4.x's
    # Python loop, task.experts_loop, made PowerMoE-3B's fine-tune 9x slower in fms-acceleration's table.
    assert powermoe_samples_per_s("hf_trainer", 1) < powermoe_samples_per_s("torchtune", 1) / 5
    loopless = answers(**{**PUBLISHED_POWERMOE, "task__experts_loop": False})
    grouped = answers(**{**PUBLISHED_POWERMOE, "task__training_stack": "torchtune"})
    rates = [speed_build.training(job, model_shape(job.workload)[0], catalog_gpu("a100-80gb-sxm", job), 31.5)
             .figures["training_tokens_per_s"] for job in (loopless, grouped)]
    assert rates[0] == pytest.approx(rates[1], rel=0.01)


def test_a_b200s_nvlink_is_twice_a_hoppers():
    # Audit YW4: the B200's fifth-generation NVLink (1.8 TB/s a GPU in all) was timed as the H100's 450 GB/s one way.
    from tests.configs.published_speeds import catalog_gpu

    job = answers(workload__preset="llama-70b", task__mode="inference", scale__gpu_count=8)
    assert catalog_gpu("b200-180gb-sxm", job, 8).link_gb_per_s == 900.0
    assert catalog_gpu("h100-80gb-sxm", job, 8).link_gb_per_s == 450.0


def test_a_compiled_generate_on_several_gpus_says_it_is_timed_as_a_layer_split():
    # Audit XF7: Grok-1 int8 on 8 x A100 answered as a compiled generate(), as the option's help cites gpt-fast, was
    # timed at 13.4 tokens/s against gpt-fast's 73.15 (tensor parallel, PR #171), with no word of why.
    from tests.configs.published_speeds import catalog_gpu, shape

    job = Answers(workload=Workload(preset="llama-70b", batch_size=1),
                  task=Task(mode="inference", precision="bf16", generated_tokens=256, serving_engine="hf_generate",
                            forward_runtime="compiled"))
    gpus = catalog_gpu("a100-80gb-sxm", job, 4)
    compiled = speed_build.inference(job, shape("llama-70b", 512), gpus)
    assert any("gpt-fast's tensor parallel" in line and 'serving_engine = "vllm"' in line
               for line in compiled.formula), compiled.formula
    one = speed_build.inference(job, shape("llama-70b", 512), catalog_gpu("h200-141gb-sxm", job))
    assert not any("gpt-fast" in line for line in one.formula)
    vllm = speed_build.inference(job.with_value("task", "serving_engine", "vllm"), shape("llama-70b", 512),
                                 catalog_gpu("a100-80gb-sxm", job.with_value("task", "serving_engine", "vllm"), 4))
    assert vllm.figures["decode_tokens_per_s_per_stream"] > 2 * compiled.figures["decode_tokens_per_s_per_stream"]


def test_zero_offload_on_one_gpu_says_no_all_reduce():
    # Audit XS11: AuraFlow's full fine-tune with ZeRO-Offload on one A100 printed an all-reduce 2(n-1)/n line for n = 1.
    from pth_top.configs.speed_comm import communication

    one = communication("zero_offload", 1, 6.8e9, 6.8e9, 2.0, 1)
    two = communication("zero_offload", 2, 6.8e9, 6.8e9, 2.0, 1)
    assert "all-reduce" not in one.text and one.text.startswith("ZeRO-Offload:") and one.collective_bytes == 0
    assert "all-reduce" in two.text and "ZeRO-Offload:" in two.text


def job_of_gemma(shape):
    return answers(workload__preset="custom", workload__batch_size=1, task__mode="inference",
                   task__precision="int4", task__quantization="gguf_q4_k_m", task__serving_engine="llama_cpp",
                   task__generated_tokens=256)


def test_per_layer_embedding_tables_are_looked_up_not_read_each_token():
    # Gemma 4 E4B: 2.8B of its 8B are per-layer embedding tables a decode step reads a row of; counted as read, an RTX
    # 5070 decoded ~86 tokens/s where calebcoffie.com's benchmark gives 120.5-126.8 (audit AH42).
    from tests.configs.published_speeds import GEMMA4_E4B, llama_cpp_tg

    read_all = dataclasses.replace(GEMMA4_E4B, lookup_parameters=0)
    assert llama_cpp_tg(GEMMA4_E4B, "rtx-5070-12gb", 256) == pytest.approx(123.65, rel=0.1)
    assert llama_cpp_tg(read_all, "rtx-5070-12gb", 256) < 0.75 * 123.65
    job = answers(workload__preset="custom", workload__parameters=8_000_000_000, workload__layers=42,
                  workload__hidden_size=2560, workload__attention_heads=8, workload__vocabulary_size=262_144,
                  workload__sequence_length=4096, workload__lookup_parameters=8_000_000_000, task__mode="inference")
    assert any(key == "lookup_parameters" for _, key, _ in cross_field_problems(job))  # part of the parameters
    # At the most the answers take, 60 % of them, the step still reads its layers (review r69: -0.1 GB read before).
    most = dataclasses.replace(GEMMA4_E4B, lookup_parameters=4_800_000_000)
    assert 0 < llama_cpp_tg(most, "rtx-5070-12gb", 256) < 2 * llama_cpp_tg(GEMMA4_E4B, "rtx-5070-12gb", 256)
    assert decode_reads(job_of_gemma(most), most).read_bytes > 0.25 * 5.37e9


def test_a_speech_recognisers_epoch_counts_its_utterances_at_its_bound_a_gpu():
    # Audit AQ45: ESPnet's E-Branchformer on 8 x A100 40GB, 40 min an epoch of 843,723 utterances, came out ~15 min
    # and "1M samples in ~18.2 min", its utterance count (data.images_count) unread.
    job = answers("team_training", workload__preset="custom", workload__kind="transformer",
                  workload__parameters=148_920_000, workload__layers=23, workload__hidden_size=512,
                  workload__attention_heads=8, workload__intermediate_size=3072, workload__sequence_length=307,
                  workload__decoder_layers=6, workload__decoder_sequence_length=45, workload__vocabulary_size=5000,
                  workload__batch_size=704, task__mode="training", task__precision="amp_fp16", task__optimizer="adam",
                  scale__gpu_count=8, data__kind="audio", data__images_count=843_723)
    shape = model_shape(job.workload)[0]
    prediction = speed_build.training(job, shape, catalog_gpu("a100-40gb-sxm", job, 8), 25.0)
    rate = prediction.figures["training_samples_per_s"]
    assert rate == pytest.approx(8 * 40, rel=1e-3)
    assert prediction.figures["epoch_hours"] == pytest.approx(843_723 / rate / 3600)
    assert "843,723 clips (data.images_count)" in prediction.summary[0]


def test_lora_on_an_8_bit_base_trains_at_its_measured_share_of_qlora():
    # FinGPT v3.1.1 and v3.1.2 (AI4Finance-Foundation/FinGPT README): ChatGLM2-6B's LoRA on the same data and batch on
    # one RTX 3090, "in int8 ... in 6h28min" against "in 4bit ... in 4h9min"; an 8-bit base was timed ~10 % faster
    # than QLoRA's (audit CD58).
    fingpt = answers(workload__preset="custom", workload__parameters=6_243_584_000, workload__layers=28,
                     workload__hidden_size=4096, workload__attention_heads=32, workload__kv_heads=2,
                     workload__intermediate_size=13696, workload__gated_mlp=True, workload__vocabulary_size=65024,
                     workload__sequence_length=128, workload__batch_size=32, task__precision="amp_fp16",
                     task__recompute="full", task__accumulation_steps=8, task__method="qlora", task__lora_rank=8,
                     data__tokens_count=7_861_504)
    def step_s(method: str) -> float:
        job = fingpt.with_value("task", "method", method)
        return speed_build.training(job, model_shape(job.workload)[0], catalog_gpu("rtx-3090-24gb", job),
                                    25.0).figures["step_s"]

    assert step_s("lora_int8") / step_s("qlora") == pytest.approx(388 / 249, rel=0.05)


def test_an_8_bit_base_is_not_said_to_be_an_nf4_one():
    # Audit CO62: Chinese-Vicuna's LoRA on LLaMA-7B loaded in 8 bits was told "dequantizing the NF4 base".
    def formula(method: str) -> str:
        job = answers(workload__preset="llama-7b", workload__batch_size=8, task__precision="amp_fp16",
                      task__method=method)
        return " | ".join(speed_build.training(job, model_shape(job.workload)[0], catalog_gpu("rtx-3090-24gb", job),
                                               25.0).formula)
    assert "QLoRA's step, which an 8-bit base is timed from, dequantizes an NF4 base" in formula("lora_int8")
    assert "dequantizing the NF4 base" not in formula("lora_int8") and "dequantizing the NF4 base" in formula("qlora")


def test_a_loop_over_only_the_experts_a_step_hits_is_charged_for_those():
    # Audit DA66: DeepSeekMoE 16B under generate() on an A800, 14.73 tokens/s (deepseek-ai/DeepSeek-MoE#13): its
    # remote code (moe_infer) runs only the 6 of 64 experts a token hits; charged for all 64 it was 5.9 (2.5x slow),
    # and as grouped GEMMs 54.9 (3.7x fast).
    from tests.configs.published_speeds import DEEPSEEK_MOE_16B, decode

    hit = decode(DEEPSEEK_MOE_16B, "bf16", "a100-80gb-sxm", 512, engine="hf_generate", experts_loop=True,
                 hit_only=True)["decode_tokens_per_s_per_stream"]
    every = decode(DEEPSEEK_MOE_16B, "bf16", "a100-80gb-sxm", 512, engine="hf_generate",
                   experts_loop=True)["decode_tokens_per_s_per_stream"]
    assert hit == pytest.approx(14.73, rel=0.35) and every < 0.5 * hit
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=16_400_000_000,
                  workload__active_parameters=2_800_000_000, workload__experts_count=64,
                  workload__experts_per_token=6, workload__layers=28, workload__hidden_size=2048,
                  workload__attention_heads=16, workload__intermediate_size=11264, workload__gated_mlp=True,
                  workload__vocabulary_size=102_400, workload__sequence_length=512, workload__batch_size=8,
                  task__mode="inference", task__precision="bf16", task__serving_engine="hf_generate",
                  task__experts_loop=True, task__experts_loop_hit_only=True, task__generated_tokens=512)
    formula = " ".join(speed_build.inference(job, build_shape(job), catalog_gpu("a100-80gb-sxm", job)).formula)
    assert "28 layers x (0.75 ms of routing and one host sync + 34.9 experts hit (8 token(s) a step x 6 of 64)" \
        in formula, formula  # 64 x (1 - (58/64)^8)
    # Review r75: charged 210 us a hit expert, 6 streams or more were slower than the loop over every expert.
    for streams in (1, 8, 64):
        rates = [speed_build.inference(each, build_shape(each), catalog_gpu("a100-80gb-sxm", each)).figures[
            "decode_tokens_per_s_per_stream"] for each in (job.with_value("workload", "batch_size", streams),
            job.with_value("workload", "batch_size", streams).with_value("task", "experts_loop_hit_only", False))]
        assert rates[0] >= rates[1], (streams, rates)
    # A speculative step verifies 1 + 4 drafted tokens a stream: they hit 64 x (1 - (58/64)^5) = 24.9 experts.
    drafted = job.with_value("workload", "batch_size", 1).with_value("task", "speculative_draft_tokens", 4) \
        .with_value("task", "speculative_accept_length", 2.5)
    out = speed_build.inference(drafted, build_shape(drafted), catalog_gpu("a100-80gb-sxm", drafted))
    assert "24.9 experts hit (5 token(s) a step x 6 of 64)" in " ".join(out.formula), out.formula
    # The prompt's pass loops over the experts its tokens hit: all 64 of them for a 512-token prompt.
    assert "the first token also waits on the prompt's 28 layers x 64 experts x 85 us" in formula, formula
    unlooped = job.with_value("task", "experts_loop", False)
    assert ("task", "experts_loop_hit_only") in [(section, key) for section, key, _ in cross_field_problems(unlooped)]

