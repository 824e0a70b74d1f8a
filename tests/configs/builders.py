"""Answers for a test, written as keyword changes: answers(workload__preset="llama-7b", budget__amount=9e3)."""

from __future__ import annotations

from pth_top.configs.answers import Answers


def answers(scenario: str = "personal_research", **changes) -> Answers:
    result = Answers(scenario=scenario)
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        result = result.with_value(section, key, value)
    return result
