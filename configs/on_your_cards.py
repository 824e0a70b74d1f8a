"""Ways out on the buyer's own or pinned cards: the cheapest lever that fits the job on them, or more of them."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Callable, Iterator

from pth_top.configs import stacks
from pth_top.configs.answers import MAX_GPUS, Answers, splits_over_gpus
from pth_top.configs.assembly import ROOMY, SHORT, TIGHT, Context, buyable, fits_on, memory_fit, needed_bytes
from pth_top.configs.beyond_answers import keeps_the_job
from pth_top.configs.cheap_levers import cheap_levers, with_cheap_label
from pth_top.configs.levers import answer_changes, queue_lever, queued_label
from pth_top.configs.memory_terms import OFFLOAD_SHARDINGS
from pth_top.configs.owned import all_owned, bought_beside_owned, grown_share, is_owned, owned_pin
from pth_top.configs.part_types import DESKTOP_SYSTEM, SYSTEM_GPU_FORMS
from pth_top.configs.parts import Part
from pth_top.configs.quantization import weight_format_name
from pth_top.configs.ranking import job_speed, trains_at_precision, weight_format_problem
from pth_top.configs.way_out import SLOW_RATE_BAND, Alternative, feasible_build, largest_at_once
from pth_top.units import GIB


def on_the_pinned_gpus(ctx: Context, pinned_context_for: Callable[[Answers], Context]) -> list[Alternative]:
    """When memory is what the pinned GPUs lack, the cheapest lever (same GPU count) that fits the job on them; and
    where that lever changes the job and its engine queues, the queue alone after it: what the launch does as asked
    (audit YQ2: Llama-3.2-90B-Vision's 8 requests of 81,920 tokens on 4 owned H100s, vLLM holding some at once)."""
    pinned = ctx.pins.get("gpu")
    card = ctx.catalog.get(pinned[0]) if pinned else None
    if pinned is None or card is None or memory_fit(ctx, card) != SHORT:
        return []
    found = _levers_on(ctx, card, pinned_context_for)
    first = next(found, None)
    if first is None:
        return []
    if first[0] == "" or not first[2]:  # the queue alone, or an engine that does not queue
        # A way out under the rate asked (layers run by the CPU at ~2 tokens/s) is followed by the first that meets it
        # (audit XO10: Goliath-120B on 2 owned 3090s was offered -ngl at 2.2, never Q2_K on them at ~9), and a tight
        # one by the first with the estimator's margin (audit YH16: Dolly's 6.9B on 4 owned 3090s got an 8-bit
        # optimizer at 22.3 of 22.8 GiB, never its own README's optimizer offload, 15 GiB).
        if first[1].slow_rate:
            then = next((each[1] for each in found if not each[1].slow_rate), None)
        elif _offloaded(first[1]):  # audit ZB18: pure bf16 on 4 owned 3090s, 1.8x ZeRO-3 offload's rate
            then = next((each[1] for each in found if not _offloaded(each[1])), None)
        elif _other_optimizer(ctx, first[1]):  # audit BC49: Bespoke-Stratos-32B's own ZeRO-3 offload after AdamW8bit
            then = next((each[1] for each in found if not _other_optimizer(ctx, each[1])), None)
        else:
            then = next((each[1] for each in found if not each[1].tight), None) if first[1].tight else None
        return [first[1], *([then] if then is not None else [])]
    alone = next((alternative for label, alternative, _ in found if label == ""), None)
    return [first[1]] + ([alone] if alone is not None else [])


def _other_optimizer(ctx: Context, alternative: Alternative) -> bool:
    """A way out that steps another optimizer than the answers' (an 8-bit one): the one that keeps it follows."""
    answers = alternative.answers
    return answers is not None and answers.task.optimizer != ctx.answers.task.optimizer


def _offloaded(alternative: Alternative) -> bool:
    """A training way out that steps over PCIe from CPU RAM: the one that does not is offered after it."""
    answers = alternative.answers
    return answers is not None and answers.task.mode == "training" and answers.scale.sharding in OFFLOAD_SHARDINGS


def _levers_on(ctx: Context, card: Part, pinned_context_for: Callable[[Answers], Context]
               ) -> Iterator[tuple[str, Alternative, bool]]:
    """The levers that fit the job on the pinned cards, in order: (the lever's label before its queue, the way out,
    whether the engine queues)."""
    # Not sold here: cards the buyer has, the lever that fits them and no build; budget.owned_gpu's are priced at 0.
    owned = not buyable(ctx, card) and not all_owned(ctx.answers, card)
    # Each change alone, then with the quality-free levers added; those that keep the job before those that do not
    # (Sky-T1-32B's full fine-tune at 16k on a pinned 8 x H100: an 8-bit optimizer and a chunked loss, not LoRA).
    # A server's queue is sized on the cards, alone, with the quality-free levers and with smaller weights (audit
    # YA: Llama-3.2-11B-Vision for 64 users on an owned 4090 holds 22 at once with int8 weights and an 8-bit KV cache);
    # queued requests are still served, so a queue keeps the job as its base does (feasibility._keeps_the_job).
    halved = queue_lever(ctx)
    tries: list[tuple[str, Answers, bool]] = []  # (label, answers, whether the queue is sized on them)
    for label, changed in answer_changes(ctx):
        if changed == ctx.answers or changed.scale.gpu_count != ctx.answers.scale.gpu_count:
            continue
        if label == halved:
            tries += [("", ctx.answers, True)] + [(each, answers, True) for each, answers, _ in list(tries)
                                                  if keeps_the_job(ctx.answers, answers)]
            continue
        variants = [(label, changed)]
        cheap = cheap_levers(ctx, changed)
        if cheap != changed:
            variants.append((with_cheap_label(ctx, label, changed, cheap), cheap))
        tries += [(each, answers, False) for each, answers in variants]
        if halved is not None and (changed.task.precision, changed.task.quantization) != (
                ctx.answers.task.precision, ctx.answers.task.quantization):  # not with a second cut (a shorter context)
            tries += [(each, answers, True) for each, answers in variants]
    count = f"{ctx.gpu_count} x " if ctx.gpu_count > 1 else ""
    for keeping in (True, False):
        fitting = [(label, *held, queued) for label, answers, queued in tries
                   if keeps_the_job(ctx.answers, answers) == keeping
                   and (held := _held(ctx, card, pinned_context_for, answers, queued)) is not None]
        for lever, answers, on_them, queued in (_fastest_first(fitting, card) if keeping else fitting):
            label = lever
            if queued:
                label = ", ".join(each for each in (label, queued_label(ctx.answers, answers.workload.batch_size))
                                  if each)
            if owned:
                yield lever, Alternative(f"keeping the pinned {count}{card.name} (cards you have: not sold new here, "
                                         "so their build stays no recommendation), "
                                         f"{label}: {needed_bytes(on_them, card) / GIB:.1f} GiB per GPU "
                                         f"{fits_on(on_them, card, count + card.name)}", answers, dict(ctx.pins)), \
                    halved is not None
                continue
            bought = bought_beside_owned(ctx.answers)
            keep = (f"keeping your {ctx.answers.budget.owned_gpu_count} and {bought} more" if bought else
                    "keeping your" if is_owned(ctx.answers, card) else "keeping the pinned")
            cards = card.name if bought else count + card.name
            feasible = feasible_build(ctx, f"{keep} {cards}, {label}", on_them, [(card, True)])
            if feasible is not None:
                yield lever, replace(feasible, answers=answers, pins=dict(ctx.pins)), halved is not None


def _fastest_first(fitting: list[tuple[str, Answers, Context, bool]], card: Part
                   ) -> list[tuple[str, Answers, Context, bool]]:
    """A training job's levers that fit the cards, fastest first (audit YK2: micro-batch 1 alone, 79 days, after a
    chunked loss, recompute and micro-batch 1, 105), one short of the estimator's margin after one with it unless
    SLOW_RATE_BAND faster (audit ZQ35); other jobs' in the levers' order; the caller passes only levers that keep the
    job (their rates compare)."""
    if not fitting or fitting[0][2].answers.task.mode != "training":
        return fitting

    def rank(each: tuple[str, Answers, Context, bool]) -> float:
        speed = job_speed(each[2], card)
        return -(speed / SLOW_RATE_BAND if memory_fit(each[2], card) == TIGHT else speed)

    return sorted(fitting, key=rank)


def _held(ctx: Context, card: Part, pinned_context_for: Callable[[Answers], Context], answers: Answers,
          queued: bool) -> tuple[Answers, Context] | None:
    """The answers and their context where the card holds them with kernels for the job; queued: at the most
    requests at once it holds (way_out.largest_at_once), with the estimator's margin where that holds a quarter."""
    def on(least: int, count: int) -> tuple[Answers, Context] | None:
        changed = answers.with_value("workload", "batch_size", count)
        on_them = pinned_context_for(changed)
        if weight_format_problem(on_them, card) or not trains_at_precision(on_them, card):
            return None  # the lever leaves the card without kernels or tensor cores for the job: no way out
        return (changed, on_them) if memory_fit(on_them, card) >= least else None

    if not queued:
        return on(TIGHT, answers.workload.batch_size)
    for least in (ROOMY, TIGHT):
        if (sized := largest_at_once(answers.workload.batch_size, partial(on, least))) is not None:
            return sized[1]
    return None


def more_of_your_cards(ctx: Context, context_for: Callable[[Answers], Context]) -> Alternative | None:
    """Owned cards short of memory: the fewest more of them that hold the job as asked, yours first (where fewer
    were pinned), then more like them bought beside them; else, for llama.cpp's Q4_K_M, the fewest in Q4_0 (audit
    XO10: Goliath-120B on 3 RTX 3090s in Q4_0, ~10 tokens/s, hardware-corner.net; in Q4_K_M 3 were 0.5 GiB short and
    4 were sold, EUR 4,200 over). The GPU pin goes with it."""
    pin, answers = owned_pin(ctx.answers), ctx.answers
    card = ctx.catalog.get(pin[0]) if pin is not None else None
    if card is None or memory_fit(ctx, card) != SHORT or ctx.edge or card["form"] == DESKTOP_SYSTEM:
        return None
    plain_q4 = answers.with_value("task", "quantization", "gguf_q4_0") if _gguf_q4_k_m(answers) else None
    for asked in (answers, *([plain_q4] if plain_q4 is not None else [])):
        found = _fewest_more(ctx, context_for, card, asked)
        if found is not None:
            return found
    return None


def _fewest_more(ctx: Context, context_for: Callable[[Answers], Context], card: Part, answers: Answers
                 ) -> Alternative | None:
    """The fewest of the owned card, yours first, then bought beside them, that hold `answers`."""
    owned = answers.budget.owned_gpu_count
    share = card["form"] in SYSTEM_GPU_FORMS  # more of a server's modules: a larger share of it, none bought
    for count in range(ctx.gpu_count + 1, MAX_GPUS + 1):
        bought = count - owned
        if bought > 0 and not share and not buyable(ctx, card):  # bought in the buyer's market and condition
            return None
        plain = grown_share(ctx.catalog, answers.with_value("scale", "gpu_count", count))
        if plain is None:
            return None
        # Data parallel alone first: it splits the batch, which is what a small model's activations need (audit
        # YL2: BEiT-L was told ZeRO-3 across two 3090s for its 0.3B parameters); then the weights sharded too.
        tries = [plain] + ([plain.with_value("scale", "sharding", "zero3")] if answers.task.mode == "training"
                           and answers.scale.sharding in ("none", "zero1", "zero2") else [])
        which = f"{count} of its {card.name} (budget.owned_gpu_count = {count}: a larger share of the server, a " \
            "cloud VM's rent not counted)" if bought > 0 and share else \
            f"{bought} more {card.name} beside the {owned} you have" if bought > 0 else \
            f"{count} of the {owned} {card.name} you have"
        for more in (each for each in tries if splits_over_gpus(each)):
            how = (", ZeRO-3 across them" if more.scale.sharding != ctx.answers.scale.sharding else "") \
                + (f", {Q4_0_LABEL}" if more.task.quantization != ctx.answers.task.quantization else "")
            feasible = feasible_build(ctx, f"{which} (scale.gpu_count = {count}{how})", context_for(more),
                                      [(card, True)])
            if feasible is not None:
                return replace(feasible, answers=more, pins={**ctx.pins, "gpu": (card.id, count)})
    return None


Q4_0_LABEL = ("GGUF Q4_0 instead of Q4_K_M (4.5 bits a weight, not 4.8: a little more quality lost; "
              "task.quantization = \"gguf_q4_0\")")


def _gguf_q4_k_m(answers: Answers) -> bool:
    """Whether llama.cpp serves these answers' weights in Q4_K_M (answered, or its 4-bit default)."""
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    return task.mode == "inference" and engine == "llama_cpp" \
        and weight_format_name(task.quantization, task.precision, engine) == "gguf_q4_k_m"
