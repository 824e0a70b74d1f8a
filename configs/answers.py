"""The wizard's answers: typed, validated field by field, read from and written to TOML tables.

The same field table validates an answers file (errors name file, line and key) and the wizard's
inputs (inline messages), so both reject exactly the same things.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from pth_top.configs.errors import ConfigFileError, shown
from pth_top.configs.memory import INFERENCE_PRECISIONS, MIXED_LAYOUTS, OPTIMIZERS, RECOMPUTE_MODES, SHARDING_MODES, TRAINING_PRECISIONS
from pth_top.configs.presets import model_presets
from pth_top.configs.tomlsource import line_of_key, line_of_key_in_table, line_of_table

SCENARIOS = ("personal_research", "team_training", "edge_deployment", "inference_server")
SCENARIO_LABELS = {
    "personal_research": "Personal research",
    "team_training": "Team training server",
    "edge_deployment": "Edge deployment",
    "inference_server": "Inference server",
}
MODEL_KINDS = ("transformer", "cnn", "generic")
TASK_MODES = ("training", "inference")
DATA_KINDS = ("images", "text", "audio", "video", "tabular", "mixed")
CURRENCIES = ("CNY", "USD", "EUR")
CONDITIONS = ("new", "used")
NOISE_LIMITS = ("any", "quiet")
MAX_GPUS = 8
MAX_TEXT_CHARS = 200


@dataclass(frozen=True, slots=True)
class FieldSpec:
    kind: str  # "int", "float", "bool", "choice", "text"
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    help: str = ""

    def parse(self, value: Any) -> Any:
        """Check one value's type and range; raises ValueError with the reason."""
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if not (isinstance(value, float) and math.isfinite(value) and value.is_integer()):
                    raise ValueError(f"must be a whole number, got {shown(value)}")
        elif self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"must be a number, got {shown(value)}")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"must be a finite number, got {shown(value)}")
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"must be true or false, got {shown(value)}")
        elif self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise ValueError(f"must be one of {', '.join(self.choices)}, got {shown(value)}")
        elif self.kind == "text":
            if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT_CHARS:
                raise ValueError(f"must be non-empty text of at most {MAX_TEXT_CHARS} characters, got {shown(value)}")
        if self.kind in ("int", "float"):
            # Compared before any conversion: an int too large for a float is refused, not an OverflowError.
            if self.low is not None and value < self.low:
                raise ValueError(f"must be at least {self.low:g}, got {shown(value)}")
            if self.high is not None and value > self.high:
                raise ValueError(f"must be at most {self.high:g}, got {shown(value)}")
            value = int(value) if self.kind == "int" else float(value)
        return value

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


FIELDS: dict[str, dict[str, FieldSpec]] = {
    "workload": {
        "preset": FieldSpec("text", "gpt2-small", help="a model preset id, or 'custom'"),
        "kind": FieldSpec("choice", "transformer", choices=MODEL_KINDS, help="custom models only"),
        "parameters": FieldSpec("int", 0, 0, 2e12, help="parameter count (0: derive from the architecture)"),
        "layers": FieldSpec("int", 0, 0, 1024, help="transformer layers"),
        "hidden_size": FieldSpec("int", 0, 0, 131072, help="transformer hidden size h"),
        "attention_heads": FieldSpec("int", 0, 0, 1024, help="attention heads a"),
        "kv_heads": FieldSpec("int", 0, 0, 1024, help="key/value heads (grouped-query attention); 0 = a"),
        "sequence_length": FieldSpec("int", 0, 0, 2_000_000, help="tokens per sample s"),
        "vocabulary_size": FieldSpec("int", 0, 0, 10_000_000, help="vocabulary size V"),
        "input_size_px": FieldSpec("int", 0, 0, 8192, help="CNN input side in pixels"),
        "activation_elements_per_sample": FieldSpec("int", 0, 0, 1e12, help="CNN layer outputs per sample"),
        "batch_size": FieldSpec("int", 8, 1, 1_000_000, help="global batch per optimizer step"),
    },
    "task": {
        "mode": FieldSpec("choice", "training", choices=TASK_MODES),
        "precision": FieldSpec("choice", "bf16", choices=tuple(dict.fromkeys(TRAINING_PRECISIONS + INFERENCE_PRECISIONS))),
        "optimizer": FieldSpec("choice", "adamw", choices=OPTIMIZERS),
        "recompute": FieldSpec("choice", "none", choices=RECOMPUTE_MODES, help="gradient checkpointing"),
        "flash_attention": FieldSpec("bool", True, help="FlashAttention / SDPA drops the 5as/h term"),
        "accumulation_steps": FieldSpec("int", 1, 1, 65536, help="gradient accumulation steps"),
        "generated_tokens": FieldSpec("int", 256, 0, 2_000_000, help="tokens generated per request (KV cache)"),
        "mixed_layout": FieldSpec("choice", "megatron16", choices=MIXED_LAYOUTS, help="bytes/param accounting"),
    },
    "data": {
        "dataset_size_gb": FieldSpec("float", 10.0, 0, 10_000_000, help="dataset size on disk in GB"),
        "kind": FieldSpec("choice", "text", choices=DATA_KINDS),
    },
    "scale": {
        "gpu_count": FieldSpec("int", 1, 1, MAX_GPUS, help="GPUs in the machine (1-8)"),
        "sharding": FieldSpec("choice", "none", choices=SHARDING_MODES, help="ZeRO stage or FSDP"),
    },
    "budget": {
        "amount": FieldSpec("float", 15000.0, 1, 1e10, help="total budget"),
        "currency": FieldSpec("choice", "CNY", choices=CURRENCIES),
        "condition": FieldSpec("choice", "new", choices=CONDITIONS, help="new parts, or used GPUs allowed"),
        "max_power_w": FieldSpec("int", 0, 0, 100_000, help="wall power limit in W (0: none)"),
        "noise": FieldSpec("choice", "any", choices=NOISE_LIMITS, help="quiet excludes blower/passive GPUs"),
    },
}
SECTIONS = tuple(FIELDS)


@dataclass(frozen=True, slots=True)
class Answers:
    """Everything the user told the wizard; `values[section][key]` holds validated values."""

    scenario: str = "personal_research"
    workload: dict[str, Any] = field(default_factory=lambda: _defaults("workload"))
    task: dict[str, Any] = field(default_factory=lambda: _defaults("task"))
    data: dict[str, Any] = field(default_factory=lambda: _defaults("data"))
    scale: dict[str, Any] = field(default_factory=lambda: _defaults("scale"))
    budget: dict[str, Any] = field(default_factory=lambda: _defaults("budget"))

    def section(self, name: str) -> dict[str, Any]:
        return getattr(self, name)

    def with_value(self, section: str, key: str, value: Any) -> "Answers":
        return replace(self, **{section: {**self.section(section), key: value}})

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, **{name: dict(self.section(name)) for name in SECTIONS}}


def _defaults(section: str) -> dict[str, Any]:
    return {key: spec.default for key, spec in FIELDS[section].items()}


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

    if not isinstance(data, dict):
        raise fail("answers must be a TOML table", None, None)
    unknown = set(data) - {"scenario", *SECTIONS}
    if unknown:
        raise fail(f"unknown key (expected scenario, {', '.join(SECTIONS)})", None, sorted(unknown)[0])
    if "scenario" not in data:
        raise fail("missing key", None, "scenario")
    scenario = data["scenario"]
    if scenario not in SCENARIOS:
        raise fail(f"must be one of {', '.join(SCENARIOS)}, got {shown(scenario)}", None, "scenario")
    sections: dict[str, dict[str, Any]] = {}
    for section, specs in FIELDS.items():
        if section not in data:
            raise fail("missing table", section, None)
        given = data[section]
        if not isinstance(given, dict):
            raise fail("must be a table", section, None)
        for key in given:
            if key not in specs:
                raise fail(f"unknown key (expected one of {', '.join(specs)})", section, key)
        values = {}
        for key, spec in specs.items():
            if key not in given:
                values[key] = spec.default
                continue
            try:
                values[key] = spec.parse(given[key])
            except ValueError as error:
                raise fail(str(error), section, key) from None
        sections[section] = values
    answers = Answers(scenario=scenario, **sections)
    for section, key, reason in cross_field_problems(answers, explicit=data):
        raise fail(reason, section, key)
    return answers


def cross_field_problems(answers: Answers, explicit: dict[str, Any] | None = None) -> list[tuple[str, str, str]]:
    """Problems that involve more than one field: (section, key, reason)."""
    problems: list[tuple[str, str, str]] = []
    workload, task, scale = answers.workload, answers.task, answers.scale
    presets = model_presets()
    preset = workload["preset"]
    if preset != "custom" and preset not in presets:
        problems.append(("workload", "preset", f"unknown preset {shown(preset)} (one of {', '.join(presets)}, or custom)"))
    if preset == "custom":
        kind = workload["kind"]
        if kind == "transformer":
            for key in ("layers", "hidden_size", "attention_heads", "sequence_length"):
                if workload[key] <= 0:
                    problems.append(("workload", key, "a custom transformer needs this above zero"))
                    return problems
            if workload["hidden_size"] % workload["attention_heads"]:
                problems.append(("workload", "attention_heads", "hidden_size must be a multiple of attention_heads"))
            kv = workload["kv_heads"]
            if kv and (kv > workload["attention_heads"] or workload["attention_heads"] % kv):
                problems.append(("workload", "kv_heads", "attention_heads must be a multiple of kv_heads"))
        elif workload["parameters"] <= 0:
            problems.append(("workload", "parameters", f"a custom {kind} model needs a parameter count above zero"))
        elif kind == "cnn" and workload["input_size_px"] <= 0 and workload["activation_elements_per_sample"] <= 0:
            problems.append(("workload", "input_size_px", "a custom CNN needs its input size (pixels)"))
    allowed = TRAINING_PRECISIONS if task["mode"] == "training" else INFERENCE_PRECISIONS
    if task["precision"] not in allowed:
        problems.append(("task", "precision", f"{task['mode']} precision must be one of {', '.join(allowed)}"))
    if task["mode"] == "training" and task["accumulation_steps"] > workload["batch_size"]:
        problems.append(("task", "accumulation_steps", "cannot exceed the batch size (micro-batch would be < 1)"))
    if answers.scenario == "edge_deployment" and scale["gpu_count"] != 1:
        problems.append(("scale", "gpu_count", "an edge deployment is one module; use 1"))
    return problems


def text_parser(section: str, key: str) -> Callable[[str], Any]:
    """The parser the wizard uses for what the user typed into one field."""
    return FIELDS[section][key].parse_text
