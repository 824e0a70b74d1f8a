"""An encoder-decoder (Whisper) generating: sized from its two KV caches, and its speed said not to be predicted."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.recommend import recommend
from tests.configs.builders import answers, custom

# openai/whisper-large-v2 config.json: 32 encoder + 32 decoder layers, d_model 1280, 20 heads, FFN 5120, V 51,865,
# 1,500 encoder positions, at most 448 decoder tokens; 1.54B parameters.
WHISPER_LARGE_V2 = {**custom(1_543_304_960, 64, 1280, 20, 20, 51_865, 5120, gated=False),
                    "workload__sequence_length": 1500, "workload__decoder_layers": 32,
                    "workload__decoder_sequence_length": 448, "task__mode": "inference", "task__precision": "fp16",
                    "data__kind": "audio"}
# github.com/SYSTRAN/faster-whisper README (00cc7e1b), large-v2 transcribing 13 min of audio on a V100S, fp16, beam 5:
# max. GPU memory 4,755 MB with faster-whisper (CTranslate2), 11,325 MB with openai/whisper (PyTorch).
FASTER_WHISPER_PEAK_BYTES, OPENAI_WHISPER_PEAK_BYTES = 4755e6, 11325e6


def test_whisper_transcription_is_sized_from_its_decoder_and_cross_attention_caches(catalog):
    # Beam 5 as five decoder streams, each caching K and V of its 448 tokens and of the 1,500 encoder frames, on
    # PyTorch generate(): between the C++ engine's peak and the PyTorch reference's (its caching allocator keeps
    # what it once held).
    job = answers("inference_server", workload__batch_size=5, budget__currency="EUR", budget__amount=3000.0,
                  task__serving_engine="hf_generate", **WHISPER_LARGE_V2)
    assert not cross_field_problems(job)  # no longer "set 0"
    build = recommend(job, catalog, today=dt.date(2026, 10, 1))
    assert FASTER_WHISPER_PEAK_BYTES <= build.memory.total_bytes <= OPENAI_WHISPER_PEAK_BYTES
    assert build.memory.total_bytes == pytest.approx(FASTER_WHISPER_PEAK_BYTES, rel=0.2)
    # On vLLM: its CUDA graphs counted, its 90 % fill the usable memory, and an fp8 KV cache halves the cache.
    served = recommend(job.with_value("task", "serving_engine", "vllm"), catalog, today=dt.date(2026, 10, 1))
    fp8 = recommend(job.with_value("task", "serving_engine", "vllm").with_value("task", "kv_cache_dtype", "fp8"),
                    catalog, today=dt.date(2026, 10, 1))
    assert served.memory.usable_fraction == 0.9 and served.memory.total_bytes > build.memory.total_bytes
    assert fp8.memory.kv_cache_bytes == pytest.approx(served.memory.kv_cache_bytes / 2)
    assert any("cross-attention" in line for line in build.memory.formula)
    assert build.feasible and build.speed.summary[0].startswith("not predicted for an encoder-decoder's inference")
    assert not build.speed.figures


def test_an_edge_module_for_whisper_is_ranked_by_its_decoder_speed_not_its_id(catalog):
    # No speed is predicted for an encoder-decoder, so every module scored 0 and the tie fell to the part id. Ranked
    # by its decoder's weight reads instead: at $600 the Orin Nano Super, not a Raspberry Pi that also holds it.
    def chosen(amount: float) -> str:
        job = answers("edge_deployment", workload__batch_size=1, budget__currency="USD", budget__amount=amount,
                      **WHISPER_LARGE_V2)
        return recommend(job, catalog, today=dt.date(2026, 10, 1)).component("gpu").part_id

    assert chosen(600.0) == "jetson-orin-nano-super-8gb"
    assert chosen(6000.0) == "jetson-agx-thor-128gb"  # the fastest within budget, as for any edge job
