"""The levers the wizard tries on a job that does not fit: what each changes in the answers, cheapest first."""

from __future__ import annotations

from pth_top.configs import stacks
from pth_top.configs.answers import MAX_GPUS, Answers, splits_over_gpus
from pth_top.configs.assembly import Context
from pth_top.configs.cheap_levers import (
    CHUNKED_LOSS_LABEL,
    RECOMPUTE_LABEL,
    chunked_loss,
    recompute_only,
    small_activations,
    small_activations_label,
)
from pth_top.configs.diffusion import vae_tile_px
from pth_top.configs.engine_plan import FULLER_ENGINE_PLAN_LABEL, fuller_engine_plan
from pth_top.configs.memory_inference import forward_only, takes_inputs
from pth_top.configs.memory_methods import ADAPTER_METHODS, pretraining
from pth_top.configs.memory_terms import OFFLOAD_SHARDINGS, ModelShape, training_bytes_per_parameter
from pth_top.configs.micro_batch import (
    SYNC_EACH_BATCH_LABEL,
    micro_batch_label,
    micro_batch_of,
    micro_batch_steps,
    sharded_gradients,
)
from pth_top.configs.owned import GROWN_SHARE_LABEL, grown_share, without_owned
from pth_top.configs.presets import model_presets, model_shape
from pth_top.configs.quantization import FORMATS, LOW_BIT_GGUF
from pth_top.configs.sequence_split import SEQUENCE_SPLIT_LABEL, offered_split
from pth_top.configs.smaller_weights import smaller_weights

FLASH_ATTENTION_LABEL = ("FlashAttention or SDPA (task.flash_attention = true; transformers' attn_implementation "
                         "\"sdpa\", whose memory-efficient kernel runs on a V100 or T4, or \"flash_attention_2\" on "
                         "Ampere and later, where the model's code has it): the same results, no s x s scores held")
DATA_PARALLEL_INFERENCE_LABEL = "data parallel (each GPU its share of the batch)"
CURRENT_TRANSFORMERS_LABEL = ("transformers 4.45 or later (task.transformers_version = \"\"): generate()'s prefill "
                              "computes the last position's logits only, not every prompt position's in fp32")
OPTIMIZER_IN_BACKWARD_LABEL = ("the optimizer stepped in backward (torchtune's optimizer_in_bwd, Forgather's "
                               "fuse_optim_with_backward: task.optimizer_in_backward): the same updates, each gradient "
                               "freed as its parameter steps")
UNSLOTH_EXPERTS_LABEL = ("Unsloth (task.training_stack = \"unsloth\"): it quantizes the MoE's fused experts, which "
                         "bitsandbytes leaves 16-bit")


QUANTIZED_EXPERTS_LABEL = ("the MoE's fused experts quantized after loading too (Axolotl's quantize_moe_experts: "
                           "true; task.quantize_moe_experts), which bitsandbytes alone leaves 16-bit")


def experts_left_unquantized(answers: Answers, shape: ModelShape) -> bool:
    """A MoE's QLoRA or 8-bit LoRA under a stack whose bitsandbytes leaves its fused experts 16-bit."""
    task = answers.task
    return task.mode == "training" and task.method in ("qlora", "lora_int8") \
        and stacks.experts_left_16_bit(task.training_stack, task.quantize_moe_experts) \
        and bool(shape.routed_expert_parameters)


def unsloth_quantizes_more(answers: Answers, shape: ModelShape) -> bool:
    """Such a job on one GPU, which Unsloth (one GPU) would also quantize."""
    return experts_left_unquantized(answers, shape) and answers.scale.gpu_count == 1


def _offloaded(label: str, answers: Answers, sharding: str) -> tuple[str, Answers]:
    """An offload lever; an 8-bit optimizer gives way to the CPU's Adam, as bitsandbytes does not run there (review
    AF)."""
    changed = answers.with_value("scale", "sharding", sharding)
    if answers.task.optimizer in ("adafactor", "rmsprop"):  # DeepSpeed's offload steps its own CPU Adam (review r68)
        name = "Adafactor" if answers.task.optimizer == "adafactor" else "RMSprop"
        return (f"{label}; with {name}, FSDP's CPUOffload (DeepSpeed's needs zero_force_ds_cpu_optimizer = false)",
                changed)
    if answers.task.optimizer != "adam8bit":
        return label, changed
    return f"{label}, AdamW stepped on the CPU in place of the 8-bit optimizer", changed.with_value(
        "task", "optimizer", "adamw")


# A bf16 full fine-tune without the fp32 master copy (LLaMA-Factory's table: a 7B at 60 GB, 120 with it).
def pure_bf16_label(optimizer: str) -> str:
    """The pure-bf16 lever's line, its bytes a parameter the optimizer's (Adam's 8 not 16, Adafactor's 4 not 8)."""
    pure, mixed = (training_bytes_per_parameter("bf16", optimizer, layout).total for layout in ("bf16_pure",
                                                                                               "megatron16"))
    return (f"pure bf16 (LLaMA-Factory's pure_bf16, torchtune's default, kohya's --full_bf16): weights, gradients and "
            f"optimizer states in bf16, no fp32 master copy, {pure:g} B a parameter not {mixed:g}; updates under "
            "bf16's precision are lost")


# fp32 training's activations and logits in 16 bits, at the tensor cores' rate; its weights and states keep fp32.
BF16_MIXED_LABEL = ("bf16 mixed precision (autocast: activations and logits in bf16 at the tensor cores' rate, fp32 "
                    "master weights and optimizer states; the HF Trainer's bf16=True, task.precision = \"bf16\")")


SHORTER_LABEL = "a shorter {what}, {tokens:,} tokens"  # a context or sequence halved (configs.shorter_context)


def answer_changes(ctx: Context) -> list[tuple[str, Answers]]:
    """Answer changes that shrink GPU memory, cheapest lever first: what costs no quality (loss, recompute), then
    the optimizer, then adapters and quantization, then more GPUs of one machine, then a smaller model. Sharding
    and more GPUs are training's; a server splits the model (tensor parallel) before it quantizes, a home box or
    an edge module quantizes first (an edge module never splits), and either shrinks."""
    answers = ctx.answers
    task, scale = answers.task, answers.scale
    transformer = ctx.shape.kind == "transformer"
    queue = queue_lever(ctx)  # a server's engine queues what its KV cache does not hold (way_out.most_at_once)
    changes: list[tuple[str, Answers]] = []
    if answers.budget.owned_gpu:  # the cards the buyer has set the GPUs: a way out buys others
        changes.append(("buying other cards than the ones you have (budget.owned_gpu = \"\")", without_owned(answers)))
    elif ctx.pins:
        changes.append(("the same answers without the pinned parts", answers))
    if transformer and not task.flash_attention and ctx.shape.attention_heads:  # no quality change (audit XC6)
        changes.append((FLASH_ATTENTION_LABEL, answers.with_value("task", "flash_attention", True)))
    if task.mode == "inference" and ctx.shape.logits_vocabulary_size and stacks.generate_full_prompt_logits(
            stacks.serving_engine(task.serving_engine, answers.scenario, task.precision), task.transformers_version):
        changes.append((CURRENT_TRANSFORMERS_LABEL, answers.with_value("task", "transformers_version", "")))
    fuller = fuller_engine_plan(ctx)
    if fuller != answers:  # the same job, the engine planning for more of each card
        changes.append((FULLER_ENGINE_PLAN_LABEL, fuller))
    if task.mode == "training":
        synced = sharded_gradients(answers)
        if synced != answers:  # no quality or batch change: one reduce-scatter a micro-batch more
            changes.append((f"{SYNC_EACH_BATCH_LABEL}: accelerate's GradientAccumulationPlugin(sync_each_batch=True) "
                            "or open-instruct's --sync_each_batch keeps them sharded, where no_sync holds the whole "
                            "model's on each GPU", synced))
        # An image model's frozen encoders (text, VAE) feed it inputs that can be computed once; a distillation
        # teacher's or a reference model's outputs are per-step logits, not a cache.
        if answers.workload.frozen_parameters and not task.cache_embeddings and answers.data.kind in (
                "images", "video"):
            changes.append(("the frozen models' outputs cached before training (text embeddings and latents: kohya-ss "
                            "cache_text_encoder_outputs, diffusers' precomputed embeddings; no per-epoch augmentation "
                            "of the cached inputs), off the GPU while it trains (task.cache_embeddings)",
                            answers.with_value("task", "cache_embeddings", True)))
        if ctx.shape.decoded_pixels and not task.vae_tiling:  # the same validation images (audit YK17)
            changes.append((f"validation images decoded in {vae_tile_px(ctx.shape)} px tiles (SimpleTuner's "
                            "vae_enable_tiling, Diffusers enable_vae_tiling: task.vae_tiling)",
                            answers.with_value("task", "vae_tiling", True)))
        if experts_left_unquantized(answers, ctx.shape):  # the same stack first (audit YF15: Axolotl's GLM-4.7-Flash)
            changes.append((QUANTIZED_EXPERTS_LABEL, answers.with_value("task", "quantize_moe_experts", True)))
        if unsloth_quantizes_more(answers, ctx.shape):
            changes.append((UNSLOTH_EXPERTS_LABEL, answers.with_value("task", "training_stack", "unsloth")))
        sliced = offered_split(answers, ctx.shape.kind, ctx.shape.sequence_length)
        if sliced is not None and not ctx.edge:
            changes.append((SEQUENCE_SPLIT_LABEL.format(n=scale.gpu_count), sliced))
        chunked = chunked_loss(answers, ctx.shape)
        if chunked != answers:
            changes.append((CHUNKED_LOSS_LABEL, chunked))
        if task.precision == "fp32" and task.method == "full":  # audit XP10: TRL's DPO in fp32 OOMs an A100 (#3168)
            changes.append((BF16_MIXED_LABEL, answers.with_precision("bf16")))
        smaller = small_activations(answers)  # keeps the method (and a bf16 base) before quantizing it
        steps = [each for each in micro_batch_steps(ctx.shape, answers, 1) if each != smaller]
        at_one = [each for each in steps[1:] if micro_batch_of(each) == 1]  # after the recompute chain (review AF)
        changes.extend((micro_batch_label(answers, each, ctx.shape), each) for each in steps if each not in at_one)
        recomputed = recompute_only(answers)
        if recomputed != answers:
            changes.append((f"{RECOMPUTE_LABEL} at the same micro-batch: ~1/3 more compute, and what sees the batch "
                            "(in-batch negatives, batch statistics) stays as it is", recomputed))
            changes.extend((f"{RECOMPUTE_LABEL}, {micro_batch_label(recomputed, each, ctx.shape)}", each)
                           for each in micro_batch_steps(ctx.shape, recomputed) if each != smaller)
        changes.extend((micro_batch_label(answers, each, ctx.shape), each) for each in at_one)
        if smaller not in (answers, recomputed):
            changes.append((small_activations_label(answers, ctx.shape), smaller))
        int8 = task.method == "lora_int8"  # bitsandbytes' 8-bit weights do not shard (adapter_checks)
        if scale.gpu_count > 1 and scale.sharding in ("none", "zero1", "zero2") and not ctx.edge and not int8:
            changes.append((f"ZeRO-3 (FSDP) on the same {scale.gpu_count} GPUs: weights, gradients and optimizer "
                            "states divided among them, each layer gathered as it runs",
                            answers.with_value("scale", "sharding", "zero3")))
        # Offloaded states step on the CPU (DeepSpeed's CPU Adam), where bitsandbytes' 8-bit optimizer does not run
        # and the GPU holds none to save (audit YK2: a 13B ZeRO-Offload on a V100 was offered it for 0 GiB).
        if task.method in ("full", *ADAPTER_METHODS) and task.optimizer in ("adam", "adamw") \
                and scale.sharding not in OFFLOAD_SHARDINGS:
            trained = "parameter" if task.method == "full" else "adapter parameter"
            changes.append((f"an 8-bit optimizer (bitsandbytes AdamW8bit: 2 B of states per {trained}, not 8)",
                            answers.with_value("task", "optimizer", "adam8bit")))
        # The same updates with each gradient freed as its parameter steps: no whole gradient held (audit DN70:
        # Forgather's Mistral-7B full fine-tune on one 24 GB card, its 14 GB of gradients never held).
        if task.method == "full" and scale.gpu_count == 1 and task.accumulation_steps == 1 \
                and not task.optimizer_in_backward and scale.sharding == "none":
            changes.append((OPTIMIZER_IN_BACKWARD_LABEL, answers.with_value("task", "optimizer_in_backward", True)))
        # What keeps the job (full training, slower over PCIe) before what changes it (adapters).
        if task.method == "full" and scale.sharding != "zero_offload" and task.precision != "fp32":
            changes.append(_offloaded("ZeRO-Offload: optimizer states and fp32 master weights in CPU RAM", answers,
                                      "zero_offload"))
        adapts = transformer and not pretraining(answers, ctx.shape.parameters)  # adapters tune a pretrained model
        # A fine-tune's lever: a pretraining's tokens over PCIe take years on one machine (OPT-175B's 180B: ~900 days).
        if task.method == "full" and adapts and scale.sharding != "fsdp_offload" and task.precision != "fp32":
            changes.append(_offloaded("ZeRO-3 with CPU offload (DeepSpeed's offload_param and offload_optimizer, "
                                      "FSDP's CPUOffload): weights, gradients and optimizer states in CPU RAM, each "
                                      "layer uploaded as it runs and its gradients sent back, the optimizer stepped on "
                                      "the CPU; slower, over PCIe", answers, "fsdp_offload"))
        # Numerics change: bf16 rounds away an update under ~1/256 of its weight (no Kahan summation), so it is not
        # quality-free; offered on a fine-tune, as LLaMA-Factory and torchtune run it (audit ZB18), not a pretraining.
        if task.method == "full" and adapts and task.precision == "bf16" and task.mixed_layout != "bf16_pure":
            changes.append((pure_bf16_label(task.optimizer), answers.with_value("task", "mixed_layout", "bf16_pure")))
        if task.method == "full" and adapts:
            changes.append((f"LoRA (rank {task.lora_rank}, bf16 base)", answers.with_value("task", "method", "lora")))
        if task.method == "lora" and task.precision == "fp32" and adapts:  # half the base, before a 4- or 8-bit one
            changes.append(("the frozen base in bf16 (from_pretrained(torch_dtype=torch.bfloat16), as PEFT's examples "
                            "load it), the adapters in bf16 mixed precision", answers.with_precision("bf16")))
        if task.method in ("full", "lora", "lora_int8") and adapts:
            changes.append(("QLoRA instead of " + ("LoRA" if task.method != "full" else "full training")
                            + " (4-bit NF4 base dequantized to bf16 at every matmul, bf16 adapters)",
                            answers.with_value("task", "method", "qlora")))
        if task.method in ("full", "lora") and adapts:
            changes.append(("LoRA on an int8 base (LLM.int8(): 1 B per projection weight), bf16 adapters",
                            answers.with_value("task", "method", "lora_int8")))
        if task.method in ADAPTER_METHODS and transformer and scale.sharding != "fsdp_offload" and not int8:
            base = "Answer.AI's FSDP-QLoRA" if task.method == "qlora" else "as Answer.AI's FSDP-QLoRA runs, 16-bit base"
            changes.append(_offloaded(f"FSDP with CPU offload ({base}: the weights in CPU RAM, each layer uploaded "
                                      "as it runs; slower, over PCIe)", answers, "fsdp_offload"))
        if not ctx.edge:
            changes.extend(more_gpus(answers, "layers", "its layers split across {n} GPUs of one machine (accelerate's "
                                     "device_map=\"auto\": bitsandbytes' 8-bit weights do not shard)") if int8 else
                           more_gpus(answers, "zero3", "ZeRO-3 (FSDP) across {n} GPUs of one machine"))
    else:
        engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
        diffusion = bool(ctx.shape.denoising_steps)  # no KV cache, and no model split across GPUs
        if transformer and not diffusion and stacks.fp8_kv_cache_open(task, answers.scenario):
            changes.append((stacks.KV_CACHE_FP8_LABEL, answers.with_value("task", "kv_cache_dtype", "fp8")))
        if transformer and not diffusion and stacks.q4_0_kv_cache_open(task, answers.scenario):
            changes.append((stacks.KV_CACHE_Q4_0_LABEL, answers.with_value("task", "kv_cache_dtype", "q4_0")))
        if engine == "llama_cpp" and "gpu" in ctx.pins and not ctx.edge and not task.layer_offload \
                and not ctx.shape.routed_expert_parameters and transformer and not diffusion \
                and not forward_only(ctx.shape):  # the card you have or chose keeps what it holds
            changes.append(("llama.cpp partial offload (-ngl): the layers the card cannot hold in system RAM, run by "
                            "the CPU (task.layer_offload)", answers.with_value("task", "layer_offload", True)))
        # The same job on fewer, larger cards. Tensor parallel stays split (one GPU would give up its speed and admit a
        # desktop system, a DGX Spark at a quarter of it) over 4 or 2, which divide the heads; a layer split, which
        # runs one card at a time, takes any count: one fewer, half and one (three used 3090s where four were over
        # budget; one used 3090 where two 12 GB cards were).
        turns = stacks.takes_turns(task.mode, task.serving_engine, answers.scenario, task.precision)
        counts = sorted({scale.gpu_count - 1, scale.gpu_count // 2, 1} - {0}, reverse=True) if turns else (4, 2)
        if takes_inputs(ctx.shape):  # one input never splits across GPUs: past the batch they idle
            counts = sorted({min(scale.gpu_count - 1, answers.workload.batch_size), 1} - {0}, reverse=True)
        fewer_cards = [] if diffusion or ctx.edge else [
            (f"fewer, larger cards: {count} GPU" + (f"s, {split_label(answers)}" if count > 1 else "")
             + f" (scale.gpu_count = {count})",
             answers.with_value("scale", "gpu_count", count)) for count in counts
            if count < scale.gpu_count and stacks.splits_heads(engine, ctx.shape.attention_heads, count,
                                                                ctx.shape.split_kv_heads)]
        experts_to_ram = engine == "llama_cpp" and bool(ctx.shape.routed_expert_parameters) \
            and not task.expert_offload and not ctx.edge
        if not experts_to_ram:  # after --cpu-moe where it applies: one card that holds the rest decodes faster
            changes.extend(fewer_cards)
        if diffusion and ctx.shape.decoded_pixels and answers.workload.batch_size > 1 and not task.vae_slicing \
                and ctx.shape.decoded_frames_at_once == 1:  # the same images, decoded one at a time (audit ZJ)
            changes.append(("VAE slicing (Diffusers enable_vae_slicing): the batch's images decode one at a time "
                            "(task.vae_slicing)", answers.with_value("task", "vae_slicing", True)))
        if diffusion and ctx.shape.decoded_pixels and not task.vae_tiling:  # the same image, decoded in tiles
            changes.append((f"VAE tiling (Diffusers enable_vae_tiling): the output decodes in {vae_tile_px(ctx.shape)} "
                            "px tiles (task.vae_tiling)", answers.with_value("task", "vae_tiling", True)))
        if diffusion and answers.workload.frozen_parameters and not task.pipeline_offload:  # precision kept
            changes.append(("Diffusers model offload (enable_model_cpu_offload): the frozen models and the model take "
                            "turns on the GPU (task.pipeline_offload)", answers.with_value("task", "pipeline_offload",
                                                                                       True)))
        if diffusion and answers.workload.frozen_parameters and not task.frozen_on_cpu and not ctx.edge:
            changes.append(("the frozen models (text encoders) on the CPU (task.frozen_on_cpu: Wan's --t5_cpu; in "
                            "Diffusers, encode the prompt on the CPU and pass prompt_embeds): the GPU holds the "
                            "denoiser; the prompt encodes once a batch, in seconds there",
                            answers.with_value("task", "frozen_on_cpu", True)))
        if diffusion and not task.block_offload and not ctx.edge:  # the same output, each step's weights over PCIe
            changes.append(("block offload (Diffusers group offload with streams, FramePack's DynamicSwap): the "
                            "models wait in RAM and stream to the GPU two blocks at a time (task.block_offload)",
                            answers.with_value("task", "block_offload", True)))
        split = [] if ctx.edge or diffusion else \
            more_gpus(answers, "none", split_label(answers) + " across {n} GPUs of one machine")
        if answers.scenario == "inference_server":  # a server keeps the weights it was asked for where a split does
            changes.extend(split)
        if queue is not None:  # then the most the build holds at once (half where not sized)
            changes.append((queue, answers.with_value("workload", "batch_size", answers.workload.batch_size // 2)))
        changes.extend(smaller_weights(answers, ctx.shape))
        if experts_to_ram:
            offloaded = answers.with_value("task", "expert_offload", True)
            if scale.gpu_count > 1:  # with the experts in RAM, run by the CPU, one card holds the rest as fast
                changes.append(("one GPU with llama.cpp --cpu-moe: the routed experts in system RAM, run by the CPU "
                                "(task.expert_offload, scale.gpu_count = 1)",
                                offloaded.with_value("scale", "gpu_count", 1)))
            else:
                changes.append(("llama.cpp --cpu-moe: the routed experts in system RAM, run by the CPU "
                                "(task.expert_offload)", offloaded))
            changes.extend(fewer_cards)
        if answers.scenario != "inference_server":
            changes.extend(split)
    # A ViT preset (no vocabulary) or a custom model on images: its tokens are the image, not a context to shorten.
    image_patches = ctx.shape.denoising_steps or not ctx.shape.vocabulary_size and (
        answers.workload.preset != "custom" or answers.data.kind != "text")
    # An encoder-decoder's encoder length is its input's (Whisper's 1,500 frames are 30 s of audio): not a lever.
    if ctx.shape.kind == "transformer" and ctx.shape.sequence_length > 1 and not image_patches \
            and not ctx.shape.encoder_decoder:
        shorter = ctx.shape.sequence_length // 2
        changes.append((SHORTER_LABEL.format(what="context" if task.mode == "inference" else "sequence",
                                             tokens=shorter),
                        answers.with_value("workload", "sequence_length", shorter)))
    if task.mode == "inference" and ctx.shape.kind == "transformer" and answers.workload.batch_size > 1 \
            and queue is None:
        fewer = answers.workload.batch_size // 2
        what = "the concurrent requests" if answers.scenario == "inference_server" else "the batch"
        why = "each image's activations" if ctx.shape.denoising_steps else "each sequence holds its own KV cache"
        changes.append((f"half {what}, {fewer:,} ({why})",
                        answers.with_value("workload", "batch_size", fewer)))
    if task.mode == "inference" and ctx.shape.kind == "transformer" and not ctx.shape.denoising_steps and \
            not forward_only(ctx.shape) and \
            stacks.serving_engine(task.serving_engine, answers.scenario, task.precision) == "llama_cpp":
        # llama.cpp's files under 4 bits, after the context levers
        now = task.quantization if task.precision == "int4" else ""
        for name in LOW_BIT_GGUF[LOW_BIT_GGUF.index(now) + 1 if now in LOW_BIT_GGUF else 0:]:
            changes.append((f"{FORMATS[name].label}: under 4 bits, a larger quality loss than 4-bit weights (check "
                            f"the model's own perplexity or KL divergence; task.quantization = \"{name}\")",
                            answers.with_precision("int4").with_value("task", "quantization", name)))
    smaller_model = _smaller_preset(ctx)
    if smaller_model is not None:
        name = model_presets()[smaller_model].name
        changes.append((f"a smaller model of the same family, {name}",
                        answers.with_value("workload", "preset", smaller_model)))
    if answers.budget.owned_gpu:  # at least the cards the buyer has (more are bought), unless a way out buys others
        kept = [(label, changed, grown_share(ctx.catalog, changed)) for label, changed in changes
                if changed.scale.gpu_count >= answers.budget.owned_gpu_count or not changed.budget.owned_gpu]
        return [(label if grown == changed else GROWN_SHARE_LABEL.format(label=label, n=grown.scale.gpu_count), grown)
                for label, changed, grown in kept if grown is not None]
    return changes


# How each engine caps the requests it runs at once and queues the rest (generate() has no queue).
QUEUE_FLAGS = {"vllm": "vLLM --max-num-seqs {n}", "sglang": "SGLang --max-running-requests {n}",
               "llama_cpp": "llama-server --parallel {n}"}


def queues_requests(ctx: Context) -> bool:
    """Whether a server's engine admits the requests its KV cache holds and queues the rest (vLLM, SGLang,
    llama-server)."""
    answers, task = ctx.answers, ctx.answers.task
    return answers.scenario == "inference_server" and task.mode == "inference" and ctx.shape.kind == "transformer" \
        and not ctx.shape.denoising_steps and not forward_only(ctx.shape) and answers.workload.batch_size > 1 \
        and stacks.serving_engine(task.serving_engine, answers.scenario, task.precision) in QUEUE_FLAGS


def queue_lever(ctx: Context) -> str | None:
    """A server's queue lever's label (way_out.most_at_once sizes it); None where its engine does not queue."""
    return queued_label(ctx.answers, ctx.answers.workload.batch_size // 2) if queues_requests(ctx) else None


def queued_label(answers: Answers, count: int, split: str = "") -> str:
    """'234 of the 500 requests at once, the rest queued (...; workload.batch_size = 234)': a server's lever."""
    asked = answers.workload.batch_size
    turns = -(-asked // count) - 1
    wait = f"{turns} requests'" if turns > 1 else "1 request's"
    engine = stacks.serving_engine(answers.task.serving_engine, answers.scenario, answers.task.precision)
    flag = QUEUE_FLAGS.get(engine, "").format(n=count)
    return (f"{count:,} of the {asked:,} requests at once{', ' + split if split else ''}, the rest queued (each waits "
            f"for a running one to finish, the last up to {wait} time; {flag}; workload.batch_size = {count})")


def split_label(answers: Answers) -> str:
    """How the answers' serving engine spreads a model over GPUs (configs.stacks.split_label); a model that takes
    inputs and generates nothing (a CNN, an encoder) is split by its batch (audit DX73: MaxViT-B's images were offered
    "generate()'s layer split")."""
    if answers.task.mode == "inference" and takes_inputs(model_shape(answers.workload)[0]):
        return DATA_PARALLEL_INFERENCE_LABEL
    return stacks.split_label(answers.task.serving_engine, answers.scenario, answers.task.precision)


LAYER_SPLIT_GPU_COUNTS = (2, 3, 4, 6, 8)  # a layer split takes any count: three 16 GB cards hold a 4-bit 70B


def more_gpu_counts(answers: Answers) -> list[int]:
    """The machines of more GPUs than the answers' to try: the count doubled up to MAX_GPUS, or for a layer split,
    which takes any count, LAYER_SPLIT_GPU_COUNTS above it."""
    task, now = answers.task, answers.scale.gpu_count
    if task.mode == "inference" and stacks.takes_turns(task.mode, task.serving_engine, answers.scenario,
                                                       task.precision):
        return [count for count in LAYER_SPLIT_GPU_COUNTS if count > now]
    return [now * 2 ** step for step in range(1, 4) if now * 2 ** step <= MAX_GPUS]


def more_gpus(answers: Answers, sharding: str, label: str) -> list[tuple[str, Answers]]:
    """The machine's GPU count doubled up to MAX_GPUS (a layer split's 3 and 6 too), sharded (training) or split
    (inference) across them."""
    changes = []
    for count in more_gpu_counts(answers):
        more = answers.with_value("scale", "gpu_count", count)
        if sharding != "none" and answers.scale.sharding in ("none", "zero1", "zero2"):
            more = more.with_value("scale", "sharding", sharding)
        if splits_over_gpus(more):
            changes.append((label.format(n=count), more))
    return changes


def model_family(preset_id: str) -> str:
    """The family presets substitute within: "llama-13b" -> "llama", "resnet50" -> "resnet", "llama3-8b" -> "llama3"."""
    head = preset_id.split("-")[0]
    return head if "-" in preset_id else head.rstrip("0123456789")


def _smaller_preset(ctx: Context) -> str | None:
    """The largest preset of the same family with fewer parameters: another family is no substitute (a GPT-2 XL
    does not do a Llama-7B's job), so none is offered then."""
    family = model_family(ctx.answers.workload.preset)
    smaller = [
        preset for preset in model_presets().values()
        if model_family(preset.id) == family and preset.parameters < ctx.shape.parameters
    ]
    return max(smaller, key=lambda preset: preset.parameters).id if smaller else None
