"""Build TOML files: write a Build atomically, read one back (validated), load-then-save is identical."""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path
from typing import Any

import tomli_w

from pth_top.configs.answers import answers_from_dict
from pth_top.configs.build import ROLES, Build, Component, Power
from pth_top.configs.errors import ConfigFileError, shown
from pth_top.configs.fileio import atomic_write_text
from pth_top.configs.memory import MemoryBreakdown
from pth_top.configs.parts import validate_part
from pth_top.configs.paths import builds_dir
from pth_top.configs.schema import SchemaError
from pth_top.configs.tomlsource import (
    INT64_MAX,
    line_of_key,
    line_of_key_in_table,
    line_of_table,
    parse_toml,
    read_toml,
)

SCHEMA_VERSION = 1
MEMORY_KEYS = ("weights_bytes", "gradients_bytes", "optimizer_states_bytes", "activations_bytes", "kv_cache_bytes",
               "cuda_context_bytes")
POWER_KEYS = ("sustained_w", "peak_w", "psu_required_w", "psu_capacity_w", "wall_draw_w")


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
        },
        "pins": {role: {"id": part_id, "quantity": quantity} for role, (part_id, quantity) in build.pins.items()},
        "alternatives": {role: list(ids) for role, ids in build.alternatives.items()},
    }


def dumps_build(build: Build, *, created: dt.datetime, tool_version: str) -> str:
    header = "# pth-top hardware build. Edit answers and run `pth-top wizard --answers` to recompute.\n"
    return header + tomli_w.dumps(build_to_dict(build, created=created, tool_version=tool_version))


def default_build_path(build: Build, created: dt.datetime) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", (build.answers.workload["preset"] + "-" + build.answers.scenario).lower()).strip("-")
    return builds_dir() / f"{created:%Y%m%d-%H%M%S}-{slug}.toml"


def save_build(build: Build, path: str | Path, *, created: dt.datetime, tool_version: str, overwrite: bool = False) -> Path:
    """Atomic write; raises configs.fileio.FileExistsRefused when the file exists and not `overwrite`."""
    return atomic_write_text(path, dumps_build(build, created=created, tool_version=tool_version), overwrite=overwrite)


def load_build(path: str | Path) -> tuple[Build, dt.datetime, str]:
    """Read and validate a build file: (build, created, tool_version). Raises ConfigFileError."""
    data, text = read_toml(path)
    return build_from_dict(data, path=path, text=text)


def loads_build(text: str, path: str | Path | None = None) -> tuple[Build, dt.datetime, str]:
    return build_from_dict(parse_toml(text, path), path=path, text=text)


def build_from_dict(data: dict[str, Any], *, path: Any = None, text: str | None = None) -> tuple[Build, dt.datetime, str]:
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

    def need(mapping: dict[str, Any], table: str | None, key: str, types: tuple[type, ...]) -> Any:
        if key not in mapping:
            raise fail("missing key", table, key)
        value = mapping[key]
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            raise fail(f"must be {' or '.join(t.__name__ for t in types)}, got {type(value).__name__}", table, key)
        return value

    # No upper bounds beyond 64 bits and finiteness: the recommender may write absurd but real quantities.
    def number(mapping: dict[str, Any], table: str, key: str) -> float:
        return float(_in_range(need(mapping, table, key, (int, float)), 0, math.inf, lambda r: fail(r, table, key)))

    def whole(mapping: dict[str, Any], table: str, key: str, low: int) -> int:
        return int(_in_range(need(mapping, table, key, (int,)), low, INT64_MAX, lambda r: fail(r, table, key)))

    def texts(mapping: dict[str, Any], table: str | None, key: str) -> tuple[str, ...]:
        return tuple(_text_list(need(mapping, table, key, (list,)), lambda r: fail(r, table, key)))

    if not isinstance(data, dict):
        raise fail("a build file is a TOML table", None, None)
    version = need(data, None, "schema_version", (int,))
    if version != SCHEMA_VERSION:
        raise fail(f"unsupported schema_version {shown(version)} (this pth-top reads {SCHEMA_VERSION})", None, "schema_version")
    created = need(data, None, "created", (dt.datetime,))
    tool_version = need(data, None, "tool_version", (str,))
    answers_table = need(data, None, "answers", (dict,))
    answers = answers_from_dict(answers_table, path=path, text=text, table_prefix="answers.")
    components_table = need(data, None, "components", (dict,))
    components = []
    for role, entry in components_table.items():
        table = f"components.{role}"
        if role not in ROLES:
            raise fail(f"unknown component role {shown(role)} (one of {', '.join(ROLES)})", "components", None)
        if not isinstance(entry, dict):
            raise fail("must be a table", table, None)
        spec = need(entry, table, "spec", (dict,))
        try:
            validate_part(role, spec)
        except SchemaError as error:
            raise fail(error.reason, f"{table}.spec", error.problem.keys[0]) from None
        components.append(Component(
            role=role, part_id=need(entry, table, "id", (str,)), name=need(entry, table, "name", (str,)),
            quantity=whole(entry, table, "quantity", 1), unit_price_cny=number(entry, table, "unit_price_cny"),
            spec=dict(spec), reasoning=texts(entry, table, "reasoning"),
        ))
    memory_table = need(data, None, "memory", (dict,))
    memory = MemoryBreakdown(
        **{key: whole(memory_table, "memory", key, 0) for key in MEMORY_KEYS},
        formula=texts(memory_table, "memory", "formula"),
    )
    power_table = need(data, None, "power", (dict,))
    power = Power(**{key: number(power_table, "power", key) for key in POWER_KEYS})
    price_table = need(data, None, "price", (dict,))
    pins = {}
    for role, pin in _table(data, "pins", fail).items():
        if role not in ROLES or not isinstance(pin, dict):
            raise fail("pins are {id, quantity} tables keyed by role", "pins", role)
        pins[role] = (need(pin, f"pins.{role}", "id", (str,)), whole(pin, f"pins.{role}", "quantity", 0))
    alternatives = {}
    for role, ids in _table(data, "alternatives", fail).items():
        if role not in ROLES or not isinstance(ids, list):
            raise fail("alternatives are lists of part ids keyed by role", "alternatives", role)
        alternatives[role] = tuple(_text_list(ids, lambda r, role=role: fail(r, "alternatives", role)))
    build = Build(
        answers=answers, components=tuple(sorted(components, key=lambda c: ROLES.index(c.role))), memory=memory,
        gpu_memory_per_gpu_bytes=whole(memory_table, "memory", "gpu_memory_per_gpu_bytes", 0),
        gpu_usable_per_gpu_bytes=whole(memory_table, "memory", "gpu_usable_per_gpu_bytes", 0),
        power=power, total_price_cny=number(price_table, "price", "total_cny"),
        budget_cny=number(price_table, "price", "budget_cny"),
        reasoning=texts(data, None, "reasoning"), warnings=texts(data, None, "warnings"),
        alternatives=alternatives, pins=pins, title=need(data, None, "title", (str,)), comments=texts(data, None, "comments"),
    )
    return build, created, tool_version


def _table(data: dict[str, Any], key: str, fail) -> dict[str, Any]:
    """An optional top-level table (pins, alternatives): {} when absent, an error when not a table."""
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise fail(f"must be a table, got {type(value).__name__}", None, key)
    return value


def _in_range(value: float, low: float, high: float, fail) -> float:
    if isinstance(value, float) and not math.isfinite(value):
        raise fail(f"must be a finite number, got {shown(value)}")
    if value < low:
        raise fail(f"must be {'>= 0' if low == 0 else f'at least {low:g}'}, got {shown(value)}")
    if value > high:
        raise fail(f"must be at most {high:g}, got {shown(value)}")
    return value


def _text_list(value: list[Any], fail) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise fail("must be a list of text")
    return list(value)
