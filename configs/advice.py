"""What a build says beside itself, from other builds: a cheaper one without a change of quality, room on a tight
card, a faster one within budget, the rented run of a slow training job."""

from __future__ import annotations

import dataclasses
from typing import Callable

from pth_top.configs.answers import Answers
from pth_top.configs.assembly import Context
from pth_top.configs.beyond_answers import alternative_label, first_alternative_timed
from pth_top.configs.build import Build
from pth_top.configs.cheaper import cheaper_without_a_change_of_quality
from pth_top.configs.faster_box import faster_than_a_desktop_system
from pth_top.configs.faster_server import reading_speed_within_budget
from pth_top.configs.fewer_cards import faster_on_fewer_cards_within_budget
from pth_top.configs.long_run import (
    bought_nodes_for_a_long_run,
    faster_training_within_budget,
    fastest_card_for_a_long_run,
    rented_run_line,
)
from pth_top.configs.nearest import faster_than_the_cpu_within_budget
from pth_top.configs.room import roomier_within_budget
from pth_top.configs.rules import Rules


def with_advice(build: Build, rules: Rules, recommend_one: Callable[..., Build],
                context_for: Callable[[Answers], Context], pinned: bool) -> Build:
    """The build with its first alternative timed and the advice lines added to its warnings; a pinned GPU gets only
    what changes the job on that card."""
    room = roomier_within_budget(build, rules, recommend_one, pinned=pinned)
    faster = "" if pinned else (faster_training_within_budget(build, rules, recommend_one)
                                or fastest_card_for_a_long_run(build, rules, recommend_one)
                                or faster_than_the_cpu_within_budget(build, rules, recommend_one, context_for)
                                or faster_than_a_desktop_system(build, rules, recommend_one)
                                or faster_on_fewer_cards_within_budget(build, rules, recommend_one)
                                or reading_speed_within_budget(build, rules, recommend_one))
    build, first = first_alternative_timed(build, recommend_one)
    if first is not None and not pinned and not faster:  # the first alternative's layer split, or its long run
        faster = faster_on_fewer_cards_within_budget(first, rules, recommend_one, alternative=True) \
            or fastest_card_for_a_long_run(first, rules, recommend_one, alternative=True)
    # A build that is no recommendation sizes the rented run of its first alternative when that one is slow.
    rent = rented_run_line(first or build, context_for, "the first alternative's" if first else "this",
                           alternative_label(build.applicable_alternatives[0][0]) if first else "")
    bought = "" if pinned else bought_nodes_for_a_long_run(first or build, context_for)
    cheaper = "" if pinned else cheaper_without_a_change_of_quality(build, rules, recommend_one)
    added = tuple(line for line in (cheaper, room, faster, bought, rent) if line)
    return dataclasses.replace(build, warnings=(*build.warnings, *added)) if added else build
