"""The wizard's steps: what each asks, its help text, and the widget that shows it."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Select, Static

from pth_top.configs.answer_sections import MARKETS
from pth_top.configs.answers import SCENARIO_FIELD, SCENARIO_LABELS, SCENARIOS, Answers
from pth_top.configs.guide import cite_guide
from pth_top.configs.market import MARKET_NAMES
from pth_top.configs.memory_terms import INFERENCE_PRECISIONS, TRAINING_PRECISIONS
from pth_top.configs.presets import build_preset_paths, load_build_preset, model_presets
from pth_top.configs.stacks import SERVING_ENGINE_LABELS
from pth_top.tui.wizard.fields import FieldRow

NO_PRESET = "none"


@dataclass(frozen=True, slots=True)
class StepSpec:
    id: str
    title: str
    help: str
    fields: tuple[tuple[str, str, str], ...]  # (section, key, label)


STEPS: tuple[StepSpec, ...] = (
    StepSpec("scenario", "Scenario", (
        "What the machine is for. Or open one of the guide's example builds (§7) straight in the review step. "
        "Tab/Shift+Tab move between fields, Enter opens a list, Ctrl+N next, Ctrl+B back."
    ), (("answers", "scenario", "Scenario"),)),
    StepSpec("workload", "Workload", (
        "Pick a model preset, or 'custom' and give its numbers: a transformer's layers, hidden size, heads and "
        "sequence length (leave parameters at 0 to count them from the shape); a CNN's parameters and input "
        "size; a diffusion transformer (FLUX, SD3.5): also its denoising steps, s = latent + text tokens; an "
        "encoder-decoder (Whisper, T5): its decoder's layers (of L) and tokens, s the encoder's; an encoder "
        "(bge-m3, a reranker): encoder_only, nothing generated. "
        "Batch = global batch."
    ), (
        ("workload", "preset", "Model"), ("workload", "batch_size", "Batch size (global)"),
        ("workload", "kind", "Custom: kind"), ("workload", "parameters", "Custom: parameters"),
        ("workload", "layers", "Custom: layers L"), ("workload", "hidden_size", "Custom: hidden size h"),
        ("workload", "attention_heads", "Custom: attention heads a"),
        ("workload", "kv_heads", "Custom: KV heads (0 = a)"),
        ("workload", "head_dim", "Custom: head dim (0 = h/a)"),
        ("workload", "sliding_window_tokens", "Custom: attention window"),
        ("workload", "sliding_window_layers", "Custom: window layers"),
        ("workload", "linear_attention_layers", "Custom: linear-attention layers"),
        ("workload", "ssm_state_size", "Custom: Mamba state_size (0 = 128)"),
        ("workload", "sequence_length", "Sequence s (0 = model's)"),
        ("workload", "vocabulary_size", "Custom: vocabulary V"),
        ("workload", "tied_embeddings", "Custom: LM head tied to embedding"),
        ("workload", "intermediate_size", "Custom: MLP width (0 = 4h)"),
        ("workload", "active_parameters", "Custom: active (MoE, 0 = all)"),
        ("workload", "experts_count", "Custom: MoE experts a layer"),
        ("workload", "experts_per_token", "Custom: MoE experts a token"),
        ("workload", "denoising_steps", "Custom: diffusion steps (0: none)"),
        ("workload", "classifier_free_guidance", "Custom: diffusion CFG (x2)"),
        ("workload", "single_stream_dit", "Custom: single-stream DiT"),
        ("workload", "output_width_px", "Custom: diffusion output width px"),
        ("workload", "output_height_px", "Custom: diffusion output height px"),
        ("workload", "decoded_frames_at_once", "Custom: frames decoded at once"),
        ("workload", "decoder_layers", "Custom: decoder layers (enc-dec)"),
        ("workload", "decoder_sequence_length", "Custom: decoder tokens (enc-dec)"),
        ("workload", "encoder_only", "Custom: encoder (no generation)"),
        ("workload", "input_size_px", "CNN input px (0: the preset's)"),
        ("workload", "dense_head", "Custom CNN head (dense maps)"),
        ("workload", "forward_gflops_per_sample", "Custom: CNN GFLOPs/input (0: est.)"),
        ("workload", "frames_per_sample", "Video CNN: frames a clip"),
        ("workload", "weights_file_gb", "Quantized files GB (0: format's)"),
    )),
    StepSpec("task", "Task and precision", (
        "Training: optimizer states and gradients dominate (16 B/param for Adam in mixed precision); LoRA trains "
        "small adapters on a frozen 16-bit base, QLoRA on a 4-bit base; gradient checkpointing trades compute for "
        "activation memory; accumulation shrinks the micro-batch; the training stack sizes the loss's logits. "
        "Inference: weights plus a KV cache for transformers; the serving engine sets the prefill chunk."
    ), (
        ("task", "mode", "Task"), ("task", "precision", "Precision"),
        ("task", "quantization", "Weight format (int4/int8)"), ("task", "tf32", "TF32 matmuls (fp32)"),
        ("task", "method", "Method (training)"),
        ("task", "lora_rank", "LoRA rank r"), ("task", "lora_targets", "LoRA targets"),
        ("task", "lora_dropout", "LoRA dropout (0: none)"),
        ("task", "optimizer", "Optimizer (training)"),
        ("task", "optimizer_kernel", "Optimizer kernel (training)"),
        ("task", "recompute", "Checkpointing (training)"), ("task", "flash_attention", "FlashAttention / SDPA"),
        ("task", "accumulation_steps", "Grad accumulation steps"),
        ("task", "training_stack", "Training stack (training)"),
        ("task", "experts_loop", "MoE experts loop (HF 4.x)"),
        ("task", "generated_tokens", "Generated tokens (inf.)"), ("task", "serving_engine", "Serving engine (inf.)"),
        ("task", "speculative_draft_tokens", "Speculative draft tokens (inf.)"),
        ("task", "speculative_accept_length", "Speculative accept length (inf.)"),
        ("task", "cuda_graphs", "CUDA graphs (vLLM/SGLang)"),
        ("task", "forward_runtime", "CNN/encoder runtime (inf.)"),
        ("task", "prefill_chunk_tokens", "Prefill chunk (inf., 0: engine's)"),
        ("task", "kv_cache_dtype", "KV cache precision (inf.)"),
        ("task", "prompt_cache_hit_fraction", "Prompt share cached (server)"),
        ("task", "target_tokens_per_s_per_stream", "Target tokens/s a stream (inf.)"),
        ("task", "target_samples_per_s", "Target images/inputs a second (inf.)"),
        ("task", "expert_offload", "MoE experts in RAM (llama.cpp)"),
        ("task", "layer_offload", "Layers in RAM, -ngl (llama.cpp)"),
        ("task", "pipeline_offload", "Pipeline model offload (inf.)"),
        ("task", "block_offload", "Stream blocks from RAM (diffusion)"),
        ("task", "sequence_parallel", "Split each sample over GPUs"),
        ("task", "sequence_parallel_gpus", "Over how many GPUs (0: all)"),
        ("task", "vae_slicing", "VAE slicing (diffusion)"),
        ("task", "vae_tiling", "VAE tiling (diffusion)"),
        ("task", "frozen_on_cpu", "Text encoders on CPU (inf.)"),
        ("task", "cache_embeddings", "Cache frozen outputs (train)"),
        ("task", "ema_weights", "EMA copy of weights (train)"),
        ("task", "channels_last", "CNN: channels-last format"),
        ("task", "sync_each_batch", "FSDP: sync each micro-batch"),
    )),
    StepSpec("data", "Data", (
        "Dataset size decides the storage class (SATA <= 50 GB, NVMe, RAID 0 from 4 TB; guide §3.2) and the "
        "RAM floor (32 GB from 100 GB of data; guide §3.1)."
    ), (("data", "dataset_size_gb", "Dataset size (GB)"), ("data", "kind", "Data kind"),
        ("data", "tokens_count", "Tokens an epoch (0: from GB)"),
        ("data", "images_count", "Images/clips an epoch (0: GB)"))),
    StepSpec("scale", "Scale", (
        "GPUs in one machine (1-8). ZeRO-1 shards optimizer states, ZeRO-2 also gradients, ZeRO-3/FSDP also "
        "weights, each divided by the GPU count. ZeRO-Offload keeps optimizer states in CPU RAM (sized for it). "
        "DeepSpeed's reduce_bucket_size and overlap_comm set the gradient buckets each GPU holds in backward."
    ), (("scale", "gpu_count", "GPUs"), ("scale", "sharding", "Sharding"),
        ("scale", "reduce_bucket_elements", "DeepSpeed reduce_bucket_size"),
        ("scale", "overlap_comm", "DeepSpeed overlap_comm"))),
    StepSpec("budget", "Budget and preferences", (
        "Budget tiers (guide §6.1, in yuan at rules.toml's rates): < ¥8000 VRAM first; ¥15000-30000 balance. The "
        "platform follows the job, not the budget: ECC workstation for 3+ GPUs at x8 (training, tensor "
        "parallel), or when a desktop cannot hold the RAM, lanes or drives. Market: whose prices and availability "
        "(auto: the currency's). Used allows second-hand GPUs (before paying, run `pth-top bench --accept` on the "
        "card: burn, VRAM patterns, ECC and Xid counters; §6.2). Power limit 0 = none."
    ), (
        ("budget", "amount", "Budget amount"), ("budget", "currency", "Currency"), ("budget", "market", "Market"),
        ("budget", "condition", "New or used"),
        ("budget", "max_power_w", "Wall power limit (W)"), ("budget", "noise", "Noise"),
        ("budget", "owned_gpu", "GPU you have (catalog id)"), ("budget", "owned_gpu_count", "How many you have"),
    )),
    StepSpec("review", "Review", (
        "Keys 1-8 swap a part for the next-best (shown in [ ]) and recompute; A applies the first feasible "
        "alternative when the goal is not feasible; Ctrl+S saves (asks before overwriting); Ctrl+B goes back to "
        "change answers; Esc leaves."
    ), ()),
)
STEP_IDS = tuple(step.id for step in STEPS)


CHOICE_LABELS = {
    ("task", "mode"): {"training": "Training", "inference": "Inference"},
    ("task", "method"): {"full": "Full fine-tune", "lora": "LoRA", "lora_int8": "LoRA, int8 base",
                         "qlora": "QLoRA (4-bit base)",
                         "frozen": "Frozen backbone (head only)",
                         "projector": "Projector into a frozen model"},
    ("task", "lora_targets"): {"attention": "Attention (q, k, v, o)", "all_linear": "All linear (+ MLP)"},
    ("task", "optimizer"): {"adamw": "AdamW", "adam": "Adam", "sgd": "SGD with momentum", "adam8bit": "8-bit Adam",
                            "adafactor": "Adafactor (factored, no momentum)",
                            "rmsprop": "RMSprop (square average)"},
    ("task", "recompute"): {"none": "None", "selective": "Selective (attention)", "full": "Full (every layer)"},
    ("task", "mixed_layout"): {"megatron16": "16 B/param", "hf18": "18 B/param", "deepspeed20": "20 B/param",
                               "bf16_pure": "Pure bf16 (no fp32 master)"},
    ("scale", "sharding"): {
        "none": "None (plain DDP)", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3", "fsdp": "FSDP",
        "zero_offload": "ZeRO-Offload (states in CPU RAM)",
        "fsdp_offload": "ZeRO-3 or FSDP + CPU offload (weights in RAM)",
        "layers": "Layer split (device map, one GPU at a time)",
    },
    ("task", "training_stack"): {"hf_trainer": "HF Trainer (eager fp32 loss)", "torchtune": "torchtune (chunked loss)",
                                 "liger": "Liger (fused linear loss)", "unsloth": "Unsloth (fused loss, CPU ckpt)"},
    ("task", "serving_engine"): {"auto": "Auto (by scenario and precision)", **SERVING_ENGINE_LABELS},
    ("budget", "market"): {market: MARKET_NAMES.get(market, "Auto (from the currency)") for market in MARKETS},
    ("budget", "condition"): {"new": "New parts", "used": "Used GPUs allowed"},
    ("budget", "noise"): {"any": "Any", "quiet": "Quiet (no blower/passive GPUs)"},
    ("workload", "kind"): {"transformer": "Transformer", "cnn": "CNN", "generic": "Parameter count only"},
}


def field_options(section: str, key: str, answers: Answers) -> list[tuple[str, str]] | None:
    if (section, key) in CHOICE_LABELS:
        return [(label, value) for value, label in CHOICE_LABELS[(section, key)].items()]
    if (section, key) == ("answers", "scenario"):
        return [(SCENARIO_LABELS[s], s) for s in SCENARIOS]
    if (section, key) == ("workload", "preset"):
        return [(preset.name, preset.id) for preset in model_presets().values()] + [("Custom model", "custom")]
    if (section, key) == ("task", "precision"):
        return precision_options(answers.task.mode)
    return None


def precision_options(mode: str) -> list[tuple[str, str]]:
    labels = {"fp32": "FP32", "amp_fp16": "AMP FP16", "bf16": "BF16", "fp16": "FP16", "int8": "INT8", "int4": "INT4"}
    choices = TRAINING_PRECISIONS if mode == "training" else INFERENCE_PRECISIONS
    return [(labels[c], c) for c in choices]


class Step(VerticalScroll):
    """One step: its help, its fields, and Back / Next buttons."""

    DEFAULT_CSS = """
    Step { height: 1fr; padding: 0 1; }
    Step .step-help { color: $text-muted; margin-bottom: 1; }
    Step .step-nav { height: auto; margin-top: 1; }
    Step .step-nav Button { margin-right: 2; min-width: 10; }
    Step #preset-row { height: auto; margin-top: 1; }
    Step #preset-row Select { width: 1fr; }
    """

    def __init__(self, spec: StepSpec, answers: Answers) -> None:
        super().__init__(id=f"step-{spec.id}")
        self.spec = spec
        self.answers = answers

    def compose(self) -> ComposeResult:
        yield Static(Text(cite_guide(self.spec.help)), classes="step-help")
        for section, key, label in self.spec.fields:
            value = self.answers.scenario if section == "answers" else self.answers.value(section, key)
            spec = SCENARIO_FIELD if section == "answers" else None
            yield FieldRow(section, key, label, value, field_options(section, key, self.answers), spec=spec)
        if self.spec.id == "scenario":
            with Horizontal(id="preset-row"):
                options = [("Guide example build: none", NO_PRESET)] + [
                    (load_build_preset(name).title, name) for name in build_preset_paths()
                ]
                yield Select(options, value=NO_PRESET, allow_blank=False, compact=True, id="build-preset")
                yield Button("Open preset", id="open-preset", compact=True)
        with Horizontal(classes="step-nav"):
            if self.spec.id != STEPS[0].id:
                yield Button("< Back", id=f"back-{self.spec.id}", classes="nav-back", compact=True)
            if self.spec.id != STEPS[-1].id:
                yield Button("Next >", id=f"next-{self.spec.id}", classes="nav-next", variant="primary", compact=True)
