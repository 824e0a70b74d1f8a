"""The shipped catalog validates, and the loader rejects bad entries naming file, line and key."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pth_top.configs.errors import ConfigFileError
from pth_top.configs.parts import BUILTIN_CATALOG_DIR, PART_TYPES, UNIT_SUFFIXES, UNITLESS_NUMBER_KEYS, load_catalog
from pth_top.configs.tomlsource import read_toml

NO_USER_DIR = Path("/nonexistent-user-catalog")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(NO_USER_DIR)


def test_every_kind_is_present_with_sources_and_units(catalog):
    for kind in PART_TYPES:
        assert catalog.of_kind(kind), kind
    for part in catalog:
        assert part.source.startswith("https://"), part.id
        assert part.price_cny > 0 and isinstance(part.price_as_of, dt.date)
        for key, value in part.spec.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert key.endswith(UNIT_SUFFIXES) or key in UNITLESS_NUMBER_KEYS, (part.id, key)


def test_ids_are_unique_across_files():
    seen = set()
    for path in BUILTIN_CATALOG_DIR.glob("*.toml"):
        data, _ = read_toml(path)
        for entries in data.values():
            for entry in entries:
                assert entry["id"] not in seen
                seen.add(entry["id"])


@pytest.mark.parametrize("part_id", [
    # Named in the seed guide.
    "ryzen-5-5600x", "ryzen-7-5800x", "core-i5-12400f", "core-i7-13700k", "core-i9-13900k", "xeon-platinum-8380",
    "rtx-3060-12gb", "rtx-3060-ti-8gb", "rtx-4070-12gb", "rtx-4090-24gb", "a100-40gb-pcie", "a100-80gb-pcie",
    "h100-80gb-pcie", "jetson-agx-orin-64gb", "raspberry-pi-4b-8gb", "mi250x-128gb", "samsung-970-evo-plus-1tb",
    "samsung-980-pro-1tb", "samsung-pm1643-1.92tb", "thermalright-pa120", "arctic-liquid-freezer-iii-240",
    "supermicro-x12dai-n6", "seasonic-focus-gx-550", "seasonic-focus-gx-650", "seasonic-prime-px-1600-atx3",
    # Current generation.
    "rtx-5090-32gb", "rtx-5080-16gb", "h100-80gb-sxm", "h200-141gb-sxm", "l40s-48gb", "ryzen-9-9950x",
    "core-ultra-9-285k", "epyc-9554", "threadripper-7960x",
    # In the benchmark's old peak table.
    "a100-40gb-sxm", "h200-141gb-nvl",
])
def test_guide_and_current_parts_are_in_the_catalog(catalog, part_id):
    assert catalog.get(part_id) is not None


def test_catalog_facts_follow_the_spec_sheets_not_the_guide(catalog):
    assert catalog.get("jetson-agx-orin-64gb")["memory_kind"] == "shared"
    assert catalog.get("samsung-970-evo-plus-1tb")["seq_read_mb_per_s"] == 3500
    assert catalog.get("samsung-970-evo-plus-1tb")["pcie_generation"] == 3
    assert catalog.get("samsung-pm1643-1.92tb")["interface"] == "sas"
    xeon = catalog.get("xeon-platinum-8380")
    assert (xeon["cores_count"], xeon["threads_count"], xeon["pcie_lanes_count"]) == (40, 80, 64)
    assert catalog.get("rtx-4090-24gb")["power_connector"] == "12vhpwr"


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_user_catalog_overrides_by_id_and_extends(tmp_path):
    user = tmp_path / "catalog"
    write(user, "mine.toml", """
[[gpu]]
id = "rtx-4090-24gb"
price_cny = 12999
price_as_of = 2026-11-01

[[psu]]
id = "my-psu"
name = "My 2000 W PSU"
vendor = "Me"
capacity_w = 2000
efficiency = "platinum"
atx_version = "3.1"
connectors_12vhpwr_count = 2
pcie_8pin_count = 8
eps_8pin_count = 2
modular = true
price_cny = 4000
price_as_of = 2026-11-01
source = "https://example.com/my-psu"
""")
    catalog = load_catalog(user)
    gpu = catalog.get("rtx-4090-24gb")
    assert gpu.price_cny == 12999 and gpu["memory_gib"] == 24
    assert catalog.get("my-psu")["capacity_w"] == 2000
    stale_ids = {part.id for part in catalog.stale_parts(dt.date(2026, 11, 29))}
    assert "rtx-4090-24gb" not in stale_ids and "rtx-3060-12gb" in stale_ids


VALID_COOLER = {
    "id": '"c1"', "name": '"C"', "vendor": '"v"', "cooler_type": '"air"', "max_cpu_power_w": "100",
    "sockets": '["AM4"]', "fans_count": "1", "noise": '"quiet"', "price_cny": "10", "price_as_of": "2025-01-01",
    "source": '"https://example.com/c1"',
}


def cooler_text(**changes: str | None) -> str:
    fields = {**VALID_COOLER, **changes}
    lines = [f"{key} = {value}" for key, value in fields.items() if value is not None]
    return "# my coolers\n[[cooler]]\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(("changes", "key", "reason_fragment"), [
    ({"price_cny": None}, "price_cny", "missing key"),
    ({"price_cny": '"cheap"'}, "price_cny", "must be a number"),
    ({"max_cpu_power_w": "-5"}, "max_cpu_power_w", ">= 0"),
    ({"max_cpu_power_w": "nan"}, "max_cpu_power_w", "finite"),
    ({"weight": "3"}, "weight", "unit in the key name"),
    ({"noise": '"silent"'}, "noise", "must be one of"),
    ({"fans_count": "1.5"}, "fans_count", "whole number"),
    ({"price_as_of": '"last year"'}, "price_as_of", "TOML date"),
    ({"price_cny": "99999999999"}, "price_cny", "implausibly large"),
])
def test_bad_user_entries_name_file_line_and_key(tmp_path, changes, key, reason_fragment):
    text = cooler_text(**changes)
    path = write(tmp_path / "catalog", "bad.toml", text)
    with pytest.raises(ConfigFileError) as caught:
        load_catalog(tmp_path / "catalog")
    message = str(caught.value)
    assert str(path) in message and f"cooler c1: {key}" in message and reason_fragment in message
    lines = text.splitlines()
    expected_line = next((n for n, line in enumerate(lines, 1) if line.startswith(f"{key} =")), 2)
    assert caught.value.line == expected_line


def test_valid_user_cooler_loads(tmp_path):
    write(tmp_path / "catalog", "ok.toml", cooler_text())
    assert load_catalog(tmp_path / "catalog").get("c1")["max_cpu_power_w"] == 100


def test_missing_source_is_rejected(tmp_path):
    write(tmp_path / "catalog", "c.toml", cooler_text(source='"  "'))
    with pytest.raises(ConfigFileError, match="source"):
        load_catalog(tmp_path / "catalog")


def test_unknown_kind_and_malformed_toml(tmp_path):
    write(tmp_path / "a", "x.toml", "[[spaceship]]\nid = \"s\"\n")
    with pytest.raises(ConfigFileError, match="unknown part kind"):
        load_catalog(tmp_path / "a")
    path = write(tmp_path / "b", "y.toml", "[[gpu]\nid = \n")
    with pytest.raises(ConfigFileError) as caught:
        load_catalog(tmp_path / "b")
    assert str(path) in str(caught.value) and caught.value.line == 1


def test_gpu_peak_fields_are_validated(tmp_path):
    write(tmp_path / "g", "g.toml", '[[gpu]]\nid = "rtx-4090-24gb"\ndevice_names = "NVIDIA GeForce RTX 4090"\n')
    with pytest.raises(ConfigFileError, match="device_names: must be a list of text"):
        load_catalog(tmp_path / "g")
    write(tmp_path / "h", "h.toml", '[[gpu]]\nid = "rtx-4090-24gb"\ntf32_dense_tflops = -1\n')
    with pytest.raises(ConfigFileError, match="tf32_dense_tflops: must be a finite number"):
        load_catalog(tmp_path / "h")
    for key in ("device_names", "tf32_dense_tflops", "fp16_dense_tflops", "bf16_dense_tflops", "pcie_generation"):
        assert key in PART_TYPES["gpu"].__struct_fields__


def test_user_entry_cannot_change_a_parts_kind(tmp_path):
    write(tmp_path / "c", "z.toml", '[[cpu]]\nid = "rtx-4090-24gb"\n')
    with pytest.raises(ConfigFileError, match="is a gpu"):
        load_catalog(tmp_path / "c")


# The parts the README names as keeping a pre-2026 price (no dated 2026 figure found in any market).
PRICED_BEFORE_2026 = {"pcie4-x16-riser-300mm", "rtx-4090-d-24gb", "a100-40gb-sxm", "mi250x-128gb", "l20-48gb",
                      "h20-96gb", "gh200-96gb", "gh200-144gb", "nvidia-dgx-b200"}


def test_every_part_in_production_has_a_2026_price_in_some_market_but_the_ones_the_readme_names(catalog):
    def newest(part) -> dt.date:
        listings = [*(part.get("prices") or {}).values(), *(part.get("used_prices") or {}).values()]
        return max([part.price_as_of, *(entry["as_of"] for entry in listings)])

    older = {part.id for part in catalog if not part.retired and newest(part).year < 2026}
    assert older == PRICED_BEFORE_2026
    assert f"The last {len(older)} keep older prices" in (Path(__file__).parents[2] / "README.md").read_text()
