"""Published throughput figures and the speed prediction's figure for the same setting.

Each case names its source (URL and what the figure is). The prediction must be within 35 %, or the case
says why the gap is larger (`gap`) and how much it allows. GPUs in the shipped catalog are read from it (the
same path a build takes); others are given their datasheet figures here.

Counted with the other corpora (published_figures.py 35, published_stacks.py 8, published_workloads.py 66 and
published_workloads_large.py 12, test_requests.py 13): 240 here (374 in all).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pth_top.configs import speed as sp
from pth_top.configs import speed_build, speed_cpu
from pth_top.configs.answer_types import Data, Scale, Task, Workload
from pth_top.configs.answers import Answers
from pth_top.configs.build import Component
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.parts import load_catalog
from pth_top.configs.presets import model_shape
from pth_top.configs.speed_cnn import SAVED_PER_FORWARD_ACTIVATION, cnn_tensor_fraction
from tests.configs import published_workloads
from tests.configs.builders import answers as answers_of
from tests.configs.published_figures import QWEN2_7B, QWEN15_32B

TOLERANCE = 0.35
FASTPITCH = ("NVIDIA DeepLearningExamples PyTorch/SpeechSynthesis/FastPitch README, training performance on "
             "DGX A100 (80GB), FastPitch 1.1 on LJSpeech")
ESPNET_LS = ("espnet/espnet egs2/librispeech/asr1/conf/tuning/{}.yaml, its first line: {} (LibriSpeech 960 h with "
             "0.9/1.0/1.1 speed perturbation, 843,723 utterances of ~12.3 s, 307 frames after 4x subsampling)")


@dataclass(frozen=True)
class PublishedSpeed:
    id: str
    source: str  # URL, and what the figure is
    published: float
    predict: Callable[[], float]
    gap: str = ""  # why the prediction may be further off than TOLERANCE
    tolerance: float = TOLERANCE
    fitted: bool = False  # a constant was fitted on this row: in-sample, not a check
    xfail: str = ""  # outside TOLERANCE for a cause the prediction does not model: run as xfail(strict=True)


@functools.cache
def _catalog():
    return load_catalog(Path("/nonexistent-user-catalog"))


def catalog_gpu(part_id: str, answers: Answers, count: int = 1) -> sp.Device:
    part = _catalog().get(part_id)
    assert part is not None, part_id
    return speed_build.device_for(dict(part.spec), part.name, count, answers, model_shape(answers.workload)[0], None)


def shape(preset: str, sequence_length: int) -> ModelShape:
    base = model_shape(Workload(preset=preset))[0]
    return dataclasses.replace(base, sequence_length=sequence_length, max_context_tokens=0)


def decode(model: ModelShape, precision: str, device: sp.Device | str, generated: int = 128, batch: int = 1,
           preset: str = "custom", *, gpus: int = 1, engine: str = "auto",
           quantization: str = "auto", scenario: str = "personal_research",
           cuda_graphs: bool = True, forward_runtime: str = "auto", experts_loop: bool = False,
           hit_only: bool = False, build_2024: bool = False, transformers: str = "") -> dict[str, float]:
    """A decode's figures; `build_2024`: a 2024 llama.cpp build's row, timed at the generic constants it was fitted
    with, not the 2025-26 build's (speed.LLAMA_CPP_*); `transformers`: generate()'s release."""
    answers = Answers(scenario=scenario, workload=Workload(preset=preset, batch_size=batch),
                      task=Task(mode="inference", precision=precision, generated_tokens=generated,
                                serving_engine=engine, quantization=quantization, cuda_graphs=cuda_graphs,
                                forward_runtime=forward_runtime, experts_loop=experts_loop,
                                experts_loop_hit_only=hit_only, transformers_version=transformers))
    gpu = catalog_gpu(device, answers, gpus) if isinstance(device, str) else device
    if build_2024:
        gpu = dataclasses.replace(gpu, llama_cpp_cuda=False)
    return speed_build.inference(answers, model, gpu).figures


def gpt_oss_20b_on_pro_6000(context: int) -> dict[str, float]:
    """Millstone's gpt-oss-20b MXFP4 on one RTX PRO 6000 in vLLM: one request of `context` tokens, 1,024 out."""
    return decode(shape("gpt-oss-20b", context), "int4", "rtx-pro-6000-blackwell-96gb", 1024, preset="gpt-oss-20b",
                  engine="vllm")


def qwen3_coder_next_on_h200(context: int) -> dict[str, float]:
    """Millstone's Qwen3-Coder-Next FP8 on one H200 in vLLM: one request of `context` tokens, 1,024 out."""
    return decode(dataclasses.replace(QWEN3_CODER_NEXT, sequence_length=context), "int8", "h200-141gb-sxm", 1024,
                  engine="vllm", quantization="fp8")


def train(preset: str, sequence_length: int, part_id: str, *, batch: int, gpus: int = 1, precision: str = "bf16",
          method: str = "full", recompute: str = "none", accumulation: int = 1, data: str = "text",
          sharding: str = "none", channels_last: bool = False, sequence_parallel: bool = False,
          flash_attention: bool = True) -> float:
    answers = Answers(workload=Workload(preset=preset, batch_size=batch),
                      task=Task(mode="training", precision=precision, method=method, recompute=recompute,
                                accumulation_steps=accumulation, lora_targets="attention",
                                channels_last=channels_last, sequence_parallel=sequence_parallel,
                                flash_attention=flash_attention),
                      scale=Scale(gpu_count=gpus, sharding=sharding), data=Data(kind=data))
    model = model_shape(answers.workload)[0]
    if model.kind == "transformer":
        model = dataclasses.replace(model, sequence_length=sequence_length)
    figures = speed_build.training(answers, model, catalog_gpu(part_id, answers, gpus), 31.5).figures
    return figures.get("training_images_per_s") or figures.get("training_tokens_per_s") or \
        figures["training_samples_per_s"]


def denoise(part_id: str, steps: int, tokens: int) -> float:
    """Seconds for one FLUX.1-dev image (bf16, batch 1): `steps` denoising steps over `tokens` (configs.diffusion)."""
    answers = Answers(workload=Workload(preset="custom", batch_size=1, denoising_steps=steps),
                      task=Task(mode="inference", precision="bf16"))
    model = dataclasses.replace(FLUX1_DEV, sequence_length=tokens, denoising_steps=steps)
    return speed_build.inference(answers, model, catalog_gpu(part_id, answers)).figures["image_batch_s"]


def denoise_sana(part_id: str) -> float:
    """Seconds for one Sana-1.6B image at 1024 px (bf16, 20 steps with guidance), timed from 2N x s (configs.diffusion).
    Its shape from the NVlabs/Sana config: 20 blocks of 2240, 20 heads, a 5,600-wide GLU, 32 x 32 latent tokens."""
    answers = answers_of(workload__preset="custom", workload__kind="transformer", workload__parameters=1_600_000_000,
                         workload__layers=20, workload__hidden_size=2240, workload__attention_heads=20,
                         workload__intermediate_size=5600, workload__gated_mlp=True, workload__sequence_length=1024,
                         workload__denoising_steps=20, workload__classifier_free_guidance=True,
                         workload__single_stream_dit=True, workload__batch_size=1, task__mode="inference",
                         task__precision="bf16")
    return speed_build.inference(answers, model_shape(answers.workload)[0],
                                 catalog_gpu(part_id, answers)).figures["image_batch_s"]


def denoise_allegro(part_id: str) -> float:
    """Seconds for one Allegro clip (published_workloads.ALLEGRO: 88 frames at 720p, 100 steps with guidance)."""
    answers = answers_of(**published_workloads.inference_custom({**published_workloads.ALLEGRO,
                                                                 "workload__single_stream_dit": True}))
    return speed_build.inference(answers, model_shape(answers.workload)[0],
                                 catalog_gpu(part_id, answers)).figures["image_batch_s"]


# HunyuanVideo's 13B DiT (20 dual-stream and 40 single-stream blocks of 3072, 24 heads; timed single-stream) over a
# 720p clip of 129 frames: 33 x 45 x 80 latent tokens and 256 of text, 50 steps, guidance distilled into one pass.
HUNYUAN_VIDEO_720P = {
    "workload__preset": "custom", "workload__kind": "transformer", "workload__parameters": 12_800_000_000,
    "workload__layers": 60, "workload__hidden_size": 3072, "workload__attention_heads": 24,
    "workload__intermediate_size": 12288, "workload__sequence_length": 119_056, "workload__denoising_steps": 50,
    "workload__single_stream_dit": True, "workload__batch_size": 1, "task__mode": "inference",
    "task__precision": "bf16", "data__kind": "video"}
XDIT_HUNYUAN = ("github.com/xdit-project/xDiT docs/performance/hunyuanvideo.md: HunyuanVideo 1280x720, 129 frames, 50 "
                "steps, Ulysses sequence parallel on H100s (the official HunyuanVideo repository)")


# Step-Video-T2V's 30B DiT (48 blocks of 6144, 48 heads) over 204 frames at 544x992 (34 x 62 x 26 = 54,808 latent
# tokens), 50 steps with guidance; its text encoders and VAE run on another GPU (audit YV3).
STEP_VIDEO = {**HUNYUAN_VIDEO_720P, "workload__parameters": 30_000_000_000, "workload__layers": 48,
              "workload__hidden_size": 6144, "workload__attention_heads": 48, "workload__intermediate_size": 0,
              "workload__sequence_length": 54_808, "workload__classifier_free_guidance": True}


def clip_on_h100s(gpus: int, model: dict | None = None) -> float:
    """Seconds for one video clip (HunyuanVideo's, or `model`'s) on `gpus` H100s, split over them by sequence
    parallel."""
    answers = answers_of(**(model or HUNYUAN_VIDEO_720P), scale__gpu_count=gpus, task__sequence_parallel=gpus > 1)
    return speed_build.inference(answers, model_shape(answers.workload)[0],
                                 catalog_gpu("h100-80gb-sxm", answers, gpus)).figures["image_batch_s"]


def denoise_sdxl(part_id: str, steps: int, unet: dict | None = None, px: int = 1024) -> float:
    """Seconds for one SDXL base image (or `unet`'s: fp16, batch 1, guidance) from its counted GFLOPs and its ops a
    pass in eager Diffusers, and its `px` x `px` VAE decode (configs.diffusion)."""
    answers = answers_of(**(unet or published_workloads.SDXL_BASE), workload__denoising_steps=steps,
                         workload__batch_size=1, task__mode="inference", task__precision="fp16",
                         workload__output_width_px=px, workload__output_height_px=px)
    model = model_shape(answers.workload)[0]
    return speed_build.inference(answers, model, catalog_gpu(part_id, answers)).figures["image_batch_s"]


def streamdiffusion_on_rtx_4090(steps: int) -> float:
    """Images a second of SD 1.5's UNet (SD-Turbo's 2.1 UNet has its count) in a TensorRT engine on an RTX 4090,
    `steps` without guidance, its tiny decoder (TAESD) not counted (configs.diffusion.COMPILED_DENOISER_FRACTION)."""
    answers = answers_of(**{**published_workloads.SD15, "workload__classifier_free_guidance": False},
                         workload__denoising_steps=steps, workload__batch_size=1, task__mode="inference",
                         task__precision="fp16", task__forward_runtime="compiled")
    model = model_shape(answers.workload)[0]
    return 1 / speed_build.inference(answers, model, catalog_gpu("rtx-4090-24gb", answers)).figures["image_batch_s"]


def offloaded_decode(preset: str | ModelShape, device: sp.Device, ram_gb_per_s: float, quantization: str,
                     in_ram_share: float = 1.0) -> float:
    """llama.cpp --cpu-moe: tokens/s with every routed expert in system RAM (configs.expert_offload), tg at 4k;
    --n-cpu-moe N keeps N of the MoE layers' experts there (`in_ram_share`)."""
    answers = Answers(workload=Workload(preset=preset if isinstance(preset, str) else "custom", batch_size=1),
                      task=Task(mode="inference", precision="int4", generated_tokens=128, serving_engine="llama_cpp",
                                quantization=quantization, expert_offload=True))
    model = shape(preset, 4096) if isinstance(preset, str) else preset
    with_ram = dataclasses.replace(device, host_ram_gb_per_s=ram_gb_per_s, experts_in_ram_share=in_ram_share)
    return speed_build.inference(answers, model, with_ram).figures["decode_tokens_per_s_per_stream"]


def partial_decode(model: ModelShape, device: sp.Device, ram_gb_per_s: float, layers_in_ram: int) -> float:
    """llama.cpp -ngl: tokens/s with `layers_in_ram` of the layers and the output layer run by the CPU from RAM
    (configs.layer_offload), Q4_K_M at a 4k context."""
    answers = Answers(workload=Workload(preset="custom", batch_size=1),
                      task=Task(mode="inference", precision="int4", generated_tokens=128, serving_engine="llama_cpp",
                                quantization="gguf_q4_k_m", layer_offload=True))
    split = dataclasses.replace(device, host_ram_gb_per_s=ram_gb_per_s, layers_in_ram=layers_in_ram)
    return speed_build.inference(answers, dataclasses.replace(model, sequence_length=4096), split).figures[
        "decode_tokens_per_s_per_stream"]


def cpu_decode(preset: str, quantization: str, channels: int, dimms: int, ram: str, mt_per_s: int) -> float:
    """llama.cpp decode on a desktop CPU from its RAM (configs.speed_cpu), tg128 from an empty context."""
    answers = Answers(workload=Workload(preset=preset, batch_size=1),
                      task=Task(mode="inference", precision="int8" if quantization.endswith("q8_0") else "int4",
                                generated_tokens=128, serving_engine="llama_cpp", quantization=quantization))
    cpu = Component("cpu", "cpu", "desktop CPU", 1, 0.0, {"memory_channels_count": channels, "platform": "desktop"})
    kit = Component("memory_kit", "kit", "kit", 1, 0.0,
                    {"memory_type": ram, "modules_count": dimms, "speed_mt_per_s": mt_per_s})
    model = shape(preset, 1)
    return speed_cpu.cpu_inference(answers, model, cpu, kit)[0].figures["decode_tokens_per_s_per_stream"]


def cpu_prefill(cores: int, boost_ghz: float, **efficiency_cores: float) -> float:
    """llama.cpp pp512 on a CPU, Llama 3.1 8B: prompt tokens/s (configs.speed_cpu.prefill_seconds)."""
    seconds, _ = speed_cpu.prefill_seconds(shape("llama3-8b", 512), 512,
                                           {"cores_count": cores, "boost_clock_ghz": boost_ghz, **efficiency_cores})
    return 512 / seconds


def cpu_cnn_inference(gflops: float, cores: int, boost_ghz: float, **efficiency_cores: float) -> float:
    """Frames a second of a CNN given its FLOPs, fp32 at batch 1 in ONNX Runtime on a desktop CPU's cores."""
    answers = Answers(workload=Workload(preset="custom", kind="cnn", parameters=13_590_000, input_size_px=224,
                                        forward_gflops_per_sample=gflops, batch_size=1),
                      task=Task(mode="inference", precision="fp32"))
    cpu = Component("cpu", "cpu", "cpu", 1, 0.0, {"cores_count": cores, "boost_clock_ghz": boost_ghz,
                                                   **efficiency_cores})
    return speed_cpu.cpu_forward(answers, model_shape(answers.workload)[0], cpu).figures["samples_per_s"]


def cnn_preset_inference(part_id: str, batch: int, preset: str = "resnet50", precision: str = "fp16",
                         channels_last: bool = False) -> float:
    answers = Answers(workload=Workload(preset=preset, batch_size=batch),
                      task=Task(mode="inference", precision=precision, channels_last=channels_last))
    model = model_shape(answers.workload)[0]
    return speed_build.inference(answers, model, catalog_gpu(part_id, answers)).figures["samples_per_s"]


def fastpitch_training(gpus: int) -> float:
    """Mel frames a second of FastPitch 1.1's training (12 FFT layers of 384, one head, conv FFN 1,536, ~600 frames
    an utterance, 45M parameters; AMP, batch 32 a GPU) on A100 80GB SXMs, 8 accumulation steps on one."""
    answers = answers_of(workload__preset="custom", workload__kind="transformer", workload__parameters=45_000_000,
                         workload__layers=12, workload__hidden_size=384, workload__attention_heads=1,
                         workload__intermediate_size=1536, workload__sequence_length=600, workload__encoder_only=True,
                         workload__batch_size=32 * gpus * (8 if gpus == 1 else 1), task__precision="amp_fp16",
                         task__optimizer="adam", task__accumulation_steps=8 if gpus == 1 else 1,
                         scale__gpu_count=gpus, data__kind="audio")
    device = catalog_gpu("a100-80gb-sxm", answers, gpus)
    return speed_build.training(answers, model_shape(answers.workload)[0], device, 25.0).figures[
        "training_tokens_per_s"]


# openai/whisper-{small, medium, large} config.json: 12+12 layers of 768 (12 heads, FFN 3,072), 24+24 of 1,024 (16,
# 4,096), 32+32 of 1,280 (20, 5,120); V 51,865; 1,500 encoder positions, at most 448 decoder ones. The event's
# ds_config.json: ZeRO-2 with the optimizer on the CPU; its command: --gradient_checkpointing --fp16.
WHISPER_SIZES = {"small": (241_734_912, 24, 768, 12, 3072), "medium": (763_857_920, 48, 1024, 16, 4096),
                 "large": (1_543_490_560, 64, 1280, 20, 5120)}
V100_WHISPER_GAP = ("the event's V100 16 GB rows take 1.1-2.6x its A100 40GB rows' time a sample (small 41 ms at "
                    "batch 32 against 36 at 64, medium 125 against 91, large 475 against 184), where the A100 has 2.5x "
                    "the tensor rate: the smaller models are not bound by the V100's compute as the wizard times it "
                    "(its 0.30 of the tensor rate, Megatron-LM's on one V100), -56 to -75 %")


def whisper_event_samples_per_s(size: str, part_id: str, batch: int) -> float:
    """Samples a second of the Whisper fine-tuning event's DeepSpeed runs (one GPU)."""
    parameters, layers, hidden, heads, mlp = WHISPER_SIZES[size]
    answers = answers_of(workload__preset="custom", workload__kind="transformer", workload__parameters=parameters,
                         workload__layers=layers, workload__hidden_size=hidden, workload__attention_heads=heads,
                         workload__intermediate_size=mlp, workload__sequence_length=1500,
                         workload__decoder_layers=layers // 2, workload__decoder_sequence_length=448,
                         workload__vocabulary_size=51_865, workload__batch_size=batch, task__mode="training",
                         task__precision="amp_fp16", task__recompute="full", scale__sharding="zero_offload",
                         data__kind="audio")
    device = catalog_gpu(part_id, answers, 1)
    return speed_build.training(answers, model_shape(answers.workload)[0], device, 25.0).figures[
        "training_samples_per_s"]


def sparse_rcnn_images_per_s() -> float:
    """Images a second of Sparse R-CNN R50-FPN (100 proposals, ~106M parameters) trained in detectron2 at COCO's
    800 x 1333 canvas with its scale jitter, 16 images over 8 V100s, fp32, AdamW: a custom detector."""
    answers = answers_of(workload__preset="custom", workload__kind="cnn", workload__parameters=106_000_000,
                         workload__layers=50, workload__input_size_px=1033, workload__dense_head="detection",
                         workload__batch_size=16, task__precision="fp32", task__optimizer="adamw",
                         scale__gpu_count=8, data__kind="images")
    device = catalog_gpu("v100-16gb-sxm2", answers, 8)
    return speed_build.training(answers, model_shape(answers.workload)[0], device, 25.0).figures[
        "training_samples_per_s"]


def detr_images_per_s(parameters: int, forward_gflops: float) -> float:
    """Images a second of a DETR-family detector (a ResNet-50, a transformer encoder-decoder over its queries) trained
    at COCO's 800 x 1333 canvas, 2 images a V100 over 8, fp32, AdamW: a custom CNN, workload.dense_head = "query"."""
    answers = answers_of(workload__preset="custom", workload__kind="cnn", workload__parameters=parameters,
                         workload__layers=50, workload__input_size_px=1033, workload__dense_head="query",
                         workload__forward_gflops_per_sample=forward_gflops, workload__batch_size=16,
                         task__precision="fp32", task__optimizer="adamw", scale__gpu_count=8, data__kind="images")
    device = catalog_gpu("v100-32gb-pcie", answers, 8)
    return speed_build.training(answers, model_shape(answers.workload)[0], device, 25.0).figures[
        "training_samples_per_s"]


def neuralhermes_dpo_tokens_per_s() -> float:
    """Tokens a second of NeuralHermes-2.5-Mistral-7B's QLoRA DPO (mlabonne/llm-course's notebook: 4-bit base, r 16 on
    every linear layer, dropout 0.05, 4 pairs a micro-batch x 4 accumulation, gradient checkpointing, bf16,
    max_length 1,536, TRL's reference the base with its adapters off) on Colab's A100 40GB."""
    answers = answers_of(workload__preset="mistral-7b", workload__sequence_length=1536, workload__batch_size=8,
                         task__precision="bf16", task__method="qlora", task__lora_rank=16,
                         task__lora_targets="all_linear", task__lora_dropout=0.05, task__recompute="full",
                         task__accumulation_steps=4, task__reference_without_adapters=True, data__kind="text")
    device = catalog_gpu("a100-40gb-sxm", answers, 1)
    return speed_build.training(answers, model_shape(answers.workload)[0], device, 25.0).figures[
        "training_tokens_per_s"]


def speechbrain_transformer_utterances_per_s() -> float:
    """Utterances a second of SpeechBrain's LibriSpeech Transformer (hparams/transformer.yaml: 12 encoder and 6
    decoder layers of 768, 8 heads, FFN 3,072, 5,000 tokens; batch 16 x 4 accumulation a GPU, fp32, Adam; 307
    positions after its stride-4 front end, ~46 target tokens) on 4 x V100 32GB."""
    answers = answers_of(workload__preset="custom", workload__kind="transformer", workload__layers=18,
                         workload__decoder_layers=6, workload__hidden_size=768, workload__attention_heads=8,
                         workload__intermediate_size=3072, workload__vocabulary_size=5000,
                         workload__sequence_length=307, workload__decoder_sequence_length=46,
                         workload__batch_size=256, task__precision="fp32", task__optimizer="adam",
                         task__flash_attention=False, task__accumulation_steps=4, scale__gpu_count=4,
                         data__kind="audio")
    device = catalog_gpu("v100-32gb-pcie", answers, 4)
    return speed_build.training(answers, model_shape(answers.workload)[0], device, 25.0).figures[
        "training_samples_per_s"]


def espnet_asr_utterances_per_s(part_id: str, gpus: int, parameters: int, layers: int, mlp: int, batch: int,
                                accumulation: int) -> float:
    """Utterances a second of an ESPnet LibriSpeech recipe: an encoder of width 512 (8 heads) and a 6-layer
    Transformer decoder over ~45 BPE-5000 tokens, AMP, Adam, numel batches of ~12.3 s utterances."""
    answers = answers_of(workload__preset="custom", workload__kind="transformer", workload__parameters=parameters,
                         workload__layers=layers, workload__hidden_size=512, workload__attention_heads=8,
                         workload__intermediate_size=mlp, workload__sequence_length=307, workload__decoder_layers=6,
                         workload__decoder_sequence_length=45, workload__vocabulary_size=5000,
                         workload__batch_size=batch, task__precision="amp_fp16", task__optimizer="adam",
                         task__flash_attention=False, task__accumulation_steps=accumulation, scale__gpu_count=gpus,
                         data__kind="audio")
    device = catalog_gpu(part_id, answers, gpus)
    return speed_build.training(answers, model_shape(answers.workload)[0], device, 25.0).figures[
        "training_samples_per_s"]


def timm_vit_inference(parameters: int, layers: int, hidden: int, heads: int, mlp: int, gated: bool, tokens: int,
                       batch: int, windowed: int = 0) -> float:
    """Images a second of a timm ViT in AMP fp16, eager, on one RTX 4090 (its pt240 table's rows); `windowed` of its
    layers in 14 x 14 windows (SAM's)."""
    answers = answers_of("inference_server", workload__preset="custom", workload__kind="transformer",
                         workload__parameters=parameters, workload__layers=layers, workload__hidden_size=hidden,
                         workload__attention_heads=heads, workload__intermediate_size=mlp, workload__gated_mlp=gated,
                         workload__sequence_length=tokens, workload__sliding_window_tokens=196 if windowed else 0,
                         workload__sliding_window_layers=windowed, workload__encoder_only=True,
                         workload__batch_size=batch, task__mode="inference", task__precision="fp16",
                         data__kind="images")
    model = model_shape(answers.workload)[0]
    return speed_build.inference(answers, model, catalog_gpu("rtx-4090-24gb", answers)).figures["samples_per_s"]


def timm_vit_training(parameters: int, hidden: int, heads: int, batch: int) -> float:
    """Images a second of a timm ViT/16 at 224 px (12 layers, 197 tokens, a 4h GELU MLP) trained in AMP on one RTX
    3090 (its pt112 training table's rows: PyTorch 1.12, whose timm attention was eager, q @ k^T then softmax)."""
    answers = answers_of(workload__preset="custom", workload__kind="transformer", workload__parameters=parameters,
                         workload__layers=12, workload__hidden_size=hidden, workload__attention_heads=heads,
                         workload__intermediate_size=4 * hidden, workload__sequence_length=197,
                         workload__encoder_only=True, workload__batch_size=batch, task__mode="training",
                         task__precision="amp_fp16", task__optimizer="sgd", task__flash_attention=False,
                         data__kind="images")
    figures = speed_build.training(answers, model_shape(answers.workload)[0], catalog_gpu("rtx-3090-24gb", answers),
                                   31.5).figures
    return figures.get("training_images_per_s") or figures["training_samples_per_s"]


TIMM_4090_PT240 = ("github.com/huggingface/pytorch-image-models "
                   "results/benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv (AMP, NCHW, eager, one RTX 4090)")


def sam_vit_h_inference(precision: str) -> float:
    """Images a second of SAM's ViT-H image encoder at 1,024 px (32 blocks of 1,280, 16 heads, 4,096 tokens; 28 in
    14 x 14 windows) at batch 8, eager, on an A100 40GB SXM (p4d)."""
    answers = answers_of("inference_server", workload__preset="custom", workload__kind="transformer",
                         workload__parameters=636_000_000, workload__layers=32, workload__hidden_size=1280,
                         workload__attention_heads=16, workload__intermediate_size=5120,
                         workload__sequence_length=4096, workload__sliding_window_tokens=196,
                         workload__sliding_window_layers=28, workload__encoder_only=True, workload__batch_size=8,
                         task__mode="inference", task__precision=precision, task__flash_attention=False,
                         data__kind="images")
    model = model_shape(answers.workload)[0]
    return speed_build.inference(answers, model, catalog_gpu("a100-40gb-sxm", answers)).figures["samples_per_s"]


def cnn_inference(device: sp.Device, gflops: float, batch: int = 1, px: int = 640) -> float:
    """Images a second of a custom CNN given its forward GFLOPs, fp16, compiled (a TensorRT engine: these rows')."""
    answers = Answers(workload=Workload(preset="custom", kind="cnn", parameters=25_900_000, input_size_px=px,
                                        forward_gflops_per_sample=gflops, batch_size=batch),
                      task=Task(mode="inference", precision="fp16", forward_runtime="compiled"))
    return speed_build.inference(answers, model_shape(answers.workload)[0], device).figures["samples_per_s"]


def pi_cnn_inference(gflops: float, parameters: int) -> float:
    """Frames a second of a torchvision CNN given its FLOPs, fp32 eager at batch 1 on a Raspberry Pi 4."""
    answers = Answers(workload=Workload(preset="custom", kind="cnn", parameters=parameters, input_size_px=224,
                                        forward_gflops_per_sample=gflops, batch_size=1),
                      task=Task(mode="inference", precision="fp32", forward_runtime="eager"))
    return speed_build.inference(answers, model_shape(answers.workload)[0], catalog_gpu(PI_4, answers)).figures[
        "samples_per_s"]


def dilated_segmentation_inference(parameters: int, layers: int) -> float:
    """Images a second of a dilated (D8) segmentation net on a V100 SXM2, fp32 eager, batch 1, a whole 2048 x 1024
    Cityscapes image as mmseg's benchmark runs it; its FLOPs are not given (DeepLabV3+ R50-D8's a pixel)."""
    answers = Answers(workload=Workload(preset="custom", kind="cnn", parameters=parameters, layers=layers,
                                        input_size_px=1448, dense_head="segmentation", batch_size=1),
                      task=Task(mode="inference", precision="fp32"))
    model = model_shape(answers.workload)[0]
    return speed_build.inference(answers, model, catalog_gpu("v100-32gb-sxm2", answers)).figures["samples_per_s"]


MMSEG_V100 = ("github.com/open-mmlab/mmsegmentation configs/danet/README.md and configs/deeplabv3plus/README.md, "
              "Cityscapes 512x1024 models, 'Inf time (fps)' on a V100, whole 2048 x 1024 images")


# IBM's PowerMoE-3B (arXiv:2408.13359 Table 4: 32 layers of 1,536, 24 heads, 8 KV; 40 experts of 512, top 8; 3.3B,
# 800M active) fully fine-tuned in bf16 with checkpointing, 8 samples a micro-batch of alpaca padded to ~320 tokens,
# 128 a step (fms-acceleration scripts/benchmarks/refs/a100_80gb_moe.csv).
FMS_MOE = "github.com/foundation-model-stack/fms-acceleration scripts/benchmarks/refs/a100_80gb_moe.csv: PowerMoE-3B"
POWERMOE_3B = {
    "workload__preset": "custom", "workload__kind": "transformer", "workload__layers": 32,
    "workload__hidden_size": 1536, "workload__attention_heads": 24, "workload__kv_heads": 8,
    "workload__intermediate_size": 8 * 512, "workload__gated_mlp": True, "workload__experts_count": 40,
    "workload__experts_per_token": 8, "workload__parameters": 3_300_000_000,
    "workload__active_parameters": 800_000_000, "workload__vocabulary_size": 49_152, "workload__tied_embeddings": True,
    "workload__sequence_length": 320, "workload__batch_size": 128,
    "task__mode": "training", "task__precision": "bf16", "task__mixed_layout": "bf16_pure", "task__recompute": "full"}


def powermoe_samples_per_s(stack: str, gpus: int) -> float:
    """Samples a second of PowerMoE-3B's fine-tune on A100 80GBs, 16 micro-batches of 8 a step over the GPUs; under
    the HF Trainer through transformers 4.x's loop over GraniteMoe's experts (fms-acceleration's requirements)."""
    answers = answers_of(**POWERMOE_3B, task__training_stack=stack, task__accumulation_steps=16 // gpus,
                         task__experts_loop=stack == "hf_trainer", scale__gpu_count=gpus)
    figures = speed_build.training(answers, model_shape(answers.workload)[0],
                                   catalog_gpu("a100-80gb-sxm", answers, gpus), 31.5).figures
    return figures["training_tokens_per_s"] / 320


def moe_megatron_per_gpu() -> float:
    """Tokens a second a GPU of Qwen3-30B-A3B's training at 8k on 16 Hopper GPUs with grouped GEMMs (torchtune's
    stack stands for Megatron-Core's: no expert loop); the H800's compute is the H100 SXM's."""
    answers = answers_of(workload__preset="qwen3-30b-a3b", workload__batch_size=16, workload__sequence_length=8192,
                         task__mode="training", task__training_stack="torchtune", scale__gpu_count=16)
    return speed_build.training(answers, model_shape(answers.workload)[0],
                                catalog_gpu("h100-80gb-sxm", answers, 16), 31.5).figures["training_tokens_per_s"] / 16


def cnn_training_on(part_id: str, gflops: float, parameters: int, batch: int, *, px: int = 224,
                    macts: float = 0.0, channels_last: bool = False) -> float:
    """Images a second of a custom CNN's AMP training given its forward GFLOPs (and timm's infer_macts, millions), on a
    catalog GPU."""
    answers = Answers(workload=Workload(preset="custom", kind="cnn", parameters=parameters, input_size_px=px,
                                        forward_gflops_per_sample=gflops, batch_size=batch,
                                        activation_elements_per_sample=_saved(macts)),
                      task=Task(mode="training", precision="amp_fp16", channels_last=channels_last),
                      data=Data(kind="images"))
    figures = speed_build.training(answers, model_shape(answers.workload)[0], catalog_gpu(part_id, answers),
                                   31.5).figures
    return figures.get("training_images_per_s") or figures["training_samples_per_s"]


def moco_training() -> float:
    """Images a second of MoCo v2's ResNet-50 pretraining on 8 V100s in fp32, its key encoder a frozen forward."""
    answers = Answers(workload=Workload(preset="resnet50", batch_size=256, frozen_parameters=25_557_032),
                      task=Task(mode="training", precision="fp32", optimizer="sgd"),
                      data=Data(kind="images", images_count=1_281_167), scale=Scale(gpu_count=8))
    figures = speed_build.training(answers, model_shape(answers.workload)[0],
                                   catalog_gpu("v100-32gb-sxm2", answers, 8), 31.5).figures
    return figures.get("training_images_per_s") or figures["training_samples_per_s"]


def opt350m_training(part_id: str, flash_attention: bool) -> float:
    """Tokens a second of OPT-350m (24 layers of 1,024, 16 heads, ReLU MLP 4,096; 331M) trained in pure fp16 at 8 x
    1,024 tokens, with eager attention or SDPA (task.flash_attention)."""
    answers = answers_of(workload__preset="custom", workload__parameters=331_000_000, workload__layers=24,
                         workload__hidden_size=1024, workload__attention_heads=16, workload__intermediate_size=4096,
                         workload__vocabulary_size=50272, workload__tied_embeddings=True,
                         workload__sequence_length=1024, workload__batch_size=8, task__precision="bf16",
                         task__mixed_layout="bf16_pure", task__flash_attention=flash_attention)
    return speed_build.training(answers, model_shape(answers.workload)[0], catalog_gpu(part_id, answers),
                                31.5).figures["training_tokens_per_s"]


QWEN_PROFILE = ("github.com/QwenLM/Qwen README, 'Profiling of Memory and Speed': one A100-SXM4-80G, FlashAttention 2, "
                "batch 1 x accumulation 8, LoRA (r 64 on c_attn, c_proj, w1, w2) with gradient checkpointing")


def qwen_lora_step_s(layers: int, hidden: int, heads: int, mlp: int, tokens: int) -> float:
    """Seconds a step of Qwen (v1) LoRA in its finetune.py: 8 micro-batches of one `tokens`-token sample each."""
    answers = answers_of(workload__preset="custom", workload__layers=layers, workload__hidden_size=hidden,
                         workload__attention_heads=heads, workload__intermediate_size=mlp,
                         workload__gated_mlp=True, workload__vocabulary_size=151_936,
                         workload__sequence_length=tokens, workload__batch_size=8, task__method="lora",
                         task__lora_rank=64, task__lora_targets="all_linear", task__recompute="full",
                         task__accumulation_steps=8)
    return speed_build.training(answers, model_shape(answers.workload)[0], catalog_gpu("a100-80gb-sxm", answers),
                                31.5).figures["step_s"]


def _saved(macts: float) -> int:
    """The values saved for backward (workload.activation_elements_per_sample) of timm's infer_macts, in millions."""
    return round(macts * 1e6 * SAVED_PER_FORWARD_ACTIVATION)


def timm_inference(part_id: str, gflops: float, px: int, macts: float, channels_last: bool = False) -> float:
    """Images a second of a timm CNN row (AMP, eager, batch 1024) from its GFLOPs and infer_macts (millions)."""
    answers = Answers(workload=Workload(preset="custom", kind="cnn", parameters=25_000_000, input_size_px=px,
                                        forward_gflops_per_sample=gflops, batch_size=1024,
                                        activation_elements_per_sample=_saved(macts)),
                      task=Task(mode="inference", precision="fp16", channels_last=channels_last))
    model = model_shape(answers.workload)[0]
    return speed_build.inference(answers, model, catalog_gpu(part_id, answers)).figures["samples_per_s"]


def cnn_inference_on(part_id: str, gflops: float, batch: int = 1, px: int = 640) -> float:
    """Images a second of a custom CNN given its forward GFLOPs, fp16, compiled, on a catalog GPU."""
    answers = Answers(workload=Workload(preset="custom", kind="cnn", parameters=25_900_000, input_size_px=px,
                                        forward_gflops_per_sample=gflops, batch_size=batch),
                      task=Task(mode="inference", precision="fp16", forward_runtime="compiled"))
    return cnn_inference(catalog_gpu(part_id, answers), gflops, batch, px)


def encoder_inference(preset: str, sequence_length: int, gpu: str | sp.Device, batch: int,
                      data: str = "text", runtime: str = "auto") -> float:
    """Inputs a second of an encoder preset in fp16 on a catalog GPU (its id) or a given device, eager or compiled."""
    answers = Answers(workload=Workload(preset=preset, batch_size=batch, sequence_length=sequence_length),
                      task=Task(mode="inference", precision="fp16", forward_runtime=runtime), data=Data(kind=data))
    device = catalog_gpu(gpu, answers) if isinstance(gpu, str) else gpu
    return speed_build.inference(answers, model_shape(answers.workload)[0], device).figures["samples_per_s"]


STREAMDIFFUSION = ("github.com/cumulo-autumn/StreamDiffusion README (RTX 4090, Core i9-13900K): TensorRT engines, "
                   "TAESD's tiny decoder, 512 px, the prompt's embeddings computed once")
YOLOV9_QAT = ("github.com/levipereira/yolov9-qat README, 'Latency/Throughput' (TensorRT 10 trtexec with CUDA graphs, "
              "an RTX 4090): YOLOv9-C (converted, 102.1 GFLOPs at 640 px, WongKinYiu/yolov9 README) in FP16 at batch "
              "{}, {:,.0f} images/s")
TRT_BERT = ("github.com/NVIDIA/TensorRT demo/BERT/README.md (commit 007c347), 'Inference performance', "
            "scripts/inference_benchmark.sh, BERT Large, FP16, sequence length 384, batch 128")
DEPTH_ANYTHING_TRT = ("github.com/LiheYoung/Depth-Anything README, 'Pre-trained models': Depth-Anything-Large "
                      "(335.3M, ViT-L/14 at 518 x 518: 37 x 37 patches and a class token) 12 ms a frame on an RTX 4090 "
                      "in TensorRT FP16, pre- and post-processing included (github.com/spacewalk01/depth-anything-"
                      "tensorrt)")


def depth_anything_large_trt(gpu: str) -> float:
    """Frames a second of Depth-Anything-Large's ViT-L encoder at batch 1 in a compiled engine (the DPT head's
    convolutions left out)."""
    answers = Answers(workload=Workload(preset="custom", kind="transformer", encoder_only=True,
                                        parameters=335_300_000, layers=24, hidden_size=1024, attention_heads=16,
                                        sequence_length=1370, batch_size=1),
                      task=Task(mode="inference", precision="fp16", forward_runtime="compiled"),
                      data=Data(kind="images"))
    device = catalog_gpu(gpu, answers)
    return speed_build.inference(answers, model_shape(answers.workload)[0], device).figures["samples_per_s"]
DETECTRON2_ZOO = ("github.com/facebookresearch/detectron2 MODEL_ZOO.md, COCO detection baselines: 8 V100s with NVLink "
                  "(Big Basin), PyTorch 1.3, FP32, 2 images a GPU, train time averaged over the run")
TIMM_INFER = ("github.com/huggingface/pytorch-image-models results/benchmark-infer-amp-nchw-{}.csv (commit {}), "
              "vit_base_patch16_224, AMP, batch 1,024: {} images/s")
MODERNBERT = ("arXiv:2412.13663 (ModernBERT), Table 2, RTX 4090, transformers with FlashAttention 2 and unpadding, "
              "fixed-length inputs")


def modernbert_large(sequence_length: int, batch: int) -> float:
    """Tokens a second of ModernBERT-large (answerdotai config.json: 28 layers, h 1024, 16 heads, GeGLU 2624, V 50,368;
    global attention every third layer, a 128-token window on the other 18) in bf16 on an RTX 4090."""
    answers = Answers(workload=Workload(
        preset="custom", parameters=395_000_000, layers=28, hidden_size=1024, attention_heads=16, kv_heads=16,
        intermediate_size=2624, gated_mlp=True, vocabulary_size=50_368, encoder_only=True,
        sliding_window_tokens=128, sliding_window_layers=18, sequence_length=sequence_length, batch_size=batch),
        task=Task(mode="inference", precision="bf16"))
    shape = model_shape(answers.workload)[0]
    rate = speed_build.inference(answers, shape, catalog_gpu("rtx-4090-24gb", answers)).figures["samples_per_s"]
    return rate * sequence_length
# FLUX.1-dev's denoiser, as tests/configs/published_workloads.py gives it; a W x H image is (W/16) x (H/16) latent
# tokens beside the pipeline's 512 T5 tokens (FluxPipeline max_sequence_length).
FLUX1_DEV = model_shape(answers_of(**published_workloads.FLUX1_DEV).workload)[0]
BENCHMARK_FLUX = ("github.com/varadrane1707/BenchmarkFlux README (FLUX.1-dev, Diffusers, 1024x1024, 28 steps, "
                  "guidance 3.5, batch 1, end to end; the GPU's form is not stated: taken as SXM)")
SDXL_TRT = ("huggingface.co/stabilityai/stable-diffusion-xl-1.0-tensorrt model card, 'Performance Comparison': "
            "SDXL base, 30 steps at 1024x1024, the non-optimized (PyTorch) baseline")
# Jetson Orin Nano 8GB before the Super firmware (JetPack 5): GPU at 625 MHz, 68 GB/s, 8 SMs x 1,024 FP16 multiply-adds
# a clock x 2 = 10.2 TFLOP/s dense FP16 tensor (40 sparse INT8 TOPS), 1.28 FP32.
# EfficientViT's classification README: TensorRT, FP16, data transfer included; A100 rows at batch 64 (its
# efficientvit_cls table), Jetson AGX Orin at batch 1 (its B-series table).
EFFICIENTVIT = "github.com/mit-han-lab/efficientvit applications/efficientvit_cls/README.md"
ORIN_NANO_625MHZ = sp.Device("Jetson Orin Nano 8GB (625 MHz)", 1, 68, 10.24, "dense FP16 tensor", tensor=True,
                             fp32_tflops=1.28, cnn_fraction=cnn_tensor_fraction(False, False, compiled=True),
                             edge_module=True)
# RX 7900 XT (not in the catalog): 800 GB/s, 103 TFLOP/s FP16, 51.5 FP32 (AMD's product page).
RX_7900_XT = sp.Device("RX 7900 XT", 1, 800, 103.0, "dense FP16", tensor=True, fp32_tflops=51.5)
# RTX 2080 8GB (not in the catalog): 448 GB/s, 40.3 TFLOP/s FP16 tensor with FP32 accumulate, 10.1 FP32 (Turing
# whitepaper).
RTX_2080 = sp.Device("RTX 2080", 1, 448, 40.3, "dense FP16 tensor", tensor=True, fp32_tflops=10.1,
                      llama_cpp_cuda=True)
# llmfit's RTX 2080 rows: its host, a Core i9-10900X, reads "~102 GB/s quad-channel DDR4" (llmfit#755).
LLMFIT_2080 = ("github.com/AlexsJones/llmfit/pull/{} (llama.cpp Q4_K_M, context 4096, RTX 2080 8GB beside an "
               "i9-10900X, '~102 GB/s quad-channel DDR4' (#755))")
I9_10900X_RAM_GB_PER_S = 102.0
KICKSTART_58 = ("github.com/danielesalpietro/kickstart-berlin/issues/58 (2026-08-31, llama.cpp's full-cuda container "
                "57291f264): Qwen2.5-7B-Instruct Q4_K_M, llama-bench tg128 on")


def gqa_decoder(parameters: int, layers: int, hidden: int, heads: int, kv_heads: int, mlp: int, vocabulary: int, *,
                head_dim: int = 128, sequence: int = 512, tied: bool = False) -> ModelShape:
    """A gated-MLP decoder with grouped-query attention, from its config.json on huggingface.co."""
    return ModelShape("transformer", parameters, layers=layers, hidden_size=hidden, attention_heads=heads,
                      kv_heads=kv_heads, head_dim=head_dim, sequence_length=sequence, intermediate_size=mlp,
                      gated_mlp=True, vocabulary_size=vocabulary, tied_embeddings=tied)


QWEN3_4B = gqa_decoder(4_022_468_096, 36, 2560, 32, 8, 9728, 151_936, tied=True)
MINISTRAL_8B = gqa_decoder(8_019_808_256, 36, 4096, 32, 8, 12288, 131_072)
FALCON3_7B = gqa_decoder(7_455_550_464, 28, 3072, 12, 4, 23040, 131_072, head_dim=256)
GRANITE31_8B = gqa_decoder(8_170_864_640, 40, 4096, 32, 8, 12800, 49_155, tied=True)
MISTRAL_7B_V03 = gqa_decoder(7_248_023_552, 32, 4096, 32, 8, 14336, 32_768)
LLAMA32_3B = gqa_decoder(3_212_749_824, 28, 3072, 24, 8, 8192, 128_256, sequence=1, tied=True)
QWEN3_32B = gqa_decoder(32_762_123_264, 64, 5120, 64, 8, 25600, 151_936, sequence=1)


def llama_cpp_tg(model: ModelShape, device: sp.Device | str, generated: int = 128) -> float:
    """llama.cpp's decode of a Q4_K_M model fully on the GPU."""
    return decode(model, "int4", device, generated, engine="llama_cpp", quantization="gguf_q4_k_m")[
        "decode_tokens_per_s_per_stream"]


# Gemma 4 E4B-it (google/gemma-4-E4B-it config: 42 layers, hidden 2,560, 8 heads of 256, 2 KV heads, gated MLP 10,240,
# V 262,144, tied; 8B with per-layer embeddings of 262,144 x 256 x 42 = 2.8B), unsloth's Q4_K_M GGUF (5.37 GB), a
# 4,352-token prompt and 256 out (audit AH42's shape for calebcoffie.com/benchmarks' chat, codegen and rag runs).
GEMMA4_E4B = ModelShape("transformer", 8_000_000_000, layers=42, hidden_size=2560, attention_heads=8, kv_heads=2,
                        head_dim=256, sequence_length=4352, intermediate_size=10240, gated_mlp=True,
                        vocabulary_size=262_144, tied_embeddings=True, lookup_parameters=262_144 * 256 * 42,
                        weights_file_bytes=5.37e9, weights_file_parameters=8_000_000_000)
CALEBCOFFIE = ("calebcoffie.com/benchmarks, unsloth/gemma-4-E4B-it-GGUF:Q4_K_M, llama.cpp CUDA, concurrency 1: {} "
               "{} tokens/s")
CALEBCOFFIE_3090_GAP = ("the same page's RTX 5070 (672 GB/s) decodes 120.5-126.8 on its build where this 936 GB/s card "
                        "decodes 101.9-118.4 on 59778f0, and 148.2 on the page's older 4f13cb7 build (+10 % here): "
                        "not its bandwidth")
# DeepSeek-Coder-V2-Lite (huggingface.co/deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct config.json: 27 layers, the first
# dense, hidden 2048, 64 routed experts of 1408 and 2 shared, 6 a token, V 102,400; 15.7B total, 2.4B active). MLA as
# the DeepSeek-V3 preset: 64 heads x 9 KV stand for its 512 + 64 cached values, 16 x (192 + 128) / 2 its attention.
DEEPSEEK_CODER_V2_LITE = ModelShape(
    "transformer", 15_706_484_224, layers=27, hidden_size=2048, attention_heads=64, kv_heads=9, sequence_length=4096,
    intermediate_size=1408, gated_mlp=True, vocabulary_size=102_400, active_parameters=2_400_000_000,
    routed_expert_share=6 / 64, attention_width=2560)
# Qwen2.5-14B (published_workloads.QWEN25_14B) and Mistral-Small-24B-Instruct-2501 (huggingface.co/mistralai
# config.json: 40 layers, hidden 5120, 32 heads of 128, 8 KV heads, SwiGLU 32768, V 131,072; 23.57B).
QWEN25_14B = model_shape(answers_of(**published_workloads.QWEN25_14B).workload)[0]
MISTRAL_SMALL_24B = ModelShape("transformer", 23_572_403_200, layers=40, hidden_size=5120, attention_heads=32,
                               kv_heads=8, head_dim=128, sequence_length=4096, intermediate_size=32768,
                               gated_mlp=True, vocabulary_size=131_072)
# Laguna-XS.2 (github.com/sgl-project/sglang cookbook Poolside/Laguna-XS.2.mdx: 40 layers, h 2048, 48 heads of 128, 8 KV
# heads, a 512-token window on 30, 256 experts, 8 a token; 33.4B total, 3.0B active), BF16, at its bench_serving
# random rows' mean 512 tokens in and 512 out.
LAGUNA_XS2 = model_shape(answers_of(
    workload__preset="custom", workload__parameters=33_400_000_000, workload__active_parameters=3_000_000_000,
    workload__experts_count=256, workload__experts_per_token=8, workload__layers=40, workload__hidden_size=2048,
    workload__attention_heads=48, workload__kv_heads=8, workload__head_dim=128, workload__vocabulary_size=100_352,
    workload__sliding_window_tokens=512, workload__sliding_window_layers=30, workload__sequence_length=512).workload)[0]
LAGUNA_SGLANG = ("github.com/sgl-project/sglang docs_new/cookbook/autoregressive/Poolside/Laguna-XS.2.mdx, 5.2.1 "
                 "'Latency Benchmark (10 prompts, concurrency = 1)', SGLang 0.5.12, BF16")
# A30 (not in the catalog): 933 GB/s, 165 TFLOP/s dense FP16 tensor, 10.3 FP32 (NVIDIA A30 datasheet).
A30 = sp.Device("A30", 1, 933, 165.0, "dense FP16 tensor", tensor=True, fp32_tflops=10.3)
# Tesla P40 (not in the catalog): 347 GB/s, 11.76 TFLOP/s FP32, no tensor cores (NVIDIA P40 datasheet).
P40 = sp.Device("Tesla P40", 1, 347, 11.76, "FP32", tensor=False, fp32_tflops=11.76)
# RTX 3090 Ti (not in the catalog): 1008 GB/s, 80 TFLOP/s FP16 tensor with FP32 accumulate, 40 FP32 (Ampere
# whitepaper).
RTX_3090_TI = sp.Device("RTX 3090 Ti", 1, 1008, 80.0, "dense FP16 tensor", tensor=True, fp32_tflops=40.0)
# Qwen2.5-Coder-3B (huggingface.co/Qwen/Qwen2.5-Coder-3B config.json: 36 layers, hidden 2048, 16 heads, 2 KV
# heads, SwiGLU 11008, vocabulary 151,936); 3.40B parameters as llama-bench counts them.
QWEN_3B = ModelShape("transformer", 3_400_000_000, layers=36, hidden_size=2048, attention_heads=16, kv_heads=2,
                     sequence_length=512, intermediate_size=11008, gated_mlp=True, vocabulary_size=151_936)
LLM_PERF_BENCH = "github.com/mlc-ai/llm-perf-bench/pull/1 (README: tokens/s decoding, 4-bit weights)"
TIMM_TRAIN = ("github.com/huggingface/pytorch-image-models results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv, "
              "RTX 3090, AMP, PyTorch 1.12")
TIMM_TRAIN_AT = ("github.com/huggingface/pytorch-image-models results/benchmark-train-amp-{}-pt112-cu113-rtx3090.csv "
                 "(commit {}), RTX 3090, AMP, PyTorch 1.12")
TIMM_CNN_INFER = ("github.com/huggingface/pytorch-image-models results/benchmark-infer-amp-{}.csv (commit {}), AMP, "
                  "batch 1,024")
TIMM_5090_CNN = TIMM_CNN_INFER.format("nchw-pt291-cu130-5090", "90cae8c")
TIMM_3090_NHWC_CNN = TIMM_CNN_INFER.format("nhwc-pt112-cu113-rtx3090", "c865028")
PYTORCH_RPI = ("github.com/pytorch/tutorials intermediate_source/realtime_rpi.rst, 'Raspberry Pi 4 Benchmark Results' "
               "(Pi 4 Model B 4GB, torchvision FP32, one 224 px frame)")
PI_4 = "raspberry-pi-4b-8gb"
DLE_RN50 = ("github.com/NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md, "
            "pytorch-21.03 NGC container; its AMP benchmarks run --memory-format nhwc (task.channels_last)")
HF_OPT_SDPA = ("github.com/huggingface/transformers docs/source/en/model_doc/opt.md (SDPA section): "
               "facebook/opt-350m trained in float16 on an L40S, batch 8 x 1,024 tokens")
TORCHTUNE = ("github.com/pytorch/torchtune README 'Memory and training speed' (batch 2, packed to 2048 tokens, "
             "compile on; the 8B single-device recipes enable activation checkpointing)")
# Qwen3-14B (its Megatron shape, github.com/zyzshishui/slime scripts/models/qwen3-14B.sh: 40 layers, hidden 5120,
# 40 heads of 128, 8 KV groups, SwiGLU 17408, vocabulary 151,936, untied): 14.77B parameters counted from it.
QWEN3_14B = ModelShape("transformer", 14_768_307_200, layers=40, hidden_size=5120, attention_heads=40, kv_heads=8,
                       sequence_length=16_000, intermediate_size=17408, gated_mlp=True, vocabulary_size=151_936)
VLLM_QWEN3_14B = ("github.com/vllm-project/vllm/issues/20469: vLLM 0.9.1, one A100 80GB (form not stated), "
                  "Qwen/Qwen3-14B-AWQ, --enforce-eager, benchmark_serving random 16,000 in / 200 out, "
                  "max-concurrency 1")
MLPERF_INF = "github.com/mlcommons/inference_results_v4.1 closed"
MILLSTONE = ("millstoneai.com/inference-benchmark/{} (vLLM, 2026-01; 1,024 output tokens a request, no prompt caching, "
             "full-precision KV cache)")
MILLSTONE_GPT_OSS_20B = MILLSTONE.format("gpt-oss-20b-mxfp4-1x-rtx-pro-6000-blackwell")
MILLSTONE_GPT_OSS_120B = MILLSTONE.format("gpt-oss-120b-mxfp4-1x-h200-sxm")
MILLSTONE_QNEXT = MILLSTONE.format("qwen3-coder-next-fp8-1x-h200-sxm")
MILLSTONE_PRO6000_GAP = (
    "long-context attention on this card runs slower than on an H200: the 128k request's extra KV cache (3.2 GB) "
    "reads at ~0.33 of its bandwidth (105.5 against 250 tokens/s at 1k), where Qwen3-Coder-Next's 256k cache on the "
    "H200 reads at ~0.73, and its prompt's attention at ~0.2 of the tensor rate, the H200's at 0.4")
# Qwen3-Coder-Next (Qwen3-Next-80B-A3B config.json: 48 layers, hidden 2048, 16 heads of 256, 2 KV heads, 36 Gated
# DeltaNet layers; 512 experts of 512, 10 a token, and a shared one: 5,632 active MLP width; vocabulary 151,936).
QWEN3_CODER_NEXT = model_shape(Workload(
    preset="custom", kind="transformer", parameters=79_700_000_000, active_parameters=3_000_000_000,
    experts_count=512, experts_per_token=10, layers=48, hidden_size=2048, attention_heads=16, kv_heads=2, head_dim=256,
    linear_attention_layers=36, intermediate_size=5632, gated_mlp=True, vocabulary_size=151_936, sequence_length=1))[0]
# Qwen3-8B (huggingface.co/Qwen/Qwen3-8B config.json: 36 layers, hidden 4096, 32 heads of 128, 8 KV heads, SwiGLU
# 12288, vocabulary 151,936, untied): 8.19B parameters.
QWEN3_8B = ModelShape("transformer", 8_190_735_360, layers=36, hidden_size=4096, attention_heads=32, kv_heads=8,
                      sequence_length=1, intermediate_size=12288, gated_mlp=True, vocabulary_size=151_936)
QWEN_H20 = ("github.com/QwenLM/Qwen2.5 docs/source/getting_started/speed_benchmark.md (ac727245): one H20 96GB, "
            "SGLang 0.4.6.post1, batch 1, input 1, 2,048 tokens generated")


QWEN_H20_HF = QWEN_H20.replace("SGLang 0.4.6.post1", "Transformers 4.51.3 (GPTQModel 2.2.0, AutoAWQ 0.2.9)")
QWEN2_HF = ("github.com/shadowboxx/Qwen2 docs/source/benchmark/speed_benchmark.rst (Qwen2's speed benchmark): A100 "
            "80GB, Transformers 4.38.2, AutoGPTQ 0.7.1, batch 1, input 1, 2,048 tokens generated")
# Qwen2-57B-A14B (huggingface.co/Qwen/Qwen2-57B-A14B-Instruct config.json: 28 layers, hidden 3584, 28 heads, 4 KV heads,
# 64 experts of 2560, 8 a token, and a shared one of 20480, V 151,936; 57.4B total, 14.2B active).
QWEN2_57B = model_shape(answers_of(
    workload__preset="custom", workload__parameters=57_409_000_000, workload__active_parameters=14_200_000_000,
    workload__experts_count=64, workload__experts_per_token=8, workload__layers=28, workload__hidden_size=3584,
    workload__attention_heads=28, workload__kv_heads=4, workload__vocabulary_size=151_936,
    workload__sequence_length=1).workload)[0]
QWEN2_HF_LONG = QWEN2_HF.replace("input 1", "input {prompt:,}, its speed 2,048 tokens over the prefill and the decode")
QWEN15_291 = ("github.com/QwenLM/Qwen3/issues/291: Qwen1.5-32B-Chat BF16 by Qwen's profile.py on one A100-SXM4-80GB, "
              "batch 1, input {prompt:,}, 2,048 tokens generated over the prefill and the decode (April 2024: "
              "transformers 4.37-4.40, timed as 4.38.2)")


def generate_2024(model: ModelShape, prompt: int, part_id: str) -> float:
    """Qwen's benchmarks' rate: 2,048 generated tokens over the first token's time and the decode's, generate()
    under transformers 4.38 (DynamicCache, repeat_kv under SDPA)."""
    figures = decode(dataclasses.replace(model, sequence_length=prompt), "bf16", part_id, 2048,
                     engine="hf_generate", transformers="4.38.2")
    return 2048 / (2048 / figures["decode_tokens_per_s_per_stream"] + figures["first_token_s"])


YUAN_GPTQ = ("github.com/IEIT-Yuan/Yuan2.0-M32 docs/README_GPTQ_EN.md: generate() with its remote code (GroupedMLP "
             "loops over the 32 experts in Python), BF16 on 2 x 80GB and GPTQ-int4 on one (timed as A100 80GB PCIe "
             "cards; the table names no card, prompt or length: 512 and 512 assumed)")
# Yuan2.0-M32 (its examples/eval_humaneval_2x32B.sh: 24 layers of 2048, 16 heads of 256, 32 experts of which 2 a
# token, each 8,192 wide, V 135,040; 40B, 3.7B active).
YUAN2_M32 = model_shape(answers_of(
    workload__preset="custom", workload__parameters=40_000_000_000, workload__active_parameters=3_700_000_000,
    workload__experts_count=32, workload__experts_per_token=2, workload__layers=24, workload__hidden_size=2048,
    workload__attention_heads=16, workload__head_dim=256, workload__intermediate_size=16384,
    workload__gated_mlp=True, workload__vocabulary_size=135_040, workload__sequence_length=512).workload)[0]
DEEPSEEK_MOE_13 = ("github.com/deepseek-ai/DeepSeek-MoE/issues/13: deepseek-moe-16b and baichuan-13b under "
                   "generate() on an A800-80G, tokens/s (the issue gives no set-up: batch 1, bf16, 512 tokens "
                   "generated and an SXM module, timed as an A100 SXM's 2,039 GB/s, assumed)")
# DeepSeekMoE 16B (huggingface.co/deepseek-ai/deepseek-moe-16b-base config.json: 28 layers of 2048, 16 heads, 64
# routed experts of 1408, 6 a token, 2 shared (2,816), V 102,400; 16.4B total, 2.8B active), run by its remote code.
DEEPSEEK_MOE_16B = model_shape(answers_of(
    workload__preset="custom", workload__parameters=16_400_000_000, workload__active_parameters=2_800_000_000,
    workload__experts_count=64, workload__experts_per_token=6, workload__layers=28, workload__hidden_size=2048,
    workload__attention_heads=16, workload__intermediate_size=11264, workload__shared_expert_width=2816,
    workload__gated_mlp=True, workload__vocabulary_size=102_400, workload__sequence_length=1).workload)[0]
# Baichuan-13B (huggingface.co/baichuan-inc/Baichuan-13B-Base config.json: 40 layers of 5120, 40 heads, MLP 13,696,
# V 64,000; 13.3B).
BAICHUAN_13B = model_shape(answers_of(
    workload__preset="custom", workload__parameters=13_300_000_000, workload__layers=40, workload__hidden_size=5120,
    workload__attention_heads=40, workload__intermediate_size=13696, workload__gated_mlp=True,
    workload__vocabulary_size=64_000, workload__sequence_length=1).workload)[0]
BNB_347 = "github.com/bitsandbytes-foundation/bitsandbytes/issues/347: Llama 7B under generate() on one RTX 3090"
BLOOM_BLOG = ("huggingface.co/blog/bloom-inference-pytorch-scripts, BLOOM-176B under generate() with accelerate's "
              "device_map (one GPU at a time), batch 1, 100 tokens greedy")
# BLOOM-176B (huggingface.co/bigscience/bloom config.json: 70 layers of 14,336, 112 heads, a 4h GELU MLP, vocabulary
# 250,880, tied embeddings).
BLOOM_176B = ModelShape("transformer", 176_247_271_424, layers=70, hidden_size=14336, attention_heads=112,
                        kv_heads=112, sequence_length=16, intermediate_size=57344, vocabulary_size=250_880,
                        tied_embeddings=True)
QWEN1_HF = ("github.com/QwenLM/Qwen README (03cd81f5), 'Inference Performance': one A100-SXM4-80G (2 where said), "
            "transformers with Flash-Attention 2, 2,048 tokens generated, batch 1")
# Qwen (v1) 7B and 72B (huggingface.co/Qwen/Qwen-7B, Qwen-72B config.json: 32 layers of 4096 and 80 of 8192, as many
# KV heads as heads, SwiGLU 11008 and 24576, vocabulary 151,936, untied).
QWEN1_7B = ModelShape("transformer", 7_721_324_544, layers=32, hidden_size=4096, attention_heads=32, kv_heads=32,
                      sequence_length=1, intermediate_size=11008, gated_mlp=True, vocabulary_size=151_936)
QWEN1_72B = ModelShape("transformer", 72_287_920_128, layers=80, hidden_size=8192, attention_heads=64, kv_heads=64,
                       sequence_length=1, intermediate_size=24576, gated_mlp=True, vocabulary_size=151_936)


def h20_decode(model: ModelShape, precision: str, quantization: str = "auto", preset: str = "custom",
               gpus: int = 1) -> float:
    return decode(model, precision, "h20-96gb", 2048, preset=preset, engine="sglang", gpus=gpus,
                  quantization=quantization)["decode_tokens_per_s_per_stream"]


# Qwen3-235B-A22B (huggingface.co/Qwen/Qwen3-235B-A22B config.json: 94 layers, hidden 4096, 64 heads of 128, 4 KV
# heads, 128 experts of which 8 a token, vocabulary 151,936; 235.1B parameters, 22.1B active).
QWEN3_235B = model_shape(Workload(
    preset="custom", kind="transformer", parameters=235_093_634_560, active_parameters=22_140_000_000,
    experts_count=128, experts_per_token=8, layers=94, hidden_size=4096, attention_heads=64, kv_heads=4, head_dim=128,
    intermediate_size=12288, gated_mlp=True, vocabulary_size=151_936, sequence_length=1))[0]

# Hunyuan-Large (github.com/Tencent/Tencent-Hunyuan-Large config: 64 layers, hidden 6400, 80 heads of 128, 8 KV
# heads, 16 experts of which 1 a token beside a shared one, SwiGLU 18304, vocabulary 128,512; 389B, 52B active).
HUNYUAN_LARGE = model_shape(Workload(
    preset="custom", kind="transformer", parameters=389_000_000_000, active_parameters=52_000_000_000,
    experts_count=16, experts_per_token=1, layers=64, hidden_size=6400, attention_heads=80, kv_heads=8, head_dim=128,
    intermediate_size=18304, gated_mlp=True, vocabulary_size=128_512, sequence_length=2048))[0]
HUNYUAN_H20 = ("github.com/Tencent/Tencent-Hunyuan-Large README 'Inference Performance': W8A8C8-FP8 in vLLM on 8 x "
               "H20, 2,048-token prompts, launched with enforce_eager=True (inference/run_server_fp8.sh)")


def hunyuan_large_eager(batch: int) -> float:
    return decode(HUNYUAN_LARGE, "int8", "h20-96gb", 256, batch, engine="vllm", gpus=8, quantization="fp8",
                  cuda_graphs=False)["decode_tokens_per_s_aggregate"]


RTMPOSE_CPU = ("github.com/open-mmlab/mmpose projects/rtmpose/benchmark/README.md: ONNX Runtime on an i7-11700 (8 "
               "cores, 4.9 GHz boost), batch 1")
RTMPOSE_TRT = ("github.com/open-mmlab/mmpose projects/rtmpose/benchmark/README.md: TensorRT FP16 at batch 1 "
               "(mmdeploy's profiler) on {}: RTMPose-{}, {} ms ({} GFLOP, twice mmpose's multiply-adds)")
# The Orin NX 16GB the rows ran on (not the catalog's Super): 1,024 cores at 918 MHz, 100 INT8 TOPS sparse (25 FP16
# dense), 102.4 GB/s (NVIDIA's Jetson Orin module data sheet).
ORIN_NX_16GB = sp.Device("Jetson Orin NX 16GB", 1, 102.4, 25.0, "dense FP16 tensor", tensor=True, fp32_tflops=1.88,
                         cnn_fraction=cnn_tensor_fraction(False, False, compiled=True), edge_module=True)
RTMPOSE_SIZES = (("t-256x192", 0.72, 222), ("s-256x192", 1.36, 222), ("m-256x192", 3.86, 222),
                 ("l-256x192", 8.32, 222), ("m-384x288", 8.66, 332))
ISPCOJP = "github.com/ispcojp/ai_inference_device_benchmark results/{}: ONNX Runtime CPU, timm's {} at 224 px, {} ms"
# Arrow Lake's cores run ONNX Runtime's fp32 convolutions at 0.73-0.85 of llama.cpp's AVX2 prefill rate a cycle.
ARROW_LAKE_GAP = ("Arrow Lake's cores run ONNX Runtime's fp32 convolutions at ~0.8 of llama.cpp's AVX2 prefill rate a "
                  "cycle, twice the 0.4 fitted on Rocket Lake's RTMPose rows: -45 % to -53 %")
NORMIEBENCH = ("github.com/brand-o/normiebench/issues/{} (2026-03): llama 3.1 8B Q4_K_M on llama.cpp's CPU "
               "backend")
LLAMACPP_SPARK = ("github.com/ggml-org/llama.cpp benches/dgx-spark.md (2025-11-02, build 6918, CUDA 13.0; llama-bench, "
                  "ubatch 2048, flash attention, empty context)")
# Qwen2.5-Coder-7B (huggingface.co/Qwen/Qwen2.5-Coder-7B config.json: 28 layers, hidden 3584, 28 heads, 4 KV heads,
# SwiGLU 18944, vocabulary 152,064); 7.62B parameters as llama-bench counts them.
QWEN25_7B = ModelShape("transformer", 7_615_616_512, layers=28, hidden_size=3584, attention_heads=28, kv_heads=4,
                       sequence_length=1, intermediate_size=18944, gated_mlp=True, vocabulary_size=152_064)
LLAMACPP_4716 = "github.com/ggml-org/llama.cpp/issues/4716: llama.cpp CPU-only, Mixtral 8x7B Q8_0, 128 GB of RAM"
# Llama 3 70B (meta-llama/Meta-Llama-3-70B config.json: 80 layers, hidden 8192, 64 heads, 8 KV heads, SwiGLU 28672,
# vocabulary 128,256; 70.6B parameters) on llama.cpp across several cards, its default layer split.
LLAMA3_70B = ModelShape("transformer", 70_553_706_496, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                        sequence_length=1, intermediate_size=28672, gated_mlp=True, vocabulary_size=128256)
NIM_70B = ("docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance: NIM 1.8.0, Llama-3.3-70b-instruct, 2 x H100 80G "
           "(form not stated: the SXM's figures taken), fp8 TP2, 5,000 input / 500 output tokens, fresh random "
           "prompts (AIPerf)")


def nim_70b(streams: int) -> dict[str, float]:
    """NIM's Llama 3.3 70B FP8 on 2 x H100 as a vLLM server of `streams` users, 5,000-token prompts, 500 out."""
    return decode(dataclasses.replace(LLAMA3_70B, sequence_length=5000), "int8", "h100-80gb-sxm", 500,
                  batch=streams, gpus=2, engine="vllm", quantization="fp8", scenario="inference_server")


GPU_BENCHMARKS = ("github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference README (commit 00dd2bd, LLaMA 3 on RunPod, "
                  "May 2024): llama-bench, 70B Q4_K_M, tg 512")
MLPERF_LLAMA2_CONFIG = ("NVIDIA's harness, closed/NVIDIA/configs/llama2-70b/Offline/__init__.py: use_fp8, H200 TP1 "
                        "batch 806, H100 TP2 batch 896 per pair (the partner's own config not read)")
MLPERF_OFFLINE_GAP = (
    "the Offline run (TensorRT-LLM, timed as vLLM: FP8 matmuls at the FP8 rate) also prefills each sample's OpenOrca "
    "prompt (up to 1,024 tokens; the mean is not in the sources read) on the same GPUs, and the row times the decode "
    "alone, compute-bound at this batch; with "
    "~300-token prompts (an assumption) the fresh-prompt count (speed_server) gives ~4,000 a GPU and ~29,600")
MLPERF_TRAIN = ("github.com/mlcommons/training_results_v4.0 NVIDIA/results/{}/llama2_70b_lora/result_0.txt: "
                "tracked_stats throughput {} samples/s of 8,192 packed tokens (megatron_gpt_peft_tuning_config.yaml), "
                "LoRA r16 on attention, FP8 (Transformer Engine), no activation checkpointing, 8x {}")
MLPERF_FP8_GAP = ("the run multiplies in FP8 (config_DGXH200_1x8x2xtp2pp1cp1.sh: FP8=True), twice the dense BF16 "
                  "rate the predictor uses for training at Hopper's BF16 MFU (0.42, torchtitan's BF16 row beside "
                  "it); the H200 run's published rate is 0.79 of the dense BF16 peak at LoRA's 4N + 12*L*h*s FLOPs "
                  "per token (s = 4,096, causal), which BF16 matmuls do not sustain")
TORCHTITAN = ("github.com/pytorch/torchtitan docs/performance.md Table 1: Llama 3.1 8B, FSDP over 8 H100s, local "
              "batch 2 at 8,192 tokens, selective activation checkpointing, BF16, 5,762 tokens/s a GPU (H100 96GB "
              "HBM2e at the Grand Teton default 500 W power limit; the catalog's H100 SXM5 is a 700 W part)")
EASYCONTEXT_RING = ("github.com/jzhang38/EasyContext README, 'Throughput on 8 A100': Llama-2-7B, full fine-tune at {}, "
                    "zigzag ring attention (DeepSpeed ZeRO-3 offload, FlashAttention, checkpointing), {:,} tokens/s")
EASYCONTEXT_128K_GAP = ("not explained: +49 %, where the same table's 64K, 512K and 700K ring rows are within 8 % at "
                        "the same constants (its 128K rate is 0.55 of its 64K one, where 1.56x the FLOPs a token are "
                        "counted)")
TORCHTUNE_OUTLIER = ("the published rate implies more hardware FLOP/s than the card has at the recipe's activation "
                     "checkpointing (peak memory shows it on; > 85 % of the dense BF16 peak, which no other source "
                     "reaches): the table's tokens are counted in some way the README does not say")


CASES: tuple[PublishedSpeed, ...] = (
    # --- decode (memory-bandwidth bound) ---
    PublishedSpeed("llamacpp-p40-llama7b-q4_0-tg128",
                   "github.com/ggml-org/llama.cpp/pull/4766: Tesla P40, llama 7B Q4_0, tg128 56.79 tokens/s",
                   56.79, lambda: decode(shape("llama-7b", 1), "int4", P40)["decode_tokens_per_s_per_stream"]),
    # The same PR's RTX 3090 and 4090 rows by weight format (fitted: speed_reads.DECODE_FRACTION_BY_WEIGHT_BITS).
    *(PublishedSpeed(f"llamacpp-{card}-llama7b-{fmt}-tg128",
                     f"github.com/ggml-org/llama.cpp/pull/4766: RTX {card}, llama 7B {fmt.upper()}, tg128 {rate} "
                     "tokens/s",
                     rate, functools.partial(lambda card, precision, quantization: decode(
                         shape("llama-7b", 1), precision, f"rtx-{card}-24gb", engine="llama_cpp",
                         quantization=quantization, build_2024=True)["decode_tokens_per_s_per_stream"], card,
                         precision, quantization), fitted=fitted)
      for card, fmt, precision, quantization, rate, fitted in (
          ("4090", "f16", "fp16", "auto", 61.03, True), ("4090", "q8_0", "int8", "gguf_q8_0", 98.13, True),
          ("3090", "f16", "fp16", "auto", 48.52, True), ("3090", "q4_0", "int4", "gguf_q4_0", 121.82, False))),
    PublishedSpeed("mlc-4090-llama2-7b-q4", f"{LLM_PERF_BENCH}: RTX 4090, Llama-2 7B, MLC 191.0 tokens/s", 191.0,
                   lambda: decode(shape("llama-7b", 1), "int4", "rtx-4090-24gb")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("mlc-4090-llama2-13b-q4", f"{LLM_PERF_BENCH}: RTX 4090, Llama-2 13B, MLC 108.8 tokens/s", 108.8,
                   lambda: decode(shape("llama-13b", 1), "int4", "rtx-4090-24gb")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("exllama-4090-llama2-7b-q4", f"{LLM_PERF_BENCH}: RTX 4090, Llama-2 7B, ExLlama 152.56 tokens/s",
                   152.56,
                   lambda: decode(shape("llama-7b", 1), "int4", "rtx-4090-24gb")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("mlc-3090ti-llama2-7b-q4", f"{LLM_PERF_BENCH}: RTX 3090 Ti, Llama-2 7B, MLC 166.7 tokens/s",
                   166.7,
                   lambda: decode(shape("llama-7b", 1), "int4", RTX_3090_TI)["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("llamacpp-4090-qwen2-3b-q4_0-tg128",
                   "github.com/ggml-org/llama.cpp/pull/12183: RTX 4090, qwen2 3B Q4_0 (1.86 GiB), tg128 236.06 "
                   "tokens/s (fa 0)", 236.06,
                   lambda: decode(QWEN_3B, "int4", "rtx-4090-24gb")["decode_tokens_per_s_per_stream"]),
    # --- llama.cpp's CUDA build of 2025-26 on discrete cards (fitted: speed.LLAMA_CPP_*), a 512-token prompt ---
    *(PublishedSpeed(f"llmfit-{pr}-2080-{name}-q4_k_m", f"{LLMFIT_2080.format(pr)}: {label}, -ngl 99, {rate} tokens/s",
                     rate, functools.partial(llama_cpp_tg, model, RTX_2080), fitted=True)
      for pr, name, label, model, rate in (
          (773, "llama3.1-8b", "Meta-Llama-3.1-8B-Instruct", shape("llama3-8b", 512), 71.9),
          (773, "qwen3-8b", "Qwen3-8B", dataclasses.replace(QWEN3_8B, sequence_length=512), 69.3),
          (773, "qwen3-4b", "Qwen3-4B", QWEN3_4B, 110.6),
          (773, "ministral-8b", "Ministral-8B-2410", MINISTRAL_8B, 70.5),
          (778, "falcon3-7b", "Falcon3-7B", FALCON3_7B, 75.8),
          (778, "granite-3.1-8b", "Granite-3.1-8B", GRANITE31_8B, 65.6),
          (778, "mistral-7b-v0.3", "Mistral-7B-v0.3", MISTRAL_7B_V03, 77.8))),
    *(PublishedSpeed(f"kickstart-58-{card.removeprefix('rtx-').removesuffix('-16gb').removesuffix('-24gb')}-qwen2.5-"
                     f"7b-q4_k_m-tg128", f"{KICKSTART_58}: {label} "
                     f"{rate} tokens/s", rate, functools.partial(
                         llama_cpp_tg, dataclasses.replace(QWEN25_7B, sequence_length=1), card), fitted=True)
      for card, label, rate in (("rtx-5060-ti-16gb", "RTX 5060 Ti 16GB", 87.8), ("rtx-3090-24gb", "RTX 3090", 150.3))),
    # Per-layer embedding tables read a row a token (workload.lookup_parameters): counted as read, the 5070 was -30 %.
    PublishedSpeed("calebcoffie-5070-gemma4-e4b-q4_k_m", CALEBCOFFIE.format("RTX 5070, build b9174", "120.5-126.8"),
                   123.65, functools.partial(llama_cpp_tg, GEMMA4_E4B, "rtx-5070-12gb", 256)),
    PublishedSpeed("calebcoffie-3090-gemma4-e4b-q4_k_m-4f13cb7", CALEBCOFFIE.format("RTX 3090, build 4f13cb7, chat",
                                                                                    "148.2"),
                   148.2, functools.partial(llama_cpp_tg, GEMMA4_E4B, "rtx-3090-24gb", 256)),
    PublishedSpeed("calebcoffie-3090-gemma4-e4b-q4_k_m-59778f0", CALEBCOFFIE.format("RTX 3090, build 59778f0",
                                                                                    "101.9-118.4"),
                   110.15, functools.partial(llama_cpp_tg, GEMMA4_E4B, "rtx-3090-24gb", 256),
                   xfail=CALEBCOFFIE_3090_GAP),
    PublishedSpeed("llamacpp-28196-pro6000-server-qwen3-32b-q4_k_m-tg400",
                   "github.com/ggml-org/llama.cpp/issues/28196 (b10741, CUDA 13.1, native Linux): RTX PRO 6000 "
                   "Blackwell Server Edition, ECC on, Qwen3-32B Q4_K_M (unsloth), llama-bench -fa 1 tg400 65.35 "
                   "tokens/s", 65.35, lambda: llama_cpp_tg(QWEN3_32B, "rtx-pro-6000-blackwell-server-96gb", 400),
                   fitted=True),
    PublishedSpeed("llamacpp-26705-dgx-spark-llama3.2-3b-q4_k", "github.com/ggml-org/llama.cpp/pull/26705 (2026-09, "
                   "its DGX Spark sweep): GB10, Llama-3.2-3B Q4_K, ne11 1 (one token a pass), base 109.82 tokens/s",
                   109.82, lambda: llama_cpp_tg(LLAMA32_3B, "dgx-spark-128gb")),
    PublishedSpeed("fish-speech-agent-3b-compiled-rtx-4090",
                   "fish-speech docs/en/start_agent.md: fish-agent-v0.1-3b (Qwen2.5-3B's shape) in bf16 with its "
                   "--compile generate(), 'a 4090 ... about 95 tokens/s' (audit YY4: 43 predicted with eager dispatch)",
                   95.0, lambda: decode(QWEN_3B, "bf16", "rtx-4090-24gb", engine="hf_generate",
                                        forward_runtime="compiled")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("vllm-a100-qwen3-14b-awq-decode-eager", f"{VLLM_QWEN3_14B}: mean TPOT 20.63 ms = 48.5 tokens/s",
                   1 / 0.02063,
                   lambda: decode(QWEN3_14B, "int4", "a100-80gb-sxm", 200, engine="vllm", quantization="awq_g128",
                                  cuda_graphs=False)["decode_tokens_per_s_per_stream"]),
    # The H20's own decode fraction (gpus.toml, 0.38 of its 4.0 TB/s) is fitted on the two BF16 rows.
    PublishedSpeed("sglang-h20-qwen3-8b-bf16-decode", f"{QWEN_H20}: Qwen3-8B BF16, 81.73 tokens/s", 81.73,
                   lambda: h20_decode(QWEN3_8B, "bf16"), fitted=True),
    PublishedSpeed("sglang-h20-qwen3-14b-bf16-decode", f"{QWEN_H20}: Qwen3-14B BF16, 47.10 tokens/s", 47.10,
                   lambda: h20_decode(dataclasses.replace(QWEN3_14B, sequence_length=1), "bf16"), fitted=True),
    PublishedSpeed("sglang-h20-qwen3-8b-fp8-decode", f"{QWEN_H20}: Qwen3-8B FP8, 150.25 tokens/s", 150.25,
                   lambda: h20_decode(QWEN3_8B, "int8", "fp8")),
    PublishedSpeed("sglang-h20-qwen3-14b-fp8-decode", f"{QWEN_H20}: Qwen3-14B FP8, 97.11 tokens/s", 97.11,
                   lambda: h20_decode(dataclasses.replace(QWEN3_14B, sequence_length=1), "int8", "fp8")),
    PublishedSpeed("sglang-h20-qwen3-30b-a3b-bf16-decode", f"{QWEN_H20}: Qwen3-30B-A3B BF16, 137.18 tokens/s", 137.18,
                   lambda: h20_decode(shape("qwen3-30b-a3b", 1), "bf16", preset="qwen3-30b-a3b")),
    # A mixture of experts split over tensor-parallel GPUs: its per-layer term (configs.speed) fitted on the first.
    PublishedSpeed("sglang-4xh20-qwen3-235b-a22b-fp8-tp4-decode", f"{QWEN_H20}: Qwen3-235B-A22B FP8 on 4 GPUs (TP=4), "
                   "71.65 tokens/s", 71.65, lambda: h20_decode(QWEN3_235B, "int8", "fp8", gpus=4), fitted=True),
    PublishedSpeed("sglang-8xh20-qwen3-235b-a22b-bf16-tp8-decode", f"{QWEN_H20}: Qwen3-235B-A22B BF16 on 8 GPUs "
                   "(TP=8), 74.50 tokens/s", 74.50, lambda: h20_decode(QWEN3_235B, "bf16", gpus=8)),
    # vLLM without CUDA graphs (audit YT3: 83.6 tokens/s predicted before task.cuda_graphs, +322 %).
    PublishedSpeed("vllm-8xh20-hunyuan-large-fp8-eager-decode", f"{HUNYUAN_H20}: batch 1, 19.8 tokens/s", 19.8,
                   lambda: hunyuan_large_eager(1)),
    PublishedSpeed("vllm-8xh20-hunyuan-large-fp8-eager-batch-4", f"{HUNYUAN_H20}: batch 4, 74.9 tokens/s in all",
                   74.9, lambda: hunyuan_large_eager(4)),
    # --- aggregate decode over a batch (offline serving) ---
    PublishedSpeed("mlperf-inf-v4.1-h200-llama2-70b-offline",
                   f"{MLPERF_INF}/Lenovo/results/H200_SXM_141GBx8_TRT/README.md: llama2-70b-99 Offline 31,917 "
                   f"tokens/s on 8x H200 SXM = 3,990 per GPU, 265 output tokens per sample; {MLPERF_LLAMA2_CONFIG}",
                   31917.0 / 8,
                   lambda: decode(shape("llama-70b", 1), "int8", "h200-141gb-sxm", 265, batch=806,
                                  engine="vllm", quantization="fp8")["decode_tokens_per_s_aggregate"],
                   xfail=MLPERF_OFFLINE_GAP),
    PublishedSpeed("mlperf-inf-v4.1-8xh100-llama2-70b-offline",
                   f"{MLPERF_INF}/HPE/results/HPE_Cray_XD670_H100_SXM_80GBx8_TRT/README.md: llama2-70b-99 Offline "
                   f"24,528.3 tokens/s on 8x H100 SXM, four TP2 pairs; {MLPERF_LLAMA2_CONFIG}", 24528.3,
                   lambda: 4 * decode(shape("llama-70b", 1), "int8", "h100-80gb-sxm", 265, batch=896, gpus=2,
                                      engine="vllm", quantization="fp8")["decode_tokens_per_s_aggregate"],
                   xfail=MLPERF_OFFLINE_GAP),
    # --- Hugging Face generate(): eager layers, ~0.4 ms of Python dispatch each (speed.HF_GENERATE_LAYER_S) ---
    PublishedSpeed("hf-h20-qwen3-8b-bf16-decode", f"{QWEN_H20_HF}: Qwen3-8B BF16, 45.32 tokens/s", 45.32,
                   lambda: decode(QWEN3_8B, "bf16", "h20-96gb", 2048, engine="hf_generate")[
                       "decode_tokens_per_s_per_stream"], fitted=True),
    PublishedSpeed("hf-h20-qwen3-8b-awq-decode", f"{QWEN_H20_HF}: Qwen3-8B AWQ-INT4, 51.33 tokens/s", 51.33,
                   lambda: decode(QWEN3_8B, "int4", "h20-96gb", 2048, engine="hf_generate", quantization="awq_g128")[
                       "decode_tokens_per_s_per_stream"], fitted=True),
    PublishedSpeed("hf-h20-qwen3-30b-a3b-bf16-decode", f"{QWEN_H20_HF}: Qwen3-30B-A3B BF16, 1.89 tokens/s (its 128 "
                   "experts looped over in Python)", 1.89,
                   lambda: decode(shape("qwen3-30b-a3b", 1), "bf16", "h20-96gb", 2048, preset="qwen3-30b-a3b",
                                  engine="hf_generate", experts_loop=True)["decode_tokens_per_s_per_stream"],
                   fitted=True),
    PublishedSpeed("hf-a100-qwen2-57b-a14b-gptq-int4-decode", f"{QWEN2_HF}: Qwen2-57B-A14B GPTQ-Int4 on 1 GPU, 5.55 "
                   "tokens/s", 5.55, lambda: decode(QWEN2_57B, "int4", "a100-80gb-pcie", 2048, engine="hf_generate",
                                                    quantization="gptq_g128", experts_loop=True)[
                       "decode_tokens_per_s_per_stream"]),
    PublishedSpeed("hf-2xa100-qwen2-57b-a14b-bf16-decode", f"{QWEN2_HF}: Qwen2-57B-A14B BF16 on 2 GPUs, 4.76 tokens/s",
                   4.76, lambda: decode(QWEN2_57B, "bf16", "a100-80gb-pcie", 2048, engine="hf_generate", gpus=2,
                                        experts_loop=True)[
                       "decode_tokens_per_s_per_stream"]),
    PublishedSpeed("hf-a100-qwen2-7b-bf16-14336-generate-2024",
                   f"{QWEN2_HF_LONG.format(prompt=14336)}: Qwen2-7B BF16, 26.63 tokens/s", 26.63,
                   lambda: generate_2024(QWEN2_7B, 14336, "a100-80gb-pcie")),
    PublishedSpeed("hf-a100-qwen2-7b-bf16-30720-generate-2024",
                   f"{QWEN2_HF_LONG.format(prompt=30720)}: Qwen2-7B BF16, 17.49 tokens/s", 17.49,
                   lambda: generate_2024(QWEN2_7B, 30720, "a100-80gb-pcie")),
    PublishedSpeed("hf-a100-qwen15-32b-bf16-6144-generate-2024", f"{QWEN15_291.format(prompt=6144)}: 12.65 tokens/s",
                   12.65, lambda: generate_2024(QWEN15_32B, 6144, "a100-80gb-sxm")),
    PublishedSpeed("hf-a100-qwen15-32b-bf16-14336-generate-2024", f"{QWEN15_291.format(prompt=14336)}: 9.02 tokens/s",
                   9.02, lambda: generate_2024(QWEN15_32B, 14336, "a100-80gb-sxm")),
    PublishedSpeed("hf-2xa100-yuan2-m32-bf16-remote-code-decode", f"{YUAN_GPTQ}: BF16 13.16 token/s", 13.16,
                   lambda: decode(YUAN2_M32, "bf16", "a100-80gb-pcie", 512, engine="hf_generate", gpus=2,
                                  experts_loop=True)["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("hf-a100-yuan2-m32-gptq-int4-remote-code-decode", f"{YUAN_GPTQ}: GPTQ-int4 9.24 token/s", 9.24,
                   lambda: decode(YUAN2_M32, "int4", "a100-80gb-pcie", 512, engine="hf_generate",
                                  quantization="gptq_g128", experts_loop=True)["decode_tokens_per_s_per_stream"],
                   xfail="AutoGPTQ's QuantLinear runs each of an expert's three projections as its own dequantizing "
                         "kernel, 96 calls a layer, where the loop's 85 us an expert was fitted on 16-bit experts: the "
                         "int4 row decodes slower than the BF16 one, the prediction faster (+36 %)"),
    PublishedSpeed("hf-a800-deepseek-moe-16b-bf16-decode", f"{DEEPSEEK_MOE_13}: deepseek-moe-16b 14.73 (its remote "
                   "code loops over the experts a step hits)", 14.73,
                   lambda: decode(DEEPSEEK_MOE_16B, "bf16", "a100-80gb-sxm", 512, engine="hf_generate",
                                  experts_loop=True, hit_only=True)["decode_tokens_per_s_per_stream"], fitted=True),
    PublishedSpeed("hf-a800-baichuan-13b-bf16-decode", f"{DEEPSEEK_MOE_13}: baichuan-13b 22.00 (the set-up's share of "
                   "the rate, which the loop's fit takes)", 22.00,
                   lambda: decode(BAICHUAN_13B, "bf16", "a100-80gb-sxm", 512, engine="hf_generate")[
                       "decode_tokens_per_s_per_stream"], fitted=True),
    PublishedSpeed("bnb347-3090-llama7b-fp16-decode", f"{BNB_347}: fp16, 32.89 ms a token", 1 / 0.03289,
                   lambda: decode(shape("llama-7b", 1), "fp16", "rtx-3090-24gb", 128, preset="llama-7b",
                                  engine="hf_generate")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("bnb347-3090-llama7b-int8-decode", f"{BNB_347}: LLM.int8(), 154.55 ms a token", 1 / 0.15455,
                   lambda: decode(shape("llama-7b", 1), "int8", "rtx-3090-24gb", 128, preset="llama-7b",
                                  engine="hf_generate")["decode_tokens_per_s_per_stream"], fitted=True),
    PublishedSpeed("hf-blog-8xa100-bloom-176b-accelerate-bf16", f"{BLOOM_BLOG}: 8 x A100 80GB, accelerate bf16, "
                   "230.38 ms a token", 1 / 0.23038,
                   lambda: decode(BLOOM_176B, "bf16", "a100-80gb-sxm", 100, engine="hf_generate", gpus=8)[
                       "decode_tokens_per_s_per_stream"]),
    # LLM.int8()'s cost a call (quantization.FORMATS["bnb_int8"]): 1.23x bf16's time here, 4.7x on Llama 7B.
    PublishedSpeed("hf-blog-4xa100-bloom-176b-accelerate-int8", f"{BLOOM_BLOG}: 4 x A100 80GB, accelerate int8 "
                   "(bitsandbytes), 284.15 ms a token", 1 / 0.28415,
                   lambda: decode(BLOOM_176B, "int8", "a100-80gb-sxm", 100, engine="hf_generate", gpus=4,
                                  quantization="bnb_int8")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("qwen1-a100-qwen7b-bf16-hf-decode", f"{QWEN1_HF}: Qwen-7B BF16, 40.93 tokens/s", 40.93,
                   lambda: decode(QWEN1_7B, "bf16", "a100-80gb-sxm", 2048, engine="hf_generate")[
                       "decode_tokens_per_s_per_stream"]),
    PublishedSpeed("qwen1-a100-qwen72b-gptq-int4-hf-decode", f"{QWEN1_HF}: Qwen-72B Int4 (AutoGPTQ), 11.32 tokens/s",
                   11.32, lambda: decode(QWEN1_72B, "int4", "a100-80gb-sxm", 2048, engine="hf_generate",
                                         quantization="gptq_g128")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("qwen1-2xa100-qwen72b-bf16-hf-decode", f"{QWEN1_HF}: Qwen-72B BF16 on 2 x A100, 8.48 tokens/s", 8.48,
                   lambda: decode(QWEN1_72B, "bf16", "a100-80gb-sxm", 2048, engine="hf_generate", gpus=2)[
                       "decode_tokens_per_s_per_stream"]),
    # --- llama.cpp across cards: the layer split runs one GPU at a time (4 cards no faster than 2) ---
    *(PublishedSpeed(f"llamacpp-{count}x{card.split('-')[1]}-llama3-70b-q4km-tg512",
                     f"{GPU_BENCHMARKS}: {count} x {card.split('-')[1].upper()} {published} tokens/s", published,
                     lambda card=card, count=count: decode(
                         LLAMA3_70B, "int4", card, 512, gpus=count, engine="llama_cpp",
                         quantization="gguf_q4_k_m", build_2024=True)["decode_tokens_per_s_per_stream"])
      for card, count, published in (("rtx-3090-24gb", 2, 16.57), ("rtx-4090-24gb", 2, 19.22),
                                     ("rtx-3090-24gb", 4, 17.07), ("rtx-4090-24gb", 4, 19.80))),
    # The same table's Llama 3 8B on one card, F16 and Q4_K_M (out of sample for the fraction by weight bits).
    *(PublishedSpeed(f"llamacpp-{card.split('-')[1]}-llama3-8b-{fmt}-tg512",
                     f"{GPU_BENCHMARKS.replace('70B Q4_K_M', '8B ' + fmt.upper())}: {published} tokens/s", published,
                     lambda card=card, precision=precision, quantization=quantization: decode(
                         shape("llama3-8b", 1), precision, card, 512, engine="llama_cpp",
                         quantization=quantization, build_2024=True)["decode_tokens_per_s_per_stream"])
      for card, fmt, precision, quantization, published in (
          ("rtx-4090-24gb", "f16", "fp16", "auto", 54.84), ("rtx-3090-24gb", "f16", "fp16", "auto", 47.40),
          ("rtx-4090-24gb", "q4_k_m", "int4", "gguf_q4_k_m", 130.58),
          ("rtx-3090-24gb", "q4_k_m", "int4", "gguf_q4_k_m", 115.42))),
    PublishedSpeed("llamacpp-h100-pcie-llama2-7b-f16",
                   "github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference README (commit 00dd2bd), 'Average eval "
                   "speed (tokens/s) by GPUs on LLaMA 2': H100 PCIe 80GB, 7B f16, 83.32 tokens/s", 83.32,
                   lambda: decode(shape("llama-7b", 1), "fp16", "h100-80gb-pcie", 512,
                                  engine="llama_cpp", build_2024=True)["decode_tokens_per_s_per_stream"]),
    # --- DGX Spark (GB10, 273 GB/s): llama.cpp's own benchmark of it ---
    PublishedSpeed("llamacpp-dgx-spark-gpt-oss-20b-tg32", f"{LLAMACPP_SPARK}: gpt-oss 20B MXFP4, tg32 84.10 tokens/s",
                   84.10, lambda: decode(shape("gpt-oss-20b", 1), "int4", "dgx-spark-128gb", 32, preset="gpt-oss-20b",
                                         engine="llama_cpp")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("llamacpp-dgx-spark-gpt-oss-120b-tg32", f"{LLAMACPP_SPARK}: gpt-oss 120B MXFP4, tg32 59.02 "
                   "tokens/s", 59.02, lambda: decode(shape("gpt-oss-120b", 1), "int4", "dgx-spark-128gb", 32,
                                                     preset="gpt-oss-120b", engine="llama_cpp")[
                                                         "decode_tokens_per_s_per_stream"]),
    PublishedSpeed("llamacpp-dgx-spark-qwen25-7b-q8_0-tg32", f"{LLAMACPP_SPARK}: Qwen2.5-Coder-7B Q8_0, tg32 29.30 "
                   "tokens/s", 29.30, lambda: decode(QWEN25_7B, "int8", "dgx-spark-128gb", 32, engine="llama_cpp",
                                                     quantization="gguf_q8_0")["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("llamacpp-dgx-spark-qwen25-7b-q8_0-prefill-4096",
                   f"{LLAMACPP_SPARK}: Qwen2.5-Coder-7B Q8_0, llama-batched-bench PP 4096, B 1: T_PP 1.813 s", 1.813,
                   lambda: decode(dataclasses.replace(QWEN25_7B, sequence_length=4096), "int8", "dgx-spark-128gb", 1,
                                  engine="llama_cpp", quantization="gguf_q8_0")["first_token_s"],
                   gap="llama.cpp's quantized matmuls on GB10 (that build; sm_121 runs the sm_120 path) reach ~35 "
                       "TFLOP/s (2N x 2,260 tokens/s), half the 0.6 x 125 (datasheet) the predictor assumes",
                   tolerance=0.6),
    # --- prefill (first token) ---
    PublishedSpeed("llamacpp-4090-qwen2-3b-q4_0-pp512",
                   "github.com/ggml-org/llama.cpp/pull/12183: RTX 4090, qwen2 3B Q4_0, pp512 18,155 tokens/s, i.e. "
                   "a 512-token prompt in 512/18155 s", 512 / 18155.22,
                   lambda: decode(QWEN_3B, "int4", "rtx-4090-24gb")["first_token_s"]),
    PublishedSpeed("vllm-a100-qwen3-14b-awq-prefill-16k", f"{VLLM_QWEN3_14B}: mean TTFT 3,345 ms", 3.34537,
                   lambda: decode(QWEN3_14B, "int4", "a100-80gb-sxm", 200, engine="vllm",
                                  quantization="awq_g128")["first_token_s"]),
    PublishedSpeed("millstone-h200-qwen3-coder-next-fp8-ttft-256k",
                   f"{MILLSTONE_QNEXT}: TTFT of one request at 256k, 20.4 s", 20.4,
                   lambda: qwen3_coder_next_on_h200(256_000)["first_token_s"],
                   fitted=True),
    PublishedSpeed("millstone-pro6000-gpt-oss-20b-ttft-128k",
                   f"{MILLSTONE_GPT_OSS_20B}: TTFT of one request at 128k, 21.4 s", 21.4,
                   lambda: gpt_oss_20b_on_pro_6000(128_000)["first_token_s"],
                   xfail=MILLSTONE_PRO6000_GAP),
    PublishedSpeed("millstone-pro6000-gpt-oss-20b-decode-1k",
                   f"{MILLSTONE_GPT_OSS_20B}: one request at 1k, 250.0 tokens/s", 250.0,
                   lambda: gpt_oss_20b_on_pro_6000(1000)["decode_tokens_per_s_per_stream"], fitted=True),
    PublishedSpeed("millstone-pro6000-gpt-oss-20b-decode-128k",
                   f"{MILLSTONE_GPT_OSS_20B}: one request at 128k, 105.5 tokens/s", 105.5,
                   lambda: gpt_oss_20b_on_pro_6000(128_000)["decode_tokens_per_s_per_stream"],
                   xfail=MILLSTONE_PRO6000_GAP),
    PublishedSpeed("millstone-h200-qwen3-coder-next-fp8-decode-1k",
                   f"{MILLSTONE_QNEXT}: one request at 1k, 210.8 tokens/s", 210.8,
                   lambda: qwen3_coder_next_on_h200(1000)["decode_tokens_per_s_per_stream"], fitted=True),
    PublishedSpeed("millstone-h200-gpt-oss-120b-10-streams-1k",
                   f"{MILLSTONE_GPT_OSS_120B}: peak 849 tokens/s at 10 requests, 1k context", 849,
                   lambda: decode(shape("gpt-oss-120b", 1000), "int4", "h200-141gb-sxm", 1024, batch=10,
                                  preset="gpt-oss-120b", engine="vllm")["decode_tokens_per_s_aggregate"]),
    PublishedSpeed("nim-2xh100-llama33-70b-fp8-ttft-5k", f"{NIM_70B}: TTFT 406.77 ms at concurrency 1", 0.40677,
                   lambda: nim_70b(1)["first_token_s"]),
    PublishedSpeed("nim-2xh100-llama33-70b-fp8-itl-1", f"{NIM_70B}: ITL 18.58 ms at concurrency 1", 1 / 0.01858,
                   lambda: nim_70b(1)["decode_tokens_per_s_per_stream"]),
    PublishedSpeed("nim-2xh100-llama33-70b-fp8-25-users",
                   f"{NIM_70B}: 623.4 output tokens/s at concurrency 25", 623.4,
                   lambda: nim_70b(25)["sustained_tokens_per_s_aggregate"]),
    PublishedSpeed("nim-2xh100-llama33-70b-fp8-50-users",
                   f"{NIM_70B}: 814.37 output tokens/s at concurrency 50", 814.37,
                   lambda: nim_70b(50)["sustained_tokens_per_s_aggregate"]),
    # --- transformer training ---
    PublishedSpeed("llmc-gpt2-774m-8xa100",
                   "github.com/karpathy/llm.c scripts/run_gpt2_774M.sh: 8x A100 80GB SXM, 524,288 tokens per step "
                   "in ~1.7 s = 308,405 tokens/s", 524_288 / 1.7,
                   lambda: train("gpt2-large", 1024, "a100-80gb-sxm", batch=512, gpus=8, accumulation=2)),
    PublishedSpeed("llmc-gpt2-124m-8xa100",
                   "github.com/karpathy/llm.c/discussions/481: GPT-2 124M, 10B tokens in ~90 min on one 8x A100 "
                   "80GB SXM node = 1.85M tokens/s", 10e9 / 5400,
                   lambda: train("gpt2-small", 1024, "a100-80gb-sxm", batch=512, gpus=8)),
    PublishedSpeed("nanogpt-4090-gpt2-124m",
                   "github.com/karpathy/nanoGPT/issues/182: one RTX 4090, GPT-2 124M, 29 % MFU as nanoGPT counts it "
                   "(6N + 12*L*h*s per token, N 123.65M, of 312 TFLOP/s) = 105,800 tokens/s",
                   0.29 * 312e12 / (6 * 123.65e6 + 12 * 12 * 768 * 1024),
                   lambda: train("gpt2-small", 1024, "rtx-4090-24gb", batch=12)),
    # --- a small model's short micro-batches: eager dispatch (speed.TRAINING_DISPATCH_S_PER_LAYER_PASS; audit ZM23) ---
    PublishedSpeed("qwen-1.8b-lora-256-a100", f"{QWEN_PROFILE}: Qwen-1.8B at 256 tokens, 1.0 s/it", 1.0,
                   lambda: qwen_lora_step_s(24, 2048, 16, 5504, 256), fitted=True),
    PublishedSpeed("qwen-1.8b-lora-1024-a100", f"{QWEN_PROFILE}: Qwen-1.8B at 1,024 tokens, 1.1 s/it", 1.1,
                   lambda: qwen_lora_step_s(24, 2048, 16, 5504, 1024)),
    PublishedSpeed("qwen-7b-lora-256-a100", f"{QWEN_PROFILE}: Qwen-7B at 256 tokens, 1.2 s/it", 1.2,
                   lambda: qwen_lora_step_s(32, 4096, 32, 11008, 256)),
    PublishedSpeed("qwen-14b-lora-256-a100", f"{QWEN_PROFILE}: Qwen-14B at 256 tokens, 1.6 s/it", 1.6,
                   lambda: qwen_lora_step_s(40, 5120, 40, 13696, 256)),
    PublishedSpeed("torchtune-4090-llama3.1-8b-full", f"{TORCHTUNE}: Llama 3.1 8B full, 1x RTX 4090, 1,650 tokens/s",
                   1650, lambda: train("llama3-8b", 2048, "rtx-4090-24gb", batch=2, recompute="full")),
    PublishedSpeed("torchtune-a6000-llama3.1-8b-full", f"{TORCHTUNE}: Llama 3.1 8B full, 1x A6000, 2,579 tokens/s",
                   2579, lambda: train("llama3-8b", 2048, "rtx-a6000-48gb", batch=2, recompute="full"),
                   gap=TORCHTUNE_OUTLIER, tolerance=0.6),
    PublishedSpeed("torchtune-4090-llama3.1-8b-lora", f"{TORCHTUNE}: Llama 3.1 8B LoRA, 1x RTX 4090, 3,083 tokens/s",
                   3083, lambda: train("llama3-8b", 2048, "rtx-4090-24gb", batch=2, method="lora", recompute="full"),
                   gap=TORCHTUNE_OUTLIER, tolerance=0.6),
    PublishedSpeed("torchtune-4090-llama3.1-8b-qlora",
                   f"{TORCHTUNE}: Llama 3.1 8B QLoRA, 1x RTX 4090, 2,413 tokens/s", 2413,
                   lambda: train("llama3-8b", 2048, "rtx-4090-24gb", batch=2, method="qlora", recompute="full"),
                   gap=TORCHTUNE_OUTLIER, tolerance=0.6),
    PublishedSpeed("mlperf-train-v4.0-8xh100-llama2-70b-lora",
                   MLPERF_TRAIN.format("eos_ngc24.04_nemo", "2.155", "H100 SXM (1x DGX H100, TP4)"), 2.155 * 8192,
                   lambda: train("llama-70b", 8192, "h100-80gb-sxm", batch=8, gpus=8, method="lora"),
                   gap=MLPERF_FP8_GAP, tolerance=0.55),
    PublishedSpeed("mlperf-train-v4.0-8xh200-llama2-70b-lora",
                   MLPERF_TRAIN.format("h200_ngc24.04_nemo", "2.477", "H200 SXM (TP2)"), 2.477 * 8192,
                   lambda: train("llama-70b", 8192, "h200-141gb-sxm", batch=8, gpus=8, method="lora"),
                   gap=MLPERF_FP8_GAP, tolerance=0.55),
    PublishedSpeed("torchtitan-8xh100-llama3.1-8b-fsdp", TORCHTITAN, 5762 * 8,
                   lambda: train("llama3-8b", 8192, "h100-80gb-sxm", batch=16, gpus=8, recompute="selective",
                                 sharding="fsdp")),
    # A decoder's causal attention at 64K: half the s^2 scores (~6,950 tokens/s, -32 %, counting them all; audit AL43).
    PublishedSpeed("easycontext-8xa100-llama2-7b-64k-data-parallel", "github.com/jzhang38/EasyContext README, "
                   "'Throughput on 8 A100': Llama-2-7B, full fine-tune at 64K, data parallel (DeepSpeed ZeRO-3 "
                   "offload, FlashAttention, checkpointing; train_scripts/EasyContext-1M-Llama-2-7B.sh: batch 1, "
                   "accumulation 2), 10,240 tokens/s", 10240,
                   lambda: train("llama-7b", 65536, "a100-80gb-sxm", batch=16, gpus=8, recompute="full",
                                 accumulation=2, sharding="fsdp_offload")),
    # Each sequence split over the 8 GPUs (task.sequence_parallel: zigzag ring attention; the 512K stage's batch 1,
    # accumulation 2): each GPU a slice of 2 samples a step, FSDP's CPU offload uploading the weights every micro-batch.
    *(PublishedSpeed(f"easycontext-8xa100-llama2-7b-{label}-ring-attention", EASYCONTEXT_RING.format(label, published),
                     published, functools.partial(train, "llama-7b", tokens, "a100-80gb-sxm", batch=2, gpus=8,
                                                  recompute="full", accumulation=2, sharding="fsdp_offload",
                                                  sequence_parallel=True), xfail=xfail)
      for label, tokens, published, xfail in (
          ("64k", 65536, 7816, ""), ("128k", 131072, 4266, EASYCONTEXT_128K_GAP), ("512k", 512000, 2133, ""),
          ("700k", 700000, 1603, ""))),
    # --- a mixture of experts' training (speed_moe.MOE_TRAINING_MFU_SHARE, speed_moe.HF_MOE_TRAINING_EXPERT_PASS_S) ---
    PublishedSpeed("pai-megatron-qwen3-30b-a3b-16xh800", "github.com/alibaba/Pai-Megatron-Patch/issues/643: "
                   "Qwen3-30B-A3B on 16 H800s, 8k sequences, tp 1 pp 2 ep 8, no recompute, 6,325 tokens/s a GPU", 6325,
                   moe_megatron_per_gpu, fitted=True),
    PublishedSpeed("fms-powermoe-3b-hf-1xa100", f"{FMS_MOE}, HF Trainer (framework_config none), 1 GPU, 5.447 "
                   "samples/s", 5.447, lambda: powermoe_samples_per_s("hf_trainer", 1), fitted=True),
    PublishedSpeed("fms-powermoe-3b-hf-2xa100", f"{FMS_MOE}, HF Trainer, 2 GPUs, 9.539 samples/s", 9.539,
                   lambda: powermoe_samples_per_s("hf_trainer", 2)),
    PublishedSpeed("fms-powermoe-3b-hf-4xa100", f"{FMS_MOE}, HF Trainer, 4 GPUs, 17.972 samples/s", 17.972,
                   lambda: powermoe_samples_per_s("hf_trainer", 4)),
    PublishedSpeed("fms-powermoe-3b-scattermoe-1xa100", f"{FMS_MOE}, ScatterMoE kernels (moe-scattermoe-granite-ep1), "
                   "1 GPU, 17.271 samples/s", 17.271, lambda: powermoe_samples_per_s("torchtune", 1),
                   xfail="timed as grouped GEMMs at Megatron-Core's share, 2.1x fast: ScatterMoE under the HF "
                         "Trainer at 2,560 tokens a micro-batch (~512 an expert, 512 wide) keeps the GPU far less busy "
                         "than Megatron's 8k-token micro-batches"),
    # --- CNN training and inference ---
    PublishedSpeed("dle-rn50-a100-amp", f"{DLE_RN50}: 1x A100 80GB, mixed precision, 2,470 img/s", 2470,
                   lambda: train("resnet50", 0, "a100-80gb-sxm", batch=256, precision="amp_fp16", data="images",
                                 channels_last=True)),
    PublishedSpeed("llama2-70b-pretraining-a100", "arXiv:2307.09288 (Llama 2) Table 2: 70B pretrained on 2.0T tokens "
                   "in 1,720,320 A100-80GB GPU-hours, 323 tokens/s a GPU, on clusters of up to 2,000 GPUs (4M-token "
                   "batches of 4k sequences; taken with full recompute, which the paper does not state: without it "
                   "the prediction is 385, +19 %)", 2.0e12 / (1_720_320 * 3600),
                   lambda: train("llama-70b", 4096, "a100-80gb-sxm", batch=1024, gpus=8, recompute="full",
                                 accumulation=64) / 8),
    PublishedSpeed("dle-rn50-a100-tf32", f"{DLE_RN50}: 1x A100 80GB, TF32, 938 img/s", 938,
                   lambda: train("resnet50", 0, "a100-80gb-sxm", batch=256, precision="fp32", data="images")),
    PublishedSpeed("dle-rn50-8xa100-amp", f"{DLE_RN50}: 8x A100 80GB (DGX A100), mixed precision, 16,621 img/s",
                   16621, lambda: train("resnet50", 0, "a100-80gb-sxm", batch=2048, gpus=8, precision="amp_fp16",
                                        data="images", channels_last=True), fitted=True),
    PublishedSpeed("dle-rn50-v100-amp", f"{DLE_RN50}: 1x V100 16GB (DGX-1), mixed precision, 1,200 img/s", 1200,
                   lambda: train("resnet50", 0, "v100-16gb-sxm2", batch=256, precision="amp_fp16", data="images",
                                 channels_last=True)),
    PublishedSpeed("dle-rn50-v100-fp32", f"{DLE_RN50}: 1x V100 16GB (DGX-1), FP32, 367 img/s", 367,
                   lambda: train("resnet50", 0, "v100-16gb-sxm2", batch=256, precision="fp32", data="images")),
    PublishedSpeed("dle-rn50-8xv100-amp", f"{DLE_RN50}: 8x V100 16GB (DGX-1), mixed precision, 8,322 img/s", 8322,
                   lambda: train("resnet50", 0, "v100-16gb-sxm2", batch=2048, gpus=8, precision="amp_fp16",
                                 data="images", channels_last=True), fitted=True),
    PublishedSpeed("detectron2-faster-rcnn-r50-fpn-1x-8xv100", f"{DETECTRON2_ZOO}: faster_rcnn_R_50_FPN_1x, 0.210 s "
                   "an iteration of 16 images = 76.2 images/s", 16 / 0.210,
                   lambda: train("faster-rcnn-r50-fpn", 0, "v100-16gb-sxm2", batch=16, gpus=8, precision="fp32",
                                 data="images")),
    PublishedSpeed("detectron2-retinanet-r50-fpn-1x-8xv100", f"{DETECTRON2_ZOO}: retinanet_R_50_FPN_1x, 0.200 s an "
                   "iteration of 16 images = 80.0 images/s", 16 / 0.200,
                   lambda: train("retinanet-r50-fpn", 0, "v100-16gb-sxm2", batch=16, gpus=8, precision="fp32",
                                 data="images")),
    PublishedSpeed("timm-vit-b16-3090-amp", f"{TIMM_TRAIN}: vit_base_patch16_224, batch 192, 390.86 img/s", 390.86,
                   lambda: train("vit-b16", 197, "rtx-3090-24gb", batch=192, precision="amp_fp16", data="images",
                                 flash_attention=False)),
    # Narrow ViTs, their eager attention's scores through memory (speed_build.EAGER_SCORES_BYTES_PER_PASS; audit DC66:
    # timed with SDPA's, DeiT-Ti was 2.2x fast).
    PublishedSpeed("timm-deit-tiny-3090-amp", f"{TIMM_TRAIN}: deit_tiny_patch16_224 (192 wide), batch 512, 2,290.53 "
                   "img/s", 2290.53, lambda: timm_vit_training(5_720_000, 192, 3, 512)),
    PublishedSpeed("timm-deit-small-3090-amp", f"{TIMM_TRAIN}: deit_small_patch16_224 (384 wide), batch 384, 1,053.64 "
                   "img/s", 1053.64, lambda: timm_vit_training(22_050_000, 384, 6, 384)),
    PublishedSpeed("deit-b-8xv100-300-epochs", "arXiv:2012.12877 (DeiT) §5: DeiT-B's 300 epochs of ImageNet-1k "
                   "(1,281,167 images) take 53 h on one node of 8 V100s = 2,014 images/s", 2014,
                   lambda: train("vit-b16", 197, "v100-32gb-sxm2", batch=1024, gpus=8, precision="amp_fp16",
                                 data="images", flash_attention=False)),  # DeiT's timm of 2020: eager attention
    # Audit YE15: a momentum encoder's forward on each sample; timed as supervised ResNet-50 it was +74 %.
    PublishedSpeed("moco-v2-r50-8xv100-200-epochs", "github.com/facebookresearch/moco README: MoCo v2's ResNet-50, 200 "
                   "epochs of ImageNet-1k (1,281,167 images) pre-trained in 53 hours on 8 V100s, batch 256 = 1,343 "
                   "images/s (two augmented views an image)", 1_281_167 * 200 / (53 * 3600), moco_training),
    # Eager attention's scores through memory (speed_build.EAGER_SCORES_BYTES_PER_PASS), counted from its ops.
    PublishedSpeed("hf-opt-350m-l40s-eager-train", f"{HF_OPT_SDPA}: eager, 0.526 s a step (15,574 tokens/s)",
                   8192 / 0.526, lambda: opt350m_training("l40s-48gb", False), fitted=True),
    PublishedSpeed("hf-opt-350m-l40s-sdpa-train", f"{HF_OPT_SDPA}: SDPA, 0.122 s a step (67,148 tokens/s)",
                   8192 / 0.122, lambda: opt350m_training("l40s-48gb", True)),
    # A GeForce card's CNN fraction (speed.GEFORCE_CNN_TENSOR_FRACTION), fitted on these three timm rows; the model's
    # rate per image does not depend on the batch, so batch 256 stands in for timm's 512.
    PublishedSpeed("timm-rn50-3090-amp", f"{TIMM_TRAIN}: resnet50, batch 512, 826.06 img/s", 826.06,
                   lambda: train("resnet50", 0, "rtx-3090-24gb", batch=256, precision="amp_fp16", data="images"),
                   fitted=True),
    PublishedSpeed("timm-rn152-3090-amp", f"{TIMM_TRAIN}: resnet152, batch 192, 370.08 img/s (23.1 GFLOPs at 224 "
                   "px, 60.19M parameters)", 370.08, lambda: cnn_training_on("rtx-3090-24gb", 23.1, 60_190_000, 192,
                                                                     macts=22.56),
                   fitted=True),
    PublishedSpeed("timm-rn152-5090-inference-288", "github.com/huggingface/pytorch-image-models "
                   "results/benchmark-infer-amp-nchw-pt291-cu130-5090.csv: resnet152 at 288 px, batch 1024, 1,743.4 "
                   "img/s (19.11 GMACs, 38.22 GFLOPs, 37.28M activations)", 1743.4,
                   lambda: timm_inference("rtx-5090-32gb", 38.22, 288, 37.28),
                   fitted=True),
    # VGG's dense 3x3 convolutions reach more of the tensor rate than ResNets' (audits YE2, YH2); a factor by FLOPs an
    # activation fitted on these two doubled detectors' rates (review AE), so they stand as a known gap.
    PublishedSpeed("timm-vgg16-3090-amp", f"{TIMM_TRAIN}: vgg16, batch 384, 465.36 img/s (15.47 GMACs, 13.56M "
                   "activations, 138.36M parameters)", 465.36,
                   lambda: cnn_training_on("rtx-3090-24gb", 30.94, 138_360_000, 384, macts=13.56),
                   gap="VGG's wide 3x3 convolutions reach 0.61 of the GeForce figure, where every CNN is timed at "
                       "ResNets' 0.34: -44 %", tolerance=0.5),
    PublishedSpeed("timm-vgg11-3090-amp", f"{TIMM_TRAIN}: vgg11, batch 512, 825.98 img/s (7.61 GMACs, 7.44M "
                   "activations, 132.86M parameters)", 825.98,
                   lambda: cnn_training_on("rtx-3090-24gb", 15.22, 132_860_000, 512, macts=7.44),
                   gap="as VGG-16's: 0.53 of the GeForce figure, timed at 0.34: -36 %", tolerance=0.5),
    # A CNN's activations through memory (speed_cnn): timm's depthwise and inverted-residual nets, whose FLOPs alone
    # timed them 2-8x too fast (audits ZB, ZC, ZD); the constants are the rows' medians, so the rows are fitted.
    PublishedSpeed("timm-mobilenetv3-large-3090-amp", f"{TIMM_TRAIN_AT.format('nchw', 'bd6d377')}: "
                   "mobilenetv3_large_100, batch 512, 2,167.29 img/s (0.23 GMACs, 4.41M activations)", 2167.29,
                   lambda: cnn_training_on("rtx-3090-24gb", 0.46, 5_480_000, 256, macts=4.41), fitted=True),
    PublishedSpeed("timm-efficientnet-b0-3090-amp", f"{TIMM_TRAIN_AT.format('nchw', 'bd6d377')}: efficientnet_b0, "
                   "batch 384, 1,459.11 img/s (0.4 GMACs, 6.75M activations)", 1459.11,
                   lambda: cnn_training_on("rtx-3090-24gb", 0.8, 5_290_000, 256, macts=6.75), fitted=True),
    PublishedSpeed("timm-efficientnetv2-s-3090-amp-288", f"{TIMM_TRAIN_AT.format('nchw', 'bd6d377')}: "
                   "efficientnetv2_s at 288 px, batch 128, 433.27 img/s (4.75 GMACs, 20.13M activations at 288 px)",
                   433.27, lambda: cnn_training_on("rtx-3090-24gb", 9.5, 21_460_000, 128, px=288, macts=20.13),
                   fitted=True),
    PublishedSpeed("timm-mobilenetv2-3090-amp", f"{TIMM_TRAIN_AT.format('nchw', 'bd6d377')}: mobilenetv2_100, batch "
                   "512, 1,832.14 img/s (0.31 GMACs, 6.68M activations)", 1832.14,
                   lambda: cnn_training_on("rtx-3090-24gb", 0.62, 3_500_000, 256, macts=6.68), fitted=True),
    PublishedSpeed("timm-mobilenetv3-large-3090-amp-nhwc", f"{TIMM_TRAIN_AT.format('nhwc', 'c865028')}: "
                   "mobilenetv3_large_100, batch 512, 2,732.43 img/s", 2732.43,
                   lambda: cnn_training_on("rtx-3090-24gb", 0.46, 5_480_000, 256, macts=4.41, channels_last=True),
                   fitted=True),
    PublishedSpeed("timm-efficientnetv2-s-3090-amp-288-nhwc", f"{TIMM_TRAIN_AT.format('nhwc', 'c865028')}: "
                   "efficientnetv2_s at 288 px, batch 128, 559.15 img/s", 559.15,
                   lambda: cnn_training_on("rtx-3090-24gb", 9.5, 21_460_000, 128, px=288, macts=20.13,
                                           channels_last=True), fitted=True),
    # Channels-last's tensor fraction on a GeForce card (speed_cnn.GEFORCE_CNN_TENSOR_FRACTION_CHANNELS_LAST).
    PublishedSpeed("timm-rn101-3090-amp-nhwc", f"{TIMM_TRAIN_AT.format('nhwc', 'c865028')}: resnet101, batch 256, "
                   "747.89 img/s (7.83 GMACs, 16.23M activations)", 747.89,
                   lambda: cnn_training_on("rtx-3090-24gb", 15.66, 44_550_000, 256, macts=16.23, channels_last=True),
                   fitted=True),
    PublishedSpeed("timm-rn50-3090-amp-nhwc", f"{TIMM_TRAIN_AT.format('nhwc', 'c865028')}: resnet50, batch 512, "
                   "1,218.01 img/s (4.11 GMACs, 11.11M activations)", 1218.01,
                   lambda: cnn_training_on("rtx-3090-24gb", 8.22, 25_560_000, 256, macts=11.11, channels_last=True)),
    PublishedSpeed("timm-mobilenetv4-conv-medium-5090-inference", f"{TIMM_5090_CNN}: "
                   "mobilenetv4_conv_medium, 15,152.93 img/s (0.84 GMACs, 5.8M activations)", 15152.93,
                   lambda: timm_inference("rtx-5090-32gb", 1.68, 224, 5.8), fitted=True),
    PublishedSpeed("timm-efficientnetv2-s-5090-inference-288", f"{TIMM_5090_CNN}: "
                   "efficientnetv2_s at 288 px, 3,683.59 img/s (4.75 GMACs, 20.13M activations)", 3683.59,
                   lambda: timm_inference("rtx-5090-32gb", 9.5, 288, 20.13), fitted=True),
    PublishedSpeed("timm-efficientnet-b0-3090-inference-nhwc", f"{TIMM_3090_NHWC_CNN}: "
                   "efficientnet_b0, 8,015.36 img/s (0.4 GMACs, 6.75M activations)", 8015.36,
                   lambda: timm_inference("rtx-3090-24gb", 0.8, 224, 6.75, channels_last=True), fitted=True),
    PublishedSpeed("timm-convnext-tiny-5090-inference", f"{TIMM_5090_CNN}: "
                   "convnext_tiny, 5,940.47 img/s (4.47 GMACs, 13.44M activations)", 5940.47,
                   lambda: timm_inference("rtx-5090-32gb", 8.94, 224, 13.44)),
    # Audit XQ10: at ResNet-50's FLOPs a saved value DANet R-101-D8 ran 4.0 images/s against 1.99 (custom_cnn.py).
    PublishedSpeed("mmseg-danet-r50-d8-v100", f"{MMSEG_V100}: DANet R-50-D8, 2.66 fps", 2.66,
                   lambda: dilated_segmentation_inference(49_800_000, 50)),
    PublishedSpeed("mmseg-danet-r101-d8-v100", f"{MMSEG_V100}: DANet R-101-D8, 1.99 fps", 1.99,
                   lambda: dilated_segmentation_inference(68_800_000, 101)),
    PublishedSpeed("mmseg-deeplabv3plus-r50-d8-v100", f"{MMSEG_V100}: DeepLabV3+ R-50-D8, 3.94 fps", 3.94,
                   lambda: dilated_segmentation_inference(43_600_000, 50)),
    PublishedSpeed("mmseg-deeplabv3plus-r101-d8-v100", f"{MMSEG_V100}: DeepLabV3+ R-101-D8, 2.60 fps", 2.60,
                   lambda: dilated_segmentation_inference(62_600_000, 101)),
    PublishedSpeed("dle-rn50-v100-inference-amp", f"{DLE_RN50}: V100 16GB inference, mixed precision, batch 256, "
                   "3,382 img/s", 3382, lambda: cnn_preset_inference("v100-16gb-sxm2", 256, channels_last=True)),
    PublishedSpeed("dle-rn50-t4-inference-amp", f"{DLE_RN50}: T4 inference, mixed precision, batch 256, "
                   "1,198 img/s", 1198, lambda: cnn_preset_inference("t4-16gb", 256, channels_last=True)),
    PublishedSpeed("the0807-orin-nano-yolov8m-trt-fp16", "github.com/the0807/YOLOv8-ONNX-TensorRT README, "
                   "'Tested on Nvidia Jetson Orin Nano': yolov8m.engine FP16, 640 px, 30 FPS (23.6 ms); YOLOv8m is "
                   "78.9 GFLOPs (Ultralytics)", 30.0, lambda: cnn_inference(ORIN_NANO_625MHZ, 78.9)),
    PublishedSpeed("idein-orin-nano-yoloxs-trtexec-fp16", "github.com/Idein/aicast_jetson_benchmark README: Jetson "
                   "Orin Nano, JetPack 5.1.2, TensorRT 8.5.2, YOLOX-S-Leaky trtexec FP16 97.8 FPS (YOLOX-S: 26.8 "
                   "GFLOPs at 640 px, the YOLOX README)", 97.8, lambda: cnn_inference(ORIN_NANO_625MHZ, 26.8)),
    PublishedSpeed("ultralytics-orin-nano-super-yolo11m-trt-fp16", "github.com/ultralytics/ultralytics "
                   "docs/en/guides/nvidia-jetson.md, Jetson Orin Nano Super, YOLO11m TensorRT FP16 13.99 ms an image "
                   "(71.5 FPS; YOLO11m: 68.0 GFLOPs at 640 px, the YOLO11 table)", 1000 / 13.99,
                   lambda: cnn_inference_on("jetson-orin-nano-super-8gb", 68.0)),
    PublishedSpeed("mmdet-rtmdet-l-3090-trt-fp16", "github.com/open-mmlab/mmdetection configs/rtmdet/README.md: "
                   "RTMDet-l, 640 px, TRT-FP16 latency 2.44 ms on an RTX 3090 (410 FPS; 80.23 G multiply-adds, "
                   "160.5 GFLOPs)", 1000 / 2.44, lambda: cnn_inference_on("rtx-3090-24gb", 160.5),
                   gap="0.93 of the card's FP32-accumulate figure by its FLOPs, past the 0.8 fitted on YOLOv9-C's "
                       "rows, with each fused kernel's fixed cost added on top of its work: -36 %",
                   tolerance=0.45),
    # A GeForce card's compiled CNN share (speed_cnn.GEFORCE_CNN_COMPILED_TENSOR_FRACTION), fitted on these two.
    *(PublishedSpeed(f"yolov9qat-4090-yolov9-c-trt-fp16-batch{batch}", YOLOV9_QAT.format(batch, rate), rate,
                     functools.partial(cnn_inference_on, "rtx-4090-24gb", 102.1, batch), fitted=True)
      for batch, rate in ((1, 803.0), (8, 1224.0))),
    # A compiled engine's fixed cost a fused kernel (speed_forward.COMPILED_KERNEL_S, COMPILED_EDGE_KERNEL_S), fitted
    # on the RTX 3090's and the AGX Orin's rows; at its FLOPs alone RTMPose ran 4-12x fast there (audit XZ13).
    *(PublishedSpeed(f"rtmpose-{name}-{key}-trt-fp16", RTMPOSE_TRT.format(where, name, ms, gflops), 1000 / ms,
                     functools.partial(cnn_inference_on, part, gflops, 1, px), fitted=True)
      for key, part, where, times in (
          ("3090", "rtx-3090-24gb", "an RTX 3090", (0.98, 1.12, 1.18, 1.37, 1.20)),
          ("agx-orin", "jetson-agx-orin-64gb", "a Jetson AGX Orin", (1.63, 1.85, 2.72, 3.67, 3.45)))
      for (name, gflops, px), ms in zip(RTMPOSE_SIZES, times, strict=True)),
    *(PublishedSpeed(f"rtmpose-{name}-orin-nx-trt-fp16", RTMPOSE_TRT.format("a Jetson Orin NX 16GB", name, ms, gflops),
                     1000 / ms, functools.partial(cnn_inference, ORIN_NX_16GB, gflops, 1, px),
                     **({"gap": "its 918 MHz GPU runs the larger nets' kernels at less of its FP16 rate than the "
                                "compiled fraction (fitted on larger GPUs and inputs): +43 % and +50 %",
                         "tolerance": 0.55} if gflops > 8 else {}))
      for (name, gflops, px), ms in zip(RTMPOSE_SIZES, (1.97, 2.18, 3.35, 4.78, 5.08), strict=True)),
    PublishedSpeed("efficientvit-l1-r224-a100-trt-fp16", f"{EFFICIENTVIT}: EfficientViT-L1 r224, 6,207 image/s "
                   "(5.3 G multiply-adds)", 6207, lambda: cnn_inference_on("a100-40gb-sxm", 10.6, 64, 224),
                   fitted=True),
    PublishedSpeed("efficientvit-l2-r384-a100-trt-fp16", f"{EFFICIENTVIT}: EfficientViT-L2 r384, 1,784 image/s "
                   "(20 G multiply-adds)", 1784, lambda: cnn_inference_on("a100-40gb-sxm", 40.0, 64, 384), fitted=True),
    PublishedSpeed("efficientvit-l3-r384-a100-trt-fp16", f"{EFFICIENTVIT}: EfficientViT-L3 r384, 724 image/s "
                   "(81 G multiply-adds)", 724, lambda: cnn_inference_on("a100-40gb-sxm", 162.0, 64, 384), fitted=True),
    PublishedSpeed("efficientvit-efficientnetv2-m-a100-trt-fp16", f"{EFFICIENTVIT}: EfficientNetV2-M r480, 1,160 "
                   "image/s (25 G multiply-adds)", 1160, lambda: cnn_inference_on("a100-40gb-sxm", 50.0, 64, 480)),
    PublishedSpeed("efficientvit-efficientnetv2-s-a100-trt-fp16", f"{EFFICIENTVIT}: EfficientNetV2-S r384, 2,869 "
                   "image/s (8.4 G multiply-adds)", 2869, lambda: cnn_inference_on("a100-40gb-sxm", 16.8, 64, 384),
                   xfail="its depthwise convolutions wait on memory, and a compiled engine's activations are timed at "
                         "4 B each, a bound from its passes, not fitted: +53 %"),
    PublishedSpeed("nanosam-resnet18-1024-agx-orin-trt-fp16", "github.com/NVIDIA-AI-IOT/nanosam README, Benchmarks: "
                   "NanoSAM (ResNet18) image encoder on a Jetson AGX Orin, 4.2 ms (238 image/s; TensorRT FP16 at "
                   "1,024 px, timm resnet18 features and its neck: 43.6 G multiply-adds, 87.2 GFLOP)", 1000 / 4.2,
                   lambda: cnn_inference_on("jetson-agx-orin-64gb", 87.2, 1, 1024),
                   xfail="its 24 convolutions at 1,024 px, ~3.6 GFLOP each, keep the tensor cores at ~0.49 of the "
                         "figure, where the compiled share, 0.25, was fitted on 640 px YOLOs at batch 1 (audit AS46): "
                         "-59 %"),
    PublishedSpeed("efficientvit-b3-r224-agx-orin-trt-fp16", f"{EFFICIENTVIT}: EfficientViT-B3 r224 on a Jetson AGX "
                   "Orin at batch 1, 4.36 ms (229 image/s; 4.0 G multiply-adds)", 229,
                   lambda: cnn_inference_on("jetson-agx-orin-64gb", 8.0),
                   xfail="a small net's batch of one runs ~200 small kernels (depthwise convolutions, linear "
                         "attention's elementwise ops), more than the fused layers' fixed cost counts, and the time "
                         "includes the data transfer: +49 % (4.7x before that cost)"),
    PublishedSpeed("pytorch-rpi4-resnet18-fp32", f"{PYTORCH_RPI}: resnet18, 100.3 ms model time a frame (9.97 FPS; "
                   "3.63 GFLOPs, torchvision)", 1000 / 100.3,
                   lambda: cnn_preset_inference(PI_4, 1, "resnet18", "fp32")),
    PublishedSpeed("pytorch-rpi4-resnet50-fp32", f"{PYTORCH_RPI}: resnet50, 225.2 ms model time a frame (4.44 FPS; "
                   "8.18 GFLOPs, torchvision)", 1000 / 225.2,
                   lambda: cnn_preset_inference(PI_4, 1, precision="fp32")),
    # Audit XN9: from its FLOPs alone ShuffleNetV2 x1.0 was ~94 FPS, 3.9x; its activations through the Pi's RAM set it.
    *(PublishedSpeed(f"pytorch-rpi4-shufflenet-v2-{size}-fp32", f"{PYTORCH_RPI}: shufflenet_v2_{size}, {ms} ms model "
                     f"time a frame ({gflops} GFLOPs, torchvision)", 1000 / ms,
                     functools.partial(pi_cnn_inference, gflops, parameters))
      for size, ms, gflops, parameters in (("x0_5", 18.2, 0.082, 1_366_792), ("x1_0", 37.7, 0.29, 2_278_604),
                                           ("x1_5", 56.3, 0.60, 3_503_624), ("x2_0", 82.7, 1.18, 7_393_996))),
    PublishedSpeed("pytorch-rpi4-googlenet-fp32", f"{PYTORCH_RPI}: googlenet, 132.0 ms model time a frame (3.0 GFLOPs, "
                   "torchvision)", 1000 / 132.0, lambda: pi_cnn_inference(3.0, 6_624_904)),
    # --- encoders, one forward pass an input (configs/speed_forward.py: bidirectional attention, prefill fraction) ---
    PublishedSpeed("trt-bert-large-a100-fp16-s384-b128", f"{TRT_BERT}: A100 (40G), 163.70 ms average a batch, "
                   "782 sequences/s", 128 / 0.16370,
                   lambda: encoder_inference("bert-large", 384, "a100-40gb-sxm", 128, runtime="compiled"),
                   fitted=True),
    PublishedSpeed("trt-bert-large-a30-fp16-s384-b128", f"{TRT_BERT}: A30 (165 TFLOP/s dense FP16, 933 GB/s: not "
                   "in the catalog), 342.30 ms average a batch, 374 sequences/s", 128 / 0.34230,
                   lambda: encoder_inference("bert-large", 384, A30, 128, runtime="compiled")),
    PublishedSpeed("depth-anything-large-4090-trt-fp16", DEPTH_ANYTHING_TRT, 1000 / 12.0,
                   lambda: depth_anything_large_trt("rtx-4090-24gb")),
    PublishedSpeed("timm-vit-b16-4090-inference", TIMM_INFER.format("pt291-cu128-4090", "90cae8c", "2,992.79"),
                   2992.79, lambda: encoder_inference("vit-b16", 197, "rtx-4090-24gb", 1024, "images"), fitted=True),
    PublishedSpeed("timm-vit-b16-5090-inference", TIMM_INFER.format("pt291-cu130-5090", "90cae8c", "3,915.56"),
                   3915.56, lambda: encoder_inference("vit-b16", 197, "rtx-5090-32gb", 1024, "images"), fitted=True),
    PublishedSpeed("timm-vit-b16-3090-inference", TIMM_INFER.format("pt240-cu124-rtx3090", "7479d45", "1,570.66"),
                   1570.66, lambda: encoder_inference("vit-b16", 197, "rtx-3090-24gb", 1024, "images")),
    PublishedSpeed("modernbert-large-4090-8192-tokens", f"{MODERNBERT}: 8,192 tokens, batch 48, 46.8k tokens/s",
                   46_800, lambda: modernbert_large(8192, 48), fitted=True),
    PublishedSpeed("modernbert-large-4090-512-tokens", f"{MODERNBERT}: 512 tokens, batch 770, 52.3k tokens/s",
                   52_300, lambda: modernbert_large(512, 770)),
    # --- CPU-only decode from system RAM (configs/speed_cpu.py; its fraction is fitted on the first row) ---
    PublishedSpeed("llamacpp-7950x-ddr5-mixtral-q8_0", f"{LLAMACPP_4716}: Ryzen 9 7950X, 4 x 32 GB DDR5 at 3,600 "
                   "MT/s, 3.37 tokens/s", 3.37,
                   lambda: cpu_decode("mixtral-8x7b", "gguf_q8_0", 2, 4, "DDR5", 6000), fitted=True),
    PublishedSpeed("llamacpp-5900x-ddr4-mixtral-q8_0", f"{LLAMACPP_4716}: Ryzen 9 5900X, 128 GB DDR4 at 3,600 "
                   "MT/s in its two channels, 3.58 tokens/s", 3.58,
                   lambda: cpu_decode("mixtral-8x7b", "gguf_q8_0", 2, 4, "DDR4", 3600)),
    PublishedSpeed("normiebench-i5-9500-llama31-8b-q4_k_m",
                   "github.com/brand-o/normiebench/issues/34 (2026-03-08): Dell OptiPlex 5070, Core i5-9500, 16 GB, "
                   "llama 3.1 8B Q4_K_M on the CPU backend, tg128 6.51 tokens/s; the RAM is taken as the i5-9500's "
                   "rated DDR4-2666 in both channels (one channel's 21 GB/s cannot give 6.51)", 6.51,
                   lambda: cpu_decode("llama3-8b", "gguf_q4_k_m", 2, 2, "DDR4", 2666)),
    # --- diffusion inference, compute-bound: steps x (2N x s + 4 x L x h x s^2) (configs.diffusion) ---
    PublishedSpeed("benchmarkflux-a100-flux1-dev-1024px-28-steps", f"{BENCHMARK_FLUX}: A100, BF16 15.65 s an image",
                   15.65, lambda: denoise("a100-80gb-sxm", 28, 4096 + 512)),
    PublishedSpeed("benchmarkflux-h100-flux1-dev-1024px-28-steps", f"{BENCHMARK_FLUX}: H100, BF16 7.11 s an image "
                   "(a PCIe H100, 756 TFLOP/s, would be predicted 7.7 s)", 7.11,
                   lambda: denoise("h100-80gb-sxm", 28, 4096 + 512)),
    PublishedSpeed("pruna-l40s-flux1-dev-512px-50-steps", "pruna.ai/blog/comparison-flux-torch-compile-tensor-rt-pruna "
                   "(2025-02-17): FLUX.1-dev in Diffusers on an L40S, 512x512, 50 steps (the default), average of 50 "
                   "prompts 8.71 s an image", 8.71, lambda: denoise("l40s-48gb", 50, 1024 + 512)),
    # --- a UNet denoiser from its counted FLOPs a pass, at the fraction eager Diffusers reaches (configs.diffusion) ---
    PublishedSpeed("sdxl-trt-card-a100-baseline-30-steps", f"{SDXL_TRT}: A100, 3,704 ms", 3.704,
                   lambda: denoise_sdxl("a100-80gb-sxm", 30), fitted=True),
    PublishedSpeed("sdxl-trt-card-a10-baseline-30-steps", f"{SDXL_TRT}: A10, 9,399 ms", 9.399,
                   lambda: denoise_sdxl("a10-24gb", 30)),
    PublishedSpeed("sdxl-trt-card-h100-baseline-30-steps", f"{SDXL_TRT}: H100, 2,496 ms (its step waits on eager "
                   "Diffusers' ops, not its tensor rate)", 2.496, lambda: denoise_sdxl("h100-80gb-sxm", 30)),
    PublishedSpeed("diffusion-fast-a100-ssd-1b-unet-estimate-30-steps", "huggingface.co/datasets/sayakpaul/sample-"
                   "datasets ssd-1b_patrick (diffusion-fast's baseline: Segmind SSD-1B in Diffusers, bf16, SDPA, no "
                   "compile, batch 1, 30 steps with guidance, on an 80 GB A100, timed as an SXM): 2.245 s an image; "
                   "no count published, its FLOPs from workload.unet's estimate", 2.245,
                   lambda: denoise_sdxl("a100-80gb-sxm", 30, published_workloads.SSD_1B)),
    PublishedSpeed("fal-sd-benchmarks-a100-sd15-50-steps", "github.com/fal-ai/stable-diffusion-benchmarks README, "
                   "SD1.5 Benchmarks: Diffusers (fp16, SDPA) on an A100 80G SXM, 512 px, 50 steps, 1.591 s end to end "
                   "(31.44 it/s)", 1.591, lambda: denoise_sdxl("a100-80gb-sxm", 50, published_workloads.SD15, 512),
                   fitted=True),
    # In a TensorRT engine (configs.diffusion.COMPILED_DENOISER_FRACTION, fitted on these two; audit ZN33).
    *(PublishedSpeed(f"streamdiffusion-4090-{name}-{steps}-step", f"{STREAMDIFFUSION}: {label}, {steps} denoising "
                     f"step(s), {rate} images/s txt2img", rate, functools.partial(streamdiffusion_on_rtx_4090, steps),
                     fitted=True)
      for name, label, steps, rate in (("sd-turbo", "SD-turbo", 1, 106.16),
                                       ("lcm-lora-kohakuv2", "LCM-LoRA + KohakuV2", 4, 38.023))),
    # One step: the VAE decode is most of the image (SDXL's 70 blocks at 512 px, guidance off; its step waits on eager
    # Diffusers' ops, so its FLOPs, the 1024 px count over 4, do not decide it). One of the three rows the decode's
    # FP32 rate was read from (configs.diffusion.VAE_DECODE_FLOP_PER_PIXEL).
    PublishedSpeed("stability-sdxl-turbo-a100-512px-1-step", "stability.ai/news/stability-ai-sdxl-turbo: 'On an A100, "
                   "SDXL Turbo generates a 512x512 image in 207ms (prompt encoding + a single denoising step + "
                   "decoding, fp16), where 67ms are accounted for by a single UNet forward evaluation' (the text "
                   "encoders not counted here)", 0.207,
                   lambda: denoise_sdxl("a100-80gb-pcie", 1, {
                       **published_workloads.SDXL_BASE, "workload__sequence_length": 1024 + 77,
                       "workload__forward_gflops_per_sample": 6761.0 / 4,
                       "workload__classifier_free_guidance": False}, 512), fitted=True),
    PublishedSpeed("sana-readme-a100-sana-1600m-1024px", "github.com/NVlabs/Sana README, 'Performance' (1024x1024, "
                   "A100): Sana-1.6B latency 1.2 s", 1.2, lambda: denoise_sana("a100-80gb-sxm")),
    PublishedSpeed("xdit-hunyuanvideo-720p-1xh100", f"{XDIT_HUNYUAN}: 1 GPU, 1,904.08 s", 1904.08,
                   lambda: clip_on_h100s(1)),
    PublishedSpeed("xdit-hunyuanvideo-720p-2xh100-ulysses", f"{XDIT_HUNYUAN}: 2 GPUs, 925.04 s", 925.04,
                   lambda: clip_on_h100s(2)),
    PublishedSpeed("xdit-hunyuanvideo-720p-4xh100-ulysses", f"{XDIT_HUNYUAN}: 4 GPUs, 514.08 s", 514.08,
                   lambda: clip_on_h100s(4)),
    PublishedSpeed("xdit-hunyuanvideo-720p-8xh100-ulysses", f"{XDIT_HUNYUAN}: 8 GPUs, 337.58 s", 337.58,
                   lambda: clip_on_h100s(8), fitted=True),
    PublishedSpeed("step-video-t2v-4xh100-ulysses", "github.com/stepfun-ai/Step-Video-T2V README 4.1: 544x992, 204 "
                   "frames, 50 steps, 4 GPUs with --ulysses_degree 4 (flash-attn), 743 s a clip", 743.0,
                   lambda: clip_on_h100s(4, STEP_VIDEO)),
    PublishedSpeed("allegro-readme-h100-720p-88-frames-100-steps", f"{published_workloads.ALLEGRO_README}; 'Inference "
                   "time: 20 mins (single H100)' for 88 frames at 720p, 100 steps", 1200.0,
                   lambda: denoise_allegro("h100-80gb-sxm")),
    # --- llama.cpp --cpu-moe: the GPU's part at its bandwidth, the routed experts from RAM (configs.expert_offload) ---
    PublishedSpeed("llamacpp-15396-7900xt-5900x-gpt-oss-20b-cpu-moe", "github.com/ggml-org/llama.cpp/discussions/15396 "
                   "(an AMD user's reply, build 6194, ROCm 6.4.1): gpt-oss-20b with -cmoe on an RX 7900 XT beside a "
                   "Ryzen 9 5900X, 'dual-channel DDR4s @ 3200MHz', ~20 tokens/s (MXFP4, 4.25 bit: taken as Q4_0's "
                   "4.5)", 20.0, lambda: offloaded_decode("gpt-oss-20b", RX_7900_XT, 51.2, "gguf_q4_0"), fitted=True),
    PublishedSpeed("llmfit-778-2080-deepseek-coder-v2-lite-n-cpu-moe-16", f"{LLMFIT_2080.format(778)}: "
                   "DeepSeek-Coder-V2-Lite with --n-cpu-moe 16 (15 of its 26 MoE layers' experts in RAM: the first "
                   "layer is dense), 49.6 tokens/s", 49.6,
                   lambda: offloaded_decode(DEEPSEEK_CODER_V2_LITE, RTX_2080, I9_10900X_RAM_GB_PER_S, "gguf_q4_k_m",
                                            15 / 26)),
    PublishedSpeed("llmfit-775-2080-gpt-oss-20b-n-cpu-moe-12", f"{LLMFIT_2080.format(775)}: gpt-oss-20B (MXFP4, "
                   "taken as Q4_0's 4.5 bit) with --n-cpu-moe 12 (12 of 24 layers' experts in RAM), 36.4 tokens/s",
                   36.4, lambda: offloaded_decode("gpt-oss-20b", RTX_2080, I9_10900X_RAM_GB_PER_S, "gguf_q4_0", 0.5),
                   gap="the RAM's 0.55 was fitted on a desktop's two DDR4 channels; net of the GPU's part, this host's "
                       "four are read at ~0.33 of their 102 GB/s here, ~0.34 and ~0.48 in its two rows beside",
                   tolerance=0.45),
    PublishedSpeed("llmfit-755-2080-qwen3-30b-a3b-n-cpu-moe-36", f"{LLMFIT_2080.format(755)}: Qwen3-30B-A3B with "
                   "-ngl 99 --n-cpu-moe 36 (36 of 48 layers' experts in RAM), 'pure generation speed measured by the "
                   "server itself is 36.7 tok/s'", 36.7,
                   lambda: offloaded_decode("qwen3-30b-a3b", RTX_2080, I9_10900X_RAM_GB_PER_S, "gguf_q4_k_m", 0.75)),
    # --- a mixture of experts decoding on one H200 and over four (speed.MOE_LAYER_S) ---
    PublishedSpeed("sglang-h200-laguna-xs2-bf16-tp1-c1", f"{LAGUNA_SGLANG}: 1 x H200, mean TPOT 5.10 ms = 196 "
                   "tokens/s", 1 / 0.00510,
                   lambda: decode(LAGUNA_XS2, "bf16", "h200-141gb-sxm", 512, 1, engine="sglang",
                                  scenario="inference_server")["decode_tokens_per_s_per_stream"], fitted=True),
    PublishedSpeed("sglang-4xh200-laguna-xs2-bf16-tp4-c1", f"{LAGUNA_SGLANG}: 4 x H200, tensor parallel, mean TPOT "
                   "4.13 ms = 242 tokens/s (faster than one H200)", 1 / 0.00413,
                   lambda: decode(LAGUNA_XS2, "bf16", "h200-141gb-sxm", 512, 1, engine="sglang", gpus=4,
                                  scenario="inference_server")["decode_tokens_per_s_per_stream"]),
    # --- llama.cpp -ngl: the GPU's layers at its bandwidth, the CPU's and the output layer from RAM ---
    PublishedSpeed("llmfit-778-2080-qwen2.5-14b-ngl-42", f"{LLMFIT_2080.format(778)}: Qwen2.5-14B with -ngl 42 (6 of "
                   "48 layers and the output layer on the CPU), 20.8 tokens/s", 20.8,
                   lambda: partial_decode(QWEN25_14B, RTX_2080, I9_10900X_RAM_GB_PER_S, 6)),
    PublishedSpeed("llmfit-774-2080-qwen3-14b-ngl-32", f"{LLMFIT_2080.format(774)}: Qwen3-14B with -ngl 32 (8 of 40 "
                   "layers and the output layer on the CPU), 16.9 tokens/s", 16.9,
                   lambda: partial_decode(dataclasses.replace(QWEN3_14B, sequence_length=4096), RTX_2080,
                                          I9_10900X_RAM_GB_PER_S, 8)),
    PublishedSpeed("llmfit-775-2080-mistral-small-24b-ngl-16", f"{LLMFIT_2080.format(775)}: Mistral-Small-24B with "
                   "-ngl 16 (24 of 40 layers and the output layer on the CPU), 5.2 tokens/s", 5.2,
                   lambda: partial_decode(MISTRAL_SMALL_24B, RTX_2080, I9_10900X_RAM_GB_PER_S, 24),
                   gap="24 of 40 layers on the CPU: its part is ~90 % of the step, and this 10-core host reads its "
                       "four channels at ~0.45 of their 102 GB/s (net of the GPU's part here and in the --n-cpu-moe "
                       "rows), where the 0.8 was fitted on a desktop's two", tolerance=0.55),
    # --- an audio model's training (speed_notes.AUDIO_TRAINING_SHARE, fitted on the first; audit YO2) ---
    PublishedSpeed("dle-fastpitch-a100-amp-1gpu", f"{FASTPITCH}: 1 x A100 80GB, batch 32 x 8 accumulation, mixed "
                   "precision, 101,730 mel frames/s", 101_730, lambda: fastpitch_training(1), fitted=True),
    PublishedSpeed("dle-fastpitch-a100-amp-8gpu", f"{FASTPITCH}: 8 x A100 80GB, batch 32 a GPU, mixed precision, "
                   "623,498 mel frames/s (weak scaling 6.13, counted at ~8: +31 %)", 623_498,
                   lambda: fastpitch_training(8)),
    # --- a transformer over audio with a decoder (speed_notes.AUDIO_DECODER_TRAINING_SHARE, fitted on these four) ---
    *(PublishedSpeed(f"whisper-event-a100-40gb-{size}-bs{batch}", f"{published_workloads.WHISPER_EVENT}, A100 / "
                     f"40GB: {size}, batch {batch}, {s_per_it} s/it", batch / s_per_it,
                     functools.partial(whisper_event_samples_per_s, size, "a100-40gb-sxm", batch), fitted=True)
      for size, batch, s_per_it in (("small", 64, 2.3), ("medium", 64, 5.8), ("large", 32, 5.9))),
    # Audit BU55: a custom detector timed at the full canvas every image was 38 % slow (on the PCIe card).
    PublishedSpeed("sparse-rcnn-r50-fpn-3x-8xv100", "github.com/PeizeSun/SparseR-CNN README: R50_100pro_3x, '19h' on "
                   "8 V100s at batch 16 (MAX_ITER 270,000 x 16 = 4.32M images: ~63 images/s)", 4_320_000 / (19 * 3600),
                   sparse_rcnn_images_per_s),
    # Audit DF67: a DETR-family head's activations, 2.1x a detector's, timed through memory as its memory keeps them.
    PublishedSpeed("detr-r50-8xv100", "github.com/facebookresearch/detr README: 'A single epoch takes 28 minutes ... "
                   "on a single machine with 8 V100 cards' (COCO train2017's 118,287 images, 2 a GPU; 86 GFLOPs as "
                   "the paper counts multiply-adds: 172)", 118_287 / (28 * 60),
                   lambda: detr_images_per_s(41_300_000, 172.0)),
    PublishedSpeed("conditional-detr-r50-8xv100", "github.com/Atten4Vis/ConditionalDETR README: 50 epochs 'around 30 "
                   "hours on a single machine with 8 V100 cards' (90 GFLOPs: 180)", 118_287 * 50 / (30 * 3600),
                   lambda: detr_images_per_s(44_000_000, 180.0), tolerance=0.7,
                   gap="'around 30 hours'; its 300 queries (DETR's 100) and their focal loss through 6 decoder layers "
                       "are counted only in the head's 2.1x of the activations"),
    # Audit BL52: without the reference's forward it was 1.33x fast.
    PublishedSpeed("neuralhermes-2.5-mistral-7b-qlora-dpo-a100", "huggingface.co/mlabonne/NeuralHermes-2.5-Mistral-7B "
                   "model card: 'It required an A100 GPU for about an hour'; its notebook runs 200 steps of 16 pairs "
                   "(32 sequences) at max_length 1,536: 9.83M tokens at most in ~3,600 s", 9_830_400 / 3600,
                   neuralhermes_dpo_tokens_per_s, gap="'about an hour' and its tokens padded to each batch's longest, "
                   "not always 1,536"),
    PublishedSpeed("speechbrain-librispeech-transformer-4xv100", "speechbrain/speechbrain recipes/LibriSpeech/ASR/"
                   "transformer/README.md (commit 5796c889): 'about 1 hour 35 minutes for each epoch on 4 NVDIA V100 "
                   "(32GB)', LibriSpeech 960 h's 281,241 utterances", 281_241 / 5700,
                   speechbrain_transformer_utterances_per_s, fitted=True),
    *(PublishedSpeed(f"whisper-event-v100-16gb-{size}-bs{batch}", f"{published_workloads.WHISPER_EVENT}, V100 / "
                     f"16 GB: {size}, batch {batch}, {s_per_it} s/it", batch / s_per_it,
                     functools.partial(whisper_event_samples_per_s, size, "v100-16gb-sxm2", batch),
                     xfail=V100_WHISPER_GAP)
      for size, batch, s_per_it in (("small", 32, 1.3), ("medium", 16, 2.0), ("large", 8, 3.8))),
    # --- a speech recogniser's bound a GPU (speed_notes.ASR_ENCODER_FRAMES_PER_S_PER_GPU, the first two; AQ45) ---
    PublishedSpeed("espnet-ls-e-branchformer-8xa100", ESPNET_LS.format(
        "train_asr_e_branchformer", "\"Trained with A100 (40 GB) x 8 GPUs. It takes 40 minutes per epoch.\"; "
        "17 E-Branchformer blocks (cgMLP 3,072), 148.92M parameters, batch_bins 140M"), 843_723 / (40 * 60),
                   lambda: espnet_asr_utterances_per_s("a100-40gb-sxm", 8, 148_920_000, 23, 3072, 704, 1),
                   fitted=True),
    PublishedSpeed("espnet-ls-branchformer-4xa6000", ESPNET_LS.format(
        "train_asr_branchformer_hop_length160_e18_linear3072", "\"Trained with A6000 (48 GB) x 4 GPUs. It takes 100 "
        "minutes per epoch.\"; 18 Branchformer blocks, ~116M parameters, batch_bins 35M x accum_grad 4"),
                   843_723 / (100 * 60),
                   lambda: espnet_asr_utterances_per_s("rtx-a6000-48gb", 4, 116_200_000, 24, 3072, 712, 4),
                   fitted=True),
    PublishedSpeed("espnet-ls-conformer-4xv100", ESPNET_LS.format(
        "train_asr_conformer10_hop_length160", "\"Trained with Tesla V100 (32GB) x 4 GPUs. It takes about 3.5 "
        "days.\" for max_epoch 50; 12 Conformer blocks (FFN 2,048), ~116M parameters, batch_bins 35M x accum_grad 4"),
                   843_723 * 50 / (3.5 * 86400),
                   lambda: espnet_asr_utterances_per_s("v100-32gb-sxm2", 4, 116_150_000, 18, 2048, 712, 4)),
    # --- a ViT encoder with window attention (audit YL2) ---
    PublishedSpeed("sam-fast-a100-vit-h-bf16-bs8", "pytorch-labs/segment-anything-fast experiments/p4d_results/"
                   "results_bs8_vit_h.csv: SAM ViT-H, bf16 eager, batch 8 on an A100 40GB (p4d), 14.85 img/s",
                   14.85, lambda: sam_vit_h_inference("bf16")),
    # --- a plain ViT's large batch by its work, not its image count; a windowed one keeps the eager share (ZA39) ---
    PublishedSpeed("timm-4090-dinov2-vit-l14-518-bs384", f"{TIMM_4090_PT240}: vit_large_patch14_dinov2 at 518 px, "
                   "batch 384, 108.27 img/s", 108.27,
                   lambda: timm_vit_inference(304_370_000, 24, 1024, 16, 4096, False, 1370, 384)),
    PublishedSpeed("timm-4090-dinov2-vit-g14-518-bs128", f"{TIMM_4090_PT240}: vit_giant_patch14_dinov2 at 518 px, "
                   "batch 128, 33.11 img/s", 33.11,
                   lambda: timm_vit_inference(1_136_480_000, 40, 1536, 24, 4096, True, 1370, 128)),
    PublishedSpeed("timm-4090-samvit-huge-1024-bs6", f"{TIMM_4090_PT240}: samvit_huge_patch16 at 1,024 px, batch 6, "
                   "9.99 img/s", 9.99,
                   lambda: timm_vit_inference(637_030_000, 32, 1280, 16, 5120, False, 4096, 6, windowed=28)),
    # --- a CNN on a desktop CPU in ONNX Runtime (speed_cpu.CPU_CNN_FRACTION, these RTMPose rows' median; XZ13) ---
    *(PublishedSpeed(f"rtmpose-{name}-i7-11700-ort", f"{RTMPOSE_CPU}: RTMPose-{name}, {ms} ms ({gflops} GFLOP, twice "
                     "mmpose's multiply-adds)", 1000 / ms, functools.partial(cpu_cnn_inference, gflops, 8, 4.9),
                     fitted=True, **({"gap": "a net under 1 GFLOP waits on ONNX Runtime's per-operator cost: +50 %",
                                      "tolerance": 0.55} if gflops < 1 else {}))
      for name, ms, gflops in (("t-256x192", 3.20, 0.72), ("s-256x192", 4.48, 1.36), ("m-256x192", 11.06, 3.86),
                               ("l-256x192", 18.85, 8.32), ("m-384x288", 24.78, 8.66))),
    PublishedSpeed("ispcojp-i9-10900x-resnet18-ort", ISPCOJP.format("Intel_i9-10900X.md", "resnet18", 5.935) +
                   " (10 cores, 4.7 GHz boost; 3.64 GFLOP)", 1000 / 5.935,
                   lambda: cpu_cnn_inference(3.64, 10, 4.7)),
    PublishedSpeed("ispcojp-i9-10900x-vgg13-ort", ISPCOJP.format("Intel_i9-10900X.md", "vgg13", 39.957) +
                   " (22.6 GFLOP)", 1000 / 39.957, lambda: cpu_cnn_inference(22.6, 10, 4.7)),
    *(PublishedSpeed(f"ispcojp-ultra7-265kf-{model}-ort", ISPCOJP.format("Intel_CoreUltra7_265KF.md", model, ms) +
                     f" (8 P-cores at 5.4 GHz, 12 E-cores at 4.6; {gflops} GFLOP)", 1000 / ms,
                     functools.partial(cpu_cnn_inference, gflops, 20, 5.4, efficiency_cores_count=12,
                                       efficiency_boost_clock_ghz=4.6, efficiency_core_vector_ratio=0.5),
                     xfail=ARROW_LAKE_GAP)
      for model, ms, gflops in (("resnet18", 2.797, 3.64), ("vgg13", 20.248, 22.6))),
    # --- CPU prefill, compute-bound (the FLOP-a-cycle constant is these three rows' median) ---
    PublishedSpeed("normiebench-i5-9500-llama31-8b-pp512", f"{NORMIEBENCH.format(34)}: Core i5-9500 (6 cores, "
                   "4.4 GHz boost), pp512 35.43 tokens/s", 35.43, lambda: cpu_prefill(6, 4.4), fitted=True),
    PublishedSpeed("normiebench-i7-7820hq-llama31-8b-pp512", f"{NORMIEBENCH.format(42)}: Core i7-7820HQ (4 cores, "
                   "3.9 GHz boost), pp512 22.53 tokens/s", 22.53, lambda: cpu_prefill(4, 3.9), fitted=True),
    PublishedSpeed("normiebench-tr3970x-llama31-8b-pp512", f"{NORMIEBENCH.format(52)}: Threadripper 3970X (32 "
                   "cores, 4.5 GHz boost, overclocked), pp512 155.5 tokens/s", 155.5, lambda: cpu_prefill(32, 4.5),
                   fitted=True),
    PublishedSpeed("normiebench-i5-1135g7-llama31-8b-pp512", f"{NORMIEBENCH.format(46)}: Core i5-1135G7 (4 cores, "
                   "4.2 GHz boost), pp512 25.52 tokens/s", 25.52, lambda: cpu_prefill(4, 4.2)),
    PublishedSpeed("normiebench-n100-llama31-8b-pp512", f"{NORMIEBENCH.format(38)}: Intel N100 (4 Gracemont E-cores, "
                   "3.4 GHz boost, no P-core), pp512 6.53 tokens/s", 6.53,
                   lambda: cpu_prefill(4, 3.4, efficiency_cores_count=4, efficiency_boost_clock_ghz=3.4,
                                       efficiency_core_vector_ratio=0.5),
                   gap="a 6 W part in a fanless mini PC: its four cores hold well under the 3.4 GHz boost together",
                   tolerance=0.45),
    PublishedSpeed("normiebench-i7-8550u-llama31-8b-pp512", f"{NORMIEBENCH.format(43)}: Core i7-8550U (4 cores, "
                   "4.0 GHz boost), pp512 14.37 tokens/s", 14.37, lambda: cpu_prefill(4, 4.0),
                   gap="a 15 W laptop part: its four cores together run well under the 4.0 GHz one-core boost",
                   tolerance=0.6),
)


def relative_error(case: PublishedSpeed) -> float:
    """(predicted - published) / published."""
    return (case.predict() - case.published) / case.published
