"""fp32 matmuls on TF32 tensor cores (task.tf32): timed at the TF32 rate, sized as fp32."""

from __future__ import annotations

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.memory import model_memory
from pth_top.configs.presets import model_shape
from pth_top.configs.speed_build import training
from tests.configs.builders import answers
from tests.configs.published_speeds import catalog_gpu

FP32 = dict(workload__preset="gpt2-medium", workload__batch_size=8, task__mode="training", task__precision="fp32")


def test_tf32_matmuls_are_timed_at_the_tf32_tensor_rate_and_sized_as_fp32():
    # Audit XA5: NVIDIA's Transformer-XL tables train fp32 as TF32 (DGX A100), where every fp32 transformer was timed
    # on the FP32 cores: an A100's 19.5 TFLOP/s against 156 of TF32.
    plain, tf32 = (answers(**FP32, task__tf32=flag) for flag in (False, True))
    shape = model_shape(plain.workload)[0]
    slow, fast = (catalog_gpu("a100-40gb-sxm", job) for job in (plain, tf32))
    assert (slow.tflops, slow.rate_name) == (19.5, "FP32")
    assert (fast.tflops, fast.rate_name) == (156.0, "dense TF32 tensor")
    rate = [training(job, shape, device, 32.0).figures["training_tokens_per_s"]
            for job, device in ((plain, slow), (tf32, fast))]
    assert rate[1] > 5 * rate[0], rate
    assert model_memory(plain, shape, 0).total_bytes == model_memory(tf32, shape, 0).total_bytes


def test_tf32_is_an_fp32_answer():
    problems = cross_field_problems(answers(**{**FP32, "task__precision": "bf16"}, task__tf32=True))
    assert [key for _, key, _ in problems] == ["tf32"]
    assert not cross_field_problems(answers(**FP32, task__tf32=True))
