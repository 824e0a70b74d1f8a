"""Rules: tiers, floors, PSU sizing, compatibility problems."""

from __future__ import annotations

import pytest

from pth_top.configs.compat import compatibility_problems
from pth_top.configs.power import case_fans_count, power_estimate, standard_psu_size
from pth_top.configs.rules import (
    budget_in_cny,
    budget_line,
    budget_tier,
    checkpoint_staging_gib,
    cpu_floor,
    load_rules,
    ram_floor_gib,
    storage_class,
)
from pth_top.units import GIB

RULES = load_rules()


@pytest.mark.parametrize(("budget", "tier"), [(5000, "entry"), (7999, "entry"), (8000, "balance"), (20000, "balance"),
                                              (40000, "balance"), (50000, "datacenter"), (500000, "datacenter")])
def test_budget_tiers_follow_guide_6_1(budget, tier):
    assert budget_tier(budget, RULES)[0] == tier
    assert "§6.1" in budget_tier(budget, RULES)[1]


def test_currency_conversion():
    assert budget_in_cny(1000, "CNY", RULES) == 1000
    assert budget_in_cny(1000, "USD", RULES) == 1000 * RULES.currency.cny_per_usd
    assert "USD = ¥" in budget_line(1000, "USD", RULES) and budget_line(1000, "CNY", RULES) == "budget ¥1,000"


def test_cpu_floor_tiers_and_cores_per_gpu():
    assert cpu_floor(1, False, RULES)[:2] == (4, 8)
    assert cpu_floor(1, True, RULES)[:2] == (8, 16)
    assert cpu_floor(8, True, RULES)[0] == 16  # 2 cores per GPU
    assert "§1.1" in cpu_floor(1, False, RULES)[3]


def test_staging_counts_the_frozen_models_read_from_their_16_bit_files():
    # FLUX.1-dev LoRA (ai-toolkit): the 11.9B transformer and T5-XXL's 4.76B encoder are read at 16 bit (23.8 GB and
    # 9.5 GB in the repository) before they are quantized or the text embeddings pre-computed.
    flux, t5 = 11_901_408_320, 4_762_310_656
    staged, text = checkpoint_staging_gib(flux, mode="training", method="lora", frozen_parameters=t5)
    assert staged * 2**30 == pytest.approx((flux + t5) * 2) and "frozen models' 16-bit files" in text
    quantized, _ = checkpoint_staging_gib(flux, mode="training", method="lora_int8", frozen_parameters=t5)
    assert quantized == pytest.approx(staged)
    assert checkpoint_staging_gib(flux, mode="training", method="lora") == (0.0, "")
    assert checkpoint_staging_gib(flux, mode="inference", method="lora", frozen_parameters=t5) == (0.0, "")


def test_ram_floor():
    assert ram_floor_gib(10, 8, 0, RULES).value == 16
    assert ram_floor_gib(500, 8, 0, RULES).value == 32
    assert ram_floor_gib(10, 4 * 80, 0, RULES).value == 320
    assert ram_floor_gib(10, 24, 130, RULES).value == 134


def test_storage_classes():
    assert storage_class(20, RULES)[0] == "any_ssd"
    assert storage_class(500, RULES)[0] == "nvme"
    assert storage_class(8000, RULES)[0] == "nvme_raid0"


def test_psu_for_the_guides_examples():
    # Guide §4.2: RTX 3060 + i5-12400F -> 550 W gold is enough; RTX 4090 + i9-13900K -> >= 850 W.
    small = power_estimate(gpu_board_power_w=170, gpu_transient_peak_w=230, gpu_count=1, gpu_recommended_psu_w=550,
                           cpu_turbo_power_w=117, dimm_count=2, drive_count=1, fan_count=3, rules=RULES)
    assert standard_psu_size(small.psu_required_w, RULES) == (550, 1)
    big = power_estimate(gpu_board_power_w=450, gpu_transient_peak_w=600, gpu_count=1, gpu_recommended_psu_w=850,
                         cpu_turbo_power_w=253, dimm_count=2, drive_count=1, fan_count=5, rules=RULES)
    size, count = standard_psu_size(big.psu_required_w, RULES)
    assert size >= 850 and count == 1
    assert "/ 0.8" in big.lines[1]


def test_multi_gpu_psu_covers_transients_and_splits_above_1600_w():
    four = power_estimate(gpu_board_power_w=350, gpu_transient_peak_w=465, gpu_count=4, gpu_recommended_psu_w=750,
                          cpu_turbo_power_w=280, dimm_count=8, drive_count=2, fan_count=8, rules=RULES)
    assert four.psu_required_w >= four.peak_w > four.sustained_w
    assert four.psu_required_w >= four.sustained_w / 0.8
    assert standard_psu_size(four.psu_required_w, RULES) == (1600, 2)
    assert standard_psu_size(1601, RULES) == (1600, 2)
    assert standard_psu_size(600, RULES) == (650, 1)


def test_case_fans_scale_with_heat():
    assert case_fans_count(100, RULES) == 2
    assert case_fans_count(900, RULES) == 6
    assert case_fans_count(5000, RULES) == 8


def pick(catalog, **roles):
    return {role: (catalog.get(part_id), quantity) for role, (part_id, quantity) in roles.items()}


def test_compatible_desktop_has_no_problems(catalog):
    chosen = pick(catalog, gpu=("rtx-4090-24gb", 1), cpu=("core-i9-13900k", 1),
                  motherboard=("asus-tuf-z790-plus-d5", 1),
                  memory_kit=("ddr5-6000-64gb-2x32", 1), storage=("samsung-990-pro-2tb", 1),
                  cooler=("arctic-liquid-freezer-iii-pro-360", 1), psu=("seasonic-vertex-gx-1000", 1))
    assert compatibility_problems(chosen, 850) == []


def test_socket_memory_and_connector_mismatches(catalog):
    chosen = pick(catalog, gpu=("rtx-4090-24gb", 1), cpu=("ryzen-7-5800x", 1), motherboard=("asus-tuf-z790-plus-d5", 1),
                  memory_kit=("ddr4-3200-32gb-2x16", 1), storage=("samsung-980-pro-1tb", 1),
                  cooler=("noctua-nh-u14s-dx-4189", 1), psu=("seasonic-focus-gx-650", 1))
    problems = " | ".join(compatibility_problems(chosen, 900))
    assert "socket: AMD Ryzen 7 5800X is AM4" in problems
    assert "RAM is DDR4" in problems
    assert "12VHPWR" in problems
    assert "does not fit socket AM4" in problems
    assert "below the 900 W required" in problems


def test_four_a100s_take_all_lanes_of_one_xeon_8380_and_nvlink_pairs_only(catalog):
    chosen = pick(catalog, gpu=("a100-80gb-pcie", 4), cpu=("xeon-platinum-8380", 1),
                  motherboard=("supermicro-x12spa-tf", 1),
                  memory_kit=("ddr4-3200-rdimm-256gb-8x32", 1), storage=("samsung-pm1733-3.84tb", 1),
                  psu=("seasonic-prime-px-1600-atx3", 2))
    problems = " | ".join(compatibility_problems(chosen))
    assert "PCIe lanes: 4 GPUs at x16 + 4 for storage = 68" in problems
    assert "bridges pairs only" in problems
    assert "passively cooled" in problems


def test_ecc_and_registered_memory_checks(catalog):
    chosen = pick(catalog, cpu=("ryzen-9-7950x", 1), motherboard=("asus-tuf-b650-plus", 1),
                  memory_kit=("ddr5-4800-rdimm-128gb-4x32", 1))
    problems = " | ".join(compatibility_problems(chosen))
    assert "needs UDIMM" in problems and "does not support ECC" in problems


@pytest.mark.parametrize(("change", "where", "reason"), [
    (("psu_max_load_fraction = 0.8", "psu_max_load_fraction = 0"), "power.psu_max_load_fraction",
     "must be above 0, got 0"),
    (("watts_per_case_fan_w = 150", "watts_per_case_fan_w = 0"), "cooling.watts_per_case_fan_w", "must be at least 1"),
    (("gold = 0.90", "gold = nan"), "power.efficiency_at_half_load.gold", "must be a finite number"),
    (("cny_per_usd = 6.9858", "cny_per_usd = 6.9858\ncny_per_gbp = 9.1"), "currency.cny_per_gbp", "unknown key"),
    (("standard_psu_sizes_w = [550,", "standard_psu_sizes_w = [0, 550,"), "power.standard_psu_sizes_w",
     "item 1 must be at least 1, got 0"),
    (("base_gib = 16", 'base_gib = "16"'), "ram.base_gib", "must be a whole number"),
])
def test_a_bad_rules_file_names_file_line_and_key(tmp_path, change, where, reason):
    from pth_top.configs.errors import ConfigFileError
    from pth_top.configs.rules import RULES_PATH

    text = RULES_PATH.read_text(encoding="utf-8")
    assert change[0] in text
    bad = text.replace(*change)
    (tmp_path / "rules.toml").write_text(bad, encoding="utf-8")
    with pytest.raises(ConfigFileError) as caught:
        load_rules(tmp_path / "rules.toml")
    key_line = next(number for number, line in enumerate(bad.splitlines(), 1) if line.startswith(where.split(".")[1]))
    assert f"rules.toml:{key_line}: {where}: {reason}" in str(caught.value)


def test_a_quantized_load_stages_one_shard_of_the_checkpoint_at_a_time():
    # Qwen2.5-32B QLoRA: transformers reads a sharded checkpoint a 5 GB shard at a time and quantizes each as it goes
    # to the GPU, as the QLoRA README fine-tunes GPT-NeoX-20B (41 GB in 16 bits) on a free Colab; staging the whole
    # 16-bit checkpoint asked for 61 GiB of RAM. Unsloth's pre-quantized checkpoint (its embeddings and LM head,
    # 2 x 152,064 x 5,120, in 16 bits: 19.2 GB) loads the same way; a 0.5B model's whole file is under a shard.
    parameters, embeddings = 32_763_876_352, 2 * 152_064 * 5_120
    hf, text = checkpoint_staging_gib(parameters, mode="training", method="qlora")
    unsloth, unsloth_text = checkpoint_staging_gib(parameters, mode="training", method="qlora", stack="unsloth",
                                                   unquantized_parameters=embeddings)
    assert hf == unsloth == pytest.approx(5e9 / GIB) and "shard" in text and "pre-quantized 4-bit" in unsloth_text
    small, _ = checkpoint_staging_gib(494_032_768, mode="training", method="qlora")
    assert small == pytest.approx(494_032_768 * 2 / GIB)
