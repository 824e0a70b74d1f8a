"""A multi-GPU training step that waits on its GPUs' PCIe links buys the platform it runs fastest on within the
budget (configs.link_platform), not the cheapest CPU and board."""

from __future__ import annotations

import datetime as dt

from pth_top.configs.recommend import recommend
from tests.configs.builders import answers, custom

TODAY = dt.date(2026, 11, 1)
# Self-RAG's generator (AkariAsai/self-rag retrieval_lm/script_finetune_13b.sh): Llama-2-13B fully fine-tuned under
# ZeRO-3 at 1,536 tokens, a global batch of 128 over 4 GPUs (its README: "4 a100 with 80 GB GRAM for 13B training").
SELF_RAG_13B = dict(**custom(13_000_000_000, 40, 5120, 40, 40, 32016, 13824), workload__sequence_length=1536,
                    workload__batch_size=128, task__mode="training", task__precision="bf16", task__optimizer="adamw",
                    task__accumulation_steps=32, task__method="full", data__dataset_size_gb=0.6, scale__gpu_count=4,
                    scale__sharding="zero3", budget__amount=80000.0, budget__currency="USD")


def _generation(build) -> int:
    return min(int(build.component(role).spec.get("pcie_generation", 0) or 0) for role in ("cpu", "motherboard"))


def test_a_zero3_step_waiting_on_gen4_links_gets_the_gen5_platform_the_budget_buys(catalog):
    # Audit DT72: four Gen5 RTX PRO 6000s on a Gen4 EPYC 7543P board, 61 of each 77 s step on PCIe (~2,547 tokens/s),
    # with $36,666 unspent; on Gen5 links the same cards train ~5,095.
    build = recommend(answers("team_training", **SELF_RAG_13B), catalog, today=TODAY)
    gpu = build.component("gpu")
    assert build.feasible and int(gpu.spec["pcie_generation"]) == 5 and _generation(build) >= 5, build.components
    assert build.total_price_cny <= build.budget_cny
    cpu = build.component("cpu")
    assert any(line.startswith("the step waits on the links between its 4 GPUs") for line in cpu.reasoning), \
        cpu.reasoning
    # $50,000 buys the same cards but not the Gen5 platform: the cheapest one, at half the rate.
    tight = recommend(answers("team_training", **{**SELF_RAG_13B, "budget__amount": 50000.0}), catalog, today=TODAY)
    assert tight.feasible and tight.component("gpu").part_id == gpu.part_id and _generation(tight) == 4
    assert build.speed.figures["training_tokens_per_s"] > 1.5 * tight.speed.figures["training_tokens_per_s"]
