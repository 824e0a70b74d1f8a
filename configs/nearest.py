"""The nearest build over budget: the cheapest one a lever makes hold the job, and the GPU build a slow CPU-only PC
names beside itself, within budget or just over it."""

from __future__ import annotations

import math
from typing import Callable

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.assemble import assemble
from pth_top.configs.assembly import SHORT, TIGHT, Assembly, Context, fits_on, memory_fit, needed_bytes
from pth_top.configs.beyond_answers import (
    SLOW_WAY_OUT,
    answer_text,
    gpu_build,
    keeps_the_job,
    raised_budget_build,
    within_text,
)
from pth_top.configs.build import Build
from pth_top.configs.cheap_levers import cheap_levers, with_cheap_label
from pth_top.configs.levers import answer_changes
from pth_top.configs.market import cny_per, money
from pth_top.configs.owned import owned_pin
from pth_top.configs.parts import Part
from pth_top.configs.presets import model_shape
from pth_top.configs.ranking import decodes, fit_budget, job_speed, meets_target, ranked_gpus
from pth_top.configs.rules import Rules
from pth_top.configs.speed import SLOW_DECODE_TOKENS_PER_S, SLOW_FIRST_TOKEN_S, duration
from pth_top.configs.speed_build import job_figures
from pth_top.units import GIB

NEAREST_GPU_BUILD = "the nearest GPU build, over budget"  # beside a CPU-only PC that leads on price


def nearest_over_budget(ctx: Context, context_for: Callable[[Answers], Context], *, keeping_the_job: bool,
                        unchanged: tuple[Assembly, Part] | None = None, asked: Answers | None = None,
                        owned_levers: bool = False) -> str:
    """The cheapest build a lever makes hold the job, and how far over budget it is: of every lever when none fits
    the budget, of those that keep the job as asked (with the quality-free ones added) when only others do. Only a
    lever cheaper than the unchanged job's own cheapest build (the headline names that one) and over the budget
    (one within it is held back by power or its rules, not money). `unchanged`: the recommendation's own cheapest
    fitting build, when it ranked the GPUs (not when one is pinned). `asked`: the answers as asked, beside a slow
    CPU-only PC that leads on price, so the unchanged job's build is named too, and each with its decode rate and first
    token. `owned_levers`: levers that keep the buyer's cards are built on them (else passed over), only the
    platform around them bought (audit YK2: 8 owned V100s at micro-batch 2, ~$535 over, not 8 new V100s for
    $14,190)."""
    if owned_pin(ctx.answers) is not None:  # the buyer's cards: where they hold the job, a way out costs less than
        unchanged = _on_the_owned_cards(ctx)  # the build around them
    elif unchanged is None or sp.stated_target(ctx.answers.task) is not None:  # the caller's is not rate-filtered
        unchanged = _cheapest_fitting(ctx)
    # Builds that run the stated rate (task.target_*) come before cheaper ones that do not, which say their rate.
    lead = "keeping the job as asked, the nearest build is over budget" if keeping_the_job else \
        NEAREST_GPU_BUILD if asked is not None else "the nearest build, over budget"
    if unchanged is not None and asked is not None and not _within_limits(ctx, unchanged[0]):
        unchanged = None
    nearest: tuple[NearestKey, str] | None = None  # (its key, its line)
    if unchanged is not None:  # said only beside a CPU-only PC; else the headline names it, and it bounds the levers
        answered = "as answered" if asked == ctx.answers else "on one GPU"  # review AB: 2 asked
        line = "" if asked is None else (_over_budget_line(ctx, ctx, unchanged, lead, answered, True)
                                         + _answer_hint(ctx, asked, ctx.answers, unchanged[0]))
        nearest = (_nearest_key(ctx, unchanged), line)
    answered_key = nearest[0] if nearest else (False, 0.0, False, 0.0)
    kept = nearest  # the nearest build that keeps the job (the unchanged one does), beside one that does not
    changes = False  # whether `nearest` is a lever's that changes the job
    on_owned = owned_pin(ctx.answers) is not None and unchanged is not None  # the buyer's cards hold the job
    for label, changed in answer_changes(ctx):
        if (keeping_the_job and not keeps_the_job(ctx.answers, changed)) or (
                owned_pin(changed) is not None and not owned_levers):
            continue
        # Cards that hold the job are not set aside to save on the rest (audit AY48: 4 owned V100 32GB, whose host
        # was EUR 1,501 over, were swapped for 4 new RTX 5060 8GB at micro-batch 1, EUR 629 over).
        if on_owned and owned_pin(changed) is None:
            continue
        # The change alone; with the quality-free levers added only where they make a cheaper build hold it.
        alternative = context_for(changed)
        fitting = _cheapest_fitting(alternative, on_owned=owned_levers)
        key = _nearest_key(alternative, fitting) if fitting is not None else None
        cheap = cheap_levers(ctx, changed)
        if cheap != changed:
            cheap_alternative = context_for(cheap)
            cheap_fitting = _cheapest_fitting(cheap_alternative, on_owned=owned_levers)
            cheap_key = _nearest_key(cheap_alternative, cheap_fitting) if cheap_fitting is not None else None
            if cheap_key is not None and (key is None or cheap_key < key):
                alternative, fitting, key = cheap_alternative, cheap_fitting, cheap_key
                label = with_cheap_label(ctx, label, changed, cheap)
        keeps = keeping_the_job or keeps_the_job(ctx.answers, alternative.answers)
        nearer = key is not None and (nearest is None or key < nearest[0])
        nearer_kept = key is not None and keeps and (kept is None or key < kept[0])
        if fitting is None or key is None or fitting[0].total_cny <= ctx.budget_cny or not (nearer or nearer_kept):
            continue
        # The job as answered, roomy, unless a lever saves a twentieth (review AA: EUR 989 TIGHT vs 1,006) or runs the
        # rate the answered one does not (review AB).
        answered_wins = unchanged is not None and key[0] == answered_key[0] and (
            memory_fit(alternative, fitting[1]) == TIGHT or key[1] > LEVER_SAVING * unchanged[0].total_cny)
        if asked is not None and (not _within_limits(ctx, fitting[0]) or answered_wins):
            continue
        # A language model's build that keeps the job says its decode rate, as the headline's cheapest does (audit
        # CQ63: Hermes-3-70B's 3 x RTX A4000 at ~8.2 tokens/s, $161 over, beside 2 x RTX 3090 at ~16.9 for $3,183).
        rate = asked is not None or keeping_the_job
        candidate = (key, _over_budget_line(ctx, alternative, fitting, lead, label, rate)
                     + _answer_hint(ctx, asked, alternative.answers, fitting[0]))
        kept = candidate if nearer_kept else kept
        nearest, changes = (candidate, not keeps) if nearer else (nearest, changes)
    # A lever that changes the job names its build only where it saves a twentieth on one that keeps the job (audit
    # YF2: a full fine-tune's nearest build was LoRA's 8 x L4 for $31 less than the chunked loss's on the same cards).
    if changes and kept is not None and nearest is not None and kept[0][0] == nearest[0][0] \
            and nearest[0][1] > LEVER_SAVING * kept[0][1]:
        return kept[1]
    return nearest[1] if nearest else ""


NearestKey = tuple[bool, float, bool, float]  # _nearest_key's
LEVER_SAVING = 0.95  # beside a CPU-only PC, a lever's GPU build replaces the one as answered where it saves 5 %


def _within_limits(ctx: Context, build: Assembly) -> bool:
    """Whether a build keeps its own rules and the answers' power limit (review AA: an RTX 5060 PC at ~338 W named
    beside a CPU-only PC for a 250 W limit)."""
    limit = ctx.answers.budget.max_power_w
    return not build.unsatisfied and not (limit and build.wall_w > limit)


def _answer_hint(ctx: Context, asked: Answers | None, changed: Answers, build: Assembly) -> str:
    """' (answer budget.amount = 989, task.kv_cache_dtype = "fp8")': what to answer, against the answers as asked,
    for the named build; "" without them."""
    if asked is None:
        return ""
    amount = math.ceil(build.total_cny / cny_per(ctx.currency, ctx.rules))
    levers = answer_text(asked, changed.with_value("budget", "amount", asked.budget.amount))
    return f" (answer budget.amount = {amount}" + (f", {levers}" if levers else "") + ")"


def decode_rate_text(ctx: Context, gpu: Part) -> str:
    """', ~16.9 tokens/s per stream': a language model's decode rate on a build's GPUs; "" for other jobs."""
    return _rate_text(_decode_figures(ctx, gpu))


def _decode_figures(ctx: Context, gpu: Part) -> dict[str, float]:
    """A language model's predicted figures on these GPUs; none for a job that decodes nothing."""
    return job_figures(ctx.answers, ctx.shape, dict(gpu.spec), gpu.name, ctx.gpu_count) if decodes(ctx) else {}


def _rate_text(figures: dict[str, float]) -> str:
    rate = figures.get("decode_tokens_per_s_per_stream", 0.0)
    return f", ~{rate:,.1f} tokens/s per stream" if rate else ""


def _over_budget_line(ctx: Context, alternative: Context, fitting: tuple[Assembly, Part], lead: str, label: str,
                      rate: bool) -> str:
    """'<lead>: <label>: 7.2 GiB per GPU fits <card> for <price>, <over> over', with a rate short of the job's, or
    with `rate` a language model's decode rate whatever it is."""
    build, gpu = fitting
    count = f"{alternative.gpu_count} x " if alternative.gpu_count > 1 else ""
    need = needed_bytes(alternative, gpu) / GIB
    price, over = (money(amount, ctx.currency, ctx.rules) for amount in (build.total_cny,
                                                                         build.total_cny - ctx.budget_cny))
    short = _short_of_target(alternative, gpu)
    figures = _decode_figures(alternative, gpu) if rate else {}
    if not short:
        short = _rate_text(figures)
    if figures.get("first_token_s"):
        short += f", the first token in ~{duration(figures['first_token_s'])}"
    return f"{lead}: {label}: {need:.1f} GiB per GPU {fits_on(alternative, gpu, count + gpu.name)} for {price}, " \
        f"{over} over{short}"


def _cheapest_fitting(ctx: Context, on_owned: bool = False) -> tuple[Assembly, Part] | None:
    """The cheapest build whose GPU holds the job, among the cards that run its stated rate where any does;
    `on_owned`: on the buyer's cards where the answers keep them (None where they do not hold it)."""
    if on_owned and owned_pin(ctx.answers) is not None:  # not sold new here may still be yours (review AF)
        return _on_the_owned_cards(ctx)
    gpus = ranked_gpus(ctx)
    meeting = [(gpu, fits) for gpu, fits in gpus if meets_target(ctx, gpu)]
    return fit_budget(ctx, meeting or gpus).cheapest_fitting


def _on_the_owned_cards(ctx: Context) -> tuple[Assembly, Part] | None:
    """The build around the buyer's own cards (budget.owned_gpu), where they hold the job; None where they do not."""
    pin = owned_pin(ctx.answers)
    card = ctx.catalog.get(pin[0]) if pin is not None else None
    return (assemble(ctx, card), card) if card is not None and memory_fit(ctx, card) != SHORT else None


def _nearest_key(ctx: Context, fitting: tuple[Assembly, Part]) -> NearestKey:
    """(short of the stated rate, or without one slower than reading, price, tight, minus a training job's rate): a
    build that runs the job's rate before a cheaper one that does not, and at one price a roomy fit, then the faster
    lever (audit YK2: on 8 owned V100s, micro-batch 2 before a chunked loss, full recompute and micro-batch 1, 80.9
    days against 107.8)."""
    rate = job_speed(ctx, fitting[1]) if ctx.answers.task.mode == "training" else 0.0
    return (_short_rate(ctx, fitting[1]) is not None, fitting[0].total_cny, memory_fit(ctx, fitting[1]) == TIGHT,
            -rate)


def _short_rate(ctx: Context, gpu: Part) -> float | None:
    """The job's rate on the card where short of the stated one, or without one a language model's decode under
    SLOW_DECODE_TOKENS_PER_S (audit WW: 3 x RTX 4060 Ti named nearest for a 67B at ~4.4 tokens/s, unsaid); None
    where it is not short."""
    if sp.stated_target(ctx.answers.task) is not None:
        return None if meets_target(ctx, gpu) else job_speed(ctx, gpu)
    rate = job_speed(ctx, gpu) if decodes(ctx) else 0.0
    return rate if 0 < rate < sp.SLOW_DECODE_TOKENS_PER_S else None


def _short_of_target(ctx: Context, gpu: Part) -> str:
    """', but ~2.3 tokens/s per stream, under task.target_... = 15' for a build short of the stated rate, or of
    SLOW_DECODE_TOKENS_PER_S without one (_short_rate); "" where it is not."""
    rate, stated = _short_rate(ctx, gpu), sp.stated_target(ctx.answers.task)
    if rate is None:
        return ""
    if stated is None:
        return (f", {SLOW_WAY_OUT}{rate:,.1f} tokens/s per stream, under {sp.SLOW_DECODE_TOKENS_PER_S:g}, slower than "
                "reading")
    return f", {SLOW_WAY_OUT}{rate:,.1f} {stated[0].unit}, under task.{stated[0].answer_key} = {stated[1]:g}"


def faster_than_the_cpu_within_budget(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build],
                                      context_for: Callable[[Answers], Context]) -> str:
    """A CPU-only language-model build (offered on price) names the one-GPU build within budget that decodes at least
    twice as fast, with a mixture of experts' routed experts left in RAM where llama.cpp can (GLM-4.5-Air at 8k for
    EUR 2,300: ~5.5 tokens/s on the PC's DDR5, ~12 with one used card and --cpu-moe)."""
    answers = build.answers
    per_stream = build.speed.figures.get("decode_tokens_per_s_per_stream", 0.0)
    if answers.task.mode != "inference" or build.component("gpu") is not None or build.blockers or not per_stream:
        return ""
    one = answers.with_value("scale", "gpu_count", 1)
    engine = stacks.serving_engine(answers.task.serving_engine, answers.scenario, answers.task.precision)
    routed = model_shape(answers.workload)[0].routed_expert_parameters  # as the --cpu-moe lever (levers.py) reads it
    tries = [one.with_value("task", "expert_offload", True)] if engine == "llama_cpp" and routed else []
    for changed in [*tries, one]:
        found = gpu_build(recommend_one, changed)
        rate = found[0].speed.figures.get("decode_tokens_per_s_per_stream", 0.0) if found else 0.0
        if found is None or rate < 2 * per_stream:
            continue
        other, gpu = found
        moe = " with llama.cpp --cpu-moe" if changed.task.expert_offload else ""
        answer = "scale.gpu_count = 1" + (" and task.expert_offload = true" if moe else "")
        return (f"faster within budget: one {gpu.name}{moe} decodes ~{rate:,.1f} tokens/s per stream "
                f"(~{per_stream:.1f} here), {within_text(other, build, rules)}: answer {answer}")
    return _gpu_just_over_budget(build, rules, recommend_one, one, context_for)


CPU_ONLY_OVER_BUDGET_MULTIPLIERS = (1.1, 1.25)  # how far over budget a slow CPU-only PC looks for a GPU build


def _gpu_just_over_budget(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build], one: Answers,
                          context_for: Callable[[Answers], Context]) -> str:
    """A slow CPU-only PC (under SLOW_DECODE_TOKENS_PER_S or minutes to the first token) names the GPU build up to
    25 % over budget (audit T: Granite 3.3 8B Q4 for $700 used, a PC at ~2.1 min to the first token, where one used
    RTX 3060 is $732 and ~5x faster); failing that, the nearest GPU build over budget with a lever (audit ZI: Gemma 3
    12B at 8k for EUR 900, ~6 min to the first token; an 8 GB card with a q8 KV cache, EUR 989, ~9 s)."""
    figures = build.speed.figures
    if (figures.get("decode_tokens_per_s_per_stream", 0.0) >= SLOW_DECODE_TOKENS_PER_S
            and figures.get("first_token_s", 0.0) <= SLOW_FIRST_TOKEN_S):
        return ""
    found = raised_budget_build(build, rules, recommend_one, one, CPU_ONLY_OVER_BUDGET_MULTIPLIERS)
    if found is None:
        return nearest_over_budget(context_for(one), context_for, keeping_the_job=False, asked=build.answers)
    other, gpu, amount = found
    price = money(other.total_price_cny, build.currency, rules)
    return (f"a GPU just over budget: one {gpu.name}, a build of {price} "
            f"({money(other.total_price_cny - build.budget_cny, build.currency, rules)} over): "
            f"{other.speed.summary[0]} (answer budget.amount = {amount}"
            + (", scale.gpu_count = 1)" if build.answers.scale.gpu_count != 1 else ")"))  # review AC: asked on 2
