"""What is not feasible, and what is instead, is said in the buyer's market and currency."""

from __future__ import annotations

import datetime as dt

from pth_top.configs.recommend import recommend
from tests.configs.builders import answers

TODAY = dt.date(2026, 5, 10)


def china_only_names(catalog) -> set[str]:
    return {part.name for part in catalog.of_kind("gpu") if part.get("sold_new_in") == ["cn"]}


def money_lines(build) -> list[str]:
    return [*build.blockers, *build.feasible_alternatives]


def test_a_usd_buyers_alternatives_and_rent_lines_are_in_dollars_and_name_no_china_only_card(catalog):
    build = recommend(answers(workload__preset="llama-13b", budget__currency="USD", budget__amount=2000.0), catalog,
                      today=TODAY)
    assert not build.feasible and build.feasible_alternatives
    rent = next(line for line in build.feasible_alternatives if line.startswith("rent "))
    assert "for the machine" in rent and "$2,000 buys" in rent
    # 8 x $2.86 a GPU-hour is $22.88 for the machine, to the cent (it once read "$23", and "$1" for $1.48).
    assert rent.startswith("rent 8 x ") and "at $2.86/GPU-hour (~$22.88/h for the machine" in rent
    for line in money_lines(build):
        assert "¥" not in line, line
        assert not any(name in line for name in china_only_names(catalog)), line


def test_a_euro_buyers_node_rent_is_in_euros(catalog):
    build = recommend(answers(workload__preset="llama-70b", budget__currency="EUR", budget__amount=30000.0), catalog,
                      today=TODAY)
    node = next(line for line in build.feasible_alternatives if "one node of 8 x" in line)
    assert "€" in node and "¥" not in node and all("¥" not in line for line in money_lines(build))


def test_a_pinned_card_is_judged_by_the_buyers_market_and_china_is_offered_no_new_h100(catalog):
    # The RTX 4090 is export-licensed in China only: a US buyer can buy it new; the 5090 D is sold only in China.
    us_4090 = recommend(answers(budget__currency="USD", budget__amount=5000.0), catalog, today=TODAY,
                        pins={"gpu": ("rtx-4090-24gb", 1)})
    assert not any("cannot be bought" in line for line in us_4090.blockers), us_4090.blockers
    us_5090d = recommend(answers(budget__currency="USD", budget__amount=5000.0), catalog, today=TODAY,
                         pins={"gpu": ("rtx-5090-d-32gb", 1)})
    line = next(line for line in us_5090d.blockers if "cannot be bought" in line)
    assert "US market" in line and "sold new only in China" in line
    cn_4090 = recommend(answers(budget__amount=30000.0), catalog, today=TODAY, pins={"gpu": ("rtx-4090-24gb", 1)})
    assert any("cannot be bought new in the China market" in line and "export" in line for line in cn_4090.blockers)
    job = answers(workload__preset="llama-70b", task__mode="inference", budget__amount=400000.0)
    build = recommend(job, catalog, today=TODAY)
    not_builds = ("rent ", "beyond", "on one", "or on")
    builds = [line for line in build.feasible_alternatives if not line.startswith(not_builds)]
    assert builds and not any("H100" in line or "H200" in line for line in builds), builds


def test_a_eur_buyers_tier_and_ranking_lines_speak_euros(catalog):
    build = recommend(answers(budget__currency="EUR", budget__amount=2500.0), catalog, today=TODAY)
    lines = [*build.reasoning, *(line for component in build.components for line in component.reasoning)]
    assert any(line.startswith("budget €2,500: balance") for line in lines)
    assert any("per euro" in line for line in lines) and not any("per yuan" in line for line in lines)
    entry = recommend(answers(budget__currency="EUR", budget__amount=500.0), catalog, today=TODAY)
    # The guide's threshold in euros, its own yuan figure in brackets.
    assert any(line.startswith("budget €500 < €967 (the guide's ¥8,000)") for line in entry.reasoning)
