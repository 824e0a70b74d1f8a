"""A build that a change costing no or little quality would make much cheaper names that build: a chunked or fused
loss for Hugging Face Trainer's fp32 logits, bf16 mixed precision for fp32 training, ZeRO-3 for data parallel
copies, FSDP's gradients synced each micro-batch, gradient checkpointing, Unsloth's quantized experts for a MoE's
QLoRA, vLLM's fuller plan of a headless card and an fp8 KV cache for a server's."""

from __future__ import annotations

from typing import Callable

from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.beyond_answers import gpu_build, within_text
from pth_top.configs.build import Build
from pth_top.configs.cheap_levers import RECOMPUTE_LABEL, chunked_loss, recompute_only
from pth_top.configs.engine_plan import FULLER_ENGINE_FRACTION, FULLER_ENGINE_PLAN_LABEL, fuller_plan
from pth_top.configs.levers import experts_left_unquantized, unsloth_quantizes_more
from pth_top.configs.micro_batch import SYNC_EACH_BATCH_LABEL, sharded_gradients
from pth_top.configs.presets import model_shape
from pth_top.configs.ranking import CHEAPER_FRACTION_MAX
from pth_top.configs.rules import Rules
from pth_top.configs.speed_server import slow_under_load
from pth_top.units import GIB


def cheaper_without_a_change_of_quality(build: Build, rules: Rules,
                                        recommend_one: Callable[[Answers], Build]) -> str:
    """The first of the chunked loss, bf16, ZeRO-3, synced gradients, recompute, Unsloth's experts, vLLM's 0.95 and an
    fp8 KV cache whose build costs under CHEAPER_FRACTION_MAX of this one."""
    return (cheaper_with_a_chunked_loss(build, rules, recommend_one)
            or cheaper_in_bf16(build, rules, recommend_one)
            or cheaper_sharded(build, rules, recommend_one)
            or cheaper_with_synced_gradients(build, rules, recommend_one)
            or cheaper_with_recompute(build, rules, recommend_one)
            or cheaper_with_quantized_experts(build, rules, recommend_one)
            or cheaper_with_a_fuller_engine_plan(build, rules, recommend_one)
            or cheaper_with_an_fp8_kv_cache(build, rules, recommend_one))


def cheaper_with_a_fuller_engine_plan(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """A vLLM server at its default 0.9 of each card names the build a headless card's 0.95 needs, before the fp8 KV
    cache, which costs some accuracy (audit BY57: Reka Flash 3 in bf16 at 32k on one 96 GB card was told of an fp8
    cache on a 48 GB one, where 0.95 holds it there at the same price and its 16-bit cache's speed)."""
    answers = build.answers
    found = _cheaper(build, fuller_plan(answers, model_shape(answers.workload)[0].kind), recommend_one)
    if found is None:
        return ""
    other, text = found
    return _line(f"with {FULLER_ENGINE_PLAN_LABEL}:", other, build, "", text, rules,
                 f"task.engine_memory_fraction = {FULLER_ENGINE_FRACTION}",
                 speed=f"{_rates(other)} against {_rates(build)} here")


def cheaper_with_a_chunked_loss(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """A training build sized for Hugging Face Trainer's eager fp32 logits (the default stack) names the build a
    chunked or fused loss needs: nanochat's d20 at 65,536 tokens a GPU step is 110 GiB a GPU with 3 fp32 copies of
    the logits (an 8 x H200 server), 63 GiB with Liger's (8 cards of 96 GB for under a third), and nanochat's own
    loop runs it on 8 x 80 GB."""
    answers = build.answers
    changed = chunked_loss(answers, model_shape(answers.workload)[0])
    found = _cheaper(build, changed, recommend_one)
    if found is None:  # the loss is chunked already, there are no logits to chunk, or it costs about the same
        return ""
    other, text = found
    return _line(f"with a chunked or fused loss: {stacks.TRAINING_STACK_LABELS['liger']} needs", other, build,
                 f" (the estimate assumes {stacks.TRAINING_STACK_LABELS['hf_trainer']})", text, rules,
                 "task.training_stack = \"liger\" (torchtune's chunked loss, or a training loop that casts one chunk "
                 "of logits at a time, does as well)")


def cheaper_in_bf16(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """fp32 training names the build bf16 mixed precision needs (audit R: PEFT's LoRA of bloomz-7b1 in fp32 took a
    EUR 11,208 48 GB card at 31 GiB; its bf16 base halves the frozen weights)."""
    answers = build.answers
    if answers.task.mode != "training" or answers.task.precision != "fp32":
        return ""
    found = _cheaper(build, answers.with_value("task", "precision", "bf16"), recommend_one)
    if found is None:
        return ""
    other, text = found
    return _line("in bf16 mixed precision:", other, build, " in fp32", text, rules, "task.precision = \"bf16\" (the "
                 "usual precision of LLM training and fine-tuning; a card without bf16 tensor cores uses amp_fp16)")


def cheaper_sharded(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """Training on several GPUs that each hold a whole copy (data parallel, ZeRO-1/2) names the build ZeRO-3 (FSDP)
    needs, each GPU a share of the model (audit YB2: XVERSE-65B QLoRA on 2 GPUs, 39.8 GiB each, bought 2 x 48 GB
    cards for CNY 92,000; ms-swift splits it over 2 x 23 GB)."""
    answers = build.answers
    if answers.task.mode != "training" or answers.scale.gpu_count < 2 \
            or answers.scale.sharding not in ("none", "zero1", "zero2"):
        return ""
    found = _cheaper(build, answers.with_value("scale", "sharding", "zero3"), recommend_one)
    if found is None:
        return ""
    other, text = found
    return _line(f"with ZeRO-3 (FSDP): the model divided among the {answers.scale.gpu_count} GPUs, each layer gathered "
                 "as it runs:", other, build, "", text, rules, "scale.sharding = \"zero3\" (the same training, more "
                 "traffic between the GPUs)", speed=_training_rates(other, build))


def cheaper_with_synced_gradients(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """FSDP with accumulation under Accelerate's no_sync holds each GPU's whole gradients between syncs: the build
    that syncing each micro-batch needs (audit YF2: MPT-30B's full fine-tune on 8 GPUs, 55.8 GiB of its 118 GiB a GPU
    unsynced gradients, bought an HGX H200 for $280,000; synced, 71 GiB on 8 x 96 GB cards for $80,642)."""
    if build.answers.task.mode != "training":
        return ""
    found = _cheaper(build, sharded_gradients(build.answers), recommend_one)
    if found is None:
        return ""
    other, text = found
    return _line(f"with {SYNC_EACH_BATCH_LABEL}:", other, build, " (Accelerate's no_sync holds them whole)", text,
                 rules, "task.sync_each_batch = true (the same training, one reduce-scatter a micro-batch more; "
                 "torchtune does it always)", speed=_training_rates(other, build))


def cheaper_with_recompute(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """Training that keeps its activations names the build full recompute needs, both rates beside it (audit ZI31:
    bge-base-zh-v1.5's contrastive fine-tune of 768 sequences a step, 35 GiB, bought a CNY 37,102 DGX Spark; with
    checkpointing, as BAAI trained it (FlagEmbedding#25), 9.5 GiB on a CNY 22,532 24 GB card, faster by its rates)."""
    found = _cheaper(build, recompute_only(build.answers), recommend_one)
    if found is None:
        return ""
    other, text = found
    return _line(f"with {RECOMPUTE_LABEL}:", other, build, "", text, rules, "task.recompute = \"full\" (the same "
                 "training, each layer's forward run again in the backward)", speed=_training_rates(other, build))


def cheaper_with_quantized_experts(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """A MoE's QLoRA or 8-bit LoRA, whose routed experts bitsandbytes leaves 16-bit, names the build its experts
    quantized after loading need (memory_methods.BNB_SKIPS_FUSED_EXPERTS), on the same stack."""
    answers = build.answers
    shape = model_shape(answers.workload)[0]
    if not experts_left_unquantized(answers, shape):
        return ""
    hint = "task.quantize_moe_experts = true (Axolotl's quantize_moe_experts: true; Unsloth quantizes them anyway)"
    found = _cheaper(build, answers.with_value("task", "quantize_moe_experts", True), recommend_one)
    if found is None and unsloth_quantizes_more(answers, shape):  # its fused loss and offloaded checkpoints too
        hint = ("task.training_stack = \"unsloth\" (Unsloth quantizes them; its fused loss and offloaded checkpoints "
                "come with it)")
        found = _cheaper(build, answers.with_value("task", "training_stack", "unsloth"), recommend_one)
    if found is None:
        return ""
    other, text = found
    return _line("with the experts quantized too:", other, build, " (bitsandbytes leaves a MoE's fused experts "
                 "16-bit)", text, rules, hint)


def cheaper_with_an_fp8_kv_cache(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """A language model served with a 16-bit KV cache names the build an fp8 one needs, both builds' decode rates
    beside it, idle and under load; not one slow under load where this is not (audit ZI: ERNIE-4.5-300B in 4 bits for
    32 streams of 32k on 8 GPUs is 47 GiB a GPU, 8 x H200 for CNY 1.5 million; 33 GiB with an fp8 cache, 8 x RTX PRO
    5000 for CNY 415k; with fresh 32k prompts that one prefills to ~1 token/s a stream, review AA)."""
    answers = build.answers
    task = answers.task
    if task.mode != "inference" or not stacks.fp8_kv_cache_open(task, answers.scenario) \
            or not build.memory.kv_cache_bytes:
        return ""
    found = _cheaper(build, answers.with_value("task", "kv_cache_dtype", "fp8"), recommend_one)
    if found is None or (slow_under_load(found[0].speed.figures) and not slow_under_load(build.speed.figures)):
        return ""
    other, text = found
    return _line(f"with {stacks.KV_CACHE_FP8_LABEL}:", other, build, "", text, rules, "task.kv_cache_dtype = \"fp8\" "
                 "(at a minimal accuracy cost, SGLang's docs say; check your model)",
                 speed=f"{_rates(other)} against {_rates(build)} here")


def _line(what: str, other: Build, build: Build, this_note: str, text: str, rules: Rules, answer: str,
          speed: str | None = None) -> str:
    """'cheaper <what> 20.7 GiB a GPU, not 28.2<this_note>: <GPUs>, a build of <price> within <budget>; <speed>:
    answer <answer>': the other build's speed its summary's first line unless given."""
    speed = speed if speed is not None else (other.speed.summary[0] if other.speed.summary else "")
    return (f"cheaper {what} {other.memory.total_bytes / GIB:.1f} GiB a GPU, not {build.memory.total_bytes / GIB:.1f}"
            f"{this_note}: {text}, {within_text(other, build, rules)}{'; ' + speed if speed else ''}: answer {answer}")


def _training_rates(other: Build, build: Build) -> str:
    """'~2,020 tokens/s training against ~4,657 here': both builds' training rates, in tokens or samples."""
    unit = "tokens" if "training_tokens_per_s" in build.speed.figures else "samples"
    rate, this_rate = (each.speed.figures.get(f"training_{unit}_per_s", 0.0) for each in (other, build))
    return f"~{rate:,.0f} {unit}/s training against ~{this_rate:,.0f} here"


def _rates(build: Build) -> str:
    """'~15.8 tokens/s per stream (~5.7 under load)': a build's decode a stream, idle and under load where predicted."""
    figures = build.speed.figures
    loaded = figures.get("sustained_tokens_per_s_per_stream")
    return (f"~{figures.get('decode_tokens_per_s_per_stream', 0.0):,.1f} tokens/s per stream"
            + (f" (~{loaded:,.1f} under load)" if loaded is not None else ""))


def _cheaper(build: Build, changed: Answers, recommend_one: Callable[[Answers], Build]) -> tuple[Build, str] | None:
    """The build for `changed` answers and its GPUs' text, where it costs under CHEAPER_FRACTION_MAX of this one."""
    if changed == build.answers or build.blockers:
        return None
    found = gpu_build(recommend_one, changed)
    if found is None or found[0].total_price_cny >= CHEAPER_FRACTION_MAX * build.total_price_cny:
        return None
    other, gpu = found
    count = f"{other.answers.scale.gpu_count} x " if other.answers.scale.gpu_count > 1 else ""
    return other, f"{count}{gpu.name}"
