"""The wizard's step help says what the build's reasoning says (review 12 finding 17)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pth_top.configs.answers import Answers
from pth_top.configs.parts import load_catalog
from pth_top.configs.recommend import recommend
from pth_top.tui.wizard.steps import STEPS


def test_used_gpus_are_checked_with_the_same_command_the_warning_names():
    # Step 6 told users to check used cards with GPU-Z while the build's warning named `pth-top bench --accept`.
    budget = next(step for step in STEPS if step.id == "budget")
    answers = Answers().with_value("workload", "preset", "gpt2-small").with_value("budget", "condition", "used")
    build = recommend(answers, load_catalog(Path("/nonexistent-user-catalog")), today=dt.date(2025, 7, 1))
    warning = next(line for line in build.warnings if line.startswith("used GPUs"))
    assert "`pth-top bench --accept`" in warning and "`pth-top bench --accept`" in budget.help
    assert "GPU-Z" not in budget.help


def test_budget_help_says_the_platform_follows_the_job_not_the_guides_ecc_tier():
    budget = next(step for step in STEPS if step.id == "budget")
    assert "data-centre GPUs and ECC" not in budget.help
    assert "3+ GPUs" in budget.help and "RAM, lanes or drives" in budget.help
    assert ("budget", "market") in [(section, key) for section, key, _ in budget.fields]


def test_every_choice_a_field_accepts_has_a_label_in_the_form():
    # Review r68: "adafactor" was accepted in answers files but missing from the form's choices, so a file that chose
    # it crashed the wizard's Task step (Select: illegal value); each labelled field covers its type's choices.
    import typing

    from pth_top.tui.wizard.steps import CHOICE_LABELS

    sections = {name: typing.get_type_hints(type(getattr(Answers(), name)), include_extras=True)
                for name in ("workload", "task", "scale", "budget")}
    for (section, key), labels in CHOICE_LABELS.items():
        hint = sections[section][key]
        base = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
        accepted = set(typing.get_args(base)) if typing.get_origin(base) is typing.Literal else None
        if accepted is None:
            continue
        assert accepted <= set(labels), (section, key, sorted(accepted - set(labels)))
