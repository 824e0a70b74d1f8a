"""vLLM or SGLang without CUDA graphs (task.cuda_graphs = false, --enforce-eager): slower decode, no graph memory."""

from __future__ import annotations

import pytest

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.memory import model_memory
from pth_top.configs.presets import model_shape
from pth_top.configs.speed_build import inference
from tests.configs.builders import answers
from tests.configs.published_speeds import catalog_gpu, hunyuan_large_eager

LLAMA_SERVER = dict(workload__preset="llama-7b", task__mode="inference", task__precision="bf16",
                    task__serving_engine="vllm")


def test_eager_engine_launches_each_layer_and_says_so():
    graphs, eager = (answers(**LLAMA_SERVER, task__cuda_graphs=flag) for flag in (True, False))
    shape = model_shape(graphs.workload)[0]
    fast = inference(graphs, shape, catalog_gpu("rtx-4090-24gb", graphs)).figures["decode_tokens_per_s_per_stream"]
    slow_prediction = inference(eager, shape, catalog_gpu("rtx-4090-24gb", eager))
    slow = slow_prediction.figures["decode_tokens_per_s_per_stream"]
    # 32 layers x 0.4 ms = 12.8 ms more a token than ~20 ms of reads and kernels.
    assert 1 / slow - 1 / fast == pytest.approx(32 * 0.4e-3, rel=0.01)
    assert any("task.cuda_graphs = false" in line for line in slow_prediction.formula)


def test_eager_engine_takes_no_graph_memory():
    with_graphs, eager = (answers(**LLAMA_SERVER, task__cuda_graphs=flag) for flag in (True, False))
    with_graphs, eager = (model_memory(job, model_shape(job.workload)[0], 0) for job in (with_graphs, eager))
    assert with_graphs.activations_bytes - eager.activations_bytes == 2**29  # vLLM's 0.5 GiB of captured graphs
    assert not any("CUDA graphs captured" in line for line in eager.formula)


def test_cuda_graphs_off_is_an_engine_switch():
    for engine in ("llama_cpp", "hf_generate"):
        problems = cross_field_problems(answers(**{**LLAMA_SERVER, "task__serving_engine": engine},
                                                task__cuda_graphs=False))
        assert [key for _, key, _ in problems] == ["cuda_graphs"], engine
    assert not cross_field_problems(answers(**LLAMA_SERVER, task__cuda_graphs=False))


def test_vendor_eager_launch_is_within_a_third_of_its_published_rate():
    # Tencent's Hunyuan-Large FP8 on 8 x H20 with enforce_eager=True: 19.8 tokens/s (83.6 predicted with graphs).
    assert abs(hunyuan_large_eager(1) / 19.8 - 1) < 0.35


def test_vllm_batches_8192_tokens_a_prefill_step_on_a_large_card_other_than_an_a100(catalog):
    # vllm/engine/arg_utils.py get_batch_defaults: the OpenAI server's max_num_batched_tokens is 8,192 on a card of
    # 70 GiB or more other than an A100 (PR #17885: larger hurt the A100's throughput), 2,048 elsewhere; audit AX48's
    # Llama 4 Maverick on 8 x H100 was counted at 2,048.
    import datetime as dt

    from pth_top.configs.recommend import recommend

    job = answers("inference_server", workload__preset="llama3-8b", workload__sequence_length=32768,
                  workload__batch_size=4, task__mode="inference", task__precision="bf16",
                  task__serving_engine="vllm")
    builds = {gpu: recommend(job, catalog, today=dt.date(2026, 5, 10), pins={"gpu": (gpu, 1)})
              for gpu in ("h100-80gb-pcie", "a100-80gb-pcie", "l40s-48gb")}
    said = {gpu: next(line for line in build.memory.formula if line.startswith("activations: prefill"))
            for gpu, build in builds.items()}
    assert "the prefill chunk of 8,192, the engine's default on a card of 70 GiB" in said["h100-80gb-pcie"]
    assert "2,048 tokens: the prefill chunk of 2,048, the engine's default)" in said["a100-80gb-pcie"]
    assert "the prefill chunk of 2,048" in said["l40s-48gb"]
    h100, a100 = (builds[gpu].memory.activations_bytes for gpu in ("h100-80gb-pcie", "a100-80gb-pcie"))
    assert h100 > 1.5 * a100  # the prefill working set 4x, beside the CUDA graphs and logits
    # Answered (--max-num-batched-tokens), the chunk is the answer's on every card.
    asked = recommend(job.with_value("task", "prefill_chunk_tokens", 2048), catalog, today=dt.date(2026, 5, 10),
                      pins={"gpu": ("h100-80gb-pcie", 1)})
    assert asked.memory.activations_bytes == a100
