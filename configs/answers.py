"""The wizard's answers: validated by the structs in configs.answer_types, read from and written to TOML tables.

The same structs validate an answers file (errors name file, line and key) and the wizard's inputs
(inline messages, through FIELDS), so both reject exactly the same things.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec
import msgspec.inspect as mi

from pth_top.configs import stacks
from pth_top.configs.adapter_checks import engine_and_adapter_problems
from pth_top.configs.answer_sections import (
    CONDITIONS,
    CURRENCIES,
    DATA_KINDS,
    MAX_GPUS,
    MAX_TEXT_CHARS,
    NOISE_LIMITS,
    Budget,
    Data,
    Scale,
)
from pth_top.configs.answer_types import (
    MODEL_KINDS,
    SCENARIOS,
    SECTION_TYPES,
    TASK_MODES,
    AnswersFile,
    Task,
    Workload,
)
from pth_top.configs.errors import ConfigFileError, shown
from pth_top.configs.memory_methods import ADAPTER_METHODS, FROZEN_BACKWARD_METHODS
from pth_top.configs.memory_terms import INFERENCE_PRECISIONS, OFFLOAD_SHARDINGS, TRAINING_PRECISIONS
from pth_top.configs.pipeline_checks import diffusion_and_offload_problems, encoder_decoder_problems
from pth_top.configs.presets import model_presets, model_shape
from pth_top.configs.quantization import FORMATS, QLORA_FORMAT, QUANTIZED_BITS_PER_PARAMETER, formats_of
from pth_top.configs.schema import Problem, SchemaError, choices, constraints, convert, reason
from pth_top.configs.tomlsource import line_of_key, line_of_key_in_table, line_of_table
from pth_top.configs.vision_encoder import answer_problems as vision_answer_problems

__all__ = [
    "CONDITIONS", "CURRENCIES", "DATA_KINDS", "FIELDS", "MAX_GPUS", "MAX_TEXT_CHARS", "MODEL_KINDS", "NOISE_LIMITS",
    "SCENARIOS", "SCENARIO_FIELD", "SCENARIO_LABELS", "SECTIONS", "TASK_MODES", "Answers", "FieldSpec",
    "answers_from_dict", "cross_field_problems",
]

SCENARIO_LABELS = {
    "personal_research": "Personal research",
    "team_training": "Team training server",
    "edge_deployment": "Edge deployment",
    "inference_server": "Inference server",
}
SECTIONS = tuple(SECTION_TYPES)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """The form's view of one struct field: kind, default, limits, choices and help, read from the struct."""

    kind: str  # "int", "float", "bool", "choice", "text"
    default: Any
    annotation: Any  # the struct field's type: what a value is validated against
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    help: str = ""

    def parse(self, value: Any) -> Any:
        """Check one value's type and range; raises ValueError with the reason."""
        given = value
        if self.kind == "int" and isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)  # 8.0 is the whole number 8
        try:
            return msgspec.convert(value, self.annotation)
        except msgspec.ValidationError:
            problem = Problem((), "value", given, mi.type_info(self.annotation), annotation=self.annotation)
        raise ValueError(reason(problem))

    def parse_text(self, text: str) -> Any:
        """Parse what the user typed in the wizard; raises ValueError with the reason."""
        if self.kind not in ("int", "float"):
            return self.parse(text.strip())
        cleaned = text.strip().replace("_", "").replace(",", "")
        try:
            number = float(cleaned)
        except ValueError:
            raise ValueError(f"not a number: {shown(text.strip())}") from None
        if self.kind == "int":
            if not number.is_integer():
                raise ValueError(f"must be a whole number, got {shown(text.strip())}")
            return self.parse(int(number))
        return self.parse(number)


_KINDS: dict[type, str] = {
    mi.IntType: "int", mi.FloatType: "float", mi.BoolType: "bool", mi.LiteralType: "choice", mi.StrType: "text",
}
# Per-layer embedding tables are at most this share of a model's parameters (Gemma 3n and 4: ~35-40 %); more
# leaves no layers to read.
LOOKUP_SHARE_MAX = 0.6


def field_spec(annotation: Any, default: Any) -> FieldSpec:
    """The form's view of a struct field of type `annotation` (its limits and help from Meta)."""
    info, help_text = constraints(mi.type_info(annotation))
    numeric = isinstance(info, (mi.IntType, mi.FloatType))
    return FieldSpec(
        kind=_KINDS[type(info)], default=default, annotation=annotation,
        low=info.ge if numeric else None, high=info.le if numeric else None,
        choices=choices(annotation) if isinstance(info, mi.LiteralType) else (), help=help_text,
    )


FIELDS: dict[str, dict[str, FieldSpec]] = {
    section: {item.encode_name: field_spec(item.type, item.default) for item in msgspec.structs.fields(struct)}
    for section, struct in SECTION_TYPES.items()
}
SCENARIO_FIELD = field_spec(next(item.type for item in msgspec.structs.fields(AnswersFile) if item.name == "scenario"),
                            SCENARIOS[0])


@dataclass(frozen=True, slots=True)
class Answers:
    """Everything the user told the wizard: the scenario and one validated struct per section."""

    scenario: str = "personal_research"
    workload: Workload = field(default_factory=Workload)
    task: Task = field(default_factory=Task)
    data: Data = field(default_factory=Data)
    scale: Scale = field(default_factory=Scale)
    budget: Budget = field(default_factory=Budget)

    def section(self, name: str) -> Any:
        return getattr(self, name)

    def value(self, section: str, key: str) -> Any:
        return getattr(self.section(section), key)

    def with_value(self, section: str, key: str, value: Any) -> Answers:
        return replace(self, **{section: msgspec.structs.replace(self.section(section), **{key: value})})

    def with_precision(self, precision: str) -> Answers:
        """Other weights' precision; a weight format answered for the old one gives way to the engine's (auto)."""
        task = self.task
        quantization = task.quantization if task.quantization in formats_of(precision) else "auto"
        return replace(self, task=msgspec.structs.replace(task, precision=precision, quantization=quantization))

    def resident(self) -> Answers:
        """The same job with nothing offloaded to system RAM: what a CPU-only PC, or a GPU that shares its memory
        with the CPU (Jetson, DGX Spark), holds in the one memory."""
        task = msgspec.structs.replace(self.task, expert_offload=False, pipeline_offload=False, frozen_on_cpu=False,
                                      layer_offload=False, block_offload=False)
        sharding = {"fsdp_offload": "fsdp", "zero_offload": "zero2"}.get(self.scale.sharding, self.scale.sharding)
        return replace(self, task=task, scale=msgspec.structs.replace(self.scale, sharding=sharding))

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, **{name: msgspec.structs.asdict(self.section(name)) for name in SECTIONS}}


def answers_from_dict(data: Any, *, path: Any = None, text: str | None = None, table_prefix: str = "") -> Answers:
    """Validate a parsed TOML mapping into Answers; ConfigFileError names file, line and key."""

    def fail(reason: str, section: str | None, key: str | None) -> ConfigFileError:
        line = None
        table = f"{table_prefix}{section}" if section else table_prefix.rstrip(".")
        if text is not None:
            if key and table:
                line = line_of_key_in_table(text, table, key)
            elif key:
                line = line_of_key(text, key) or line_of_table(text, key)
            elif table:
                line = line_of_table(text, table)
        dotted = ".".join(part for part in (table, key) if part)
        return ConfigFileError(reason, path=path, line=line, key=dotted or None)

    try:
        typed = convert(_whole_numbers(data), AnswersFile, _answers_reason, given=data)
    except SchemaError as error:
        keys = error.problem.keys
        if len(keys) == 1 and keys[0] in SECTIONS:
            raise fail(error.reason, keys[0], None) from None
        raise fail(error.reason, keys[0] if len(keys) > 1 else None, keys[-1] if keys else None) from None
    answers = Answers(typed.scenario, typed.workload, typed.task, typed.data, typed.scale, typed.budget)
    for section, key, problem in cross_field_problems(answers):
        raise fail(problem, section, key)
    return answers


def _whole_numbers(data: Any) -> Any:
    """A copy of `data` with 8.0 as 8 in whole-number fields (TOML has both; the user meant the same)."""
    if not isinstance(data, dict):
        return data
    copied = dict(data)
    for section, specs in FIELDS.items():
        given = data.get(section)
        if isinstance(given, dict):
            copied[section] = {
                key: int(value) if key in specs and specs[key].kind == "int" and isinstance(value, float)
                and math.isfinite(value) and value.is_integer() else value
                for key, value in given.items()
            }
    return copied


def _answers_reason(problem: Problem) -> str:
    keys = problem.keys
    if not keys:
        return "answers must be a TOML table"
    if problem.kind == "missing" and len(keys) == 1:
        return "missing key" if keys[0] == "scenario" else "missing table"
    if problem.kind == "unknown" and len(keys) == 1:
        return f"unknown key (expected scenario, {', '.join(SECTIONS)})"
    if problem.kind == "value" and isinstance(constraints(problem.info)[0], mi.StructType):
        return "must be a table"
    return reason(problem)


def splits_over_gpus(answers: Answers) -> bool:
    """Whether the answers' serving engine spreads the model over their GPU count (stacks.splits_heads)."""
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    shape = model_shape(answers.workload)[0]
    return task.mode != "inference" or stacks.splits_heads(engine, shape.attention_heads, answers.scale.gpu_count,
                                                           shape.split_kv_heads)


# A custom model's shape: a preset's are its own (workload.sequence_length and batch_size apply to either).
CUSTOM_SHAPE_KEYS = ("parameters", "layers", "hidden_size", "attention_heads", "kv_heads", "head_dim",
                     "intermediate_size", "vocabulary_size", "experts_count", "experts_per_token", "active_parameters")


def cross_field_problems(answers: Answers) -> list[tuple[str, str, str]]:
    """Problems that involve more than one field: (section, key, reason)."""
    problems: list[tuple[str, str, str]] = []
    workload, task, scale = answers.workload, answers.task, answers.scale
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    if task.mode == "inference" and task.kv_cache_dtype == "fp8" and engine not in stacks.FP8_KV_VALUE_BYTES:
        problems.append(("task", "kv_cache_dtype", "an fp8 KV cache needs vllm, sglang or llama_cpp as "
                         "task.serving_engine (generate() keeps a 16-bit cache)"))
    if task.mode == "inference" and task.kv_cache_dtype == "q4_0" and engine not in stacks.Q4_0_KV_VALUE_BYTES:
        problems.append(("task", "kv_cache_dtype", "a q4_0 KV cache is llama.cpp's (-ctk/-ctv q4_0): answer "
                         "llama_cpp as task.serving_engine, or fp8 for vLLM and SGLang"))
    if task.prefill_chunk_tokens and (task.mode != "inference" or not stacks.PREFILL_CHUNK_TOKENS[engine]):
        chunked = ", ".join(name for name, chunk in stacks.PREFILL_CHUNK_TOKENS.items() if chunk)
        problems.append(("task", "prefill_chunk_tokens", f"a prefill chunk is an inference engine's ({chunked} as "
                         "task.serving_engine); generate() and training run whole sequences"))
    if task.tf32 and task.precision != "fp32":
        problems.append(("task", "tf32", "TF32 is how fp32 matmuls run on tensor cores: answer task.precision = "
                         "'fp32' with it, or leave it false"))
    if not task.cuda_graphs and (task.mode != "inference" or engine not in stacks.TENSOR_PARALLEL_ENGINES):
        problems.append(("task", "cuda_graphs", "turning CUDA graphs off is vLLM's --enforce-eager or SGLang's "
                         "--disable-cuda-graph: answer task.mode = 'inference' and vllm or sglang as "
                         "task.serving_engine"))
    if task.speculative_draft_tokens and not 1.0 <= task.speculative_accept_length <= task.speculative_draft_tokens + 1:
        problems.append(("task", "speculative_accept_length", "speculative decoding keeps 1 to draft tokens + 1 "
                         f"tokens a step ({task.speculative_draft_tokens + 1} here): answer the accept length the "
                         "engine logs"))
    if task.speculative_accept_length and (not task.speculative_draft_tokens or task.mode != "inference"):
        problems.append(("task", "speculative_draft_tokens", "an accept length is speculative decoding's: answer "
                         "task.mode = 'inference' and the tokens the draft proposes a step"))
    budget = answers.budget
    if bool(budget.owned_gpu) != bool(budget.owned_gpu_count):  # named on the key given, its partner missing
        given, missing = ("owned_gpu", "owned_gpu_count") if budget.owned_gpu else ("owned_gpu_count", "owned_gpu")
        problems.append(("budget", given, f"cards you have need both their catalog id and how many: answer "
                         f"budget.{missing} too"))
    if budget.owned_gpu and answers.scenario == "edge_deployment" and budget.owned_gpu_count != 1:
        problems.append(("budget", "owned_gpu_count", "an edge build is one module"))
    presets = model_presets()
    preset = workload.preset
    if (preset == "custom" or preset in presets) and not splits_over_gpus(answers):
        shape = model_shape(workload)[0]
        groups = f" and copies or splits its {shape.kv_heads} KV heads" if shape.split_kv_heads else ""
        problems.append(("scale", "gpu_count", f"{engine}'s tensor parallel splits the model's {shape.attention_heads} "
                         f"attention heads evenly{groups}: {scale.gpu_count} GPUs do not (vLLM refuses to start); "
                         "answer a count that does, or llama_cpp's layer split (task.serving_engine), which takes any"))
    shape_keys = [key for key in CUSTOM_SHAPE_KEYS if getattr(workload, key)] if preset in presets else []
    if shape_keys:  # audit DV73: SOLAR-10.7B's shape given without preset = 'custom' was sized as GPT-2 small
        problems.append(("workload", shape_keys[0], f"is a custom model's shape: the preset {shown(preset)} (the "
                         "default where none is given) keeps its own; give preset = 'custom' with it"))
    if preset != "custom" and preset not in presets:
        known = ", ".join(presets)
        problems.append(("workload", "preset", f"unknown preset {shown(preset)} (one of {known}, or custom)"))
    if preset == "custom":
        kind = workload.kind
        if kind == "transformer":
            for key in ("layers", "hidden_size", "attention_heads", "sequence_length"):
                if getattr(workload, key) <= 0:
                    problems.append(("workload", key, "a custom transformer needs this above zero"))
                    return problems
            if workload.hidden_size % workload.attention_heads and not workload.head_dim:
                problems.append(("workload", "attention_heads", "hidden_size must be a multiple of attention_heads "
                                 "(or give head_dim)"))
            window_tokens, window_layers = workload.sliding_window_tokens, workload.sliding_window_layers
            if bool(window_tokens) != bool(window_layers):  # named on the key given, its partner missing
                given, missing = ("sliding_window_tokens", "sliding_window_layers") if window_tokens else (
                    "sliding_window_layers", "sliding_window_tokens")
                problems.append(("workload", given, f"a sliding window needs both its tokens and the layers that "
                                 f"use it above zero: give {missing} too"))
            elif window_layers > workload.layers:
                problems.append(("workload", "sliding_window_layers", "at most layers: a window on every layer "
                                 "(a video DiT's per-frame attention), or on some (Gemma 3 27B: 52 of 62)"))
            if workload.linear_attention_layers and (
                    workload.linear_attention_layers + (window_layers if window_tokens else 0) > workload.layers):
                problems.append(("workload", "linear_attention_layers", "at most layers (Qwen3-Next: 36 linear of "
                                 "48; a pure state-space model, Falcon Mamba: 64 of 64; with a sliding window, both "
                                 "together)"))
            if workload.parallel_ssm_layers + workload.linear_attention_layers > workload.layers:
                problems.append(("workload", "parallel_ssm_layers", "at most layers, with the linear ones "
                                 "(Falcon-H1-7B: 44 of 44, none linear)"))
            for key in ("ssm_state_size", "ssm_inner_width"):
                if getattr(workload, key) and not (workload.linear_attention_layers or workload.parallel_ssm_layers):
                    problems.append(("workload", key, "sizes the state of workload.linear_attention_layers or "
                                     "parallel_ssm_layers (a Mamba's): give them too, or leave it 0"))
            kv = workload.kv_heads
            if kv and (kv > workload.attention_heads or workload.attention_heads % kv):
                problems.append(("workload", "kv_heads", "attention_heads must be a multiple of kv_heads"))
        elif workload.parameters <= 0 and not (kind == "generic" and answers.data.kind == "tabular"):
            # (gradient-boosted trees on a table have no parameter count: they are sized by the table)
            problems.append(("workload", "parameters", f"a custom {kind} model needs a parameter count above zero"))
        elif kind == "cnn" and workload.input_size_px <= 0 and workload.activation_elements_per_sample <= 0:
            problems.append(("workload", "input_size_px", "a custom CNN needs its input size (pixels), or, for a "
                             "1-D (audio) or other net, workload.activation_elements_per_sample and "
                             "forward_gflops_per_sample"))
    model_kind = presets[preset].kind if preset in presets else workload.kind
    if workload.dense_head != "auto" and (preset != "custom" or model_kind != "cnn"):
        problems.append(("workload", "dense_head", "is a custom CNN's head (workload.kind = 'cnn'): a preset has its "
                         "own count"))
    problems.extend(encoder_decoder_problems(answers, model_kind))
    problems.extend(vision_answer_problems(workload, task.mode, model_kind))
    if workload.tied_embeddings and (workload.preset != "custom" or model_kind != "transformer"
                                     or workload.encoder_only or not workload.vocabulary_size):
        problems.append(("workload", "tied_embeddings", "a tied LM head is a custom transformer's, with a vocabulary "
                         "and an LM head (not an encoder); a preset carries its own (Gemma 3 and GPT-2 are tied)"))
    if workload.lookup_parameters and (workload.preset != "custom" or model_kind != "transformer"
                                       or workload.lookup_parameters > LOOKUP_SHARE_MAX * workload.parameters):
        problems.append(("workload", "lookup_parameters", f"are a custom transformer's per-layer embedding tables, "
                         f"part of workload.parameters: at most {LOOKUP_SHARE_MAX:.0%} of them (Gemma 4 E4B: 2.8B of "
                         "8B)"))
    if workload.encoder_only and workload.preset != "custom":
        problems.append(("workload", "encoder_only", "a preset carries its own architecture (bert-base, bert-large "
                         "and vit-b16 are encoders): give encoder_only with preset = 'custom'"))
    elif workload.encoder_only and (model_kind != "transformer" or workload.decoder_layers
                                    or workload.denoising_steps):
        problems.append(("workload", "encoder_only", "an encoder is a transformer without decoder layers or diffusion "
                         "steps"))
    problems.extend(diffusion_and_offload_problems(answers, model_kind))
    vocabulary = presets[preset].vocabulary_size if preset in presets else workload.vocabulary_size
    problems.extend(engine_and_adapter_problems(answers, model_kind, vocabulary))
    if answers.scale.sharding in OFFLOAD_SHARDINGS and task.optimizer == "adam8bit":
        problems.append(("task", "optimizer", "bitsandbytes' 8-bit optimizer does not step offloaded states: "
                         "DeepSpeed and FSDP step them with Adam on the CPU (answer optimizer = \"adamw\")"))
    if answers.scale.sharding == "fsdp_offload" and (task.mode != "training" or model_kind != "transformer"
                                                      or task.method not in (*ADAPTER_METHODS, "full")):
        problems.append(("scale", "sharding", "fsdp_offload is for training a transformer, fully or with LoRA and "
                         "QLoRA (FSDP's CPUOffload, DeepSpeed's ZeRO-3 offload_param and offload_optimizer)"))
    if answers.scale.sharding == "layers" and (task.mode != "training" or model_kind != "transformer"
                                                or task.sequence_parallel or workload.decoder_layers):
        problems.append(("scale", "sharding", "layers splits a decoder's layers over the GPUs for training, "
                         "without task.sequence_parallel or an encoder-decoder's two stacks; inference splits them by "
                         "its engine (task.serving_engine: generate()'s device map, llama.cpp's layer split, vLLM's "
                         "pipeline parallel)"))
    if task.mode == "training" and task.method in FROZEN_BACKWARD_METHODS and model_kind != "transformer":
        problems.append(
            ("task", "method", f"{task.method} adapts a transformer's matrices; this model is a {model_kind}")
        )
    allowed = TRAINING_PRECISIONS if task.mode == "training" else INFERENCE_PRECISIONS
    if task.precision not in allowed:
        problems.append(("task", "precision", f"{task.mode} precision must be one of {', '.join(allowed)}"))
    if task.mode == "inference" and task.precision == "amp_fp16" and task.serving_engine not in ("auto", "hf_generate"):
        problems.append(("task", "precision", f"amp_fp16 runs an fp32 model under PyTorch's autocast, which "
                         f"{task.serving_engine} does not: it loads 16-bit weights (answer \"fp16\" or \"bf16\"), or "
                         "answer task.serving_engine = \"hf_generate\""))
    qlora_own = task.mode == "training" and task.method == "qlora" and task.quantization == QLORA_FORMAT
    if task.quantization != "auto" and task.quantization not in formats_of(task.precision) and not qlora_own:
        formats = formats_of(task.precision)
        stored = FORMATS[task.quantization].precision
        takes = ", ".join(("auto", *formats))
        problems.append(("task", "quantization", f"{task.quantization} stores {stored} weights: answer "
                         f"task.precision = \"{stored}\" with it; {task.precision} takes {takes}"))
    if workload.weights_file_gb and (task.mode != "inference" or task.precision not in QUANTIZED_BITS_PER_PARAMETER):
        problems.append(("workload", "weights_file_gb", "is a quantized model's files: for task.mode = \"inference\" "
                         "with int4 or int8 weights"))
    if task.mode == "training" and task.accumulation_steps > workload.batch_size:
        problems.append(("task", "accumulation_steps", "cannot exceed the batch size (micro-batch would be < 1)"))
    if answers.scenario == "edge_deployment" and scale.gpu_count != 1:
        problems.append(("scale", "gpu_count", "an edge deployment is one module; use 1"))
    return problems
