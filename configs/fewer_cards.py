"""A layer split over several small cards decodes at one card's bandwidth: fewer, larger cards within the same budget
are named where they decode clearly faster."""

from __future__ import annotations

from typing import Callable

from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.beyond_answers import gpu_build, within_text
from pth_top.configs.build import Build
from pth_top.configs.rules import Rules

# How much faster fewer cards must decode to be named: both rates come from one model and one engine, so their errors
# largely cancel; a quarter faster on fewer cards to power and cool (one used RTX 3090 ~150 tokens/s, two RTX 5070s
# ~116, the same money).
FEWER_CARDS_SPEEDUP = 1.25


def faster_on_fewer_cards_within_budget(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build],
                                        alternative: bool = False) -> str:
    """A layer-split inference build of several cards names the build of fewer cards within the budget that decodes
    at least FEWER_CARDS_SPEEDUP times as fast (Magistral Small 24B Q4 at 40k on 2 used RTX 3060s at ~10.5 tokens/s,
    where one used RTX 3090 decodes ~27 for $48 more within $2,000). `alternative`: the build is the first alternative
    of one that is no recommendation (Nemotron-3-Nano int4 on 2 used RTX 4070s at ~88, one used RTX 3090 ~143)."""
    answers = build.answers
    task = answers.task
    per_stream = build.speed.figures.get("decode_tokens_per_s_per_stream", 0.0)
    gpu = build.component("gpu")
    gpu_count = gpu.quantity if gpu is not None else 0
    if (gpu_count < 2 or build.blockers or not per_stream or answers.scenario == "edge_deployment"
            or not stacks.takes_turns(task.mode, task.serving_engine, answers.scenario, task.precision)):
        return ""
    for count in range(1, gpu_count):
        found = gpu_build(recommend_one, answers.with_value("scale", "gpu_count", count))
        if found is None:
            continue
        other, card = found
        rate = other.speed.figures.get("decode_tokens_per_s_per_stream", 0.0)
        if rate >= FEWER_CARDS_SPEEDUP * per_stream:
            return (f"faster within budget: {count} x {card.name} decodes ~{rate:,.1f} tokens/s per stream "
                    f"(~{per_stream:,.1f} {'on the first alternative' if alternative else 'here'}: a layer split "
                    "runs one card at a time), "
                    f"{within_text(other, build, rules)}: answer scale.gpu_count = {count}"
                    + (" with the first alternative's answers" if alternative else ""))
    return ""
