"""GPU ranking (memory floor, then score per yuan) and the budget fit: which build leads a recommendation."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.assemble import PC_GPU_FORMS, assemble
from pth_top.configs.assembly import (
    ROOMY,
    SHORT,
    TIGHT,
    Assembly,
    Context,
    buyable,
    gpu_price,
    memory_fit,
    needed_bytes,
    offered,
    part_price,
    usable_bytes,
)
from pth_top.configs.host_link import ChosenParts, host_generation, lanes_per_gpu
from pth_top.configs.market import CURRENCY_UNITS
from pth_top.configs.memory_inference import forward_only, takes_inputs
from pth_top.configs.part_types import DESKTOP_SYSTEM, SYSTEM_GPU_FORMS
from pth_top.configs.parts import Part
from pth_top.configs.platforms import carries_the_job, system_options, systems_for
from pth_top.configs.quantization import FORMATS, weight_format
from pth_top.configs.speed_server import slow_under_load
from pth_top.units import GIB

__all__ = ["Fit", "acceptable", "first_acceptable", "fit_budget", "gpu_metric", "needed_bytes", "ranked_gpus",
           "usable_bytes"]

# The tensor rate that trains at each answered precision (a card without one cannot train at it: V100 has no bf16).
EDGE_SPEED = "predicted_speed"  # the edge "metric": not a catalog field, configs.speed_build.job_rate
# A training's or a CNN's: the job's predicted rate (configs.speed_build.job_rate), per money, as datasheet TFLOPS
# ignore what a step waits on (ZeRO-3 of a MoE over PCIe: 21 of 27 s a step; a MobileNet's activations' bytes).
JOB_SPEED = "predicted_job_rate"
NEAR_TIE = 0.05  # builds within 5 % of the best score a unit of money count as as good: the most memory is chosen
# A cheaper build is worth naming, or choosing among near ties, where it costs under 70 % of the other.
CHEAPER_FRACTION_MAX = 0.7
# ... so the most memory among those costing at most 1/0.7 of the best's: a tie in value is not a reason to spend 3.6
# times as much (audit ZI: 8 x H200 for CNY 1.5 million over 8 x RTX PRO 5000 for CNY 415k, 2.4 % apart a yuan).
NEAR_TIE_PRICE_MAX = 1 / CHEAPER_FRACTION_MAX
NEAR_TIE_TEXT = (f"the most memory among builds within {NEAR_TIE:.0%} of the best and 1/{CHEAPER_FRACTION_MAX:g} of "
                 "its price")
# vLLM's AWQ kernels need compute capability 7.5 (docs.vllm.ai features/quantization/supported_hardware: Volta no).
AWQ_COMPUTE_CAPABILITY = 7.5
TRAINING_RATE_BY_PRECISION = {
    "bf16": ("bf16_dense_tflops", "dense BF16 tensor TFLOPS"),
    "amp_fp16": ("fp16_dense_tflops", "dense FP16 tensor TFLOPS"),
    "fp32": ("fp32_tflops", "FP32 TFLOPS"),
}


# The rate inference and denoising run at by precision; quantized weights are dequantized to 16 bits for the matmul.
INFERENCE_RATE_BY_PRECISION = {"fp32": "fp32_tflops", "amp_fp16": "fp16_dense_tflops", "fp16": "fp16_dense_tflops",
                               "bf16": "bf16_dense_tflops",
                               "int8": "fp16_dense_tflops", "int4": "fp16_dense_tflops"}
RATE_NAMES = {"fp32_tflops": "FP32", "tf32_dense_tflops": "dense TF32 tensor",
              "fp16_dense_tflops": "dense FP16 tensor", "bf16_dense_tflops": "dense BF16 tensor",
              "fp8_dense_tflops": "dense FP8 tensor"}


def gpu_metric(ctx: Context) -> tuple[str, str]:
    """The ranking's metric and how the reasoning names it, per unit of the buyer's money."""
    metric, text = _metric(ctx)
    if entry_vram_first(ctx):
        text = f"the most GPU memory the budget buys (entry tier: VRAM first, guide §6.1), then {text}"
    stated = _held_target(ctx)
    if stated is not None:
        verb = "decode at" if stated[0].decode else "take"
        text += f", cards that {verb} task.{stated[0].answer_key} = {stated[1]:g} first"
        if ctx.edge:
            text += " and the cheapest of them: a faster module than the rate asked is not bought"
        elif cheapest_meeting_target(ctx):
            text += " and the cheapest of them: a faster card than the rate asked is capacity not asked for"
    return metric, text


def _metric(ctx: Context) -> tuple[str, str]:
    unit = CURRENCY_UNITS[ctx.currency]
    if ctx.edge:
        return EDGE_SPEED, ("the job's predicted speed (decode tokens/s, images or samples/s, or training rate), "
                            "fastest first: an edge module is bought for the one job it runs")
    if ctx.answers.task.mode == "inference" and ctx.shape.kind == "cnn":  # its FLOPs or its activations' bytes
        return JOB_SPEED, (f"the job's predicted images or inputs a second per {unit} of the whole build (a CNN waits "
                           "on its FLOPs or on its activations' trips through memory)")
    if ctx.answers.task.mode == "inference" and forward_only(ctx.shape):  # audit ZX: a 5080 for a launch-bound batch
        return JOB_SPEED, (f"the job's predicted inputs a second per {unit} of the whole build (a forward pass waits "
                           "on its FLOPs, or at small eager batches on its kernels' launches, alike on any card)")
    if ctx.answers.task.mode == "inference" and ctx.shape.denoising_steps:
        rate = INFERENCE_RATE_BY_PRECISION.get(ctx.answers.task.precision, "bf16_dense_tflops")
        return rate, f"{RATE_NAMES[rate]} TFLOPS per {unit} (denoising is compute-bound)"
    if ctx.answers.task.mode == "inference" and ctx.shape.kind == "transformer":
        return "bandwidth_gb_per_s", f"memory bandwidth per {unit} (LLM decoding is bandwidth-bound; Dettmers 2023)"
    if ctx.answers.task.mode == "training":
        links = ", with what a step waits on the links between its GPUs" if ctx.gpu_count > 1 else ""
        return JOB_SPEED, f"the job's predicted training rate{links} per {unit} of the whole build"
    return "bf16_dense_tflops", f"dense BF16 tensor TFLOPS per {unit} (Dettmers 2023)"


def entry_vram_first(ctx: Context) -> bool:
    """The guide's entry tier (§6.1, 优先保障GPU显存) spends the budget on GPU memory first: the largest card the
    budget buys leads, the job's metric a unit of money among equals (not GiB a yuan: a used 16 GB RTX 4060 Ti before
    a new 16 GB RTX 5060 Ti that also fits a ¥7,750 budget and decodes 1.5x faster)."""
    return ctx.tier == "entry" and not ctx.edge


def whole_gib(ctx: Context, gpu: Part) -> int:
    """Usable GiB, whole: cards of one class (16,303 or 16,384 MiB) are equals."""
    return round(usable_bytes(ctx, gpu) / GIB)


def memory_first_key(ctx: Context, gpu: Part) -> int:
    """Whole usable GiB, negated, where the entry tier ranks by memory first; else 0."""
    return -whole_gib(ctx, gpu) if entry_vram_first(ctx) else 0


def job_speed(ctx: Context, gpu: Part, generation: int = 0, lanes: int = 16) -> float:
    """The job's predicted speed on this card (what edge modules and training builds are ranked by), from its
    datasheet, at the host's PCIe `generation` (0: the card's) and `lanes`; an encoder-decoder's, whose speed is not
    predicted, by its decoder-only equivalent's (a module's weight reads and FLOPs, not its id)."""
    from pth_top.configs.speed_build import job_rate  # speed_build reads this module's rate table

    shape = replace(ctx.shape, decoder_layers=0, decoder_sequence_length=0) if ctx.shape.encoder_decoder else ctx.shape
    return job_rate(ctx.answers, shape, dict(gpu.spec), gpu.name, ctx.gpu_count, generation, lanes)


def meets_target(ctx: Context, gpu: Part) -> bool:
    """Whether the card runs the job at the stated rate (a decode a stream, or inputs a second) by its datasheet;
    True without a target this job has."""
    stated = _held_target(ctx)
    return stated is None or job_speed(ctx, gpu) >= stated[1]


def _held_target(ctx: Context) -> tuple[sp.RateTarget, float] | None:
    """The stated rate target where the job has its figure: a decode for a language model, inputs a second for a
    model that generates nothing (a CNN, an encoder)."""
    stated = sp.stated_target(ctx.answers.task)
    if stated is None or ctx.answers.task.mode != "inference":
        return None
    return stated if (decodes(ctx) if stated[0].decode else takes_inputs(ctx.shape)) else None


def decodes(ctx: Context) -> bool:
    """Whether the job generates tokens, a stream at a time: a language model's inference (not an encoder's, a
    denoiser's or a CNN's)."""
    shape = ctx.shape
    return ctx.answers.task.mode == "inference" and shape.kind == "transformer" and not shape.encoder_only \
        and not shape.denoising_steps


def trains_at_precision(ctx: Context, gpu: Part) -> bool:
    """A training card needs a nonzero rate at the answered precision (Volta has no bf16 tensor cores)."""
    if ctx.answers.task.mode != "training":
        return True
    field, _ = TRAINING_RATE_BY_PRECISION.get(ctx.answers.task.precision, TRAINING_RATE_BY_PRECISION["bf16"])
    return gpu[field] > 0


def weight_format_problem(ctx: Context, gpu: Part) -> str:
    """Why the card has no kernels for the engine or the weights, "" where it has: vLLM and SGLang need a GPU; FP8
    weights need an Ampere or later card (vLLM and SGLang run them natively from Ada and Hopper and as FP8 W8A16
    Marlin kernels on Ampere, compute capability 8.0), AWQ Turing (7.5) or later (vLLM's supported-hardware table: not
    on Volta; GPTQ there)."""
    task = ctx.answers.task
    if task.mode != "inference":
        return ""
    engine = stacks.serving_engine(task.serving_engine, ctx.answers.scenario, task.precision)
    if engine in stacks.TENSOR_PARALLEL_ENGINES and gpu["software"] == "cpu":  # audit XL9: a Raspberry Pi for vLLM
        return (f"{engine} runs on a GPU (CUDA or ROCm), not on {gpu.name}'s CPU: llama.cpp does "
                "(task.serving_engine = \"llama_cpp\" with GGUF weights)")
    if ctx.edge:
        return ""
    weights = weight_format(task.quantization, task.precision, engine)
    if weights is FORMATS["awq_g128"] and 0 < float(gpu.get("compute_capability", 0) or 0) < AWQ_COMPUTE_CAPABILITY:
        return ("AWQ weights need a Turing or later card (vLLM's supported-hardware table): GPTQ "
                "(task.quantization = \"gptq_g128\") runs on Volta")
    if weights is FORMATS["fp8"] and not gpu["bf16_dense_tflops"] > 0:
        return ("FP8 weights need an Ampere or later card (vLLM's and SGLang's FP8 kernels): 16-bit weights, or "
                "4-bit GPTQ (task.precision = \"int4\", task.quantization = \"gptq_g128\"), run on it")
    return ""


def unit_price(ctx: Context, gpu: Part) -> float:
    """What one GPU costs here: an SXM/OAM module's share of the cheapest whole server carrying this many."""
    if gpu["form"] in SYSTEM_GPU_FORMS:
        systems = [system for system in systems_for(ctx, gpu) if carries_the_job(ctx, system)]
        if systems:
            return min(part_price(ctx, system) for system in systems) / ctx.gpu_count
    return gpu_price(ctx, gpu)


def ranked_gpus(ctx: Context) -> list[tuple[Part, bool]]:
    """GPUs allowed and buyable here: those holding the workload with the margin first, then tight fits, then
    the rest; each group by score per yuan of the card (fit_budget then compares whole builds)."""
    metric, _ = gpu_metric(ctx)
    quiet = ctx.answers.budget.noise == "quiet"
    ranked = []
    for gpu in offered(ctx, "gpu"):
        if not fits_the_machine(ctx, gpu):
            continue
        if quiet and gpu["cooling"] in ("blower", "passive") and not ctx.edge:
            continue
        if not buyable(ctx, gpu):  # end of life, export-licensed or sold only elsewhere: used only, or not here
            continue
        if not trains_at_precision(ctx, gpu) or weight_format_problem(ctx, gpu):
            continue
        if not ctx.edge and gpu["form"] == "datacenter" and gpu["cooling"] == "passive" and not system_options(
                ctx, gpu):
            continue  # a passive card lives only in a server chassis's airflow, and no catalog chassis takes it
        fit = memory_fit(ctx, gpu)
        score = job_speed(ctx, gpu) if ctx.edge else _metric_rate(ctx, gpu, metric) / max(
            unit_price(ctx, gpu), 1.0)  # an owned card (budget.owned_gpu) costs nothing
        ranked.append((-fit, -score, gpu.id, gpu, fit != SHORT))
    ranked.sort(key=lambda item: item[:3])
    return [(gpu, fits) for *_, gpu, fits in ranked]


def fits_the_machine(ctx: Context, gpu: Part) -> bool:
    """Whether a machine of this kind and GPU count can hold the card at all, sold here or not: an edge module for
    an edge job, a desktop system alone, an SXM/OAM module in a catalog server of this many."""
    if ctx.edge != (gpu["form"] == "edge"):
        return False
    if gpu["form"] == DESKTOP_SYSTEM and ctx.gpu_count != 1:
        return False  # one box; two over their network ports are not sized
    return ctx.edge or gpu["form"] in (*PC_GPU_FORMS, DESKTOP_SYSTEM) or _in_a_system(ctx, gpu)


def _in_a_system(ctx: Context, gpu: Part) -> bool:
    """An SXM/OAM module counts when the catalog sells a whole server with this many of it."""
    return gpu["form"] in SYSTEM_GPU_FORMS and any(carries_the_job(ctx, system) for system in systems_for(ctx, gpu))


def acceptable(ctx: Context, assembly: Assembly) -> bool:
    """Within budget and power limit, and breaking none of its own rules."""
    max_power = ctx.answers.budget.max_power_w
    return (
        assembly.total_cny <= ctx.budget_cny and (not max_power or assembly.wall_w <= max_power)
        and not assembly.unsatisfied
    )


@dataclass(frozen=True, slots=True)
class Fit:
    """The build that leads: an acceptable one whose GPU holds the workload, or (feasible False) the closest."""

    assembly: Assembly
    gpu: Part
    feasible: bool
    cheapest_fitting: tuple[Assembly, Part] | None  # the cheapest build whose GPU holds the workload, and its GPU
    breaking_within: tuple[Assembly, Part] | None = None  # a build within budget passed over: it breaks its rules


# A price scale for edge modules that meet a stated rate: ¥10,000 (a mid-range Jetson) halves the bonus.
EDGE_PRICE_SCALE_CNY = 10_000.0


def build_score(ctx: Context, assembly: Assembly, gpu: Part) -> float:
    """The ranking metric of all the build's GPUs per yuan of the whole build (the host is part of the price);
    an edge module's predicted speed, or where it meets a stated rate, the cheapest such build (audit ZL: a
    $5,499 Thor bought for a stated 15 tokens/s that a $1,500 Orin NX decodes at 17)."""
    stated = _held_target(ctx)
    if ctx.edge or _inputs_rate(stated):
        speed = job_speed(ctx, gpu)
        if stated is not None and speed >= stated[1]:
            # Above every build that misses the rate (each under it), the cheaper higher: rate x (1, 2] (review ZS).
            return stated[1] * (1.0 + EDGE_PRICE_SCALE_CNY / (assembly.total_cny + EDGE_PRICE_SCALE_CNY))
        if ctx.edge:
            return speed
    metric = gpu_metric(ctx)[0]
    if metric == JOB_SPEED and ctx.gpu_count > 1 and ctx.answers.task.mode == "training":
        # At the link the build gives its GPUs: 8 Gen5 cards in Gen4 slots wait twice as long on ZeRO-3's gathers
        # (a DeepSeek-V2-Lite fine-tune ranked at the cards' own x16 Gen5 trained half as fast as built).
        parts = ChosenParts(assembly.chosen)
        return job_speed(ctx, gpu, host_generation(parts), lanes_per_gpu(parts)) / max(assembly.total_cny, 1.0)
    return _metric_rate(ctx, gpu, metric) / max(assembly.total_cny, 1.0)


def cheapest_meeting_target(ctx: Context) -> bool:
    """A stated inputs-a-second rate (a CNN's, an encoder's): the cheapest build that takes it, as at the edge; more
    is capacity not asked for (audit YD15: a reranker asked 960 pairs/s got an RTX 5080 box at ~5,300 for EUR 2,340,
    where an RTX 5060 box takes ~1,800 for EUR 1,163)."""
    return _inputs_rate(_held_target(ctx))


def _inputs_rate(stated: tuple[sp.RateTarget, float] | None) -> bool:
    """A held target that is inputs a second, not a decode: the cheapest build meeting it is bought."""
    return stated is not None and not stated[0].decode


def _metric_rate(ctx: Context, gpu: Part, metric: str) -> float:
    """The build's GPUs' rate by the ranking's metric: the job's predicted rate, or a datasheet figure times them."""
    return job_speed(ctx, gpu) if metric == JOB_SPEED else gpu[metric] * ctx.gpu_count


def _best_acceptable(ctx: Context, gpus: list[Part], cheapest: list[tuple[bool, float, Part, Assembly]]
                     ) -> tuple[Assembly, Part] | None:
    """The acceptable build with the best build score among these GPUs; `cheapest` keeps the cheapest build seen
    as (breaks its own rules, price, GPU, build), a build that keeps its rules before any that does not."""
    found: list[tuple[int, float, str, Assembly, Part]] = []
    for gpu in gpus:
        known = cheapest[0] if cheapest and not cheapest[0][0] else None
        if known and unit_price(ctx, gpu) * ctx.gpu_count > max(ctx.budget_cny, known[1]):
            continue  # its GPUs alone cost more than the budget and than a buildable one already tried
        assembly = assemble(ctx, gpu)
        seen = (bool(assembly.unsatisfied), assembly.total_cny, gpu, assembly)
        if not cheapest or seen[:2] < cheapest[0][:2]:
            cheapest[:] = [seen]
        if acceptable(ctx, assembly):
            found.append((memory_first_key(ctx, gpu), -build_score(ctx, assembly, gpu), gpu.id, assembly, gpu))
    if not found:
        return None
    best = min(found, key=lambda each: each[:3])
    if cheapest_meeting_target(ctx) and meets_target(ctx, best[4]):
        return best[3], best[4]  # the rate asked is the job: no more memory for its money (audit YG16: D-FINE-L)
    # Within NEAR_TIE of the best score, the card with the most memory: room for a longer context or a larger model
    # for ~the same value (audit KK: CNY 8,000 bought an 8 GB RTX 5060 at 2.6 % more a yuan than a 16 GB 5060 Ti).
    near = [each for each in found if each[0] == best[0] and -each[1] >= (1 - NEAR_TIE) * -best[1]]
    capped = [each for each in near if each[3].total_cny <= NEAR_TIE_PRICE_MAX * best[3].total_cny]
    chosen = min(capped, key=lambda each: (-whole_gib(ctx, each[4]), each[1], each[2]))
    # A server slow under its own load is no near tie for one that is not (review AA: 8 x RTX PRO 5000 at ~1 token/s a
    # stream with 32 fresh 32k prompts, where 8 x H200 hold ~5.6): the cap yields.
    if _slow_under_load(ctx, chosen[4]) and any(not _slow_under_load(ctx, each[4]) for each in near):
        chosen = min((each for each in near if not _slow_under_load(ctx, each[4])),
                     key=lambda each: (-whole_gib(ctx, each[4]), each[1], each[2]))
    return chosen[3], chosen[4]


def _slow_under_load(ctx: Context, gpu: Part) -> bool:
    """Whether a server's decode on these GPUs falls under SLOW_DECODE_TOKENS_PER_S a stream under load."""
    from pth_top.configs.speed_build import job_figures  # speed_build reads this module's rate table

    if ctx.answers.scenario != "inference_server" or ctx.answers.task.mode != "inference":
        return False
    return slow_under_load(job_figures(ctx.answers, ctx.shape, dict(gpu.spec), gpu.name, ctx.gpu_count))


def _fitting_tiers(ctx: Context, gpus: list[tuple[Part, bool]]) -> list[list[Part]]:
    """The GPUs that hold the workload, in the order they are tried: PC cards with headroom, then tight ones, then
    desktop systems (DGX Spark) likewise. A box is bought for its memory when no card within budget holds the job;
    a card that holds it reads its weights faster (an RTX 5060 Ti 16GB 448 GB/s, a 5090 1,792; the Spark 273)."""
    # An edge module is bought for its speed at the one job: a tight fit that decodes at 15 tokens/s beats a roomy
    # one at 0.4 (Llama 3 8B int4: an Orin Nano Super, not a Raspberry Pi); its headroom line says it is tight.
    levels = ((ROOMY, TIGHT),) if ctx.edge else ((ROOMY,), (TIGHT,))
    tiers = [[gpu for gpu, fits in gpus if fits and memory_fit(ctx, gpu) in level and (gpu["form"] == DESKTOP_SYSTEM)
              == box] for box in (False, True) for level in levels]
    stated = _held_target(ctx)
    if stated is None:
        return tiers
    # A stated rate comes before headroom: cards that meet it, in the order above, then those that do not, the
    # nearest to it first (audit WW: 4 x RTX PRO 5000 at ~9 tokens/s under load for a stated 15, where 4 x RTX PRO
    # 6000 Max-Q within the budget do ~12).
    speeds = {gpu.id: job_speed(ctx, gpu) for tier in tiers for gpu in tier}
    meeting = {gpu_id for gpu_id, speed in speeds.items() if speed >= stated[1]}
    return ([[gpu for gpu in tier if gpu.id in meeting] for tier in tiers]
            + [band for tier in tiers for band in _speed_bands([gpu for gpu in tier if gpu.id not in meeting], speeds)])


# Cards short of a stated rate within a fifth of the fastest count as one, the best value of them: a fifth more of a
# rate that still misses the target is not worth, say, twice the money (Ministral-8B's 48 users: ~9.0 and ~9.6).
SHORT_OF_TARGET_BAND = 0.2


def _speed_bands(gpus: list[Part], speeds: dict[str, float]) -> list[list[Part]]:
    """The cards fastest first, in bands within SHORT_OF_TARGET_BAND of each band's fastest (the best value wins in
    a band: $10,166 for ~9.6 tokens/s is not bought over ~9.0 for less)."""
    bands: list[list[Part]] = []
    for gpu in sorted(gpus, key=lambda part: -speeds[part.id]):
        if bands and speeds[gpu.id] >= (1 - SHORT_OF_TARGET_BAND) * speeds[bands[-1][0].id]:
            bands[-1].append(gpu)
        else:
            bands.append([gpu])
    return bands


def first_acceptable(ctx: Context, gpus: list[tuple[Part, bool]]) -> tuple[Assembly, Part] | None:
    """The best acceptable build whose GPU holds the workload, in _fitting_tiers' order; or None."""
    for tier in _fitting_tiers(ctx, gpus):
        found = _best_acceptable(ctx, tier, [])
        if found is not None:
            return found
    return None


def fit_budget(ctx: Context, gpus: list[tuple[Part, bool]]) -> Fit:
    """The best acceptable build among GPUs that hold the workload (with headroom first); failing that, the
    largest card whose build stays within budget, best build score among equals."""
    cheapest: list[tuple[bool, float, Part, Assembly]] = []
    for tier in _fitting_tiers(ctx, gpus):
        found = _best_acceptable(ctx, tier, cheapest)
        if found is not None:
            return Fit(found[0], found[1], True, found)
    fitting = (cheapest[0][3], cheapest[0][2]) if cheapest else None
    # Nothing acceptable holds the workload: lead with the largest card whose build stays within budget (PC cards
    # before desktop systems, as above).
    by_size: dict[tuple[bool, float], list[Part]] = {}
    for gpu, _ in gpus:
        if unit_price(ctx, gpu) * ctx.gpu_count <= ctx.budget_cny:
            by_size.setdefault((gpu["form"] == DESKTOP_SYSTEM, -whole_gib(ctx, gpu)), []).append(gpu)
    fallback: tuple[Assembly, Part] | None = None
    breaking: tuple[Assembly, Part] | None = None  # the largest within budget that breaks its own rules
    for size in sorted(by_size):
        best: tuple[float, str, Assembly, Part] | None = None
        for gpu in by_size[size]:
            assembly = assemble(ctx, gpu)
            if assembly.total_cny <= ctx.budget_cny and not assembly.unsatisfied:
                score = build_score(ctx, assembly, gpu)
                if best is None or (-score, gpu.id) < (-best[0], best[1]):
                    best = (score, gpu.id, assembly, gpu)
            elif assembly.total_cny <= ctx.budget_cny:
                breaking = breaking or (assembly, gpu)
            elif fallback is None or assembly.total_cny < fallback[0].total_cny:
                fallback = (assembly, gpu)
        if best is not None:
            return Fit(best[2], best[3], False, fitting)
    # A build that holds the job and keeps its rules leads one within budget that breaks them (audit CP62: 8 open-air
    # RTX 5060 Ti cards in a blower-only 8-GPU barebone led, where 8 blower RTX PRO 4000s cost CNY 198,092).
    max_power = ctx.answers.budget.max_power_w
    if breaking is not None and fitting is not None and not fitting[0].unsatisfied \
            and not (max_power and fitting[0].wall_w > max_power) \
            and memory_fit(ctx, breaking[1]) != SHORT:  # a card short of memory: its own line says so
        return Fit(fitting[0], fitting[1], False, fitting, breaking)
    fallback = breaking or fallback
    if fallback is None:  # every card alone is over budget: the cheapest one
        gpu = min((gpu for gpu, _ in gpus), key=lambda part: (unit_price(ctx, part), part.id))
        fallback = (assemble(ctx, gpu), gpu)
    return Fit(fallback[0], fallback[1], False, fitting)
