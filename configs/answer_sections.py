"""The answers' data, scale and budget sections as typed structs (answer_types holds the workload and the task, and
the whole file), and the limits the sections share."""

from typing import Annotated, Literal, get_args

from msgspec import Meta

from pth_top.configs.memory_terms import ShardingMode
from pth_top.configs.schema import Schema

DataKind = Literal["images", "text", "audio", "video", "tabular", "mixed"]
DATA_KINDS: tuple[str, ...] = get_args(DataKind)
Currency = Literal["CNY", "USD", "EUR"]
# Where the parts are bought: prices and availability (export rules, China-only cards) are that market's.
Market = Literal["auto", "cn", "us", "eu"]
Condition = Literal["new", "used"]
NoiseLimit = Literal["any", "quiet"]
CURRENCIES: tuple[str, ...] = get_args(Currency)
MARKETS: tuple[str, ...] = get_args(Market)
CONDITIONS: tuple[str, ...] = get_args(Condition)
NOISE_LIMITS: tuple[str, ...] = get_args(NoiseLimit)
MAX_GPUS = 8
MAX_TEXT_CHARS = 200


def whole(low: int, high: int, help: str = "") -> Meta:
    return Meta(ge=low, le=high, description=help) if help else Meta(ge=low, le=high)


class Data(Schema, frozen=True):
    dataset_size_gb: Annotated[float, Meta(ge=0, le=10_000_000, description="dataset size on disk in GB")] = 10.0
    kind: DataKind = "text"
    tokens_count: Annotated[int, whole(0, 10**15, (
        "tokens in one epoch: text tokens, or the model's own positions (an audio encoder's frames); 0: text from its "
        "size at ~4 bytes a token"))] = 0
    images_count: Annotated[int, whole(0, 10**12, (
        "images: images in one epoch (0: the size at ~110 KB each); video or audio: clips (utterances) in one epoch "
        "(0: not counted)"))] = 0


class Scale(Schema, frozen=True):
    gpu_count: Annotated[int, whole(1, MAX_GPUS, "GPUs in the machine")] = 1
    sharding: Annotated[ShardingMode, Meta(description=(
        "ZeRO stage or FSDP; layers: training in one process with the model's layers split over the GPUs, "
        "device_map=\"auto\" (naive model parallel, as ms-swift's and LLaMA-Factory's multi-GPU QLoRA runs load a "
        "70B on two 24 GB cards): each GPU holds its layers and their states, one GPU runs at a time"))] = "none"
    reduce_bucket_elements: Annotated[float, Meta(ge=0, le=1e10, description=(
        "DeepSpeed ZeRO's zero_optimization.reduce_bucket_size, in elements: ZeRO-1/2 (in backward) and ZeRO-3 "
        "allocate a gradient bucket of that size whatever the trained parameters (5e8: DeepSpeed's default and "
        "LLaMA-Factory's configs; 1e9: InternVL's; the Hugging Face Trainer's \"auto\": hidden_size squared)"))] = 5e8
    overlap_comm: Annotated[bool, Meta(description=(
        "DeepSpeed ZeRO-1/2's zero_optimization.overlap_comm: reduce gradients during backward, in two buckets "
        "instead of one (false: DeepSpeed's default for stages 1 and 2; InternVL's and Axolotl's configs: true); "
        "ZeRO-3 keeps one bucket either way"
    ))] = False


class Budget(Schema, frozen=True):
    amount: Annotated[float, Meta(ge=1, le=1e10, description="total budget")] = 15000.0
    currency: Currency = "CNY"
    market: Annotated[Market, Meta(description=(
        "where the parts are bought: its prices and availability; auto: from the currency (CNY cn, USD us, EUR eu)"
    ))] = "auto"
    condition: Annotated[Condition, Meta(description="new parts, or used GPUs allowed")] = "new"
    max_power_w: Annotated[int, whole(0, 100_000, "wall power limit in W (0: none)")] = 0
    noise: Annotated[NoiseLimit, Meta(description="quiet excludes blower/passive GPUs")] = "any"
    owned_gpu: Annotated[str, Meta(max_length=100, description=(
        "a catalog GPU id you have already (the id of a [[gpu]] in the catalog's gpus.toml: rtx-3090-24gb): the build "
        "is around those cards and does not price them (SXM/OAM modules: the catalog server carrying that many, "
        "yours, at 0, or fewer of its modules, a share of it the job runs on: a cloud VM's); empty: none"
    ))] = ""
    owned_gpu_count: Annotated[int, whole(0, 8, (
        "how many of owned_gpu you have: the build's GPU count, or scale.gpu_count where it is more, the rest bought "
        "(one 3090 owned and scale.gpu_count = 2 buys a second)"))] = 0
