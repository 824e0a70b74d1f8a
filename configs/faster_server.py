"""A server that serves slower than reading under load, with no rate asked, names the build within the budget that
serves reading speed."""

from __future__ import annotations

from typing import Callable

from pth_top.configs import speed as sp
from pth_top.configs.answers import Answers
from pth_top.configs.beyond_answers import gpu_build, within_text
from pth_top.configs.build import Build
from pth_top.configs.rules import Rules

UNDER_LOAD = "sustained_tokens_per_s_per_stream"  # configs.speed_server's rate a stream under load


def reading_speed_within_budget(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]) -> str:
    """A server under SLOW_DECODE_TOKENS_PER_S a stream under load, with no task.target_* stated, names the build the
    budget buys that holds that rate, asked as the target; one asked on a single GPU is passed over for it instead
    (beyond_answers.faster_server_within_budget). Audit CB58: Llama-3.1-Nemotron-Ultra-253B in bf16 for 8 users at
    32k for $350,000 was sold 8 x RTX PRO 6000 Max-Q at ~2.6 tokens/s a user under load, where an HGX H200 server
    within it serves ~11.6."""
    answers = build.answers
    loaded = build.speed.figures.get(UNDER_LOAD)
    if answers.task.mode != "inference" or build.blockers or loaded is None or sp.stated_target(answers.task) \
            or loaded >= sp.SLOW_DECODE_TOKENS_PER_S:
        return ""
    asked = answers.with_value("task", "target_tokens_per_s_per_stream", sp.SLOW_DECODE_TOKENS_PER_S)
    found = gpu_build(recommend_one, asked)
    rate = found[0].speed.figures.get(UNDER_LOAD, 0.0) if found is not None else 0.0
    if found is None or rate < sp.SLOW_DECODE_TOKENS_PER_S:
        return ""
    other, gpu = found
    count = f"{gpu.quantity} x " if gpu.quantity > 1 else ""
    slow = sp.SLOW_DECODE_TOKENS_PER_S
    return (f"faster within budget: {count}{gpu.name} serves ~{rate:,.1f} tokens/s per stream under load "
            f"(~{loaded:,.1f} here, under the {slow:g} a reader keeps up with), {within_text(other, build, rules)}: "
            f"answer task.target_tokens_per_s_per_stream = {slow:g}")
