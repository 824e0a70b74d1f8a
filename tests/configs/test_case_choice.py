"""A desktop PC's case (configs.case_choice): priced in the build, chosen for the board, the cards and the PSUs;
a server chassis or an edge module brings its own."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.recommend import recommend
from pth_top.configs.render import render_build_text
from tests.configs.builders import answers, custom

TODAY = dt.date(2026, 11, 1)
LLAMA3_8B_Q4 = dict(workload__preset="llama3-8b", workload__batch_size=1, workload__sequence_length=4096,
                    task__mode="inference", task__precision="int4", task__quantization="gguf_q4_k_m",
                    task__serving_engine="llama_cpp")


def test_a_desktop_build_prices_its_case(catalog):
    # Audit YM2: builds were "within budget" without a case (a tower for two 3090s is a full tower, ~$180).
    build = recommend(answers(**LLAMA3_8B_Q4, budget__amount=9000.0), catalog, today=TODAY)
    case = build.component("case")
    assert build.feasible and case is not None and case.part_id == "lian-li-lancool-216"
    assert sum(component.total_price_cny for component in build.components) == pytest.approx(build.total_price_cny,
                                                                                          abs=0.01)
    assert any("standoffs for a mATX board" in line for line in case.reasoning), case.reasoning
    assert "case and fans not included" not in render_build_text(build)


def test_two_atx_units_take_a_dual_psu_full_tower(catalog):
    # Audit YM2: CogVLM2-19B (Llama 3 8B's shape, 19.5B with its vision expert) in bf16 on generate() over two
    # RTX 5090 D in China: each 575 W card on its own 1,300 W unit, in a case that holds two.
    vlm = answers(**custom(19_500_000_000, 32, 4096, 32, 8, 128_256, 14336), workload__sequence_length=8192,
                  workload__batch_size=1, task__mode="inference",
                  task__precision="bf16", task__serving_engine="hf_generate", task__generated_tokens=2048,
                  scale__gpu_count=2, data__kind="images", budget__amount=60_000.0)
    build = recommend(vlm, catalog, today=TODAY)
    assert build.component("psu").quantity == 2, build.component("psu")
    case = build.component("case")
    assert case.part_id == "phanteks-enthoo-pro-2-server" and any("dual-PSU case" in line for line in case.reasoning)


def test_a_server_and_an_edge_module_bring_their_own_case(catalog):
    server = recommend(answers("inference_server", workload__preset="llama-70b", task__mode="inference",
                               task__precision="bf16", workload__batch_size=8, scale__gpu_count=8,
                               budget__amount=3_000_000.0), catalog, today=TODAY)
    assert server.component("system") is not None and server.component("case") is None
    edge = recommend(answers("edge_deployment", **LLAMA3_8B_Q4, budget__amount=5000.0), catalog, today=TODAY)
    assert edge.component("case") is None
