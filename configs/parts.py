"""The parts catalog: TOML files shipped in configs/catalog/ plus the user's own, validated on load.

A user catalog (user_config_dir()/catalog/*.toml) adds parts, or overrides a shipped part key by key
when it reuses the id (so a price update is two lines: id, price_cny, price_as_of).
"""

from __future__ import annotations

import datetime as dt
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import msgspec.inspect as mi

from pth_top.configs.errors import ConfigFileError, shown
from pth_top.configs.part_types import (
    DESKTOP_SYSTEM,
    KINDS,
    PART_TYPES,
    UNIT_SUFFIXES,
    UNITLESS_NUMBER_KEYS,
    Cpu,
    Gpu,
    PartFields,
)
from pth_top.configs.schema import Problem, SchemaError, constraints, convert, reason, value_reason
from pth_top.configs.tomlsource import line_of_key_in_table, line_of_table, read_toml
from pth_top.units import GIB, MIB

BUILTIN_CATALOG_DIR = Path(__file__).with_name("catalog")
STALE_PRICE_DAYS = 180

# What a card's architecture means for its software now, by compute capability (audit CH60: 8 used V100s bought for a
# 7B fine-tune with no word of it); added to the notes of every card of it, the user catalog's too.
ARCHITECTURE_NOTES = {
    7.0: ("Volta (sm_70): PyTorch 2.8 and later build it only into their CUDA 12.6 wheels (pytorch/pytorch#157517) and "
          "CUDA 13 drops it (NVIDIA/cuDecomp#97: \"CUDA 13.0 dropped support for Volta (SM70)\"); no bf16 tensor cores "
          "and no FlashAttention 2: fp16 mixed precision and SDPA's other kernels"),
}


@dataclass(frozen=True, slots=True)
class Part:
    kind: str
    id: str
    name: str
    price_cny: float
    price_as_of: dt.date
    source: str
    spec: dict[str, Any]
    origin: str = ""  # "file:line" of its entry
    notes: tuple[str, ...] = ()  # what to know about it (where the guide is wrong): shown in the reasoning

    def __getitem__(self, key: str) -> Any:
        return self.spec[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.spec.get(key, default)

    def notes_for(self, market: str) -> tuple[str, ...]:
        """Its notes for a buyer in `market`: China's export and licence notes (china_notes) for China's only."""
        return self.notes + (tuple(self.spec.get("china_notes") or ()) if market == "cn" else ())

    @property
    def retired(self) -> bool:
        """Out of production with no 2026 listing: never recommended (part_types.PartFields.retired_reason)."""
        return bool(self.spec.get("retired_reason"))

    def buyable(self, condition: str, market: str = "cn") -> bool:
        """Whether it can be bought in `market` under the answers' condition ("new", or "used" which allows used):
        end of life is used only, except where the catalog dates a new listing of its old stock (old_stock_in); an
        export-licensed part is used only in China; a market-only SKU (RTX 4090 D) is sold nowhere else, except used
        where the catalog has a used price there."""
        market = market.lower()
        availability = self.spec.get("availability", "new")
        sold_in = self.spec.get("sold_new_in") or []
        if sold_in and market not in sold_in:
            return condition == "used" and market in (self.spec.get("used_prices") or {})
        if availability == "used_only" and market in (self.spec.get("old_stock_in") or []):
            return True  # a US shop's $425 RTX 4060 Ti 16GB of May 2026, though Ada GeForce is out of production
        if availability == "used_only" or (availability == "not_sold_new_cn" and market == "cn"):
            return condition == "used"
        return True


def gpu_memory_gib(gpu: Part) -> float:
    """The memory a program can plan on: nvidia-smi's reported total where a capture is cataloged, else as sold."""
    reported_mib = gpu.get("memory_reported_mib") or 0
    return reported_mib * MIB / GIB if reported_mib else float(gpu["memory_gib"])


@dataclass(slots=True)
class Catalog:
    parts: dict[str, Part] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[Part]:
        return [part for part in self.parts.values() if part.kind == kind]

    def get(self, part_id: str) -> Part | None:
        return self.parts.get(part_id)

    def __iter__(self) -> Iterator[Part]:
        return iter(self.parts.values())

    def __len__(self) -> int:
        return len(self.parts)

    def stale_parts(self, today: dt.date, max_age_days: int = STALE_PRICE_DAYS) -> list[Part]:
        return [part for part in self if (today - part.price_as_of).days > max_age_days]


def load_catalog(
    user_dir: Path | None = None, builtin_dir: Path = BUILTIN_CATALOG_DIR, *, include_user: bool = True,
) -> Catalog:
    """Shipped catalog plus the user's (user_config_dir()/catalog unless given); raises ConfigFileError."""
    if user_dir is None:
        from pth_top.configs.paths import user_config_dir

        user_dir = user_config_dir() / "catalog"
    raw: dict[str, tuple[str, dict[str, Any], str]] = {}
    texts: dict[str, str] = {}
    for path in sorted(builtin_dir.glob("*.toml")):
        for kind, entry, origin, text in _entries(path):
            texts[str(path)] = text
            part_id: str = entry["id"]  # _entries refuses a part without a text id
            if part_id in raw:
                line = line_of_key_in_table(text, kind, "id", _index_of(text, kind, origin))
                raise ConfigFileError(
                    f"duplicate id {part_id!r} (also in {raw[part_id][2]})", path=path, line=line, key="id"
                )
            raw[part_id] = (kind, entry, origin)
    if include_user:
        for path in _user_catalog_files(user_dir):
            for kind, entry, origin, text in _entries(path):
                texts[str(path)] = text
                previous = raw.get(entry["id"])
                if previous is not None:
                    if previous[0] != kind:
                        raise ConfigFileError(
                            f"id {entry['id']!r} is a {previous[0]} in {previous[2]}, not a {kind}",
                            path=path, line=int(origin.rsplit(":", 1)[1]), key="id",
                        )
                    base = previous[1]
                    if "price_cny" in entry and "price_cny_converted_from" not in entry:  # the user's own yuan price
                        base = {key: value for key, value in base.items() if key != "price_cny_converted_from"}
                    entry = {**base, **entry}
                raw[entry["id"]] = (kind, entry, origin)
    catalog = Catalog()
    for kind, entry, origin in raw.values():
        catalog.parts[entry["id"]] = _validated(kind, entry, origin, texts[origin.rsplit(":", 1)[0]])
    return catalog


def _user_catalog_files(user_dir: Path) -> list[Path]:
    """The user's *.toml files: none when the folder is absent; ConfigFileError when it cannot be read."""
    try:
        names = os.listdir(user_dir)
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        raise ConfigFileError("not a folder (the user catalog is a folder of *.toml files)", path=user_dir) from None
    except OSError as error:
        reason = error.strerror or error
        raise ConfigFileError(f"cannot read the user catalog folder: {reason}", path=user_dir) from None
    except ValueError as error:  # a NUL in the path
        raise ConfigFileError(f"cannot read the user catalog folder: {error}", path=user_dir) from None
    return sorted(user_dir / name for name in names if name.endswith(".toml") and not name.startswith("."))


def _entries(path: Path) -> Iterable[tuple[str, dict[str, Any], str, str]]:
    data, text = read_toml(path)
    for kind, entries in data.items():
        if kind not in PART_TYPES:
            raise ConfigFileError(
                f"unknown part kind (expected one of {', '.join(KINDS)})", path=path,
                line=line_of_table(text, kind), key=kind,
            )
        if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
            raise ConfigFileError(
                f"write parts as [[{kind}]] tables", path=path, line=line_of_table(text, kind), key=kind
            )
        for index, entry in enumerate(entries):
            line = line_of_table(text, kind, index) or 1
            if not isinstance(entry.get("id"), str) or not entry["id"].strip():
                raise ConfigFileError("every part needs a text id", path=path, line=line, key=f"{kind}.id")
            yield kind, entry, f"{path}:{line}", text


def _index_of(text: str, kind: str, origin: str) -> int:
    line = int(origin.rsplit(":", 1)[1])
    index = 0
    while (found := line_of_table(text, kind, index)) is not None and found < line:
        index += 1
    return index


def _validated(kind: str, entry: dict[str, Any], origin: str, text: str) -> Part:
    path, line_text = origin.rsplit(":", 1)
    line = int(line_text)
    try:
        fields = validate_part(kind, entry)
    except SchemaError as error:
        key = error.problem.keys[0]
        raise ConfigFileError(error.reason, path=path, line=_key_line(text, line, key) or line,
                              key=f"{kind} {entry['id']}: {key}") from None
    architecture = ARCHITECTURE_NOTES.get(entry.get("compute_capability", 0.0)) if kind == "gpu" else None
    return Part(
        kind=kind, id=fields.id, name=fields.name, price_cny=float(fields.price_cny), price_as_of=fields.price_as_of,
        source=fields.source, spec={key: value for key, value in entry.items() if key != "notes"}, origin=origin,
        notes=tuple(fields.notes) + ((architecture,) if architecture else ()),
    )


def validate_part(kind: str, entry: dict[str, Any]) -> PartFields:
    """One part's keys as PART_TYPES[kind]; SchemaError (keys, reason) names the first bad key."""
    fields = convert(entry, PART_TYPES[kind], _part_reason)
    availability = getattr(fields, "availability", "new")  # GPUs only
    if availability != "new" and not str(getattr(fields, "availability_reason", "")).strip():
        problem = Problem(("availability_reason",), "missing")
        raise SchemaError(problem, f"availability {availability!r} needs availability_reason (say why)")
    if isinstance(fields, Cpu) and fields.efficiency_cores_count and not (
            fields.efficiency_cores_count <= fields.cores_count and fields.efficiency_boost_clock_ghz
            and fields.efficiency_core_vector_ratio):
        raise SchemaError(Problem(("efficiency_cores_count",), "value"), "E-cores are at most cores_count (an N100 "
                          "has only E-cores) and need efficiency_boost_clock_ghz and efficiency_core_vector_ratio")
    if isinstance(fields, Cpu) and not fields.efficiency_cores_count and (
            fields.efficiency_boost_clock_ghz or fields.efficiency_core_vector_ratio):
        raise SchemaError(Problem(("efficiency_cores_count",), "missing"), "the E-core clock and ratio need "
                          "efficiency_cores_count (how many of cores_count are E-cores)")
    if isinstance(fields, Gpu) and fields.form == DESKTOP_SYSTEM and not fields.included_storage_gb:
        raise SchemaError(Problem(("included_storage_gb",), "missing"), "a desktop system needs the GB of the drive "
                          "it ships with (its build buys no drive)")
    return fields


def _part_reason(problem: Problem) -> str:
    """The catalog's wording: units in key names, numbers >= 0, implausibly large, a minimum, a price."""
    key = problem.keys[-1]
    value = problem.value
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if problem.kind == "unknown" and is_number and not (key.endswith(UNIT_SUFFIXES) or key in UNITLESS_NUMBER_KEYS):
        return f"a number needs its unit in the key name (one of {', '.join(UNIT_SUFFIXES)})"
    if problem.kind == "missing":
        return "missing key"
    if problem.kind != "value":
        return reason(problem)
    info, description = constraints(problem.info)
    if isinstance(info, mi.StrType) and isinstance(value, str):
        return "every part needs this as non-empty text" + (f" ({description})" if description else "")
    if not isinstance(info, (mi.IntType, mi.FloatType)):
        return value_reason(info, value, problem.annotation)
    if isinstance(info, mi.IntType) and (isinstance(value, bool) or not isinstance(value, int)):
        return f"must be a whole number, got {shown(value)}"
    if not is_number:
        return f"must be a number, got {type(value).__name__}"
    if not math.isfinite(value) or value < 0:
        return f"must be a finite number >= 0, got {shown(value)}"
    if value > info.le:
        return f"{shown(value)} is implausibly large (limit {info.le:.0f})"
    if info.gt is not None:
        return "price must be above zero"
    return f"must be at least {info.ge:g}, got {shown(value)}"


def _key_line(text: str, table_line: int, key: str) -> int | None:
    lines = text.splitlines()
    for number in range(table_line, len(lines) + 1):
        stripped = lines[number - 1].strip()
        if number > table_line and stripped.startswith("["):
            return None
        if stripped.split("=", 1)[0].strip() == key:
            return number
    return None
