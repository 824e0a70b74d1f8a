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
from typing import Any, Callable, Iterable, Iterator

from pth_top.configs.errors import ConfigFileError, shown
from pth_top.configs.tomlsource import line_of_key_in_table, line_of_table, read_toml

BUILTIN_CATALOG_DIR = Path(__file__).with_name("catalog")
STALE_PRICE_DAYS = 180

NUMBER = "number"
INTEGER = "integer"
TEXT = "text"
BOOLEAN = "boolean"
TEXT_LIST = "text list"
DATE = "date"

# Numbers must carry their unit in the key name; these suffixes (and the few unitless keys) are allowed.
UNIT_SUFFIXES = (
    "_gib", "_gb", "_mb", "_w", "_mm", "_ghz", "_cny", "_gb_per_s", "_mb_per_s", "_mt_per_s", "_tflops",
    "_count", "_tbw",
)
UNITLESS_NUMBER_KEYS = frozenset({"pcie_generation"})

COMMON_KEYS: dict[str, Any] = {
    "id": TEXT, "name": TEXT, "price_cny": NUMBER, "price_as_of": DATE, "source": TEXT,
}
SCHEMA: dict[str, dict[str, Any]] = {
    "gpu": {
        "device_names": TEXT_LIST, "vendor": TEXT, "memory_gib": NUMBER, "memory_kind": ("dedicated", "shared"),
        "memory_type": TEXT, "bandwidth_gb_per_s": NUMBER, "fp32_tflops": NUMBER, "tf32_dense_tflops": NUMBER,
        "fp16_dense_tflops": NUMBER, "bf16_dense_tflops": NUMBER, "board_power_w": NUMBER,
        "transient_peak_w": NUMBER, "recommended_psu_w": NUMBER,
        "power_connector": ("8pin", "12vhpwr", "eps8pin", "baseboard", "dc_barrel", "usb_c"),
        "power_connector_count": INTEGER, "pcie_generation": INTEGER, "length_mm": NUMBER,
        "slot_width_count": INTEGER, "form": ("consumer", "workstation", "datacenter", "sxm", "oam", "edge"),
        "cooling": ("fans", "blower", "passive"), "nvlink": ("none", "pairs", "sxm"), "ecc": BOOLEAN,
        "software": ("cuda", "rocm", "cpu"),
    },
    "cpu": {
        "vendor": TEXT, "cores_count": INTEGER, "threads_count": INTEGER, "base_clock_ghz": NUMBER,
        "boost_clock_ghz": NUMBER, "l3_cache_mb": NUMBER, "tdp_w": NUMBER, "turbo_power_w": NUMBER, "socket": TEXT,
        "memory_types": TEXT_LIST, "memory_channels_count": INTEGER, "pcie_lanes_count": INTEGER,
        "pcie_generation": INTEGER, "ecc": BOOLEAN, "platform": ("desktop", "hedt", "server"),
        "eps_8pin_count": INTEGER,
    },
    "motherboard": {
        "vendor": TEXT, "socket": TEXT, "chipset": TEXT, "memory_type": ("DDR4", "DDR5"),
        "dimm_slots_count": INTEGER, "max_memory_gib": NUMBER, "memory_ecc": BOOLEAN, "memory_registered": BOOLEAN,
        "gpu_slots_count": INTEGER, "m2_slots_count": INTEGER, "cpu_sockets_count": INTEGER, "form_factor": TEXT,
    },
    "memory_kit": {
        "memory_type": ("DDR4", "DDR5"), "capacity_gib": NUMBER, "modules_count": INTEGER,
        "speed_mt_per_s": NUMBER, "ecc": BOOLEAN, "registered": BOOLEAN,
    },
    "storage": {
        "media": ("ssd", "hdd"), "interface": ("sata", "nvme", "sas"), "pcie_generation": INTEGER,
        "form_factor": ("m2", "2.5in", "3.5in", "u2"), "capacity_gb": NUMBER, "seq_read_mb_per_s": NUMBER,
        "seq_write_mb_per_s": NUMBER, "active_power_w": NUMBER, "endurance_tbw": NUMBER,
    },
    "psu": {
        "vendor": TEXT, "capacity_w": NUMBER, "efficiency": ("bronze", "silver", "gold", "platinum", "titanium"),
        "atx_version": ("2.x", "3.0", "3.1"), "connectors_12vhpwr_count": INTEGER, "pcie_8pin_count": INTEGER,
        "eps_8pin_count": INTEGER, "modular": BOOLEAN,
    },
    "cooler": {
        "vendor": TEXT, "cooler_type": ("air", "aio", "server"), "max_cpu_power_w": NUMBER, "sockets": TEXT_LIST,
        "fans_count": INTEGER, "noise": ("quiet", "normal", "loud"),
    },
}
KINDS = tuple(SCHEMA)
# Plausible upper bounds, to catch a typo like memory_gib = 80000.
ABSURD_LIMITS = {"price_cny": 10_000_000, "memory_gib": 4096, "board_power_w": 5000, "capacity_w": 10_000}
# Every other number: a spec sheet never needs more (and huge values overflow the recommender's float maths).
MAX_NUMBER = 10_000_000
# Sizes the recommender divides by or multiplies into quantities: zero or a tiny value is a typo, not a part.
MINIMUMS = {
    "memory_gib": 1, "capacity_gib": 1, "capacity_gb": 1, "capacity_w": 50, "max_memory_gib": 1,
    "max_cpu_power_w": 1, "modules_count": 1, "dimm_slots_count": 1, "cores_count": 1, "threads_count": 1,
    "cpu_sockets_count": 1, "memory_channels_count": 1,
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

    def __getitem__(self, key: str) -> Any:
        return self.spec[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.spec.get(key, default)


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
            part_id = entry.get("id")
            if part_id in raw:
                line = line_of_key_in_table(text, kind, "id", _index_of(text, kind, origin))
                raise ConfigFileError(f"duplicate id {part_id!r} (also in {raw[part_id][2]})", path=path, line=line, key="id")
            raw[part_id] = (kind, entry, origin)
    if include_user:
        for path in _user_catalog_files(user_dir):
            for kind, entry, origin, text in _entries(path):
                texts[str(path)] = text
                previous = raw.get(entry.get("id"))
                if previous is not None:
                    if previous[0] != kind:
                        raise ConfigFileError(
                            f"id {entry['id']!r} is a {previous[0]} in {previous[2]}, not a {kind}",
                            path=path, line=int(origin.rsplit(":", 1)[1]), key="id",
                        )
                    entry = {**previous[1], **entry}
                raw[entry.get("id")] = (kind, entry, origin)
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
        raise ConfigFileError(f"cannot read the user catalog folder: {error.strerror or error}", path=user_dir) from None
    except ValueError as error:  # a NUL in the path
        raise ConfigFileError(f"cannot read the user catalog folder: {error}", path=user_dir) from None
    return sorted(user_dir / name for name in names if name.endswith(".toml") and not name.startswith("."))


def _entries(path: Path) -> Iterable[tuple[str, dict[str, Any], str, str]]:
    data, text = read_toml(path)
    for kind, entries in data.items():
        if kind not in SCHEMA:
            raise ConfigFileError(
                f"unknown part kind (expected one of {', '.join(KINDS)})", path=path,
                line=line_of_table(text, kind), key=kind,
            )
        if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
            raise ConfigFileError(f"write parts as [[{kind}]] tables", path=path, line=line_of_table(text, kind), key=kind)
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

    def fail(key: str, reason: str) -> ConfigFileError:
        key_line = _key_line(text, line, key)
        return ConfigFileError(reason, path=path, line=key_line or line, key=f"{kind} {entry['id']}: {key}")

    check_part_fields(kind, entry, fail)
    return Part(
        kind=kind, id=entry["id"], name=entry["name"], price_cny=float(entry["price_cny"]),
        price_as_of=entry["price_as_of"], source=entry["source"], spec=dict(entry), origin=origin,
    )


def check_part_fields(kind: str, entry: dict[str, Any], fail: Callable[[str, str], Exception]) -> None:
    """Check one part's keys against SCHEMA[kind]: types, units in names, ranges; raises fail(key, reason)."""
    schema = {**COMMON_KEYS, **SCHEMA[kind]}
    for key, expected in schema.items():
        if key not in entry:
            raise fail(key, "missing key")
        _check_type(entry[key], expected, lambda reason, key=key: fail(key, reason))
    for key, value in entry.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not (key.endswith(UNIT_SUFFIXES) or key in UNITLESS_NUMBER_KEYS):
                raise fail(key, f"a number needs its unit in the key name (one of {', '.join(UNIT_SUFFIXES)})")
            if not math.isfinite(value) or value < 0:
                raise fail(key, f"must be a finite number >= 0, got {shown(value)}")
            high = ABSURD_LIMITS.get(key, MAX_NUMBER)
            if value > high:
                raise fail(key, f"{shown(value)} is implausibly large (limit {high})")
            if value < MINIMUMS.get(key, 0):
                raise fail(key, f"must be at least {MINIMUMS[key]}, got {shown(value)}")
    for key in ("id", "name", "source"):
        if not entry[key].strip():
            raise fail(key, "every part needs this as non-empty text" + (" (a spec sheet URL)" if key == "source" else ""))
    if entry["price_cny"] <= 0:
        raise fail("price_cny", "price must be above zero")


def _key_line(text: str, table_line: int, key: str) -> int | None:
    lines = text.splitlines()
    for number in range(table_line, len(lines) + 1):
        stripped = lines[number - 1].strip()
        if number > table_line and stripped.startswith("["):
            return None
        if stripped.split("=", 1)[0].strip() == key:
            return number
    return None


def _check_type(value: Any, expected: Any, fail) -> None:
    if isinstance(expected, tuple):
        if value not in expected:
            raise fail(f"must be one of {', '.join(expected)}, got {shown(value)}")
    elif expected == NUMBER:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail(f"must be a number, got {type(value).__name__}")
    elif expected == INTEGER:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f"must be a whole number, got {shown(value)}")
    elif expected == TEXT:
        if not isinstance(value, str):
            raise fail(f"must be text, got {type(value).__name__}")
    elif expected == BOOLEAN:
        if not isinstance(value, bool):
            raise fail(f"must be true or false, got {shown(value)}")
    elif expected == TEXT_LIST:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise fail("must be a list of text")
    elif expected == DATE:
        if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
            raise fail(f"must be a TOML date like 2025-06-01, got {shown(value)}")
