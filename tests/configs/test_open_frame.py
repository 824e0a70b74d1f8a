"""Wide consumer cards beyond a board's slot spacing go on PCIe x16 risers in an open frame, priced and said so."""

from __future__ import annotations

import dataclasses
import datetime as dt

from pth_top.configs.build_file import dumps_build, loads_build
from pth_top.configs.parts import Catalog
from pth_top.configs.recommend import recommend
from pth_top.configs.render import render_build_text
from pth_top.configs.slots import gpus_that_fit
from tests.configs.builders import answers

TODAY = dt.date(2026, 12, 2)
# thinksmart.life "GPU rig: budget vs pro" (early 2026): 4 x used RTX 3090 on an EPYC board's PCIe 4.0 x16 slots
# (ASRock Rack ROMED8-2T), ~$4,314 with the cards at ~$750 each; the cards stand on risers in an open frame.
QUAD_3090 = {"workload__preset": "llama-70b", "workload__batch_size": 1, "workload__sequence_length": 4096,
             "task__mode": "inference", "task__precision": "int4", "scale__gpu_count": 4,
             "budget__currency": "USD", "budget__condition": "used"}


def quad_3090(catalog, amount: float):
    return recommend(answers(**QUAD_3090, budget__amount=amount), catalog, pins={"gpu": ("rtx-3090-24gb", 4)},
                     today=TODAY)


def test_four_3_slot_cards_go_on_risers_in_an_open_frame(catalog):
    build = quad_3090(catalog, 12000.0)
    assert build.feasible, build.blockers
    board = catalog.get(build.component("motherboard").part_id)
    assert gpus_that_fit(board, 3) < 4 <= board["gpu_slots_count"]  # too tight for the cards, enough slots
    frame, riser = build.component("frame"), build.component("riser")
    assert frame.quantity == 1 and riser.quantity == 4
    assert board["form_factor"] in frame.spec["board_form_factors"] and frame.spec["gpu_positions_count"] >= 4
    assert riser.spec["lanes_count"] == 16 and riser.spec["pcie_generation"] >= 4  # the 3090's full Gen4 x16 link
    parts = sum(component.total_price_cny for component in build.components)
    assert abs(build.total_price_cny - parts) < 0.01 and frame.total_price_cny + riser.total_price_cny > 0
    assert any("open frame" in line for line in build.component("psu").reasoning if "ATX PSUs" in line)
    # Used applies to the cards: the EPYC platform is priced new, and the build says so (the rig's own was used).
    assert any("the other parts are priced new" in line for line in build.warnings if line.startswith("used GPUs"))
    text = render_build_text(build)
    assert "Open frame" in text and "4 x PCIe 4.0 x16 riser" in text


def test_a_framed_build_round_trips_through_its_file(catalog):
    build = quad_3090(catalog, 12000.0)
    loaded, _, _ = loads_build(dumps_build(build, created=dt.datetime(2026, 12, 2, tzinfo=dt.timezone.utc),
                                           tool_version="0"))
    assert [component.role for component in loaded.components][-2:] == ["frame", "riser"]
    assert render_build_text(loaded) == render_build_text(build)


def test_cards_that_fit_the_slots_need_no_frame(catalog):
    two_slot = recommend(answers(**{**QUAD_3090, "budget__condition": "new"}, budget__amount=60000.0), catalog,
                         pins={"gpu": ("rtx-6000-ada-48gb", 4)}, today=TODAY)
    board = catalog.get(two_slot.component("motherboard").part_id)
    assert gpus_that_fit(board, 2) >= 4
    assert not {"frame", "riser"} & {component.role for component in two_slot.components}
    # Audit W: 4 dual-slot cards on 7 slot positions fit only with the last one a bracket below the board.
    positions = board.get("slot_positions_count", 0)
    case = [line for line in two_slot.component("motherboard").reasoning if line.startswith("case: ")]
    assert (case == [f"case: the last card hangs below the board's {positions} slot positions, so the case needs 8 "
                     "expansion slots (a full tower or an EEB case; most ATX cases have 7)"]) == (positions == 7), case
    one = recommend(answers(budget__currency="USD", budget__amount=3000.0), catalog, today=TODAY)
    assert not {"frame", "riser"} & {component.role for component in one.components}


def test_a_frame_with_one_psu_bracket_does_not_take_two_psus(catalog):
    frame = catalog.get("open-air-8gpu-frame")
    one_bracket = dataclasses.replace(frame, spec={**frame.spec, "psu_positions_count": 1})
    narrowed = Catalog({**catalog.parts, frame.id: one_bracket})
    build = quad_3090(narrowed, 12000.0)
    assert build.component("psu").quantity == 2
    assert any("2 x " in line and "for 1 PSU position(s) on" in line for line in build.blockers), build.blockers


def test_blower_and_passive_cards_never_go_on_a_frame(catalog):
    # A frame is for open-air cards; blower and passive cards are built for a chassis's front-to-back airflow.
    job = {**QUAD_3090, "scale__gpu_count": 5, "workload__preset": "llama-70b", "task__precision": "bf16"}
    for gpu_id in ("rtx-a6000-48gb", "h100-80gb-pcie"):
        build = recommend(answers("team_training", **job, budget__amount=400000.0), catalog,
                          pins={"gpu": (gpu_id, 5)}, today=TODAY)
        roles = {component.role for component in build.components}
        assert catalog.get(gpu_id)["cooling"] != "fans" and not {"frame", "riser"} & roles, (gpu_id, roles)


def test_each_card_needs_its_own_riser_and_a_frame_pin_the_cards_do_not_need_is_dropped(catalog):
    pins = {"gpu": ("rtx-3090-24gb", 4), "riser": ("pcie4-x16-riser-300mm", 2)}
    short = recommend(answers(**QUAD_3090, budget__amount=12000.0), catalog, pins=pins, today=TODAY)
    assert any("2 x PCIe 4.0 x16 riser" in line and "each card needs its own riser" in line for line in short.blockers)
    fits = recommend(answers(**QUAD_3090, budget__amount=60000.0), catalog,
                     pins={"gpu": ("rtx-6000-ada-48gb", 4), "frame": ("open-air-8gpu-frame", 1)}, today=TODAY)
    assert "frame" not in {component.role for component in fits.components}
    assert any("Open frame is dropped: these cards fit the board's own slots" in line for line in fits.warnings)


def test_three_or_more_open_air_cards_in_adjacent_slots_of_a_tower_are_warned(catalog):
    # Audit DI68: ISANet R-101-D8 on 4 x RTX 5080 (360 W, open-air) back to back in a tower, no word of their heat;
    # Puget Systems built its four-RTX 3090 workstation on blower cards.
    job = answers(scenario="team_training", workload__preset="custom", workload__kind="cnn",
                  workload__parameters=56_000_000, workload__layers=101, workload__input_size_px=724,
                  workload__dense_head="segmentation", workload__batch_size=8, task__mode="training",
                  task__precision="fp32", task__optimizer="sgd", data__kind="images", data__images_count=2975,
                  scale__gpu_count=4, budget__amount=120000.0, budget__currency="CNY")
    build = recommend(job, catalog, pins={"gpu": ("rtx-5080-16gb", 4)}, today=TODAY)
    lines = [line for line in build.warnings if line.startswith("cooling: 4 open-air")]
    assert lines and "2-slot blower cards" in lines[0] and "cap their power" in lines[0], build.warnings
    two = recommend(job.with_value("scale", "gpu_count", 2), catalog, pins={"gpu": ("rtx-5080-16gb", 2)}, today=TODAY)
    assert not any(line.startswith("cooling:") and "open-air" in line for line in two.warnings), two.warnings
    # Review r76: not for cards under 250 W (three 145 W RTX 5060s); cards the buyer has are not told to buy others.
    small = recommend(job.with_value("scale", "gpu_count", 3), catalog, pins={"gpu": ("rtx-5060-8gb", 3)}, today=TODAY)
    assert not any("open-air" in line for line in small.warnings), small.warnings
    owned = recommend(job.with_value("budget", "owned_gpu", "rtx-5080-16gb").with_value("budget", "owned_gpu_count", 4),
                      catalog, today=TODAY)
    lines = [line for line in owned.warnings if line.startswith("cooling: 4 open-air")]
    assert lines and "buy" not in lines[0] and "cap their power" in lines[0], owned.warnings
