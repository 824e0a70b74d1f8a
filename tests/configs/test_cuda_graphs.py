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
