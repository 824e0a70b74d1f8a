"""Review 12 finding 17 leftovers: reasoning lines that said the wrong thing about a CPU-only PC, a server's
socket, a PSU larger than its rounding, a slot-powered card, image decoding cores and a reference build's storage."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.recommend import recommend
from tests.configs.builders import answers

TODAY = dt.date(2025, 7, 1)


def all_lines(build) -> list[str]:
    return [*build.reasoning, *build.warnings, *build.blockers,
            *(line for component in build.components for line in component.reasoning)]


def test_a_cpu_only_pc_says_nothing_per_gpu(catalog):
    # cpu5k: ">= 2 cores per GPU", "1 GPU slot(s) at x8+ for 0 GPU(s)", "5 checkpoints (0 GB)".
    build = recommend(answers(workload__preset="custom", workload__kind="generic", workload__parameters=1_000_000,
                              task__precision="fp32", task__optimizer="sgd", data__kind="tabular",
                              data__dataset_size_gb=1.0, budget__amount=8000.0), catalog, today=TODAY)
    assert build.cpu_only
    text = "\n".join(all_lines(build))
    assert "per GPU" not in text and "GPU slot" not in text and "for 0 GPU" not in text
    assert "5 checkpoints (0.06 GB)" in text and "(0 GB)" not in text


def test_one_socket_carrying_a_4_gpu_build_is_no_warning(catalog):
    # full7b4: "! circuit: ... one 10 A socket (2,200 W) carries it" was listed under Warnings.
    build = recommend(answers("team_training", workload__preset="llama-7b", workload__batch_size=16,
                              task__recompute="full", data__dataset_size_gb=200.0, scale__gpu_count=4,
                              scale__sharding="zero3", budget__amount=300000.0), catalog, today=TODAY)
    # A server's chassis or a tower's ATX units (2026 China PSU prices make two 1,300 W units the cheaper way).
    holder = build.component("system") or build.component("psu")
    assert holder is not None
    assert any(line.endswith("carries it") or "fits one 10 A socket" in line for line in holder.reasoning)
    assert not any(line.startswith("circuit") for line in build.warnings), build.warnings


def test_a_psu_above_its_rounding_says_why(catalog):
    # "650 W required, rounded up to a standard 650 W" with a 750 W unit fitted and no reason given (EU prices: the
    # 750 W unit is the cheapest with the lead).
    build = recommend(answers(workload__preset="gpt2-small", budget__amount=30000.0, budget__currency="EUR"), catalog,
                      pins={"gpu": ("rtx-5070-12gb", 1)}, today=TODAY)
    psu = build.component("psu")
    assert psu.spec["capacity_w"] == 750
    assert psu.reasoning[0] == ("650 W required, rounded up to a standard 650 W; 750 W fitted: the catalog's 650 W "
                                "unit(s) lack the native 16-pin (12V-2x6) lead the card takes")
    # In China in 2026 the 850 W unit costs less than the 750 W one (999 vs 1,049 yuan): it is fitted, and says so.
    china = recommend(answers(workload__preset="gpt2-small", budget__amount=300000.0), catalog,
                      pins={"gpu": ("rtx-5070-12gb", 1)}, today=TODAY).component("psu")
    assert china.spec["capacity_w"] == 850 and china.reasoning[0].endswith(
        "850 W fitted: the smaller units that would do cost more")


def test_a_slot_powered_card_takes_no_lead(catalog):
    # "NVIDIA L4 24GB takes 0 PCIe 8-pin lead(s)": it is powered from the slot (72 W, nvidia.com L4 datasheet).
    build = recommend(answers(workload__preset="gpt2-small", budget__amount=300000.0), catalog,
                      pins={"gpu": ("l4-24gb", 1), "psu": ("seasonic-focus-gx-650", 1)}, today=TODAY)
    leads = [line for line in build.component("psu").reasoning if line.startswith("leads:")]
    assert leads == ["leads: NVIDIA L4 24GB is powered from the slot (72 W), no PCIe power lead"]


@pytest.mark.parametrize("gpu_count", [4, 6])  # a workstation board; a server barebone
def test_image_decoding_cores_are_a_sentence_of_their_own(catalog, gpu_count):
    # i10_images: "images data: >= 4 cores per GPU" was appended to the ">= 2 cores per GPU" sentence.
    build = recommend(answers("team_training", workload__preset="resnet50", data__kind="images",
                              data__dataset_size_gb=100.0, scale__gpu_count=gpu_count, budget__amount=300000.0),
                      catalog, today=TODAY)
    assert (build.component("system") is not None) == (gpu_count == 6)
    cpu = build.component("cpu").reasoning
    assert not any("DataLoader workers;" in line for line in cpu), cpu
    decode = [line for line in cpu if line.startswith("images data is decoded")]
    assert decode == [f"images data is decoded and augmented on the CPU: >= 4 cores per GPU = {4 * gpu_count} cores"]


def test_a_reference_build_sizes_no_checkpoints_for_a_run_that_cannot_happen(catalog):
    # i7_13b_full10k: NOT A RECOMMENDATION (307 GiB on a 16 GB card) bought 2 x 1 TB for 781 GB of checkpoints.
    build = recommend(answers(workload__preset="llama-13b", data__dataset_size_gb=10.0, budget__amount=10000.0),
                      catalog, today=TODAY)
    assert build.blockers and build.component("gpu") is not None
    storage = build.component("storage")
    assert storage.quantity == 1
    assert not any("5 checkpoints" in line for line in storage.reasoning)
    assert any("no checkpoints (the run does not fit the GPU memory" in line for line in storage.reasoning)
    fits = recommend(answers(workload__preset="gpt2-small", data__dataset_size_gb=10.0, budget__amount=30000.0),
                     catalog, today=TODAY)
    assert not fits.blockers and any("5 checkpoints (" in line for line in fits.component("storage").reasoning)
