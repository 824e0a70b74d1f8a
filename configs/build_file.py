"""Build TOML files: write a Build atomically, read one back (validated), load-then-save is identical."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import tomli_w

from pth_top.configs.answers import answers_from_dict
from pth_top.configs.build import ROLES, Build, Component, Power
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.fileio import atomic_write_text
from pth_top.configs.memory import MemoryBreakdown
from pth_top.configs.paths import builds_dir
from pth_top.configs.tomlsource import line_of_key, line_of_key_in_table, line_of_table, parse_toml, read_toml

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

    version = need(data, None, "schema_version", (int,))
    if version != SCHEMA_VERSION:
        raise fail(f"unsupported schema_version {version} (this pth-top reads {SCHEMA_VERSION})", None, "schema_version")
    created = need(data, None, "created", (dt.datetime,))
    tool_version = need(data, None, "tool_version", (str,))
    answers_table = need(data, None, "answers", (dict,))
    answers = answers_from_dict(answers_table, path=path, text=text, table_prefix="answers.")
    components_table = need(data, None, "components", (dict,))
    components = []
    for role, entry in components_table.items():
        table = f"components.{role}"
        if role not in ROLES:
            raise fail(f"unknown component role (one of {', '.join(ROLES)})", "components", None)
        if not isinstance(entry, dict):
            raise fail("must be a table", table, None)
        quantity = need(entry, table, "quantity", (int,))
        if quantity < 1:
            raise fail("must be at least 1", table, "quantity")
        price = need(entry, table, "unit_price_cny", (int, float))
        if not price >= 0:
            raise fail("must be a number >= 0", table, "unit_price_cny")
        components.append(Component(
            role=role, part_id=need(entry, table, "id", (str,)), name=need(entry, table, "name", (str,)),
            quantity=quantity, unit_price_cny=float(price), spec=dict(need(entry, table, "spec", (dict,))),
            reasoning=tuple(_text_list(need(entry, table, "reasoning", (list,)), lambda r: fail(r, table, "reasoning"))),
        ))
    memory_table = need(data, None, "memory", (dict,))
    memory = MemoryBreakdown(
        **{key: _non_negative(need(memory_table, "memory", key, (int,)), lambda r, k=key: fail(r, "memory", k)) for key in MEMORY_KEYS},
        formula=tuple(_text_list(need(memory_table, "memory", "formula", (list,)), lambda r: fail(r, "memory", "formula"))),
    )
    power_table = need(data, None, "power", (dict,))
    power = Power(**{key: float(_non_negative(need(power_table, "power", key, (int, float)), lambda r, k=key: fail(r, "power", k)))
                     for key in POWER_KEYS})
    price_table = need(data, None, "price", (dict,))
    pins_table = data.get("pins", {})
    pins = {}
    for role, pin in pins_table.items():
        if role not in ROLES or not isinstance(pin, dict):
            raise fail("pins are {id, quantity} tables keyed by role", "pins", role)
        pins[role] = (need(pin, f"pins.{role}", "id", (str,)), need(pin, f"pins.{role}", "quantity", (int,)))
    alternatives = {
        role: tuple(_text_list(ids, lambda r, role=role: fail(r, "alternatives", role)))
        for role, ids in data.get("alternatives", {}).items()
    }
    build = Build(
        answers=answers, components=tuple(sorted(components, key=lambda c: ROLES.index(c.role))), memory=memory,
        gpu_memory_per_gpu_bytes=need(memory_table, "memory", "gpu_memory_per_gpu_bytes", (int,)),
        gpu_usable_per_gpu_bytes=need(memory_table, "memory", "gpu_usable_per_gpu_bytes", (int,)),
        power=power,
        total_price_cny=float(need(price_table, "price", "total_cny", (int, float))),
        budget_cny=float(need(price_table, "price", "budget_cny", (int, float))),
        reasoning=tuple(_text_list(need(data, None, "reasoning", (list,)), lambda r: fail(r, None, "reasoning"))),
        warnings=tuple(_text_list(need(data, None, "warnings", (list,)), lambda r: fail(r, None, "warnings"))),
        alternatives=alternatives, pins=pins, title=need(data, None, "title", (str,)),
        comments=tuple(_text_list(need(data, None, "comments", (list,)), lambda r: fail(r, None, "comments"))),
    )
    return build, created, tool_version


def _text_list(value: list[Any], fail) -> list[str]:
    if not all(isinstance(item, str) for item in value):
        raise fail("must be a list of text")
    return list(value)


def _non_negative(value: float, fail) -> float:
    if value != value or value < 0:
        raise fail(f"must be >= 0, got {value!r}")
    return value
