"""A desktop system (a DGX Spark) bought for its memory names the faster PC build within budget: the same weights
split over more cards, or the next smaller weights on one."""

from __future__ import annotations

from typing import Callable

from pth_top.configs.answers import Answers
from pth_top.configs.beyond_answers import answer_text, gpu_build, within_text
from pth_top.configs.build import Build
from pth_top.configs.levers import more_gpu_counts, split_label
from pth_top.configs.market import money
from pth_top.configs.part_types import DESKTOP_SYSTEM
from pth_top.configs.presets import model_shape
from pth_top.configs.rules import Rules
from pth_top.configs.smaller_weights import smaller_weights

# A box's 273 GB/s against a card's 1-1.8 TB/s: a PC build named where it decodes at least 3x as fast (audit ZU: Jamba
# at 140k in bf16 for $60,000, a DGX Spark at ~7 tokens/s and ~58 s to the first token; two 96 GB cards or one in 8 bits
# decode ~10x as fast).
FASTER_THAN_A_BOX = 3.0


def faster_than_a_desktop_system(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """The first PC build within budget that decodes FASTER_THAN_A_BOX times as fast as the desktop system: the
    same precision over more GPUs (the job kept), then the next smaller weights on the answered GPUs."""
    answers, gpu = build.answers, build.component("gpu")
    per_stream = build.speed.figures.get("decode_tokens_per_s_per_stream", 0.0)
    if (answers.task.mode != "inference" or answers.scenario == "edge_deployment" or build.blockers or gpu is None
            or gpu.spec.get("form") != DESKTOP_SYSTEM or not per_stream):
        return ""
    split = [(f"{split_label(answers)} across {count} GPUs", f"scale.gpu_count = {count}",
              answers.with_value("scale", "gpu_count", count)) for count in more_gpu_counts(answers)]
    smaller = [(f"{label} (a small quality loss: check the model's own results)", answer_text(answers, changed),
                changed) for label, changed in smaller_weights(answers, model_shape(answers.workload)[0])[:1]]
    # Then both: the smaller weights split (audit ZQ24: Voxtral-Small-24B for 4 users at 32k in bf16, EUR 12,000, a
    # DGX Spark at ~3.2 tokens/s, where FP8 weights over 4 x RTX 5070 Ti decode ~40).
    both: list[tuple[str, str, Answers]] = []
    for what, _, changed in smaller:
        for gpus in more_gpu_counts(changed):
            split_out = changed.with_value("scale", "gpu_count", gpus)
            both.append((f"{what}, {split_label(changed)} across {gpus} GPUs", answer_text(answers, split_out),
                         split_out))
    for what, answer, changed in [*split, *smaller, *both]:
        found = gpu_build(recommend_one, changed)
        if found is None or found[1].spec.get("form") == DESKTOP_SYSTEM:
            continue
        other, card = found
        rate = other.speed.figures.get("decode_tokens_per_s_per_stream", 0.0)
        if rate >= FASTER_THAN_A_BOX * per_stream:
            count = f"{card.quantity} x " if card.quantity > 1 else "one "
            speed = other.speed.summary[0] if other.speed.summary else f"~{rate:,.1f} tokens/s per stream"
            more = other.total_price_cny - build.total_price_cny
            return (f"faster within budget: {count}{card.name}, {what}: {speed} (~{per_stream:,.1f} tokens/s per "
                    f"stream on the {gpu.name}), {within_text(other, build, rules)}, "
                    + (f"{money(abs(more), build.currency, rules)} {'more' if more > 0 else 'less'} than this one"
                       if abs(more) >= 1 else "the price of this one") + f": answer {answer}")
    return ""
