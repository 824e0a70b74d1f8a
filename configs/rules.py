"""The recommendation rules (numbers in rules.toml), each returning its result and a reasoning line.

Reasoning lines name the rule or formula and the guide section ("guide §3.1") it comes from.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Callable, Literal

from msgspec import Meta

from pth_top.configs.errors import ConfigFileError
from pth_top.configs.mains import MainsByMarket
from pth_top.configs.memory_methods import qlora_base_bytes
from pth_top.configs.memory_terms import WEIGHT_BYTES_BY_PRECISION
from pth_top.configs.schema import Schema, SchemaError, convert
from pth_top.configs.tomlsource import line_of_key_in_table, line_of_table, read_toml
from pth_top.units import GIB

RULES_PATH = Path(__file__).with_name("rules.toml")


# Limits a rules file can hold: below them nothing divides by zero, above them a typo shows.
Whole = Annotated[int, Meta(ge=0, le=10_000_000)]
AtLeastOne = Annotated[int, Meta(ge=1, le=10_000)]
Number = Annotated[float, Meta(ge=0, le=10_000_000)]
Fraction = Annotated[float, Meta(gt=0, le=1)]  # a share the rules divide by or multiply with
Rate = Annotated[float, Meta(gt=0, le=1000)]


class CpuRules(Schema, frozen=True):
    guide_section: str
    basic_cores_count: AtLeastOne
    basic_threads_count: AtLeastOne
    basic_min_clock_ghz: Number
    complex_cores_count: AtLeastOne
    complex_threads_count: AtLeastOne
    complex_min_clock_ghz: Number
    min_l3_cache_mb: Whole
    cores_per_gpu_count: Whole
    cores_per_gpu_decode_count: Whole
    min_lanes_per_gpu_count: Whole
    layer_split_lanes_per_gpu_count: Whole
    lanes_per_nvme_count: Whole


class RamRules(Schema, frozen=True):
    guide_section: str
    base_gib: Whole
    large_data_gib: Whole
    large_dataset_gb: Whole
    gpu_memory_ratio: Number
    os_reserve_gib: Whole
    edge_os_reserve_gib: Whole
    tabular_in_memory_ratio: Number


class StorageRules(Schema, frozen=True):
    guide_section: str
    sata_max_dataset_gb: Whole
    raid0_min_dataset_gb: Whole
    nvme_min_read_mb_per_s: Whole
    edge_sd_max_load_s: Whole
    dataset_copies_count: AtLeastOne
    os_and_tools_gb: Whole
    checkpoint_copies_count: Whole
    min_capacity_gb: Whole
    model_copies_count: AtLeastOne


class EfficiencyAtHalfLoad(Schema, frozen=True):
    """Wall draw is DC load divided by these, one per 80 PLUS level a PSU in the catalog can have."""

    bronze: Fraction
    silver: Fraction
    gold: Fraction
    platinum: Fraction
    titanium: Fraction


class PowerRules(Schema, frozen=True):
    guide_section: str
    psu_max_load_fraction: Fraction
    board_w: Whole
    per_dimm_w: Whole
    per_drive_w: Whole
    per_fan_w: Whole
    standard_psu_sizes_w: Annotated[list[Annotated[int, Meta(ge=1, le=100_000)]], Meta(min_length=1)]
    multi_gpu_transient_headroom_fraction: Annotated[float, Meta(ge=0, le=10)]
    efficiency_at_half_load: EfficiencyAtHalfLoad
    mains: MainsByMarket
    power_limit_min_fraction: Fraction
    power_limit_throughput_kept_fraction: Fraction
    power_limit_source: str


class CoolingRules(Schema, frozen=True):
    guide_section: str
    watts_per_case_fan_w: AtLeastOne
    min_case_fans_count: Whole
    max_case_fans_count: Whole
    aio_above_cpu_power_w: Whole


class BudgetRules(Schema, frozen=True):
    guide_section: str
    entry_max_cny: Whole
    balance_min_cny: Whole
    balance_max_cny: Whole
    datacenter_min_cny: Whole
    # Kinds whose prices move as a category (DRAM, NAND): a part without the market's price is indexed (configs.market).
    indexed_kinds: list[Literal["memory_kit", "storage"]]
    index_min_parts_count: AtLeastOne
    index_base_before: dt.date  # only base prices dated before this are indexed (or index others)
    prices_before_tax_markets: list[Literal["cn", "us", "eu"]]  # whose new prices get it too, converted
    vat_fraction: dict[Literal["cn", "us", "eu"], Fraction]  # in a market's shop prices and paid at its border


class GpuRules(Schema, frozen=True):
    guide_section: str
    usable_memory_fraction: Fraction
    estimate_margin_fraction: Annotated[float, Meta(ge=0, le=1)]


class CurrencyRules(Schema, frozen=True):
    as_of: dt.date
    source: str
    cny_per_usd: Rate
    cny_per_eur: Rate


class CpuOnlyRules(Schema, frozen=True):
    guide_section: str
    # Inference of a model in the guide's "small" class (LeNet, ResNet-18: 2 GB of GPU memory) needs no GPU.
    small_model_max_gib: Number
    small_training_dataset_max_gb: Number  # and training one on at most this much data


class RentRules(Schema, frozen=True):
    """On-demand cloud prices per GPU-hour by catalog GPU id: renting as a comparison when buying is not feasible."""

    as_of: dt.date
    source: str
    usd_per_gpu_hour: dict[str, Rate]


class Rules(Schema, frozen=True):
    """rules.toml: one table per part of the guide the rules come from."""

    cpu: CpuRules
    ram: RamRules
    storage: StorageRules
    power: PowerRules
    cooling: CoolingRules
    budget: BudgetRules
    gpu: GpuRules
    currency: CurrencyRules
    rent: RentRules
    cpu_only: CpuOnlyRules


@functools.cache
def load_rules(path: Path = RULES_PATH) -> Rules:
    """The rules, validated; ConfigFileError names the file, line and key of a bad value."""
    data, text = read_toml(path)
    try:
        return convert(data, Rules)
    except SchemaError as error:
        keys = error.problem.keys
        line = line_of_table(text, keys[0]) if len(keys) == 1 else None
        if len(keys) > 1:  # a key in a table, or in an inline table on that key's line
            line = line_of_key_in_table(text, keys[0], keys[1])
        raise ConfigFileError(error.reason, path=path, line=line, key=".".join(keys) or None) from None


@dataclass(frozen=True, slots=True)
class Floor:
    """A minimum requirement and why."""

    value: float
    reason: str
    own_gib: float = 0.0  # a RAM floor without the GPU-memory rule of thumb: what the job itself needs


def budget_in_cny(amount: float, currency: str, rules: Rules) -> float:
    if currency == "CNY":
        return amount
    return amount * getattr(rules.currency, f"cny_per_{currency.lower()}")


def budget_line(amount: float, currency: str, rules: Rules) -> str:
    if currency == "CNY":
        return f"budget ¥{amount:,.0f}"
    rate = getattr(rules.currency, f"cny_per_{currency.lower()}")
    return (f"budget {amount:,.0f} {currency} = ¥{amount * rate:,.0f} at {rate} CNY/{currency} "
            f"(rules.toml, as of {rules.currency.as_of})")


def budget_tier(budget_cny: float, rules: Rules, show: Callable[[float], str] | None = None) -> tuple[str, str]:
    """The guide's budget tiers (§6.1); the guide leaves ¥8000-15000 and ¥30000-50000 open. `show` writes a yuan
    amount in the buyer's currency; the guide's own yuan figure follows in brackets."""
    b = rules.budget

    def text(cny: float) -> str:
        return f"¥{cny:,.0f}" if show is None else f"{show(cny)} (the guide's ¥{cny:,.0f})"

    budget = f"¥{budget_cny:,.0f}" if show is None else show(budget_cny)
    if budget_cny < b.entry_max_cny:
        return "entry", f"budget {budget} < {text(b.entry_max_cny)}: VRAM first, mid-range CPU (guide §6.1)"
    if budget_cny >= b.datacenter_min_cny:
        return "datacenter", (
            f"budget {budget} >= {text(b.datacenter_min_cny)}: the guide prefers data-centre/workstation GPUs "
            "and ECC memory here (§6.1); GPUs are still ranked by fit and throughput per unit of money, and the "
            "platform follows the job (a workstation for 3+ GPUs or more RAM than a desktop board takes), not the "
            "budget"
        )
    note = "" if b.balance_min_cny <= budget_cny <= b.balance_max_cny else (
        " (the guide gives no tier for this range; treated as balanced)"
    )
    return "balance", f"budget {budget}: balance GPU compute with CPU cores (guide §6.1){note}"


def cpu_floor(gpu_count: int, complex_workload: bool, rules: Rules) -> tuple[int, int, float, str]:
    """Cores, threads and clock the CPU needs: the guide's tiers, and >= 2 cores per GPU for loading."""
    c = rules.cpu
    tier = "complex" if complex_workload else "basic"
    tier_cores, tier_threads = getattr(c, f"{tier}_cores_count"), getattr(c, f"{tier}_threads_count")
    cores = max(tier_cores, c.cores_per_gpu_count * gpu_count)
    threads = max(tier_threads, cores)
    clock = getattr(c, f"{tier}_min_clock_ghz")
    reason = (
        f"CPU >= {cores} cores / {threads} threads, >= {clock} GHz, L3 >= {c.min_l3_cache_mb} MB: the guide's "
        f"{tier_cores}c{tier_threads}t tier for {tier} work (§{c.guide_section})"
        + (f" and >= {c.cores_per_gpu_count} cores per GPU for DataLoader workers" if gpu_count else "")
    )
    return cores, threads, clock, reason


# Data the DataLoader workers decode (JPEG, video) rather than just read.
DECODE_DATA_KINDS = ("images", "video", "mixed")


def decode_cores_floor(data_kind: str, gpu_count: int, rules: Rules) -> tuple[int, str]:
    """Cores that decoding and augmenting this data on the CPU needs, and the sentence saying so (0, "": none)."""
    per_gpu = rules.cpu.cores_per_gpu_decode_count
    if data_kind not in DECODE_DATA_KINDS or not gpu_count:
        return 0, ""
    cores = per_gpu * gpu_count
    return cores, f"{data_kind} data is decoded and augmented on the CPU: >= {per_gpu} cores per GPU = {cores} cores"


def trees_on_a_table(data_kind: str, model_kind: str, parameters: int) -> bool:
    """Gradient-boosted trees on tabular data: a "generic" model with no parameter count; a network on a table (an
    FT-Transformer) is sized and placed as any network (audit YC2, review AD)."""
    return data_kind == "tabular" and model_kind == "generic" and parameters <= 0


def ram_floor_gib(dataset_size_gb: float, total_gpu_memory_gib: float, host_weights_gib: float, rules: Rules,
                  host_text: str = "", table_in_ram: bool = False, gpu_rule: bool = True) -> Floor:
    """The guide's base, the GPUs' memory (`gpu_rule`), the weights staged in RAM, a table held for trees."""
    r = rules.ram
    large = dataset_size_gb >= r.large_dataset_gb
    base = r.large_data_gib if large else r.base_gib
    from_gpus = total_gpu_memory_gib * r.gpu_memory_ratio if gpu_rule else 0.0
    from_weights = host_weights_gib + r.os_reserve_gib
    # Trees build their matrix from the whole table; a neural network reads it in batches from parquet shards or a
    # memory map (audit YC2: an FT-Transformer's 300 GB table asked for 904 GiB of RAM).
    table = table_in_ram and dataset_size_gb > 0
    from_table = dataset_size_gb * r.tabular_in_memory_ratio + r.os_reserve_gib if table else 0.0
    need = max(base, from_gpus, from_weights, from_table)
    parts = [f"{base} GB {'for large data' if large else 'base'} (guide §{r.guide_section})"]
    if total_gpu_memory_gib and gpu_rule:
        parts.append(f"total GPU memory {total_gpu_memory_gib:g} GiB x {r.gpu_memory_ratio:g}")
    if host_weights_gib:
        parts.append(f"{host_text or 'model weights'} {host_weights_gib:.1f} GiB staged in RAM + {r.os_reserve_gib} GB "
                     "for the OS")
    if from_table:
        parts.append(f"the {dataset_size_gb:g} GB table held in memory x {r.tabular_in_memory_ratio:g} (a data "
                     f"frame and XGBoost's DMatrix built from it) + {r.os_reserve_gib} GB for the OS")
    unruled = "" if gpu_rule or not total_gpu_memory_gib else UNRULED_INFERENCE
    return Floor(need, "RAM >= max(" + ", ".join(parts) + f") = {need:.0f} GiB{unruled}",
                 max(base, from_weights, from_table))


UNRULED_INFERENCE = ("; not the GPUs' memory: inference on a PC stages no more than its weights (llama.cpp maps its "
                     "file; vLLM, SGLang and generate() over several GPUs' device map load a shard at a time)")


def storage_class(dataset_size_gb: float, rules: Rules) -> tuple[str, str]:
    s = rules.storage
    if dataset_size_gb <= s.sata_max_dataset_gb:
        return "any_ssd", (
            f"dataset {dataset_size_gb:g} GB <= {s.sata_max_dataset_gb} GB: a SATA SSD (~550 MB/s) is enough for code "
            f"and small datasets (guide §{s.guide_section})"
        )
    if dataset_size_gb < s.raid0_min_dataset_gb:
        return "nvme", (
            f"dataset {dataset_size_gb:g} GB: NVMe >= {s.nvme_min_read_mb_per_s} MB/s for medium datasets and weights "
            f"(guide §{s.guide_section}; its '7000 MB/s' is PCIe 4.0 only, PCIe 3.0 drives give ~3500)"
        )
    return "nvme_raid0", (
        f"dataset {dataset_size_gb:g} GB >= {s.raid0_min_dataset_gb} GB: NVMe RAID 0 (~2x one drive's speed, no "
        f"redundancy: keep a backup) (guide §{s.guide_section})"
    )


def storage_capacity_gb(
    dataset_size_gb: float, parameters: int, rules: Rules, *, mode: str = "training", precision: str = "bf16",
    method: str = "full", run_fits: bool = True,
) -> Floor:
    """Dataset copies + the model's files + OS: full training keeps fp32+Adam checkpoints, others the weights only.
    A run that does not fit the build's GPU memory (`run_fits` False) writes no checkpoints there."""
    s = rules.storage
    if mode == "inference" or method != "full":
        # Inference keeps weights at their own precision; LoRA/QLoRA/frozen keep the 16-bit base (adapters are MBs).
        stored = precision if mode == "inference" else "bf16"
        model_gb = parameters * WEIGHT_BYTES_BY_PRECISION[stored] * s.model_copies_count / 1e9
        model_text = f"{s.model_copies_count} copies of the {stored} weights ({gb_text(model_gb)})"
    elif not run_fits:
        model_gb = 0.0
        model_text = "no checkpoints (the run does not fit the GPU memory, so none are sized)"
    else:
        model_gb = parameters * 4 * 3 * s.checkpoint_copies_count / 1e9  # fp32 weights + Adam m, v
        model_text = f"{s.checkpoint_copies_count} checkpoints ({gb_text(model_gb)})"
    total_gb = dataset_size_gb * s.dataset_copies_count + model_gb + s.os_and_tools_gb
    need = max(s.min_capacity_gb, total_gb)
    return Floor(need, (
        f"capacity >= dataset x {s.dataset_copies_count} (raw + preprocessed) + {model_text} + "
        f"{s.os_and_tools_gb} GB OS/tools = {total_gb:,.0f} GB"
        + (f", at least {s.min_capacity_gb:,} GB" if need > total_gb else "")
    ))


def gb_text(size_gb: float) -> str:
    """A size in GB that does not round a small model's files to "0 GB"."""
    if size_gb >= 1 or size_gb == 0:
        return f"{size_gb:,.0f} GB"
    return f"{size_gb:.2g} GB" if size_gb >= 0.01 else "< 0.01 GB"


def host_model_gib(weight_bytes: float, *, mode: str, host_offload_bytes: int = 0,
                   streams_shards: bool = False) -> float:
    """Host RAM's part of the model: inference weights as stored, or what runs from RAM where the engine streams or
    maps its file (vLLM, llama.cpp's --cpu-moe experts); what ZeRO-Offload moves to the CPU in training."""
    if mode == "inference" and not streams_shards:
        return max(weight_bytes, host_offload_bytes) / GIB
    return host_offload_bytes / GIB


# Adapter methods whose base is quantized on load from the 16-bit checkpoint (bitsandbytes int8 / NF4).
QUANTIZING_METHODS = ("qlora", "lora_int8")
# A sharded checkpoint loads a shard at a time, each quantized as it goes to the GPU: transformers' save_pretrained
# shards at 5 GB (max_shard_size); the QLoRA README fine-tunes GPT-NeoX-20B (41 GB in 16 bits) on a free Colab.
CHECKPOINT_SHARD_BYTES = 5e9


def checkpoint_staging_gib(parameters: int, *, mode: str, method: str, frozen_parameters: int = 0,
                           stack: str = "hf_trainer", unquantized_parameters: int = 0) -> tuple[float, str]:
    """RAM that loading the checkpoints takes: quantizing the base reads one shard of the 16-bit checkpoint at a time
    (Unsloth's pre-quantized one likewise), and frozen models (a diffusion model's text encoders) are read from their
    16-bit files to be quantized or to pre-compute embeddings (FLUX.1-dev: a 23.8 GB transformer and a 9.5 GB T5
    encoder); (0, "") when nothing larger than the host weights is staged."""
    if mode != "training":
        return 0.0, ""
    parts, staged = [], 0.0
    if method == "qlora" and stack == "unsloth":
        # Unsloth loads its pre-quantized 4-bit checkpoints (unsloth/*-bnb-4bit, its README's model list).
        staged += min(qlora_base_bytes(parameters, unquantized_parameters), CHECKPOINT_SHARD_BYTES)
        parts.append("a shard of Unsloth's pre-quantized 4-bit checkpoint at a time")
    elif method in QUANTIZING_METHODS and frozen_parameters:  # a diffusion trainer (ai-toolkit) quantizes it whole
        staged += parameters * 2
        parts.append(f"the 16-bit checkpoint, read to quantize the base ({method})")
    elif method in QUANTIZING_METHODS:
        staged += min(parameters * 2, CHECKPOINT_SHARD_BYTES)
        parts.append(f"a {CHECKPOINT_SHARD_BYTES / 1e9:g} GB shard of the 16-bit checkpoint at a time, quantized as it "
                     f"loads ({method})")
    if frozen_parameters:
        if not parts:
            staged += parameters * 2
            parts.append("the 16-bit checkpoint")
        staged += frozen_parameters * 2
        parts.append(f"the frozen models' 16-bit files ({frozen_parameters * 2 / 1e9:.3g} GB), read to quantize "
                     "them or pre-compute the embeddings")
    return staged / GIB, " + ".join(parts)


def shared_os_reserve_gib(form: str, rules: Rules) -> int:
    """The OS's share of a memory shared with the CPU: a headless edge module's (Jetson L4T), else a desktop's."""
    return rules.ram.edge_os_reserve_gib if form == "edge" else rules.ram.os_reserve_gib


def gpu_usable_bytes(memory_gib: float, memory_kind: str, rules: Rules, fraction: float = 0.0, form: str = "") -> float:
    """What a workload may plan to use: a fraction of VRAM, or shared memory minus the OS's share. `fraction` is
    the stack's own (vLLM's gpu_memory_utilization), applied instead of the rules' fraction, never on top of it."""
    share = fraction or rules.gpu.usable_memory_fraction
    if memory_kind == "shared":
        return max(0.0, (memory_gib - shared_os_reserve_gib(form, rules)) * GIB * share)
    return memory_gib * GIB * share
