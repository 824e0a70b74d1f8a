"""Build TOML files: write a Build atomically, read one back (validated), load-then-save is identical."""

from __future__ import annotations

import datetime as dt
import math
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec.inspect as mi
import tomli_w
from msgspec import Meta

from pth_top.configs.answers import answers_from_dict
from pth_top.configs.build import ROLES, Build, Component, Power, Role, Speed
from pth_top.configs.errors import ConfigFileError, shown
from pth_top.configs.fileio import atomic_write_text
from pth_top.configs.memory_terms import MemoryBreakdown
from pth_top.configs.parts import validate_part
from pth_top.configs.paths import builds_dir
from pth_top.configs.schema import (
    Problem,
    Schema,
    SchemaError,
    constraints,
    convert,
    range_reason,
    reason,
    value_reason,
)
from pth_top.configs.tomlsource import (
    INT64_MAX,
    line_of_key,
    line_of_key_in_table,
    line_of_table,
    parse_toml,
    read_toml,
)

SCHEMA_VERSION = 2
# Version 1 files (no [feasibility] table, no training method in [answers]) still load: the defaults fill them in.
READABLE_SCHEMA_VERSIONS = (1, 2)
MEMORY_KEYS = ("weights_bytes", "gradients_bytes", "optimizer_states_bytes", "activations_bytes", "kv_cache_bytes",
               "cuda_context_bytes")
POWER_KEYS = ("sustained_w", "peak_w", "psu_required_w", "psu_capacity_w", "wall_draw_w")

Bytes = Annotated[int, Meta(ge=0, le=INT64_MAX)]
# No upper bounds beyond finiteness: the recommender may write absurd but real amounts (hundreds of drives).
Amount = Annotated[float, Meta(ge=0, le=sys.float_info.max)]


class ComponentTable(Schema, frozen=True):
    id: str
    name: str
    quantity: Annotated[int, Meta(ge=1, le=INT64_MAX)]
    unit_price_cny: Amount
    reasoning: list[str]
    spec: dict[str, Any]  # validated as its role's part type (configs.part_types) once the role is known


class MemoryTable(Schema, frozen=True):
    weights_bytes: Bytes
    gradients_bytes: Bytes
    optimizer_states_bytes: Bytes
    activations_bytes: Bytes
    kv_cache_bytes: Bytes
    cuda_context_bytes: Bytes
    gpu_memory_per_gpu_bytes: Bytes
    gpu_usable_per_gpu_bytes: Bytes
    formula: list[str]
    total_bytes: Bytes = 0  # written for other readers; the build sums the terms itself


class PowerTable(Schema, frozen=True):
    sustained_w: Amount
    peak_w: Amount
    psu_required_w: Amount
    psu_capacity_w: Amount
    wall_draw_w: Amount


class PriceTable(Schema, frozen=True):
    total_cny: Amount
    budget_cny: Amount
    # Files written before markets: China prices in yuan.
    market: Literal["cn", "us", "eu"] = "cn"
    currency: Literal["CNY", "USD", "EUR"] = "CNY"
    cny_per_unit: Annotated[float, Meta(gt=0, le=1000)] = 1.0


class FeasibilityTable(Schema, frozen=True):
    feasible: bool = True  # written for other readers; the build derives it from the blockers
    blockers: list[str] = []
    alternatives: list[str] = []


class SpeedTable(Schema, frozen=True):
    """How fast the job runs (configs.speed); files written before it have none and load with an empty one."""

    summary: list[str] = []
    formula: list[str] = []
    ceilings: str = ""
    figures: dict[str, Amount] = {}
    inputs: dict[str, Amount | str] = {}


class PinTable(Schema, frozen=True):
    id: str
    quantity: Annotated[int, Meta(ge=0, le=INT64_MAX)]  # 0: as many as the rules say


class BuildFile(Schema, frozen=True):
    """A build file as the wizard writes it (build_to_dict); [answers] is checked by answers_from_dict."""

    schema_version: int
    created: dt.datetime
    tool_version: str
    title: str
    comments: list[str]
    reasoning: list[str]
    warnings: list[str]
    answers: dict[str, Any]
    components: dict[Role, ComponentTable]
    memory: MemoryTable
    power: PowerTable
    price: PriceTable
    pins: dict[Role, PinTable] = {}
    alternatives: dict[Role, list[str]] = {}
    feasibility: FeasibilityTable = FeasibilityTable()
    speed: SpeedTable = SpeedTable()


def build_to_dict(build: Build, *, created: dt.datetime, tool_version: str) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "created": created,
        "tool_version": tool_version,
        "title": build.title,
        "comments": list(build.comments),
        "reasoning": list(build.reasoning),
        "warnings": list(build.warnings),
        "answers": build.answers.to_dict(),
        "components": {
            component.role: {
                "id": component.part_id, "name": component.name, "quantity": component.quantity,
                "unit_price_cny": float(component.unit_price_cny), "reasoning": list(component.reasoning),
                "spec": dict(component.spec),
            }
            for component in build.components
        },
        "memory": {
            **{key: int(getattr(build.memory, key)) for key in MEMORY_KEYS},
            "total_bytes": int(build.memory.total_bytes),
            "gpu_memory_per_gpu_bytes": int(build.gpu_memory_per_gpu_bytes),
            "gpu_usable_per_gpu_bytes": int(build.gpu_usable_per_gpu_bytes),
            "formula": list(build.memory.formula),
        },
        "power": {key: round(float(getattr(build.power, key)), 1) for key in POWER_KEYS},
        "price": {
            "total_cny": round(float(build.total_price_cny), 2), "budget_cny": round(float(build.budget_cny), 2),
            "market": build.market, "currency": build.currency, "cny_per_unit": float(build.cny_per_unit),
        },
        "pins": {role: {"id": part_id, "quantity": quantity} for role, (part_id, quantity) in build.pins.items()},
        "alternatives": {role: list(ids) for role, ids in build.alternatives.items()},
        "feasibility": {
            "feasible": build.feasible, "blockers": list(build.blockers),
            "alternatives": list(build.feasible_alternatives),
        },
        "speed": {
            "summary": list(build.speed.summary), "formula": list(build.speed.formula),
            "ceilings": build.speed.ceilings, "inputs": dict(build.speed.inputs),
            "figures": {key: float(value) for key, value in build.speed.figures.items()},
        },
    }


def dumps_build(build: Build, *, created: dt.datetime, tool_version: str) -> str:
    header = "# pth-top hardware build. Edit answers and run `pth-top wizard --answers` to recompute.\n"
    return header + tomli_w.dumps(build_to_dict(build, created=created, tool_version=tool_version))


def default_build_path(build: Build, created: dt.datetime) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", (build.answers.workload.preset + "-" + build.answers.scenario).lower()).strip("-")
    return builds_dir() / f"{created:%Y%m%d-%H%M%S}-{slug}.toml"


def save_build(
    build: Build, path: str | Path, *, created: dt.datetime, tool_version: str, overwrite: bool = False
) -> Path:
    """Atomic write; raises configs.fileio.FileExistsRefused when the file exists and not `overwrite`."""
    return atomic_write_text(path, dumps_build(build, created=created, tool_version=tool_version), overwrite=overwrite)


def load_build(path: str | Path) -> tuple[Build, dt.datetime, str]:
    """Read and validate a build file: (build, created, tool_version). Raises ConfigFileError."""
    data, text = read_toml(path)
    return build_from_dict(data, path=path, text=text)


def loads_build(text: str, path: str | Path | None = None) -> tuple[Build, dt.datetime, str]:
    return build_from_dict(parse_toml(text, path), path=path, text=text)


def build_from_dict(
    data: dict[str, Any], *, path: Any = None, text: str | None = None
) -> tuple[Build, dt.datetime, str]:
    def fail(reason: str, table: str | None, key: str | None) -> ConfigFileError:
        line = None
        if text is not None:
            if table and key:
                line = line_of_key_in_table(text, table, key)
            elif table:
                line = line_of_table(text, table)
            elif key:
                line = line_of_key(text, key)
        return ConfigFileError(reason, path=path, line=line, key=".".join(p for p in (table, key) if p) or None)

    # The version says which schema applies, so it is read first.
    if isinstance(data, dict) and "schema_version" not in data:
        raise fail("missing key", None, "schema_version")
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version not in READABLE_SCHEMA_VERSIONS:
        readable = " or ".join(str(number) for number in READABLE_SCHEMA_VERSIONS)
        reason = f"unsupported schema_version {shown(version)} (this pth-top reads {readable})"
        raise fail(reason, None, "schema_version")
    try:
        typed: BuildFile = convert(data, BuildFile, _build_reason)
    except SchemaError as error:
        keys = error.problem.keys
        if keys[:1] == ("components",) and (error.problem.kind == "key" or len(keys) == 2):
            raise fail(error.reason, ".".join(keys) if error.problem.kind != "key" else "components", None) from None
        raise fail(error.reason, ".".join(keys[:-1]) or None, keys[-1] if keys else None) from None
    answers = answers_from_dict(typed.answers, path=path, text=text, table_prefix="answers.")
    for role, entry in typed.components.items():
        try:
            validate_part(role, entry.spec)
        except SchemaError as error:
            raise fail(error.reason, f"components.{role}.spec", error.problem.keys[0]) from None
    components = tuple(sorted((
        Component(role=role, part_id=entry.id, name=entry.name, quantity=entry.quantity,
                  unit_price_cny=entry.unit_price_cny, spec=dict(entry.spec), reasoning=tuple(entry.reasoning))
        for role, entry in typed.components.items()
    ), key=lambda component: ROLES.index(component.role)))
    memory = typed.memory
    build = Build(
        answers=answers, components=components,
        memory=MemoryBreakdown(**{key: getattr(memory, key) for key in MEMORY_KEYS}, formula=tuple(memory.formula)),
        gpu_memory_per_gpu_bytes=memory.gpu_memory_per_gpu_bytes,
        gpu_usable_per_gpu_bytes=memory.gpu_usable_per_gpu_bytes,
        power=Power(**{key: getattr(typed.power, key) for key in POWER_KEYS}),
        total_price_cny=typed.price.total_cny, budget_cny=typed.price.budget_cny, market=typed.price.market,
        currency=typed.price.currency, cny_per_unit=typed.price.cny_per_unit,
        reasoning=tuple(typed.reasoning), warnings=tuple(typed.warnings),
        alternatives={role: tuple(ids) for role, ids in typed.alternatives.items()},
        pins={role: (pin.id, pin.quantity) for role, pin in typed.pins.items()},
        title=typed.title, comments=tuple(typed.comments),
        blockers=tuple(typed.feasibility.blockers), feasible_alternatives=tuple(typed.feasibility.alternatives),
        speed=Speed(summary=tuple(typed.speed.summary), formula=tuple(typed.speed.formula),
                    figures=dict(typed.speed.figures), inputs=dict(typed.speed.inputs), ceilings=typed.speed.ceilings),
    )
    return build, typed.created, typed.tool_version


def _build_reason(problem: Problem) -> str:
    """A build file's wording: type names ("must be str, got int"), ">= 0", and what pins and alternatives are."""
    keys, value = problem.keys, problem.value
    info = constraints(problem.info)[0]
    got = type(value).__name__
    if problem.kind == "missing":
        return "missing key"
    if problem.kind == "key":
        if keys[0] == "components":
            return f"unknown component role {shown(value)} (one of {', '.join(ROLES)})"
        return f"{keys[0]} are {_KEYED_BY_ROLE[keys[0]]} keyed by role"
    if problem.kind != "value":
        return reason(problem)
    if len(keys) == 2 and keys[0] in _KEYED_BY_ROLE and not isinstance(value, list):
        return f"{keys[0]} are {_KEYED_BY_ROLE[keys[0]]} keyed by role"
    if len(keys) == 2 and keys[0] == "components" or keys in (("pins",), ("alternatives",)):
        return "must be a table" + ("" if keys[0] == "components" else f", got {got}")
    if isinstance(info, (mi.StructType, mi.DictType)):
        return f"must be dict, got {got}"
    if isinstance(info, mi.ListType):
        return "must be a list of text" if isinstance(value, list) else f"must be list, got {got}"
    if isinstance(info, (mi.StrType, mi.DateTimeType)):
        return f"must be {'str' if isinstance(info, mi.StrType) else 'datetime'}, got {got}"
    if isinstance(info, (mi.BoolType, mi.LiteralType)):  # price.market: one of cn, eu, us
        return value_reason(info, value, problem.annotation)
    if isinstance(info, mi.IntType) and (isinstance(value, bool) or not isinstance(value, int)):
        return f"must be int, got {got}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be int or float, got {got}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {shown(value)}"
    if isinstance(info, mi.UnionType):  # a speed input: a number >= 0 or a text
        info = next((member for member in info.types if not isinstance(member, mi.StrType)), info)
    if getattr(info, "ge", None) == 0 and value < 0:
        return f"must be >= 0, got {shown(value)}"
    return range_reason(info, value) or reason(problem)


_KEYED_BY_ROLE = {"pins": "{id, quantity} tables", "alternatives": "lists of part ids"}
