"""Published throughput figures and the speed prediction's figure for the same setting.

Each case names its source (URL and what the figure is). The prediction must be within 35 %, or the case
says why the gap is larger (`gap`) and how much it allows. GPUs in the shipped catalog are read from it (the
same path a build takes); others are given their datasheet figures here.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pth_top.configs import speed as sp
from pth_top.configs import speed_build
from pth_top.configs.answer_types import Data, Scale, Task, Workload
from pth_top.configs.answers import Answers
from pth_top.configs.memory import ModelShape
from pth_top.configs.parts import load_catalog
from pth_top.configs.presets import model_shape

TOLERANCE = 0.35


@dataclass(frozen=True)
class PublishedSpeed:
    id: str
    source: str  # URL, and what the figure is
    published: float
    predict: Callable[[], float]
    gap: str = ""  # why the prediction may be further off than TOLERANCE
    tolerance: float = TOLERANCE


@functools.cache
def _catalog():
    return load_catalog(Path("/nonexistent-user-catalog"))


def catalog_gpu(part_id: str, answers: Answers, count: int = 1) -> sp.Device:
    part = _catalog().get(part_id)
    assert part is not None, part_id
    kind = model_shape(answers.workload)[0].kind
    return speed_build.device_for(dict(part.spec), part.name, count, answers, kind, None)


def shape(preset: str, sequence_length: int) -> ModelShape:
    base = model_shape(Workload(preset=preset))[0]
    return dataclasses.replace(base, sequence_length=sequence_length, max_context_tokens=0)


def decode(model: ModelShape, precision: str, device: sp.Device | str, generated: int = 128, batch: int = 1,
           preset: str = "custom") -> dict[str, float]:
    answers = Answers(workload=Workload(preset=preset, batch_size=batch),
                      task=Task(mode="inference", precision=precision, generated_tokens=generated))
    gpu = catalog_gpu(device, answers) if isinstance(device, str) else device
    return speed_build.inference(answers, model, gpu).figures


def train(preset: str, sequence_length: int, part_id: str, *, batch: int, gpus: int = 1, precision: str = "bf16",
          method: str = "full", recompute: str = "none", accumulation: int = 1, data: str = "text") -> float:
    answers = Answers(workload=Workload(preset=preset, batch_size=batch),
                      task=Task(mode="training", precision=precision, method=method, recompute=recompute,
                                accumulation_steps=accumulation, lora_targets="attention"),
                      scale=Scale(gpu_count=gpus), data=Data(kind=data))
    model = model_shape(answers.workload)[0]
    if model.kind == "transformer":
        model = dataclasses.replace(model, sequence_length=sequence_length)
    figures = speed_build.training(answers, model, catalog_gpu(part_id, answers, gpus), 31.5).figures
    return figures.get("training_tokens_per_s") or figures["training_samples_per_s"]


def resnet50_inference(part_id: str, batch: int) -> float:
    answers = Answers(workload=Workload(preset="resnet50", batch_size=batch), task=Task(mode="inference",
                                                                                        precision="fp16"))
    model = model_shape(answers.workload)[0]
    return speed_build.inference(answers, model, catalog_gpu(part_id, answers)).figures["samples_per_s"]


# Tesla P40 (not in the catalog): 347 GB/s, 11.76 TFLOP/s FP32, no tensor cores (NVIDIA P40 datasheet).
P40 = sp.Device("Tesla P40", 1, 347, 11.76, "FP32", tensor=False)
# RTX 3090 Ti (not in the catalog): 1008 GB/s, 80 TFLOP/s FP16 tensor with FP32 accumulate (Ampere whitepaper).
RTX_3090_TI = sp.Device("RTX 3090 Ti", 1, 1008, 80.0, "dense FP16 tensor", tensor=True)
# Qwen2.5-Coder-3B (huggingface.co/Qwen/Qwen2.5-Coder-3B config.json: 36 layers, hidden 2048, 16 heads, 2 KV
# heads, SwiGLU 11008, vocabulary 151,936); 3.40B parameters as llama-bench counts them.
QWEN_3B = ModelShape("transformer", 3_400_000_000, layers=36, hidden_size=2048, attention_heads=16, kv_heads=2,
                     sequence_length=512, intermediate_size=11008, gated_mlp=True, vocabulary_size=151_936)
LLM_PERF_BENCH = "github.com/mlc-ai/llm-perf-bench/pull/1 (README: tokens/s decoding, 4-bit weights)"
DLE_RN50 = ("github.com/NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md, "
            "pytorch-21.03 NGC container")
TORCHTUNE = ("github.com/pytorch/torchtune README 'Memory and training speed' (batch 2, packed to 2048 tokens, "
             "compile on; the 8B single-device recipes enable activation checkpointing)")
TORCHTUNE_OUTLIER = ("the published rate implies more hardware FLOP/s than the card has at the recipe's activation "
                     "checkpointing (peak memory shows it on; > 85 % of the dense BF16 peak, which no other source "
                     "reaches): the table's tokens are counted in some way the README does not say")


CASES: tuple[PublishedSpeed, ...] = (
    # --- decode (memory-bandwidth bound) ---
    PublishedSpeed("llamacpp-p40-llama7b-q4_0-tg128",
                   "github.com/ggml-org/llama.cpp/pull/4766: Tesla P40, llama 7B Q4_0, tg128 56.79 tokens/s",
                   56.79, lambda: decode(shape("llama-7b", 1), "int4", P40)["decode_tokens_per_s_per_stream"]),
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
    # --- prefill (first token) ---
    PublishedSpeed("llamacpp-4090-qwen2-3b-q4_0-pp512",
                   "github.com/ggml-org/llama.cpp/pull/12183: RTX 4090, qwen2 3B Q4_0, pp512 18,155 tokens/s, i.e. "
                   "a 512-token prompt in 512/18155 s", 512 / 18155.22,
                   lambda: decode(QWEN_3B, "int4", "rtx-4090-24gb")["first_token_s"]),
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
    # --- CNN training and inference ---
    PublishedSpeed("dle-rn50-a100-amp", f"{DLE_RN50}: 1x A100 80GB, mixed precision, 2,470 img/s", 2470,
                   lambda: train("resnet50", 0, "a100-80gb-sxm", batch=256, precision="amp_fp16", data="images")),
    PublishedSpeed("dle-rn50-a100-tf32", f"{DLE_RN50}: 1x A100 80GB, TF32, 938 img/s", 938,
                   lambda: train("resnet50", 0, "a100-80gb-sxm", batch=256, precision="fp32", data="images")),
    PublishedSpeed("dle-rn50-8xa100-amp", f"{DLE_RN50}: 8x A100 80GB (DGX A100), mixed precision, 16,621 img/s",
                   16621, lambda: train("resnet50", 0, "a100-80gb-sxm", batch=2048, gpus=8, precision="amp_fp16",
                                        data="images")),
    PublishedSpeed("dle-rn50-v100-amp", f"{DLE_RN50}: 1x V100 16GB (DGX-1), mixed precision, 1,200 img/s", 1200,
                   lambda: train("resnet50", 0, "v100-16gb-sxm2", batch=256, precision="amp_fp16", data="images")),
    PublishedSpeed("dle-rn50-v100-fp32", f"{DLE_RN50}: 1x V100 16GB (DGX-1), FP32, 367 img/s", 367,
                   lambda: train("resnet50", 0, "v100-16gb-sxm2", batch=256, precision="fp32", data="images")),
    PublishedSpeed("dle-rn50-8xv100-amp", f"{DLE_RN50}: 8x V100 16GB (DGX-1), mixed precision, 8,322 img/s", 8322,
                   lambda: train("resnet50", 0, "v100-16gb-sxm2", batch=2048, gpus=8, precision="amp_fp16",
                                 data="images")),
    PublishedSpeed("dle-rn50-v100-inference-amp", f"{DLE_RN50}: V100 16GB inference, mixed precision, batch 256, "
                   "3,382 img/s", 3382, lambda: resnet50_inference("v100-16gb-sxm2", 256)),
    PublishedSpeed("dle-rn50-t4-inference-amp", f"{DLE_RN50}: T4 inference, mixed precision, batch 256, "
                   "1,198 img/s", 1198, lambda: resnet50_inference("t4-16gb", 256)),
)


def relative_error(case: PublishedSpeed) -> float:
    """(predicted - published) / published."""
    return (case.predict() - case.published) / case.published
