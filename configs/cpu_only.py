"""A CPU-only PC for a request: built with no GPU, with why it is offered (tabular data, small-model inference, or
only the budget) and when it is no recommendation (training that needs a GPU)."""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.assemble import assemble, best_cpu_build, decodes_from_ram
from pth_top.configs.assembly import Assembly, Context, trees
from pth_top.configs.build import Component
from pth_top.configs.market import money
from pth_top.configs.memory import estimate_memory
from pth_top.configs.memory_inference import forward_only
from pth_top.configs.parts import Part
from pth_top.configs.quantization import ENGINE_FORMATS
from pth_top.configs.ram_platform import fastest_ram_within_budget
from pth_top.configs.ranking import Fit, acceptable
from pth_top.configs.speed_build import training_work
from pth_top.configs.speed_cpu import (
    CPU_ENCODER_LISTED_SHARE,
    core_gigahertz,
    cpu_flops_per_s,
    cpu_forward_predicted,
    cpu_inference,
    cpu_input_flop_per_cycle,
    cpu_input_flops_per_s,
    forward_input_flops,
    on_a_cpu,
    speech_model,
)
from pth_top.configs.speed_epoch import epoch_seconds
from pth_top.configs.speed_notes import work_a_sample_unknown
from pth_top.units import GIB


def _money(ctx: Context, amount_cny: float) -> str:
    return money(amount_cny, ctx.currency, ctx.rules)


@dataclasses.dataclass(frozen=True, slots=True)
class CpuOnly:
    ctx: Context
    asm: Assembly
    adequate: bool  # the workload does not need a GPU at all
    reason: str
    cheapest_total_cny: float  # the PC with the floor's cheapest CPU: what a GPU build is weighed with


def cpu_context(ctx: Context) -> Context:
    """The same request without a GPU: no CUDA context in the working memory, which then lives in RAM.

    A pinned PSU count belongs to the GPUs it fed: the rules size the CPU-only PC's own. Without a GPU nothing is
    offloaded to the CPU and nothing is split across GPUs: the whole model (experts too) is the working memory.
    """
    pins = {role: (part_id, 0 if role == "psu" else quantity) for role, (part_id, quantity) in ctx.pins.items()}
    whole = ctx.answers.resident().with_value("scale", "gpu_count", 1).with_value("scale", "sharding", "none")
    whole = on_a_cpu(whole, ctx.shape)
    return dataclasses.replace(ctx, pins=pins, memory=estimate_memory(whole, ctx.shape, cuda_context_bytes=0))


def display_line(cpu: Part) -> str:
    graphics = cpu.get("integrated_graphics")
    if graphics:
        return (f"display: no graphics card, so the CPU's integrated {graphics} drives the screen; 'F' Core and "
                "Ryzen 5000 (non-G) CPUs have none, and a PC without one shows nothing, not even the BIOS")
    return (f"display: {cpu.name} has no integrated graphics: use the board's BMC video port if it has one, or fit a "
            "basic graphics card (not in the price) to see the BIOS and the installer")


def cpu_only_offered(ctx: Context, cpu_only: CpuOnly, fit: Fit) -> bool:
    """Adequate for the workload, or the only build within budget that holds it (no GPU build does: Qwen3.5-35B-A3B
    for $1,500, whose cards in budget are too small, on a $991 PC at ~18 tokens/s); and acceptable itself. Never for
    training that needs a GPU: its closest build is a GPU build, not a $950 PC for 70B QLoRA."""
    only_one_in_budget = not fit.feasible and cpu_only.asm.total_cny <= ctx.budget_cny
    if not fit.feasible and ctx.budget_cny < cpu_only.asm.total_cny < fit.assembly.total_cny:  # the nearest build
        limit = ctx.answers.budget.max_power_w
        return not too_slow_on_the_cpu(ctx, cpu_only) and not needs_a_gpu(ctx, cpu_only) \
            and not cpu_only.asm.unsatisfied and not (limit and cpu_only.asm.wall_w > limit)
    return ((cpu_only.adequate or only_one_in_budget) and not needs_a_gpu(ctx, cpu_only)
            and not too_slow_on_the_cpu(ctx, cpu_only) and acceptable(cpu_only.ctx, cpu_only.asm))


def too_slow_on_the_cpu(ctx: Context, cpu_only: CpuOnly) -> bool:
    """A PC offered CPU-only on price alone whose decode is under the slow rate, or not predicted (a server CPU, a
    denoiser): no recommendation (Mistral Large 123B Q4 on two DDR5 channels: 0.9 tokens/s; ERNIE-4.5-300B for 8
    users on an EPYC). A slow first token is warned about: shorter prompts help it. A stated rate (speed.RATE_TARGETS)
    the PC is not predicted to meet rules it out, adequate or not: a denoiser's images a second are not predicted."""
    if ctx.answers.task.mode != "inference":
        return False
    stated = sp.stated_target(ctx.answers.task)
    figures = cpu_figures(ctx, cpu_only)
    decode = figures.get("decode_tokens_per_s_per_stream")
    # Where no build's rate is predicted (a model given by its count over audio), the rate decides nothing (audit
    # ZY27: Silero VAD's 2 MB for 100 chunks a second was refused the EUR 740 PC and sent to a EUR 1,065 GPU PC).
    if stated is not None and figures.get(stated[0].figure, 0.0) < stated[1] \
            and not work_a_sample_unknown(ctx.answers, ctx.shape):
        return True
    if cpu_only.adequate:
        return False
    if decode is None:  # a denoiser, or a language model on a CPU whose decode is not predicted: unknown, not offered
        return bool(ctx.shape.denoising_steps) or (ctx.shape.kind == "transformer" and not ctx.shape.encoder_only)
    return decode < sp.SLOW_DECODE_TOKENS_PER_S


def cpu_figures(ctx: Context, cpu_only: CpuOnly) -> dict[str, float]:
    """The PC's predicted figures: a decode a stream (llama.cpp from RAM), or an encoder's or a CNN's inputs a
    second; none where they are not predicted."""
    (cpu, _), (kit, kits) = cpu_only.asm.chosen["cpu"], cpu_only.asm.chosen["memory_kit"]
    out, _ = cpu_inference(cpu_only.ctx.answers, ctx.shape, Component("cpu", cpu.id, cpu.name, 1, 0.0, dict(cpu.spec)),
                           Component("memory_kit", kit.id, kit.name, kits, 0.0, dict(kit.spec)))
    return out.figures


def cpu_decode_tokens_per_s(ctx: Context, cpu_only: CpuOnly) -> float | None:
    """The PC's predicted decode a stream (llama.cpp from RAM); None where it is not predicted."""
    return cpu_figures(ctx, cpu_only).get("decode_tokens_per_s_per_stream")


def cpu_only_alternative_line(ctx: Context, cpu_only: CpuOnly) -> tuple[str, float]:
    """The PC as a way out: its price and why, a language model's decode from its RAM and, where it takes minutes,
    its first token; and that first token's seconds (0 where not predicted)."""
    line = f"a CPU-only PC, {_money(ctx, cpu_only.asm.total_cny)}: {cpu_only.reason}"
    if cpu_only.adequate or ctx.answers.task.mode != "inference":
        return line, 0.0
    figures = cpu_figures(ctx, cpu_only)
    decode, first_s = figures.get("decode_tokens_per_s_per_stream"), figures.get("first_token_s", 0.0)
    line += f" (~{decode:,.1f} tokens/s a stream from its RAM)" if decode else ""
    if first_s > sp.SLOW_FIRST_TOKEN_S:
        line += f"; first token after a {ctx.shape.sequence_length:,}-token prompt in ~{sp.duration(first_s)}"
    return line, first_s


# A PC short of its rate (SLOW_DECODE_TOKENS_PER_S, or a stated one) by at most half is still named, said slow.
SLOW_BUT_USABLE_SHARE = 0.5
_UNDER_READING = f"under the {sp.SLOW_DECODE_TOKENS_PER_S:g} a reader keeps up with"


def cpu_only_over_budget_line(ctx: Context, cpu_only: CpuOnly) -> str:
    """A CPU-only PC over budget that would do the job: adequate for it, or a language model it decodes at a usable
    rate (OLMoE-1B-7B at ~32 tokens/s from DDR4 for EUR 663 of EUR 600), or at least half of it, said slow (audit
    ZQ24: a 13B Q4_K_M for EUR 700, ~4.3 tokens/s on a EUR 740 PC, where a Ryzen 7 5800X is reported at 4-6); ''
    otherwise."""
    if cpu_only.asm.total_cny <= ctx.budget_cny:  # within budget it is offered, or not usable: not "over"
        return ""
    if cpu_only.adequate:
        why = cpu_only.reason.split(":")[0]
    else:
        decode = cpu_decode_tokens_per_s(ctx, cpu_only) if ctx.answers.task.mode == "inference" else None
        if decode is None or decode < SLOW_BUT_USABLE_SHARE * sp.SLOW_DECODE_TOKENS_PER_S:
            return ""
        why = f"it decodes ~{decode:,.1f} tokens/s a stream from its RAM" + (
            f", slow: {_UNDER_READING}" if decode < sp.SLOW_DECODE_TOKENS_PER_S else "")
    over = _money(ctx, cpu_only.asm.total_cny - ctx.budget_cny)
    display = ", a CPU with integrated graphics for the display included" if cpu_only.asm.chosen["cpu"][0].get(
        "integrated_graphics") else ""
    return f"a CPU-only PC would do ({why}) but costs {_money(ctx, cpu_only.asm.total_cny)} ({over} over){display}"


def cpu_only_leads(ctx: Context, cpu_only: CpuOnly, fit: Fit) -> bool:
    """The recommendation: adequate and cheaper, or all the budget buys (no GPU build within it at all); a PC that is
    only the one build in budget holding a language model follows the GPU levers (--cpu-moe decodes faster)."""
    cheaper = not fit.feasible or cpu_only.cheapest_total_cny < fit.assembly.total_cny
    return cheaper and cpu_only_first(ctx, cpu_only, fit) and cpu_only_offered(ctx, cpu_only, fit) \
        and not (fit.feasible and _bound_only(ctx, cpu_only))


def _bound_only(ctx: Context, cpu_only: CpuOnly) -> bool:
    """Whether an encoder's stated inputs a second are met on the cores by their upper bound only, under PyTorch's
    listed share of it: a GPU build within budget then leads (audit CY65: Paraformer-large's 62 utterances/s on a
    CNY 9,743 PC bounded at ~69, where FunASR's CPU tables give 30-48 in fp32, and CNY 60,000 buys a GPU build)."""
    stated = sp.stated_target(ctx.answers.task)
    if stated is None or stated[0].figure != "samples_per_s" or ctx.shape.kind != "transformer":
        return False
    return cpu_figures(ctx, cpu_only).get("samples_per_s", 0.0) * CPU_ENCODER_LISTED_SHARE < stated[1]


def cpu_only_first(ctx: Context, cpu_only: CpuOnly, fit: Fit) -> bool:
    """Whether the CPU-only PC comes before the GPU levers: adequate, or the budget buys no GPU build at all."""
    return cpu_only.adequate or fit.assembly.total_cny > ctx.budget_cny


def needs_a_gpu(ctx: Context, cpu_only: CpuOnly) -> bool:
    """Training, or a decoder generating in PyTorch, that needs a GPU, offered CPU-only on price alone: not a
    recommendation (issue: CPU-only where adequate, i.e. tabular data and small-model inference)."""
    return not cpu_only.adequate and (ctx.answers.task.mode == "training" or _generates_in_pytorch(ctx))


def cpu_only_inadequate_line(ctx: Context, fit: Fit | None) -> str:
    data = ctx.answers.data
    what = "training this model" if ctx.answers.task.mode == "training" else \
        "this decoder's generate() (PyTorch's CPU decode is not llama.cpp's, whose rate is the only one predicted)"
    line = (f"not feasible within {_money(ctx, ctx.budget_cny)}: a CPU-only PC is not adequate for {what} "
            f"({ctx.memory.total_bytes / GIB:.1f} GiB working memory, {data.kind} data, {data.dataset_size_gb:g} GB): "
            "it would run far slower than on any GPU")
    if fit is not None and fit.cheapest_fitting is not None:
        fitting_build, gpu = fit.cheapest_fitting
        line += f"; the cheapest build whose GPU holds it costs {_money(ctx, fitting_build.total_cny)} ({gpu.name})"
    return line + "; renting a GPU by the hour, and what else is feasible, below"


def _cores_for_the_stated_rate(ctx: Context, cheapest: Assembly) -> Assembly:
    """An encoder's stated inputs a second (task.target_samples_per_s) on the cores: the cheapest desktop
    PC whose cores meet it within the budget, else the one that comes closest (review AE: the cheapest 6-core PC was
    the only one tried)."""
    stated = sp.stated_target(ctx.answers.task)
    flops = forward_input_flops(ctx.answers, ctx.shape)
    if stated is None or stated[0].decode or not flops or ctx.answers.task.mode != "inference" \
            or not cpu_forward_predicted(ctx.shape):
        return cheapest
    per_cycle = cpu_input_flop_per_cycle(ctx.shape)
    needed = stated[1] * flops / (per_cycle * 1e9)  # P-core GHz
    best = best_cpu_build(ctx, None, cheapest, lambda build: min(
        needed, core_gigahertz(build.chosen["cpu"][0].spec)))
    if best is not cheapest:
        best.reasons["cpu"].append(f"the cheapest desktop CPU whose cores meet the stated {stated[1]:,.0f} inputs/s "
                                   f"({needed:,.0f} P-core GHz at {per_cycle:g} FLOP a cycle), or "
                                   "the closest within the budget")
    return best


def _most_cores_within_budget(ctx: Context, cheapest: Assembly) -> Assembly:
    """Tabular training runs on the cores (XGBoost/LightGBM split finding is parallel over features, Chen and
    Guestrin arXiv:1603.02754 §4.1): the desktop CPU with the most core-GHz (E-cores weighted, speed_cpu) whose
    whole PC the budget buys, the cheaper PC among equals."""
    best = best_cpu_build(ctx, None, cheapest, lambda build: core_gigahertz(build.chosen["cpu"][0].spec))
    if best is not cheapest:
        chosen = best.chosen["cpu"][0]
        lines = best.reasons["cpu"]
        floor_line = next(index for index, line in enumerate(lines) if line.startswith("cheapest CPU with these cores"))
        lines[floor_line] = (
            f"the desktop CPU with the most cores x clock (E-cores weighted: {core_gigahertz(chosen.spec):.0f} P-core "
            f"GHz, {chosen['cores_count']}c/{chosen['threads_count']}t) whose PC the budget buys, "
            f"{_money(ctx, best.total_cny)} in all, where the cheapest that meets the floor, "
            f"{cheapest.chosen['cpu'][0].name}, makes {_money(ctx, cheapest.total_cny)}: gradient-boosted trees train "
            "on every core, so more cores buy speed directly")
    return best


# A small model's compute, not only its memory: a CPU serves an input in at most 0.1 s at llama.cpp's prefill rate
# (speed_cpu.CPU_PREFILL_FLOP_PER_CYCLE): ResNet-50's 8.2 GFLOP and BERT-base's ~22 at 128 tokens in tens of ms on a
# desktop CPU, not a detector's hundreds (Cascade R-CNN's 490; audit YB) nor Whisper's 30 s windows (~2 TFLOP; ZD).
SMALL_MODEL_MAX_SECONDS = 0.1


def _input_seconds(ctx: Context, cpu: dict) -> float:
    """Seconds a CPU takes for one input's forward FLOPs on its cores (inf without cores)."""
    rate = cpu_input_flops_per_s(ctx.shape, cpu)
    return forward_input_flops(ctx.answers, ctx.shape) / rate if rate else math.inf


# A small model's training on the cores, not only its memory and data: an epoch within a minute at the cores'
# llama.cpp rate (PyTorch's is lower), so a run of tens of epochs takes an hour at most. nanoGPT's shakespeare-char
# model (10.7M parameters, 1M tokens: ~71 TFLOP an epoch, 3 minutes on an A100) is a GPU's, and its README shrinks it
# for a CPU; LeNet on MNIST (0.15 TFLOP) a CPU's (audit XA5).
SMALL_TRAINING_EPOCH_MAX_S = 60.0


def cpu_epoch_seconds(ctx: Context, cpu: dict) -> tuple[float, str]:
    """Seconds one training epoch takes on the CPU's cores at their prefill rate, and its text; (0, "") where the data
    do not say how much work an epoch is (audio, mixed) or the model has no FLOPs (tabular)."""
    shape, answers = ctx.shape, ctx.answers
    work, origin, _ = epoch_seconds(answers, shape, 1.0)  # at one unit a second: the epoch's tokens or samples
    rate = cpu_flops_per_s(cpu)
    if not work or not rate or work_a_sample_unknown(answers, shape):
        return 0.0, ""
    per_sample, _, _, tokens = training_work(answers, shape)
    per_unit = per_sample / tokens  # the epoch's work is in tokens where a sample has them
    seconds = work * per_unit / rate
    return seconds, (f", ~{sp.duration(seconds)} an epoch of {origin} on its cores ({work * per_unit / 1e12:,.3g} "
                     f"TFLOP at {rate / 1e12:.2g} TFLOP/s, llama.cpp's prefill rate)")


def _generates_in_pytorch(ctx: Context) -> bool:
    """A decoder that generates its output token by token in PyTorch (generate()), which one forward pass does not
    time and whose CPU rate is not llama.cpp's (audit XW12: ChatTTS's 1,400 audio tokens, "~0 ms an input", was sold a
    CPU-only PC against its README's 4 GB GPU)."""
    task, shape = ctx.answers.task, ctx.shape
    if speech_model(ctx.answers, ctx.shape):
        return False
    return shape.kind == "transformer" and not forward_only(shape) and task.generated_tokens > 0 \
        and stacks.serving_engine(task.serving_engine, ctx.answers.scenario, task.precision) == "hf_generate"


def gguf_cpu_alternative(ctx: Context, context_for: Callable[[Answers], Context]) -> tuple[str, Answers] | None:
    """A decoder under generate() that no build within budget serves, as llama.cpp's GGUF on a CPU-only PC within it
    that decodes at a usable rate: a way out before renting (audit ZF19: Yi-6B-Chat-4bits for a CNY 5,000 student
    was offered only an A10 by the hour, where its Q4_K_M decodes ~10.8 tokens/s on a CNY 4,523 PC)."""
    task = ctx.answers.task
    gguf = ENGINE_FORMATS["llama_cpp"].get(task.precision)  # a 16-bit model's is not offered
    if gguf is None or task.mode != "inference" or not _generates_in_pytorch(ctx) or ctx.shape.encoder_decoder:
        return None
    changed = ctx.answers.with_value("task", "serving_engine", "llama_cpp").with_value("task", "quantization", gguf)
    changed_ctx = context_for(changed)
    pc = cpu_only_pc(changed_ctx)
    if pc is None or pc.asm.total_cny > ctx.budget_cny or too_slow_on_the_cpu(changed_ctx, pc) \
            or not acceptable(pc.ctx, pc.asm):
        return None
    name = gguf.removeprefix("gguf_").upper()
    return (f"the same model as llama.cpp's GGUF {name} (task.serving_engine = \"llama_cpp\") on a CPU-only PC, "
            f"{_money(ctx, pc.asm.total_cny)}: {pc.reason}"), changed


def short_of_the_rate(ctx: Context, cpu_only: CpuOnly) -> tuple[str, Answers] | None:
    """A CPU-only PC within budget ruled out by its rate alone, where it reaches at least half of it: a way out before
    renting. Under a stated rate (task.target_*), at the rate it reaches (audit ZK22: Lightweight OpenPose's 15.5 GFLOP
    for a 25 FPS webcam on $700 was sent to rent an A10, the $622 PC's ~14.6 inputs/s never said); else a decode
    under SLOW_DECODE_TOKENS_PER_S, said slow (audit ZQ24: a 13B Q4_K_M for EUR 700, ~4.3 tokens/s from DDR4 where a
    Ryzen 7 5800X is reported at 4-6, was offered only renting)."""
    if cpu_only.asm.total_cny > ctx.budget_cny or needs_a_gpu(ctx, cpu_only) or ctx.answers.task.mode != "inference" \
            or not acceptable(cpu_only.ctx, cpu_only.asm):
        return None
    price = _money(ctx, cpu_only.asm.total_cny)
    stated = sp.stated_target(ctx.answers.task)
    if stated is None:
        decode = cpu_decode_tokens_per_s(ctx, cpu_only) or 0.0
        if not SLOW_BUT_USABLE_SHARE * sp.SLOW_DECODE_TOKENS_PER_S <= decode < sp.SLOW_DECODE_TOKENS_PER_S:
            return None
        return (f"a CPU-only PC, {price}, slow: ~{decode:,.1f} tokens/s a stream from its RAM, "
                f"{_UNDER_READING}: {cpu_only.reason}"), ctx.answers
    target, wanted = stated
    reached = cpu_figures(ctx, cpu_only).get(target.figure, 0.0)
    kept = math.floor(reached * 10) / 10 if reached < 10 else float(math.floor(reached))
    if not SLOW_BUT_USABLE_SHARE * wanted <= reached < wanted or not kept:
        return None
    changed = ctx.answers.with_value("task", target.answer_key, kept)
    return (f"a CPU-only PC, {price}, at the rate its cores reach: ~{reached:,.1f} {target.unit}, short of the "
            f"{wanted:,g} asked (task.{target.answer_key} = {kept:g} keeps it): {cpu_only.reason}"), changed


def _serves_here(ctx: Context) -> bool:
    """Whether a CPU may serve the inference: anywhere but a server, and on a server at a stated rate of inputs that
    its cores are timed against (audit ZI31: bge-small for 5 passages/s on EUR 1,200 got an RTX 5060 PC for EUR 1,163,
    where an 8-core CPU embeds ~10/s in PyTorch, Infinity's benchmark)."""
    stated = sp.stated_target(ctx.answers.task)
    return ctx.answers.scenario != "inference_server" or (stated is not None and not stated[0].decode)


def cpu_only_pc(ctx: Context) -> CpuOnly | None:
    """A CPU-only PC, with why it is offered: classical ML on tabular data, small-model inference, and small-model
    training on a small data set need no GPU; otherwise only on price."""
    cpu_ctx = cpu_context(ctx)
    asm = assemble(cpu_ctx, None)
    cheapest_total = asm.total_cny
    classical = trees(ctx)
    if classical and ctx.answers.task.mode == "training" and not ctx.pins.get("cpu"):
        asm = _most_cores_within_budget(cpu_ctx, asm)
    elif decodes_from_ram(ctx) and not ctx.pins.get("cpu"):
        asm = fastest_ram_within_budget(cpu_ctx, None, asm)
    elif not ctx.pins.get("cpu"):
        asm = _cores_for_the_stated_rate(cpu_ctx, asm)
    asm.reasons.setdefault("cpu", []).insert(1, display_line(asm.chosen["cpu"][0]))
    if classical:
        reason = ("tabular data: classical ML (scikit-learn, XGBoost/LightGBM on CPU) runs on cores and RAM; "
                  "scikit-learn has no GPU support (scikit-learn FAQ, 'Will you add GPU support?')")
        return CpuOnly(cpu_ctx, asm, True, reason, cheapest_total)
    small = ctx.rules.cpu_only
    model_gib = cpu_ctx.memory.total_bytes / GIB
    seconds = _input_seconds(ctx, dict(asm.chosen["cpu"][0].spec))
    if ctx.answers.task.mode == "inference" and _serves_here(ctx) and model_gib <= small.small_model_max_gib \
            and seconds <= SMALL_MODEL_MAX_SECONDS \
            and not _generates_in_pytorch(ctx):
        reason = (f"small-model inference: {model_gib:.2f} GiB is within the guide's small class (LeNet, ResNet-18 in "
                  f"{small.small_model_max_gib:g} GB, guide §{small.guide_section}), ~{seconds * 1e3:,.0f} ms an "
                  f"input on the CPU's cores (at most {SMALL_MODEL_MAX_SECONDS * 1e3:g}); a CPU serves it, cheaper "
                  "than any GPU build")
        return CpuOnly(cpu_ctx, asm, True, reason, cheapest_total)
    data_gb = ctx.answers.data.dataset_size_gb
    epoch_s, epoch_text = cpu_epoch_seconds(ctx, dict(asm.chosen["cpu"][0].spec))
    # A model given by its count (its activations and work unknown) is no small job by its floor (audit ZP34:
    # GPT-SoVITS's ~80M over audio, which needs 6 GB of a GPU, was sold a CPU-only PC at "~0.51 s an epoch").
    if ctx.answers.task.mode == "training" and model_gib <= small.small_model_max_gib \
            and data_gb <= small.small_training_dataset_max_gb and epoch_s <= SMALL_TRAINING_EPOCH_MAX_S \
            and not work_a_sample_unknown(ctx.answers, ctx.shape):
        reason = (f"small-model training: {model_gib:.2f} GiB of working memory (the guide's small class, LeNet and "
                  f"ResNet-18 in {small.small_model_max_gib:g} GB, §{small.guide_section}) on {data_gb:g} GB of "
                  f"data{epoch_text}: a CPU trains it, cheaper than any GPU build")
        return CpuOnly(cpu_ctx, asm, True, reason, cheapest_total)
    if ctx.answers.task.mode == "training" and ctx.answers.task.precision == "amp_fp16":
        asm.reasons["cpu"].append(
            "mixed precision on a CPU is bfloat16, not fp16 AMP: torch.autocast('cpu') defaults to torch.bfloat16 "
            "(pytorch.org/docs/stable/_modules/torch/cpu/amp/autocast_mode)")
    if ctx.pins.get("gpu"):
        reason = "chosen with the GPU swap key: the workload runs on the CPU, far slower, its working memory in RAM"
    else:
        reason = (f"no GPU build within the budget, {_money(ctx, ctx.budget_cny)}, holds the workload as answered; "
                  "on a CPU it runs, far slower than on a GPU, with its working memory in RAM" + (
                      ", in whisper.cpp (ggml, llama.cpp's library: timed at its rate) or faster-whisper "
                      "(CTranslate2), not generate()" if speech_model(ctx.answers, ctx.shape) else ""))
    return CpuOnly(cpu_ctx, asm, False, reason, cheapest_total)
