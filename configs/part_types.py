"""The catalog's part kinds as typed structs: one Struct per kind, limits in Meta, choices as Literal.

Numbers carry their unit in the key name (UNIT_SUFFIXES). Every number has an upper bound (a typo like
memory_gib = 80000 is refused, and nothing overflows the recommender's float maths) and the sizes the
recommender divides by have a minimum above zero.
"""

import datetime as dt
from typing import Annotated, Literal

from msgspec import Meta, Struct

# Every number a spec sheet needs is below this; a few keys have tighter plausible limits.
MAX_NUMBER = 10_000_000
UNIT_SUFFIXES = (
    "_gib", "_gb", "_mb", "_w", "_mm", "_ghz", "_cny", "_gb_per_s", "_mb_per_s", "_mt_per_s", "_tflops",
    "_count", "_tbw", "_mib",
)
UNITLESS_NUMBER_KEYS = frozenset({"pcie_generation", "devices_per_package", "efficiency_core_vector_ratio",
                                  "decode_bandwidth_fraction", "training_mfu", "compute_capability",
                                  "chipset_pcie_generation"})

Number = Annotated[float, Meta(ge=0, le=MAX_NUMBER)]
Whole = Annotated[int, Meta(ge=0, le=MAX_NUMBER)]
AtLeastOne = Annotated[int, Meta(ge=1, le=MAX_NUMBER)]  # a count the recommender divides by
Gib = Annotated[float, Meta(ge=1, le=MAX_NUMBER)]
NonEmptyText = Annotated[str, Meta(pattern=r"\S")]
Texts = list[str]
MemoryType = Literal["DDR4", "DDR5"]
Availability = Literal["new", "used_only", "not_sold_new_cn"]
Market = Literal["cn", "us", "eu"]
PriceCurrency = Literal["CNY", "USD", "EUR"]
Url = Annotated[str, Meta(pattern=r"^https?://\S+$", description="a URL that shows the price")]


class MarketPrice(Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """One market's price: what a buyer there pays, in the currency it is quoted in, with its date and page."""

    amount: Annotated[float, Meta(gt=0, le=1e9)]
    currency: PriceCurrency
    as_of: dt.date
    source: Url


class PartFields(Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """What every part has: identity, price and where the numbers come from.

    configs.schema.Schema's options; each kind repeats frozen and kw_only (msgspec does not inherit kw_only).
    """

    id: NonEmptyText
    name: NonEmptyText
    price_cny: Annotated[float, Meta(gt=0, le=10_000_000)]
    price_as_of: dt.date
    source: Annotated[str, Meta(pattern=r"\S", description="a spec sheet URL")]
    # Where price_cny comes from: a launch-price page or a listing, not the spec sheet.
    price_source: Url = ""
    # The market whose price price_cny converts, where no China price was found ("": a China price).
    price_cny_converted_from: Literal["", "us", "eu"] = ""
    # New prices by market (us, eu; cn overrides price_cny): a market without one gets price_cny converted, said so.
    prices: dict[Market, MarketPrice] = {}
    # Second-hand prices by market from dated listings (eBay sold, Xianyu): GPUs only (configs.market).
    used_prices: dict[Market, MarketPrice] = {}
    # Where the guide gets this part wrong, or what to know about it: added to the build's reasoning.
    notes: Texts = []
    # What only a China-market buyer needs to know (export licences, prepayment): added for that market only.
    china_notes: Texts = []
    # Out of production, with no 2026 listing found: kept for the guide's builds and saved build files (and a GPU's
    # datasheet peaks), never recommended; a pin of it says so and names successor_id, what 2026 sells instead.
    retired_reason: str = ""
    successor_id: str = ""


# A whole computer around its GPU (DGX Spark): one of it, nothing else to buy.
DESKTOP_SYSTEM = "desktop_system"
# Forms that bring their own host (no board, CPU, RAM or PC PSU around them).
HOST_FREE_FORMS = ("edge", DESKTOP_SYSTEM)
# GPU forms that only come on a server's own baseboard (kind "system"), never as a card for a board.
SYSTEM_GPU_FORMS = ("sxm", "oam")


class Gpu(PartFields, frozen=True, kw_only=True):
    device_names: Texts
    vendor: str
    memory_gib: Annotated[float, Meta(ge=1, le=4096)]
    # nvidia-smi's reported Total in MiB (the card's default ECC mode), from the published capture in
    # memory_reported_source; 0: none found, plan with memory_gib. ECC on GDDR costs 1/16 (L40S: 46,068 MiB).
    memory_reported_mib: Annotated[float, Meta(ge=0, le=4096 * 1024)] = 0
    memory_reported_source: str = ""
    memory_kind: Literal["dedicated", "shared"]
    memory_type: str
    bandwidth_gb_per_s: Number
    # What decode at batch 1 reaches of it where a published benchmark shows this card off the common fraction
    # (configs.speed DECODE_BANDWIDTH_FRACTION); 0: the common one.
    decode_bandwidth_fraction: Annotated[float, Meta(ge=0, le=1)] = 0
    # What transformer training reaches of its datasheet dense rate where published runs show this card off the
    # common model FLOPs utilization (configs.speed TRANSFORMER_TRAINING_MFU); 0: the common one.
    training_mfu: Annotated[float, Meta(ge=0, le=1)] = 0
    fp32_tflops: Number
    tf32_dense_tflops: Number
    fp16_dense_tflops: Number
    bf16_dense_tflops: Number
    fp8_dense_tflops: Number = 0  # dense FP8 tensor TFLOPS (benchmark % of peak); 0: no FP8 unit or not listed
    # CUDA compute capability where an engine's kernels need one (vLLM's AWQ: 7.5); 0: not listed (Ampere or later).
    compute_capability: Annotated[float, Meta(ge=0, le=20)] = 0
    board_power_w: Annotated[float, Meta(ge=0, le=5000)]
    transient_peak_w: Number
    recommended_psu_w: Number
    power_connector: Literal["8pin", "12vhpwr", "eps8pin", "baseboard", "dc_barrel", "usb_c"]
    power_connector_count: Whole
    pcie_generation: Whole
    length_mm: Number
    slot_width_count: Whole
    form: Literal["consumer", "workstation", "datacenter", "sxm", "oam", "edge", "desktop_system"]
    cooling: Literal["fans", "blower", "passive"]
    nvlink: Literal["none", "pairs", "sxm"]
    # An SXM module's NVLink, GB/s one way, where its PCIe generation's (speed.NVLINK_SXM_GB_PER_S) is not it; 0: that.
    nvlink_gb_per_s: Annotated[float, Meta(ge=0, le=10_000)] = 0
    ecc: bool
    software: Literal["cuda", "rocm", "cpu"]
    # new: sold new; used_only: end of life, only the used market; not_sold_new_cn: export licence (China).
    availability: Availability = "new"
    availability_reason: str = ""  # required (configs.parts) unless availability is "new"
    # Sold new only in these markets (China-only SKUs: ["cn"]); empty: wherever the export rules allow.
    sold_new_in: list[Market] = []
    old_stock_in: list[Market] = []  # end of life (used_only), yet a dated new listing there: sold new in these
    # Devices torch sees per package (an MI250X is two GCDs): benches.client.peaks divides the peaks by it.
    devices_per_package: AtLeastOne = 1
    # The drive a desktop_system (DGX Spark, a whole computer) or an edge kit (Seeed's reComputer) ships with; 0: none.
    included_storage_gb: Number = 0
    # An edge module whose carrier board has a microSD slot it boots from (the Jetson Orin Nano developer kit).
    microsd_slot: bool = False


class Cpu(PartFields, frozen=True, kw_only=True):
    vendor: str
    cores_count: AtLeastOne
    threads_count: AtLeastOne
    base_clock_ghz: Number
    boost_clock_ghz: Number
    l3_cache_mb: Number
    tdp_w: Number
    turbo_power_w: Number
    socket: str
    # Board chipsets it runs on where its socket has more than one platform (Threadripper 7000: TRX50 only, not
    # WRX90, which takes the PRO 7000WX); empty: every board of its socket.
    chipsets: Texts = []
    memory_types: Texts
    memory_channels_count: AtLeastOne
    pcie_lanes_count: Whole
    pcie_generation: Whole
    ecc: bool
    platform: Literal["desktop", "hedt", "server"]
    eps_8pin_count: Whole
    integrated_graphics: str = ""  # the iGPU that drives a display without a graphics card; "": none (spec page)
    # Hybrid Intel CPUs: how many of cores_count are E-cores, their max turbo, and their vector work a cycle as
    # a share of a P-core's (Gracemont 2 x 128-bit FMA = 0.5 of 2 x 256-bit; Skymont 4 x 128-bit = 1.0).
    efficiency_cores_count: Whole = 0
    efficiency_boost_clock_ghz: Number = 0
    efficiency_core_vector_ratio: Annotated[float, Meta(ge=0, le=1)] = 0


class Motherboard(PartFields, frozen=True, kw_only=True):
    vendor: str
    socket: str
    chipset: str
    memory_type: MemoryType
    dimm_slots_count: AtLeastOne
    max_memory_gib: Gib
    memory_ecc: bool
    memory_registered: bool
    gpu_slots_count: Whole
    m2_slots_count: Whole
    cpu_sockets_count: AtLeastOne
    form_factor: str
    # Slots giving a GPU x4 or more: the x8+ ones and the chipset's x16-long x4 ones (enough where GPUs take turns on
    # whole layers); 0: none listed.
    gpu_slots_x4_count: Whole = 0
    chipset_pcie_generation: Whole = 0  # the chipset slots' generation where not the platform's (B550: 3); 0: its
    # Its GPU slots' PCIe generation, where the board wires them slower than the CPU gives (B650: Gen4 beside a
    # Gen5 Ryzen 7000); 0: the CPU's.
    pcie_generation: Annotated[int, Meta(ge=0, le=6)] = 0
    # Expansion-slot positions its x16 slots fill one after another (7 on a 7-slot EEB board): a card wider than
    # one slot covers its neighbours. 0: the GPU slots are spaced for the cards (no spacing limit known).
    slot_positions_count: Whole = 0


class MemoryKit(PartFields, frozen=True, kw_only=True):
    memory_type: MemoryType
    capacity_gib: Gib
    modules_count: AtLeastOne
    speed_mt_per_s: Number
    ecc: bool
    registered: bool


class Storage(PartFields, frozen=True, kw_only=True):
    media: Literal["ssd", "hdd"]
    interface: Literal["sata", "nvme", "sas", "usb", "sd"]
    pcie_generation: Whole
    form_factor: Literal["m2", "2.5in", "3.5in", "u2", "microsd", "external"]
    capacity_gb: Gib
    seq_read_mb_per_s: Number
    seq_write_mb_per_s: Number
    active_power_w: Number
    endurance_tbw: Number


class Psu(PartFields, frozen=True, kw_only=True):
    vendor: str
    capacity_w: Annotated[float, Meta(ge=50, le=10_000)]
    efficiency: Literal["bronze", "silver", "gold", "platinum", "titanium"]
    atx_version: Literal["2.x", "3.0", "3.1"]
    connectors_12vhpwr_count: Whole
    pcie_8pin_count: Whole
    eps_8pin_count: Whole
    modular: bool


class Cooler(PartFields, frozen=True, kw_only=True):
    vendor: str
    cooler_type: Literal["air", "aio", "server"]
    max_cpu_power_w: Annotated[float, Meta(ge=1, le=MAX_NUMBER)]
    sockets: Texts
    fans_count: Whole
    noise: Literal["quiet", "normal", "loud"]


class System(PartFields, frozen=True, kw_only=True):
    """A server sold as one unit: whole (an HGX/DGX 8-GPU system, GPUs, CPUs, RAM and drives included) or a
    barebone (chassis, board, PSUs and fans: the buyer adds PCIe GPUs, CPUs, RAM and drives)."""

    vendor: str
    form_factor: str
    barebone: bool = False
    gpu_id: str = ""  # whole system: the catalog GPU on its baseboard
    gpu_count: Whole = 0  # whole system: GPUs included
    cpu_name: str = ""
    cpu_cores_count: Whole = 0  # all sockets together
    memory_gib: Annotated[float, Meta(ge=0, le=MAX_NUMBER)] = 0
    storage_gb: Annotated[float, Meta(ge=0, le=MAX_NUMBER)] = 0  # data drives, OS drives not counted
    # Redundant server PSUs (CRPS-style): N carry the load, the rest are spares; capacity counts N only.
    psu_count: AtLeastOne
    psu_redundant_count: Whole
    psu_capacity_w: Annotated[float, Meta(ge=50, le=10_000)]
    max_power_w: Annotated[float, Meta(ge=0, le=100_000)] = 0  # the vendor's maximum system input (0: not given)
    # Barebone: PCIe GPU slots, the power lead each slot's cable gives, and the host the buyer fills.
    gpu_slots_count: Whole = 0
    gpu_slot_width_count: Whole = 0  # widest card a slot takes, in slot widths
    gpu_length_max_mm: Number = 0
    gpu_slot_power_w: Number = 0  # what one slot's GPU power lead delivers
    # GPU coolers its airflow serves: a passive 2U chassis pushes air front to back through blower or passive cards;
    # an open-air (axial-fan) card blows into its neighbour. Empty: any.
    gpu_coolers: list[Literal["fans", "blower", "passive"]] = []
    cpu_socket: str = ""
    cpu_sockets_count: Whole = 0
    cpu_tdp_max_w: Number = 0
    memory_type: str = ""
    memory_registered: bool = False
    dimm_slots_count: Whole = 0
    max_memory_gib: Number = 0
    m2_slots_count: Whole = 0


class Frame(PartFields, frozen=True, kw_only=True):
    """An open-air frame: the board lies flat and the cards stand in a row above it, each on a riser cable, so a
    card's width no longer covers the next slot (a tower's case is not priced; this replaces it)."""

    vendor: str
    gpu_positions_count: AtLeastOne
    board_form_factors: Texts  # motherboard form_factor values it has standoffs for
    psu_positions_count: AtLeastOne


class Case(PartFields, frozen=True, kw_only=True):
    """A desktop PC's case: the board form factors it has standoffs for, the expansion slots and card length it
    takes, and how many ATX units it holds (two: a dual-PSU tower)."""

    vendor: str
    board_form_factors: Texts  # motherboard form_factor values it has standoffs for
    expansion_slots_count: AtLeastOne
    gpu_length_max_mm: Annotated[float, Meta(ge=100, le=1000)]
    psu_positions_count: AtLeastOne = 1
    fans_included_count: Annotated[int, Meta(ge=0, le=20)] = 0


class Riser(PartFields, frozen=True, kw_only=True):
    """A PCIe x16 riser cable: one card's full link, moved off the board (a USB x1 mining riser is not one)."""

    vendor: str
    pcie_generation: Annotated[int, Meta(ge=3, le=6)]
    lanes_count: Annotated[int, Meta(ge=16, le=16)]
    length_mm: Annotated[float, Meta(ge=50, le=1000)]


class GpuDuct(PartFields, frozen=True, kw_only=True):
    """A fan duct for one passive data-centre card in a desktop case: a shroud on its heat sink's intake and a
    high-pressure blower or 40 mm fans, the airflow a server's fan wall gives it."""

    vendor: str
    max_gpu_power_w: Annotated[float, Meta(ge=10, le=1000)]  # the hottest card it keeps below its limit


PART_TYPES: dict[str, type[PartFields]] = {
    "gpu": Gpu, "cpu": Cpu, "motherboard": Motherboard, "memory_kit": MemoryKit, "storage": Storage, "psu": Psu,
    "cooler": Cooler, "system": System, "frame": Frame, "riser": Riser, "gpu_duct": GpuDuct, "case": Case,
}
KINDS = tuple(PART_TYPES)
