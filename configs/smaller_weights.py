"""An inference job in smaller weights: the lever answer_changes offers, and what a slow build's advice tries."""

from __future__ import annotations

from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.memory_inference import forward_only
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.quantization import FORMATS, weight_format_name

# Precisions an inference workload can step down to from each, smallest last.
INFERENCE_STEPS = {"fp32": ("bf16", "int8", "int4"), "amp_fp16": ("fp16", "int8", "int4"), "fp16": ("int8", "int4"),
                   "bf16": ("int8", "int4"), "int8": ("int4",)}


def smaller_weights(answers: Answers, shape: ModelShape) -> list[tuple[str, Answers]]:
    """The inference job in each smaller precision, smallest last: generate()'s 8- and 4-bit weights are
    bitsandbytes', which decode slower than 16-bit (configs.quantization), so a language model's are llama.cpp's
    GGUF there, said."""
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    gguf = {"int8": "gguf_q8_0", "int4": "gguf_q4_k_m"} if engine == "hf_generate" \
        and shape.kind == "transformer" and not shape.denoising_steps and not forward_only(shape) \
        and not shape.encoder_decoder else {}
    found = []
    for precision in INFERENCE_STEPS.get(task.precision, ()):
        smaller = answers.with_precision(precision)
        if precision in gguf:
            port = "; where llama.cpp runs this architecture (a GGUF port)" if answers.workload.preset == "custom" \
                else ""  # audit XE6: Moshi's has none
            found.append((f"{precision} weights in llama.cpp ({FORMATS[gguf[precision]].label}; generate()'s "
                          f"bitsandbytes kernels decode slower than 16-bit{port})",
                          smaller.with_value("task", "serving_engine", "llama_cpp")
                          .with_value("task", "quantization", gguf[precision])))
        elif engine in stacks.FP8_GEMM_ENGINES and (chosen := _engine_format(smaller)):
            found.append((f"{precision} weights ({chosen})", smaller))  # audit YZ5: a vLLM user asks for FP8
        else:
            found.append((f"{precision} weights", smaller))
    return found


def _engine_format(answers: Answers) -> str:
    """The checkpoint format a serving engine loads for these answers' precision, as the answer that picks it."""
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    key = weight_format_name(task.quantization, task.precision, engine)
    if not key:
        return ""
    return f"{'FP8' if key == 'fp8' else FORMATS[key].label}, task.quantization = \"{key}\""
