"""A CPU-only build's speed: llama.cpp's decode from system RAM (configs.speed_cpu)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from pth_top.configs.build import Component
from pth_top.configs.build_file import dumps_build, loads_build
from pth_top.configs.parts import validate_part
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import recommend
from pth_top.configs.schema import SchemaError
from pth_top.configs.speed_cpu import cpu_inference, prefill_seconds
from pth_top.configs.speed_cpu import ram_bandwidth_gb_per_s as bandwidth
from tests.configs.builders import answers
from tests.configs.published_workloads import inference


def test_ram_bandwidth_counts_populated_channels_and_derates_two_ddr5_dimms_a_channel():
    desktop = {"memory_channels_count": 2, "platform": "desktop"}
    assert bandwidth(desktop, {"memory_type": "DDR5", "modules_count": 2, "speed_mt_per_s": 6000}, 1)[0] == 96.0
    # One DIMM fills one channel: half the bandwidth.
    assert bandwidth(desktop, {"memory_type": "DDR4", "modules_count": 1, "speed_mt_per_s": 3200}, 1)[0] == 25.6
    # Four DDR5 DIMMs on a desktop run at 3,600 MT/s (llama.cpp #4716's 7950X); DDR4 keeps its speed.
    four, line = bandwidth({**desktop, "vendor": "AMD"},
                               {"memory_type": "DDR5", "modules_count": 2, "speed_mt_per_s": 6000}, 2)
    assert four == 57.6 and "3,600 MT/s" in line
    intel, _ = bandwidth({**desktop, "vendor": "Intel"},
                             {"memory_type": "DDR5", "modules_count": 2, "speed_mt_per_s": 6000}, 2)
    assert intel == 57.6  # the lower bound, 3,600 MT/s, on any desktop
    assert bandwidth(desktop, {"memory_type": "DDR4", "modules_count": 4, "speed_mt_per_s": 3600}, 1)[0] == 57.6
    # An 8-channel workstation with 8 DIMMs: all channels.
    work = {"memory_channels_count": 8, "platform": "workstation"}
    assert bandwidth(work, {"memory_type": "DDR5", "modules_count": 8, "speed_mt_per_s": 4800}, 1)[0] == 307.2


def test_a_cpu_only_build_predicts_its_decode_and_keeps_it_in_the_build_file(catalog):
    build = recommend(answers(**inference("gpt-oss-20b", "int4", 16384, budget__amount=900.0,
                                          budget__currency="EUR")), catalog)
    assert build.component("gpu") is None, "the case needs a CPU-only build"
    tokens = build.speed.figures["decode_tokens_per_s_per_stream"]
    cpu, kit = build.component("cpu"), build.component("memory_kit")
    # 1.87 GB of active experts + the KV cache read at 0.8 of the RAM's bandwidth.
    bandwidth = build.speed.inputs["ram_bandwidth_gb_per_s"]
    assert 0 < tokens < 0.8 * bandwidth / 1.87 and bandwidth > 0
    assert any(cpu.name in line and kit.name in line for line in build.speed.formula)
    # The 16k-token prompt: 2N x s = 118 TFLOP + attention 4,096 wide (64 heads of 64) on 12 full layers and 12 of a
    # 128-token window, 27 TFLOP: ~145 TFLOP at 21.5 FLOP a cycle a core is minutes, and said to be slow.
    first = build.speed.figures["first_token_s"]
    cores, ghz = cpu.spec["cores_count"], cpu.spec["boost_clock_ghz"]
    assert first == pytest.approx(145e12 / (cores * ghz * 1e9 * 21.5), rel=0.05)
    assert first > 60 and any("first token takes" in warning for warning in build.warnings)
    created = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    again, *_ = loads_build(dumps_build(build, created=created, tool_version="0.1.0"), "b.toml")
    assert again.speed.figures == build.speed.figures


def test_training_or_a_server_cpu_is_not_predicted_and_says_why():
    job = answers(**inference("llama3-8b", "int4", 4096))
    shape = model_shape(job.workload)[0]
    kit = Component("memory_kit", "kit", "kit", 1, 0.0, {"memory_type": "DDR5", "modules_count": 8,
                                                          "speed_mt_per_s": 4800})
    server = Component("cpu", "epyc", "EPYC", 1, 0.0, {"memory_channels_count": 12, "platform": "server"})
    out, inputs = cpu_inference(job, shape, server, kit)
    assert not out.figures and not inputs and "not predicted on EPYC" in out.summary[0]
    training = answers(workload__preset="llama3-8b", task__mode="training")
    desktop = Component("cpu", "r", "Ryzen", 1, 0.0, {"memory_channels_count": 2, "platform": "desktop"})
    out, _ = cpu_inference(training, shape, desktop, kit)
    assert not out.figures and "only a language model's decode" in out.summary[0]
    # A diffusion model decodes no tokens: its compute-bound steps are not predicted on a CPU either.
    diffusion = dataclasses.replace(shape, denoising_steps=28)
    out, _ = cpu_inference(job, diffusion, desktop, kit)
    assert not out.figures and "only a language model's decode" in out.summary[0]


def test_a_cpu_without_a_boost_clock_uses_its_base_clock_and_none_leaves_the_first_token_out():
    job = answers(**inference("llama3-8b", "int4", 4096))
    shape = model_shape(job.workload)[0]
    kit = Component("memory_kit", "kit", "kit", 1, 0.0, {"memory_type": "DDR4", "modules_count": 2,
                                                          "speed_mt_per_s": 3200})
    base = Component("cpu", "c", "CPU", 1, 0.0, {"memory_channels_count": 2, "platform": "desktop", "cores_count": 6,
                                                 "base_clock_ghz": 2.5, "boost_clock_ghz": 0})
    out, _ = cpu_inference(job, shape, base, kit)
    assert 0 < out.figures["first_token_s"] < float("inf")
    bare = Component("cpu", "c", "CPU", 1, 0.0, {"memory_channels_count": 2, "platform": "desktop"})
    out, _ = cpu_inference(job, shape, bare, kit)
    assert "first_token_s" not in out.figures and "not predicted" in out.summary[0]
    assert out.figures["decode_tokens_per_s_per_stream"] > 0


def test_a_hybrid_cpus_e_cores_count_at_their_clock_and_vector_width(catalog):
    shape = model_shape(answers(**inference("llama3-8b", "int4", 4096)).workload)[0]
    raptor = dict(catalog.get("core-i9-14900k").spec)
    seconds, line = prefill_seconds(shape, 4096, raptor)
    # 8 P-cores at 6.0 GHz + 16 Gracemont E-cores at 4.4 GHz doing half a P-core's AVX2 work a cycle: 83.2 core-GHz,
    # not 24 x 6.0 = 144.
    all_p, _ = prefill_seconds(shape, 4096, {**raptor, "efficiency_cores_count": 0})
    assert seconds == pytest.approx(all_p * 144 / 83.2)
    assert "8 P-cores x 6 GHz + 16 E-cores x 4.4 GHz x 0.5" in line
    # Skymont's four 128-bit pipes: a Core Ultra 9 285K's E-cores count whole, at their own clock.
    arrow = dict(catalog.get("core-ultra-9-285k").spec)
    arrow_s, _ = prefill_seconds(shape, 4096, arrow)
    assert arrow_s == pytest.approx(all_p * 144 / (8 * 5.7 + 16 * 4.6))


@pytest.mark.parametrize("bad", [{"efficiency_cores_count": 25}, {"efficiency_core_vector_ratio": 0},
                                 {"efficiency_boost_clock_ghz": 0}, {"efficiency_core_vector_ratio": 1.5},
                                 {"efficiency_cores_count": 0}])  # a clock and ratio without a count
def test_a_catalog_cpu_with_impossible_e_cores_is_refused(catalog, bad):
    entry = {key: value for key, value in catalog.get("core-i9-14900k").spec.items()}
    with pytest.raises(SchemaError):
        validate_part("cpu", {**entry, **bad})


def test_a_cpu_of_e_cores_only_is_a_valid_catalog_entry(catalog):
    # An Intel N100: four Gracemont E-cores, no P-core (normiebench #38's row).
    entry = {**catalog.get("core-i9-14900k").spec, "cores_count": 4, "threads_count": 4, "efficiency_cores_count": 4,
             "efficiency_boost_clock_ghz": 3.4}
    assert validate_part("cpu", entry).efficiency_cores_count == 4
