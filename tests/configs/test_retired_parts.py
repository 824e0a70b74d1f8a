"""Parts out of production with no 2026 listing: never recommended, and a pin of one says so and what replaces it."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.presets import load_build_preset
from pth_top.configs.recommend import recommend
from tests.configs.builders import answers

TODAY = dt.date(2026, 10, 1)

# Builds whose cheapest parts were retired ones: a 4-GPU ECC workstation (Xeon 8380 on an X12 board), two cards
# on a desktop (the ProArt X570/X670E/Z790 boards), a student box (the 550 W PSU), a big dataset (SAS/U.2 drives).
SWEEP = {
    "four-gpu-ecc": dict(workload__preset="llama-7b", scale__gpu_count=4, scale__sharding="zero3",
                         budget__amount=400000.0),
    "two-gpu-desktop": dict(workload__preset="llama-7b", task__method="lora", scale__gpu_count=2,
                            budget__amount=40000.0),
    "student": dict(workload__preset="gpt2-small", budget__amount=6000.0),
    "usd-two-gpu": dict(workload__preset="llama-7b", task__method="qlora", scale__gpu_count=2,
                        budget__currency="USD", budget__amount=6000.0),
    "big-dataset-server": dict(workload__preset="llama-13b", scale__gpu_count=8, scale__sharding="zero3",
                               data__dataset_size_gb=8000.0, budget__amount=2000000.0),
}


def test_every_retired_part_says_why_and_its_successor_is_sold_in_2026_and_fits_the_same_place(catalog):
    retired = [part for part in catalog if part.retired]
    assert {"xeon-platinum-8380", "supermicro-x12dai-n6", "asus-proart-x670e-creator"} <= {p.id for p in retired}
    successors = {part.id: catalog.get(part.get("successor_id", "")) for part in retired if part.get("successor_id")}
    assert set(successors) == {"asus-proart-x670e-creator", "seasonic-focus-gx-550", "samsung-pm1733-3.84tb"}
    for part_id, successor in successors.items():
        part = catalog.get(part_id)
        assert successor is not None and successor.kind == part.kind and not successor.retired, part_id
        same = {"motherboard": "socket", "cpu": "socket", "storage": "interface"}.get(part.kind)
        assert same is None or successor[same] == part[same], part_id  # a drop-in, not another platform
        dates = [entry["as_of"] for entry in (successor.get("prices") or {}).values()]
        assert dates and max(dates).year >= 2026, successor.id


@pytest.mark.parametrize("case", SWEEP, ids=list(SWEEP))
def test_the_recommender_never_picks_or_offers_a_retired_part(catalog, case):
    build = recommend(answers(**SWEEP[case]), catalog, today=TODAY)
    chosen = {component.part_id for component in build.components}
    offered = {part_id for options in build.alternatives.values() for part_id in options}
    retired = {part.id for part in catalog if part.retired}
    assert not chosen & retired and not offered & retired, (case, chosen & retired, offered & retired)


def test_a_pinned_retired_part_says_it_is_out_of_production_and_what_2026_sells(catalog):
    preset = load_build_preset("guide-enterprise")
    build = recommend(preset.answers, catalog, pins=preset.pins, title=preset.title, comments=preset.comments,
                      today=TODAY)
    cpu_lines = " ".join(build.component("cpu").reasoning)
    storage_lines = " ".join(build.component("storage").reasoning)
    assert "OUT OF PRODUCTION (Ice Lake-SP (2021)" in cpu_lines and "pinned" in cpu_lines
    assert "OUT OF PRODUCTION (replaced by the PM1643a and PM1653" in storage_lines and "sells the" not in storage_lines
    warning = next(line for line in build.warnings if "out of production" in line)
    assert "Intel Xeon Platinum 8380" in warning and "Supermicro X12DAi-N6" in warning


def test_a_pinned_retired_part_that_meets_the_rules_keeps_the_build_feasible(catalog):
    # GPT-2 small for CNY 60,000 with the PM1733 U.2 drive pinned: a buildable PC, the drive said out of production,
    # not a broken rule (the candidates come from the parts for sale, plus what the answers pin).
    job = answers(workload__preset="gpt2-small", budget__amount=60000.0)
    build = recommend(job, catalog, pins={"storage": ("samsung-pm1733-3.84tb", 1)}, today=TODAY)
    assert build.feasible and build.component("storage").part_id == "samsung-pm1733-3.84tb", build.blockers
    assert not any("breaks the rule" in line for line in build.warnings)
    assert any("out of production" in line for line in build.warnings)
