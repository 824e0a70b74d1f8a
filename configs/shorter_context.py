"""A shorter context or sequence as a way out: the longest that holds the job on the build it found, not half; and
where half fits no build, a quarter or less, down to SHORTEST_CONTEXT_TOKENS."""

from __future__ import annotations

from typing import Callable

from pth_top.configs.answers import Answers
from pth_top.configs.assembly import Context
from pth_top.configs.levers import SHORTER_LABEL
from pth_top.configs.way_out import Alternative, feasible_build

# The longest found by halving the gap between half and the whole on the build that holds half, to whole blocks of 256
# tokens (vLLM's and llama.cpp's KV-cache pages are 16-256), in at most LONGER_TRIES builds.
LONGER_ROUNDING_TOKENS = 256
LONGER_TRIES = 6
SHORTEST_CONTEXT_TOKENS = 2048  # a context halved no further: under it a chat's history or a document does not fit
Attempt = Callable[[Answers, str], tuple[Answers, str, Alternative | None]]  # a change's answers, label and build


def longest_that_fits(ctx: Context, answers: Answers, label: str, feasible: Alternative,
                      context_for: Callable[[Answers], Context]) -> tuple[Answers, str, Alternative]:
    """The shorter context's way out at the longest length the same GPUs hold at no higher price, bisected between
    the half that holds and the whole that does not (audit BY57: Reka Flash 3 at 32k on one 16 GB card was offered
    14,336 tokens with an 8-bit cache, where ~28k fit; review r73: 24,576 where 27,648 fit)."""
    asked, now = ctx.answers.workload.sequence_length, answers.workload.sequence_length
    what = "context" if answers.task.mode == "inference" else "sequence"
    shown = SHORTER_LABEL.format(what=what, tokens=now)
    gpu = ctx.catalog.get(feasible.build_key[0])
    if not now < asked or shown not in label or gpu is None:
        return answers, label, feasible
    best = (answers, label, feasible)
    low, high = now, asked
    for _ in range(LONGER_TRIES):
        tokens = (low + high) // 2 // LONGER_ROUNDING_TOKENS * LONGER_ROUNDING_TOKENS
        if tokens <= low:
            break
        longer = answers.with_value("workload", "sequence_length", tokens)
        longer_label = label.replace(shown, SHORTER_LABEL.format(what=what, tokens=tokens))
        found = feasible_build(ctx, longer_label, context_for(longer), [(gpu, True)])
        if found is not None and found.price_cny <= feasible.price_cny:
            best, low = (longer, longer_label, found), tokens
        else:
            high = tokens
    return best


def shorter_still(answers: Answers, label: str, attempt: Attempt) -> tuple[Answers, str, Alternative | None]:
    """Where half the context fits no build within the budget (inference), a quarter, an eighth, down to
    SHORTEST_CONTEXT_TOKENS, each `attempt`ed (with the quality-free levers): the first some build holds, which
    longest_that_fits then lengthens (audit DS72: Command R v01 at 32k for EUR 1,500 was offered only a rented H100,
    where a used RTX 3090 holds ~3.5k with an 8-bit KV cache)."""
    tokens = answers.workload.sequence_length
    shown = SHORTER_LABEL.format(what="context", tokens=tokens)
    if answers.task.mode != "inference" or shown not in label:
        return answers, label, None
    while tokens > SHORTEST_CONTEXT_TOKENS:
        tokens = max(SHORTEST_CONTEXT_TOKENS, tokens // 2)
        found = attempt(answers.with_value("workload", "sequence_length", tokens),
                        label.replace(shown, SHORTER_LABEL.format(what="context", tokens=tokens)))
        if found[2] is not None:
            return found
    return answers, label, None
