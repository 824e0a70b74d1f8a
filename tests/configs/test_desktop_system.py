"""A desktop system (DGX Spark): a whole computer, offered when no PC card within budget holds the job."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.build_file import dumps_build, loads_build
from pth_top.configs.parts import validate_part
from pth_top.configs.recommend import recommend
from pth_top.configs.render import render_build_text
from pth_top.configs.rules import budget_in_cny, load_rules
from pth_top.configs.schema import SchemaError
from tests.configs.builders import answers
from tests.configs.published_workloads import inference

TODAY = dt.date(2026, 12, 1)
SPARK = "dgx-spark-128gb"


def test_gpt_oss_120b_for_5000_usd_is_a_dgx_spark_and_nothing_else_to_buy(catalog):
    # gpt-oss-120b in MXFP4 needs ~66 GiB; the largest card a $5,000 PC holds is a 32 GB RTX 5090.
    build = recommend(answers(**inference("gpt-oss-120b", "int4", 8192, budget__amount=5000.0,
                                          budget__currency="USD")), catalog, today=TODAY)
    assert build.feasible and build.component("gpu").part_id == SPARK
    assert [component.role for component in build.components] == ["gpu"]  # no CPU, board, RAM, drive or PSU
    assert build.total_price_cny <= budget_in_cny(5000, "USD", load_rules()) and build.power.psu_required_w == 0
    assert build.blockers == ()
    text = render_build_text(build)
    assert "a whole computer" in text and "case and fans not included" not in text
    # Decode from its 273 GB/s: llama.cpp's own benchmark gives 59 tokens/s at an empty context; fewer at 8k tokens.
    assert 30 < build.speed.figures["decode_tokens_per_s_per_stream"] < 59


def test_a_job_a_pc_card_holds_gets_the_pc_not_the_box(catalog):
    # gpt-oss-20b (~13 GiB) fits a 16 GB card: a PC with it decodes faster than the Spark for less.
    build = recommend(answers(**inference("gpt-oss-20b", "int4", 8192, budget__amount=5000.0,
                                          budget__currency="USD")), catalog, today=TODAY)
    assert build.feasible and build.component("gpu").part_id != SPARK and build.component("cpu") is not None
    # 70B QLoRA at ¥80k: a tight 48 GB card in a PC (faster) before the roomy but slower box.
    tight = recommend(answers(workload__preset="llama-70b", workload__batch_size=1, task__method="qlora",
                              task__recompute="full", budget__amount=80000.0), catalog, today=TODAY)
    assert tight.feasible and tight.component("gpu").part_id != SPARK
    assert tight.component("gpu").spec["memory_gib"] == 48 and tight.component("cpu") is not None


def test_the_box_is_one_of_it_and_its_drive_must_hold_the_job(catalog):
    job = inference("gpt-oss-120b", "int4", 8192, budget__amount=5000.0, budget__currency="USD")
    two = recommend(answers(**{**job, "scale__gpu_count": 2}), catalog, today=TODAY)
    assert two.component("gpu").part_id != SPARK
    # 5 TB of data (x2 copies) is more than its 4 TB drive: the box breaks its storage rule and is not chosen.
    big = recommend(answers(**{**job, "data__dataset_size_gb": 5000.0}), catalog, today=TODAY)
    assert not big.feasible and big.component("gpu").part_id != SPARK
    assert "DGX Spark" in big.blockers[0] and "breaks a rule: its 4,000 GB drive is below" in big.blockers[0]


def test_a_spark_build_saves_and_loads_unchanged(catalog, tmp_path):
    build = recommend(answers(**inference("gpt-oss-120b", "int4", 8192, budget__amount=5000.0,
                                          budget__currency="USD")), catalog, today=TODAY)
    created = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    text = dumps_build(build, created=created, tool_version="0.1.0")
    again, *_ = loads_build(text, "b.toml")
    assert dumps_build(again, created=created, tool_version="0.1.0") == text
    assert again.component("gpu").part_id == SPARK


def test_two_pinned_boxes_are_not_a_two_gpu_machine(catalog):
    job = inference("gpt-oss-120b", "int4", 8192, 2, budget__amount=20000.0, budget__currency="USD")
    build = recommend(answers(**job), catalog, today=TODAY, pins={"gpu": (SPARK, 2)})
    assert not build.feasible and any("is one box" in line for line in build.blockers)


def test_swapping_to_the_box_drops_the_pc_parts_pinned_before_and_says_so(catalog):
    job = inference("gpt-oss-120b", "int4", 8192, budget__amount=5000.0, budget__currency="USD")
    pins = {"gpu": (SPARK, 1), "cpu": ("core-i5-12400", 1), "psu": ("seasonic-focus-gx-650", 1)}
    build = recommend(answers(**job), catalog, today=TODAY, pins=pins)
    assert build.component("gpu").part_id == SPARK and build.pins == {"gpu": (SPARK, 1)}
    assert any("CPU, PSU is dropped" in line for line in build.warnings)
    again = recommend(answers(**job), catalog, today=TODAY, pins=build.pins)
    assert not any("dropped" in line for line in again.warnings)


def test_a_desktop_system_must_say_what_drive_it_ships_with(catalog):
    entry = {key: value for key, value in catalog.get(SPARK).spec.items() if key != "included_storage_gb"}
    with pytest.raises(SchemaError, match="included_storage_gb|drive it ships with"):
        validate_part("gpu", entry)


def test_a_box_within_budget_over_the_power_limit_says_so(catalog):
    job = inference("gpt-oss-120b", "int4", 8192, budget__amount=5000.0, budget__currency="USD",
                    budget__max_power_w=100.0)
    build = recommend(answers(**job), catalog, today=TODAY)
    assert not build.feasible and "over the 100 W limit" in build.blockers[0] and "DGX Spark" in build.blockers[0]


def test_a_box_leading_a_job_no_gpu_holds_is_not_told_to_split(catalog):
    # gpt-oss-120b in bf16 (~219 GiB) at $5,000: no single GPU holds it; the closest build is the Spark.
    build = recommend(answers(**inference("gpt-oss-120b", "bf16", 8192, budget__amount=5000.0,
                                          budget__currency="USD")), catalog, today=TODAY)
    assert not build.feasible and build.component("gpu").part_id == SPARK
    assert "is one box and cannot be split" in build.blockers[0]
