"""Published memory figures and the estimator's figure for the same setting (bytes, or a count).

Each case names its source (title and URL or arXiv id). `about`: the estimate must be within 15 %;
`at_most`: the published setting runs on that much memory, so the estimate must not exceed it (and not
be below half of it); `at_least`: the published figure is a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from pth_top.configs.answer_types import Task, Workload
from pth_top.configs.answers import Answers
from pth_top.configs.memory import estimate_memory, estimate_training
from pth_top.configs.memory_inference import estimate_inference
from pth_top.configs.memory_methods import AdaptedMatrix, deepspeed_fp32_gradient_bytes, lora_parameters
from pth_top.configs.memory_terms import ModelShape, kv_cache_bytes, transformer_activation_bytes
from pth_top.configs.presets import model_shape
from pth_top.units import GIB, MIB

GB = 1e9


@dataclass(frozen=True)
class PublishedCase:
    id: str
    source: str
    published: float
    estimate: Callable[[], float]
    kind: str = "about"  # "about", "at_most" or "at_least"


def preset(name: str) -> ModelShape:
    return model_shape(Workload(preset=name))[0]


def states(breakdown) -> int:
    return breakdown.weights_bytes + breakdown.gradients_bytes + breakdown.optimizer_states_bytes


def wizard(preset_name: str, batch: int, **task) -> float:
    answers = Answers(workload=Workload(preset=preset_name, batch_size=batch), task=Task(**task))
    return estimate_memory(answers, preset(preset_name)).total_bytes


def allocated(preset_name: str, batch: int, **task) -> float:
    """What torch.cuda.max_memory_allocated counts: the estimate without the CUDA context."""
    answers = Answers(workload=Workload(preset=preset_name, batch_size=batch), task=Task(**task))
    return estimate_memory(answers, preset(preset_name), cuda_context_bytes=0).total_bytes


# ZeRO (Rajbhandari et al. 2019, arXiv:1910.02054), Figure 1: 7.5B params, 64 GPUs, K = 12 (16 B/param).
SEVEN_POINT_FIVE_B = ModelShape("generic", 7_500_000_000)


def zero(stage: str) -> float:
    """The paper's model states (2 + 2 + 12 B a parameter, divided as the stage divides them): the fp32 gradients
    DeepSpeed's optimizer step casts (memory_methods.deepspeed_fp32_gradient_bytes) and its gradient buckets are not
    among them."""
    buffer, _ = deepspeed_fp32_gradient_bytes(stage, SEVEN_POINT_FIVE_B.parameters, 64, "bf16", "megatron16")
    return states(estimate_training(SEVEN_POINT_FIVE_B, precision="bf16", optimizer="adam", global_batch=64,
                                    gpu_count=64, sharding=stage, cuda_context_bytes=0,
                                    reduce_bucket_elements=0)) - buffer


# LLaMA 65B (Touvron et al. 2023, arXiv:2302.13971, Table 2: dim 8192, 64 heads, 80 layers; 65.2B params in
# the released checkpoint); MLP 22016 (the released params.json, SwiGLU).
LLAMA_65B = ModelShape("transformer", 65_200_000_000, layers=80, hidden_size=8192, attention_heads=64,
                       sequence_length=512, intermediate_size=22016, gated_mlp=True, vocabulary_size=32000)
# GPT-3 175B (Brown et al. 2020, arXiv:2005.14165, Table 2.1: 96 layers, d_model 12288, 96 heads).
GPT3 = ModelShape("transformer", 175_000_000_000, layers=96, hidden_size=12288, attention_heads=96,
                  sequence_length=2048)
# T5 encoder-decoder with LoRA on q and v: encoder self-attention, decoder self- and cross-attention.
T5_QV_MATRICES = 2 + 4  # per encoder + decoder layer pair


def t5_lora_parameters(d_model: int, layers: int, rank: int) -> int:
    matrices = tuple(AdaptedMatrix("qv", d_model, d_model) for _ in range(T5_QV_MATRICES))
    return lora_parameters(matrices, rank, layers)


# Qwen-7B (huggingface.co/Qwen/Qwen-7B config.json): 32 layers, hidden 4096, 32 heads, SwiGLU MLP of 22016 / 2 =
# 11008, vocabulary 151,936, embedding and LM head untied; 7.72B parameters counted from those.
QWEN_7B_PARAMETERS = 2 * 151_936 * 4096 + 32 * (4096 * 12288 + 12288 + 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096) + 4096


def qwen_7b_lora(sequence_length: int) -> float:
    """Qwen's finetune.py LoRA: r 64 on every linear layer, bf16, gradient checkpointing, batch 1, flash attention."""
    shape = ModelShape("transformer", QWEN_7B_PARAMETERS, layers=32, hidden_size=4096, attention_heads=32,
                       sequence_length=sequence_length, intermediate_size=11008, gated_mlp=True,
                       vocabulary_size=151_936)
    return estimate_training(shape, precision="bf16", optimizer="adamw", global_batch=1, method="lora",
                             lora_rank=64, lora_targets="all_linear", recompute="full").total_bytes


def llama2_13b_weights(quantization: str) -> float:
    return estimate_inference(preset("llama-13b"), precision="int4", batch=1, quantization=quantization).weights_bytes


# Qwen/Qwen2.5-72B-Instruct config.json: 80 layers, hidden 8192, 64 heads, 8 KV heads, SwiGLU 29,568, V 152,064.
QWEN25_72B = ModelShape("transformer", 72_706_203_648, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                        intermediate_size=29568, gated_mlp=True, vocabulary_size=152064)


def t0_3b_offload():
    """The estimator's model states: DeepSpeed's gradient buckets (memory_methods.deepspeed_bucket_bytes) left out."""
    return estimate_training(ModelShape("generic", 2_851_000_000), precision="amp_fp16", optimizer="adam",
                             global_batch=8, gpu_count=8, sharding="zero_offload", cuda_context_bytes=0,
                             reduce_bucket_elements=0)


def qlora_65b() -> float:
    return estimate_training(LLAMA_65B, precision="bf16", optimizer="adamw", global_batch=1, method="qlora",
                             lora_rank=64, lora_targets="all_linear", recompute="full").total_bytes


PHI3_MINI = ModelShape("transformer", 3_821_079_552, layers=32, hidden_size=3072, attention_heads=32, kv_heads=32,
                       sequence_length=512, intermediate_size=8192, gated_mlp=True, vocabulary_size=32064)


def phi3_mini_lora() -> float:
    answers = Answers(workload=Workload(batch_size=8), task=Task(
        precision="bf16", method="lora", lora_rank=8, lora_targets="all_linear", lora_dropout=0.05,
        accumulation_steps=2, recompute="none", training_stack="torchtune"))
    return estimate_memory(answers, PHI3_MINI).total_bytes


# Qwen2 (huggingface.co/Qwen/Qwen2-0.5B-Instruct, Qwen2-7B-Instruct config.json: 24 layers of 896, 14 heads, 2 KV heads,
# SwiGLU 4864, V 151,936, tied; 28 layers of 3584, 28 heads, 4 KV heads, SwiGLU 18944, V 152,064) and Qwen1.5-32B (64
# layers of 5120, 40 heads, 8 KV heads, SwiGLU 27392, V 152,064).
QWEN2_05B = ModelShape("transformer", 494_032_768, layers=24, hidden_size=896, attention_heads=14, kv_heads=2,
                       sequence_length=1, intermediate_size=4864, gated_mlp=True, vocabulary_size=151_936,
                       tied_embeddings=True)
QWEN2_7B = ModelShape("transformer", 7_615_616_512, layers=28, hidden_size=3584, attention_heads=28, kv_heads=4,
                      sequence_length=1, intermediate_size=18944, gated_mlp=True, vocabulary_size=152_064)
QWEN15_32B = ModelShape("transformer", 32_512_218_112, layers=64, hidden_size=5120, attention_heads=40, kv_heads=8,
                        sequence_length=1, intermediate_size=27392, gated_mlp=True, vocabulary_size=152_064)


def generate_2024(model: ModelShape, prompt: int) -> float:
    """generate()'s peak under transformers 4.38 (bf16, batch 1, 2,048 tokens generated): torch's allocated bytes,
    no CUDA context."""
    return estimate_inference(replace(model, sequence_length=prompt), precision="bf16", batch=1, generated_tokens=2048,
                              cuda_context_bytes=0, full_prompt_logits=True).total_bytes


CASES: tuple[PublishedCase, ...] = (
    # Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", arXiv:1910.02054,
    # Figure 1: 7.5B params on 64 GPUs: baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB per GPU.
    PublishedCase("zero-7.5b-baseline", "arXiv:1910.02054 Fig. 1", 120 * GB, lambda: zero("none")),
    PublishedCase("zero-7.5b-stage1", "arXiv:1910.02054 Fig. 1", 31.4 * GB, lambda: zero("zero1")),
    PublishedCase("zero-7.5b-stage2", "arXiv:1910.02054 Fig. 1", 16.6 * GB, lambda: zero("zero2")),
    PublishedCase("zero-7.5b-stage3", "arXiv:1910.02054 Fig. 1", 1.9 * GB, lambda: zero("zero3")),
    # Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", arXiv:2106.09685, §4.2: on GPT-3 175B,
    # training VRAM drops to 350 GB, and r = 4 on W_q, W_v shrinks the checkpoint from 350 GB to 35 MB.
    PublishedCase("lora-gpt3-175b-vram", "arXiv:2106.09685 §4.2", 350 * GB,
                  lambda: states(estimate_training(GPT3, precision="bf16", optimizer="adam", global_batch=1,
                                                   method="lora", lora_rank=4, cuda_context_bytes=0))),
    # Dettmers et al., "QLoRA: Efficient Finetuning of Quantized LLMs", arXiv:2305.14314, abstract: a 65B model
    # is fine-tuned on a single 48 GB GPU (Guanaco: r 64 on all linear layers, §5 / Appendix B), where 16-bit
    # full fine-tuning needs more than 780 GB.
    PublishedCase("qlora-65b-one-48gb-gpu", "arXiv:2305.14314 abstract", 48 * GB, qlora_65b, "at_most"),
    PublishedCase("full-16bit-65b-over-780gb", "arXiv:2305.14314 §1", 780 * GB,
                  lambda: states(estimate_training(LLAMA_65B, precision="bf16", optimizer="adamw", global_batch=1,
                                                   cuda_context_bytes=0)), "at_least"),
    # Hugging Face PEFT README (https://github.com/huggingface/peft, "Quickstart"): bigscience/mt0-large with
    # LoRA r 8 on q and v: "trainable params: 2359296". mt0-large: d_model 1024, 24 + 24 layers.
    PublishedCase("peft-mt0-large-trainable", "github.com/huggingface/peft README", 2_359_296,
                  lambda: t5_lora_parameters(1024, 24, 8)),
    # Same README, table "GPU memory required ... Single A100 80GB": T0_3B (3B params) full fine-tuning
    # 47.14 GB GPU (fp32, accelerate mixed_precision 'no'); states dominate (activations not given).
    PublishedCase("peft-t0-3b-full-finetune", "github.com/huggingface/peft README", 47.14 * GB,
                  lambda: estimate_training(ModelShape("generic", 3_000_000_000), precision="fp32", optimizer="adamw",
                                            global_batch=1).total_bytes),
    # DeepSpeed's estimator, deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs
    # (https://github.com/microsoft/DeepSpeed), cpu_offload=True, for bigscience/T0_3B (2851M params) on one node
    # of 8 GPUs: gpu = 2P bytes, cpu = P x max(4 x 8, 16) x 1.5.
    PublishedCase("deepspeed-zero2-offload-gpu", "DeepSpeed estimate_zero2_model_states_mem_needs", 2 * 2851e6,
                  lambda: states(t0_3b_offload())),
    PublishedCase("deepspeed-zero2-offload-cpu", "DeepSpeed estimate_zero2_model_states_mem_needs",
                  2851e6 * 32 * 1.5, lambda: t0_3b_offload().host_offload_bytes),
    # HF accelerate "Model memory estimator" (https://huggingface.co/docs/accelerate/usage_guides/model_size_estimator):
    # bert-base-cased float32 413.18 MB, training with Adam 1.61 GB.
    PublishedCase("accelerate-bert-base-fp32", "HF accelerate model_size_estimator", 413.18 * MIB,
                  lambda: estimate_inference(ModelShape("generic", 108_310_272), precision="fp32",
                                             batch=1).weights_bytes),
    PublishedCase("accelerate-bert-base-adam", "HF accelerate model_size_estimator", 1.61 * GIB,
                  lambda: states(estimate_training(ModelShape("generic", 108_310_272), precision="fp32",
                                                   optimizer="adam", global_batch=1, cuda_context_bytes=0))),
    # Kwon et al., "Efficient Memory Management for LLM Serving with PagedAttention" (vLLM), arXiv:2309.06180,
    # §3: OPT-13B (40 layers, hidden 5120) needs 800 KB of KV cache per token, up to 1.6 GB for 2048 tokens.
    PublishedCase("vllm-opt13b-kv-per-token", "arXiv:2309.06180 §3", 800e3,
                  lambda: kv_cache_bytes(ModelShape("transformer", 13_000_000_000, layers=40, hidden_size=5120,
                                                    attention_heads=40), 1, 1, 2.0)),
    PublishedCase("vllm-opt13b-kv-2048", "arXiv:2309.06180 §3", 1.6 * GB,
                  lambda: kv_cache_bytes(ModelShape("transformer", 13_000_000_000, layers=40, hidden_size=5120,
                                                    attention_heads=40), 1, 2048, 2.0)),
    # NVIDIA technical blog "Mastering LLM Techniques: Inference Optimization" (2023,
    # https://developer.nvidia.com/blog/mastering-llm-techniques-inference-optimization/): Llama 2 7B, batch 1,
    # 4096 tokens, fp16: KV cache ~2 GB.
    PublishedCase("nvidia-llama2-7b-kv-4096", "NVIDIA Mastering LLM Techniques", 2 * GIB,
                  lambda: estimate_inference(preset("llama-7b"), precision="fp16", batch=1).kv_cache_bytes),
    # Model repositories' weight files (bf16/fp16 safetensors, "Files and versions"): meta-llama/Llama-2-7b-hf
    # 9.98 + 3.50 GB, mistralai/Mistral-7B-v0.1 9.94 + 4.54 GB, meta-llama/Meta-Llama-3-8B 4.98 + 5.00 + 4.92
    # + 1.17 GB.
    PublishedCase("llama2-7b-weights", "huggingface.co/meta-llama/Llama-2-7b-hf", 13.48 * GB,
                  lambda: estimate_inference(preset("llama-7b"), precision="fp16", batch=1).weights_bytes),
    PublishedCase("mistral-7b-weights", "huggingface.co/mistralai/Mistral-7B-v0.1", 14.48 * GB,
                  lambda: estimate_inference(preset("mistral-7b"), precision="bf16", batch=1).weights_bytes),
    PublishedCase("llama3-8b-weights", "huggingface.co/meta-llama/Meta-Llama-3-8B", 16.07 * GB,
                  lambda: estimate_inference(preset("llama3-8b"), precision="bf16", batch=1).weights_bytes),
    # Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", arXiv:2205.05198, as
    # worked in EleutherAI "Transformer Math 101" (https://blog.eleuther.ai/transformer-math/): GPT-2 small,
    # s 1024, b 8: ~8 GiB without recompute (no flash), ~2.4 GiB with selective recompute.
    PublishedCase("korthikanti-gpt2-small-none", "arXiv:2205.05198", 8 * GIB,
                  lambda: transformer_activation_bytes(preset("gpt2-small"), 8, "none", False)),
    PublishedCase("korthikanti-gpt2-small-selective", "arXiv:2205.05198", 2.4 * GIB,
                  lambda: transformer_activation_bytes(preset("gpt2-small"), 8, "selective", False)),
    # NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets/configs.yml
    # (https://github.com/NVIDIA/DeepLearningExamples): ResNet-50 batch 256 per GPU with AMP and 112 in FP32 on
    # DGX-1V (V100 16 GB); 256 AMP and 128 FP32 on T4 (16 GB, 15 GiB usable).
    PublishedCase("nvidia-resnet50-amp-256-16gb", "NVIDIA DeepLearningExamples configs.yml", 15 * GIB,
                  lambda: wizard("resnet50", 256, precision="amp_fp16", optimizer="sgd"), "at_most"),
    PublishedCase("nvidia-resnet50-fp32-128-16gb", "NVIDIA DeepLearningExamples configs.yml", 15 * GIB,
                  lambda: wizard("resnet50", 128, precision="fp32", optimizer="sgd"), "at_most"),
    # detectron2 MODEL_ZOO.md (github.com/facebookresearch/detectron2), COCO R50-FPN baselines: "train mem (GB)",
    # torch.cuda.max_memory_allocated over the whole run, 2 images per V100, fp32, SGD momentum, shorter side 640-800
    # and longer at most 1333: Faster R-CNN 3.0 GB, RetinaNet 3.9 GB. The presets' counts are one 800 x 1333 batch
    # with three boxes (2.41 and 3.34 GB); their run_peak_ratio is fitted on these two rows to reach the run's peak,
    # so they check that the fit is applied, not the estimator. MMDetection's same recipe (R-50-FPN, pytorch style,
    # 1x, 2 images a GPU) peaks at 4.0 GB (configs/faster_rcnn/README.md, "Mem (GB)", max_memory_allocated): the
    # estimate stays under another implementation's peak.
    PublishedCase("detectron2-faster-rcnn-r50-fpn-train-mem", "detectron2 MODEL_ZOO.md", 3.0 * GB,
                  lambda: allocated("faster-rcnn-r50-fpn", 2, precision="fp32", optimizer="sgd")),
    PublishedCase("mmdetection-faster-rcnn-r50-fpn-train-mem", "open-mmlab/mmdetection configs/faster_rcnn README",
                  4.0 * GB, lambda: allocated("faster-rcnn-r50-fpn", 2, precision="fp32", optimizer="sgd"), "at_most"),
    PublishedCase("detectron2-retinanet-r50-fpn-train-mem", "detectron2 MODEL_ZOO.md", 3.9 * GB,
                  lambda: allocated("retinanet-r50-fpn", 2, precision="fp32", optimizer="sgd")),
    # Real 4-bit Llama 2 13B files (the weights an int4 box must hold): q4_0 7.32 GB and q4_K_M 7.87 GB
    # (huggingface.co/localmodels/Llama-2-13B-ggml README, "Provided files"); GPTQ 4-bit, group size 128,
    # 7.26 GB (huggingface.co/TheBloke/Llama-2-13B-GPTQ README, "Provided files", branch main).
    PublishedCase("llama2-13b-q4_0-file", "huggingface.co/localmodels/Llama-2-13B-ggml", 7.32 * GB,
                  lambda: llama2_13b_weights("gguf_q4_0")),
    PublishedCase("llama2-13b-q4_K_M-file", "huggingface.co/localmodels/Llama-2-13B-ggml", 7.87 * GB,
                  lambda: llama2_13b_weights("gguf_q4_k_m")),
    PublishedCase("llama2-13b-gptq-4bit-g128-file", "huggingface.co/TheBloke/Llama-2-13B-GPTQ", 7.26 * GB,
                  lambda: llama2_13b_weights("gptq_g128")),
    # bartowski's Qwen2.5-72B-Instruct-Q4_K_M.gguf is 47.42 GB (huggingface.co/bartowski/Qwen2.5-72B-Instruct-GGUF):
    # its ffn_down rows (29,568) are no multiple of 256, so llama.cpp stores them Q8_0/Q5_0, not Q6_K/Q4_K.
    PublishedCase("qwen25-72b-q4_K_M-file", "huggingface.co/bartowski/Qwen2.5-72B-Instruct-GGUF", 47.42 * GB,
                  lambda: estimate_inference(QWEN25_72B, precision="int4", batch=1,
                                             quantization="gguf_q4_k_m").weights_bytes),
    # Qwen README (https://github.com/QwenLM/Qwen, "Profiling of Memory and Speed"): Qwen-7B LoRA on one
    # A100-SXM4-80G, batch 1, flash attention 2, peak GPU memory by sequence length (finetune.py: r 64 on
    # c_attn, c_proj, w1, w2; finetune_lora_single_gpu.sh: bf16, gradient checkpointing).
    PublishedCase("qwen-7b-lora-seq-256", "github.com/QwenLM/Qwen README", 20.1 * GB, lambda: qwen_7b_lora(256)),
    PublishedCase("qwen-7b-lora-seq-2048", "github.com/QwenLM/Qwen README", 23.8 * GB, lambda: qwen_7b_lora(2048)),
    PublishedCase("qwen-7b-lora-seq-4096", "github.com/QwenLM/Qwen README", 29.7 * GB, lambda: qwen_7b_lora(4096)),
    PublishedCase("qwen-7b-lora-seq-8192", "github.com/QwenLM/Qwen README", 36.6 * GB, lambda: qwen_7b_lora(8192)),
    # LitGPT's config_hub/finetune/README.md table: phi-3/lora.yaml (Phi-3-mini-4k-instruct: 32 layers of 3072, 32
    # heads, SwiGLU 8192, V 32,064; bf16-true, r 8 on every linear, lora_dropout 0.05, micro-batch 4 at 512 tokens, no
    # checkpointing) peaks at 19.75 GB on one A10G; without the dropout's saved inputs it came out 15.2 GiB (audit LL).
    PublishedCase("litgpt-phi3-mini-lora-a10g", "github.com/Lightning-AI/litgpt config_hub/finetune/README.md",
                  19.75 * GB, lambda: phi3_mini_lora()),
    # Qwen2's speed benchmark (github.com/shadowboxx/Qwen2 docs/source/benchmark/speed_benchmark.rst: A100 80GB,
    # Transformers 4.38.2, batch 1, 2,048 tokens generated), "GPU Memory(GB)" in torch's GiB (Qwen2-7B's 15.23e9 B of
    # weights read 14.92 at input 1); Qwen1.5-32B-Chat from QwenLM/Qwen3#291 (A100-SXM4-80GB, Qwen's profile.py).
    PublishedCase("qwen2-0.5b-generate-2024-30720", "github.com/shadowboxx/Qwen2 speed_benchmark.rst", 27.61 * GIB,
                  lambda: generate_2024(QWEN2_05B, 30720)),
    PublishedCase("qwen2-7b-generate-2024-14336", "github.com/shadowboxx/Qwen2 speed_benchmark.rst", 27.71 * GIB,
                  lambda: generate_2024(QWEN2_7B, 14336)),
    PublishedCase("qwen2-7b-generate-2024-30720", "github.com/shadowboxx/Qwen2 speed_benchmark.rst", 42.62 * GIB,
                  lambda: generate_2024(QWEN2_7B, 30720)),
    PublishedCase("qwen15-32b-generate-2024-14336", "github.com/QwenLM/Qwen3/issues/291", 77.48 * GIB,
                  lambda: generate_2024(QWEN15_32B, 14336)),
)


def relative_error(case: PublishedCase) -> float:
    """(estimate - published) / published; for bounds, 0 when the bound holds."""
    estimate = case.estimate()
    error = (estimate - case.published) / case.published
    if case.kind == "at_most":
        return max(error, 0.0) if estimate >= 0.5 * case.published else error
    if case.kind == "at_least":
        return min(error, 0.0)
    return error
