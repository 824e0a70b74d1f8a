"""What assembling a build works with: the request (Context), the parts so far (Assembly), and the pick rule."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.build import ROLE_LABELS
from pth_top.configs.custom_cnn import SCALED_ACTIVATION_MARGIN
from pth_top.configs.layer_offload import layers_kept_on_gpus
from pth_top.configs.market import PriceIndex, Quote, gpu_floor, quote
from pth_top.configs.memory import estimate_memory
from pth_top.configs.memory_inference import experts_kept_on_gpus
from pth_top.configs.memory_terms import MemoryBreakdown, ModelShape
from pth_top.configs.owned import all_owned, beside_owned_quote, is_owned, owned_quote, owns_server
from pth_top.configs.parts import Catalog, Part, gpu_memory_gib
from pth_top.configs.rules import Rules, gpu_usable_bytes, shared_os_reserve_gib, trees_on_a_table
from pth_top.units import GIB


@dataclass
class Context:
    answers: Answers
    catalog: Catalog
    rules: Rules
    pins: Mapping[str, tuple[str, int]]
    shape: ModelShape
    shape_line: str
    memory: MemoryBreakdown
    budget_cny: float
    tier: str
    tier_line: str
    gpu_count: int
    edge: bool
    market: str = "cn"  # where the parts are bought (configs.market.buyer_market)
    currency: str = "CNY"  # the budget's: prices are shown in it
    # The market's index for RAM kits and drives without its own price (configs.market.price_indexes).
    price_indexes: Mapping[str, PriceIndex] = field(default_factory=dict)


@dataclass
class Assembly:
    chosen: dict[str, tuple[Part, int]] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    alternatives: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unit_prices: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Rules this build breaks (lanes, slots, RAM/storage floor, connectors, circuit): never a recommendation.
    unsatisfied: list[str] = field(default_factory=list)
    power_lines: tuple[str, ...] = ()
    sustained_w: float = 0.0
    peak_w: float = 0.0
    psu_required_w: float = 0.0
    psu_capacity_w: float = 0.0
    wall_w: float = 0.0
    heat_line: str = ""

    @property
    def total_cny(self) -> float:
        return sum(self.unit_prices[role] * qty for role, (_, qty) in self.chosen.items())

    def unsatisfied_add(self, line: str) -> None:
        if line not in self.unsatisfied:
            self.unsatisfied.append(line)

    def cpu_chosen_because(self, line: str) -> None:
        """Why this platform and not the cheapest: `line` in place of the CPU's "cheapest CPU" reason, or after."""
        lines = self.reasons.setdefault("cpu", [])
        cheapest = [index for index, text in enumerate(lines) if text.startswith("cheapest CPU")]
        if cheapest:
            lines[cheapest[0]] = line
        else:
            lines.append(line)


def trees(ctx: Context) -> bool:
    """Gradient-boosted trees on a table (rules.trees_on_a_table): classical ML, on the cores, its table in RAM."""
    return trees_on_a_table(ctx.answers.data.kind, ctx.shape.kind, ctx.shape.parameters)


def offered(ctx: Context, kind: str) -> list[Part]:
    """The parts of a kind the rules may pick: those for sale, a retired one the answers pin (it says so), and the
    server of the buyer's own SXM/OAM modules (an end-of-life DGX A100 is owned, not bought)."""
    pinned = {part_id for part_id, _ in ctx.pins.values()}
    owned = ctx.answers.budget.owned_gpu if ctx.answers.budget.owned_gpu_count else ""
    return [part for part in ctx.catalog.of_kind(kind)
            if not part.retired or part.id in pinned or (owned and part.get("gpu_id") == owned)]


def part_quote(ctx: Context, part: Part) -> Quote:
    """What this buyer pays for the part in their market (used where allowed and listed), with its basis; a whole
    server priced only elsewhere, or before its GPU's price here, is at least its GPUs' price here."""
    if all_owned(ctx.answers, part) or owns_server(ctx.answers, ctx.catalog, part):
        return owned_quote(ctx.currency, ctx.market)
    found = quote(part, ctx.market, ctx.currency, ctx.answers.budget.condition, ctx.rules, ctx.price_indexes)
    if is_owned(ctx.answers, part):  # more cards like the buyer's: only those bought are paid for
        return beside_owned_quote(found, ctx.answers)
    gpu = ctx.catalog.get(part.get("gpu_id") or "") if part.kind == "system" else None
    if gpu is None or not gpu.buyable("new", ctx.market):  # a GPU not sold new here has no price here to floor at
        return found
    gpu_quote = quote(gpu, ctx.market, ctx.currency, "new", ctx.rules, ctx.price_indexes)
    return gpu_floor(found, gpu_quote, int(part["gpu_count"]), gpu.name, ctx.market, ctx.rules)


def part_price(ctx: Context, part: Part) -> float:
    """The part's price for this buyer, in yuan-equivalents at rules.toml's rates (configs.market)."""
    return part_quote(ctx, part).amount_cny


def buyable(ctx: Context, part: Part) -> bool:
    return part.buyable(ctx.answers.budget.condition, ctx.market)


gpu_price = part_price


def usable_bytes(ctx: Context, gpu: Part) -> float:
    """What the job may plan to use of one GPU: the rules' or the engine's fraction; under SGLang the card less its
    reserve, which holds the activations and graphs counted in the estimate (so they are not taken twice)."""
    reserve_gib = _engine_reserve_gib(ctx, gpu)
    if reserve_gib and gpu["memory_kind"] != "shared":  # activations beyond the reserve come off the pool
        held = max(reserve_gib * GIB, ctx.memory.activations_bytes)
        return max(0.0, gpu_memory_gib(gpu) * GIB - held) + ctx.memory.activations_bytes
    return gpu_usable_bytes(gpu_memory_gib(gpu), gpu["memory_kind"], ctx.rules, planned_fraction(ctx, gpu),
                            gpu["form"])


def planned_fraction(ctx: Context, gpu: Part) -> float:
    """The share of the card the engine plans for (vLLM's), or, on a dedicated card, one an engine that allocates its
    buffers once may fill (llama.cpp's); 0: the rules'."""
    dedicated = gpu["memory_kind"] != "shared"
    return ctx.memory.usable_fraction or (ctx.memory.static_buffers_fraction if dedicated else 0.0)


def _engine_reserve_gib(ctx: Context, gpu: Part) -> float:
    """What the job's engine keeps back of each of these GPUs beyond its planned pool (0: it plans by a fraction)."""
    reserve = stacks.ENGINE_RESERVED_GIB.get(ctx.memory.reserving_engine)
    return reserve(gpu_memory_gib(gpu), ctx.gpu_count, ctx.answers.task.prefill_chunk_tokens) if reserve else 0.0


def usable_text_of(ctx: Context, gpu: Part) -> tuple[str, str]:
    """The card's memory kind and how much of it the job may use, said: '22.8 usable at 95%'."""
    usable = usable_bytes(ctx, gpu) / GIB
    fraction = f"{planned_fraction(ctx, gpu) or ctx.rules.gpu.usable_memory_fraction:.0%}"
    if gpu["memory_kind"] == "shared":  # the OS's share comes off first, then the usable fraction
        return "shared with the CPU", (f"{usable:.1f} usable: {gpu['memory_gib']:g} - "
                                       f"{shared_os_reserve_gib(gpu['form'], ctx.rules)} GiB for the OS, x {fraction}")
    if reserve_gib := _engine_reserve_gib(ctx, gpu):  # the card less SGLang's reserve, which holds the activations
        return "dedicated", (f"{usable:.1f} usable: less SGLang's {reserve_gib:.1f} GiB reserve, which holds the "
                             f"{ctx.memory.activations_bytes / GIB:.1f} GiB of activations counted; "
                             "--mem-fraction-static sets it otherwise")
    static = ctx.memory.static_buffers_fraction and not ctx.memory.usable_fraction
    return "dedicated", f"{usable:.1f} usable at {fraction}" + (
        ": llama.cpp allocates its buffers once, with no caching allocator's slack" if static else "")


def chosen_by_you(ctx: Context, gpu: Part) -> bool:
    """Whether these are the cards you have (budget.owned_gpu) or pinned, not ones the ranking chose."""
    return ctx.pins.get("gpu", ("",))[0] == gpu.id


def memory_on(ctx: Context, gpu: Part) -> MemoryBreakdown:
    """The workload's memory on this device: a CPU-only module (Raspberry Pi) has no CUDA context; a GPU that
    shares its memory with the CPU (Jetson, DGX Spark) holds what an offload would have put in RAM too."""
    memory, resident = ctx.memory, ctx.answers.resident()
    task = ctx.answers.task
    large = task.mode == "inference" and not task.prefill_chunk_tokens and stacks.large_card_chunk(
        stacks.serving_engine(task.serving_engine, ctx.answers.scenario, task.precision), gpu_memory_gib(gpu), gpu.name)
    if gpu["memory_kind"] == "shared" and resident != ctx.answers:
        memory = estimate_memory(resident, ctx.shape, cuda_context_bytes=memory.cuda_context_bytes, large_card=large)
    else:
        if large:  # vLLM's larger prefill chunk on this card
            memory = _large_card_memory(ctx, gpu, memory)
        memory = _offloaded_on(ctx, gpu, memory)
    return replace(memory, cuda_context_bytes=0) if gpu["software"] == "cpu" else memory


def _large_card_memory(ctx: Context, gpu: Part, default_chunk: MemoryBreakdown) -> MemoryBreakdown:
    """The job at the engine's large cards' prefill chunk, or at its usual one, with the flag that sets it, where the
    large chunk leaves the card short and the usual one does not (review r71: Mistral-Small-3.1 at 66k x 4 lost its
    96 GB card to a DGX Spark at 1.5 tokens/s for 1.3 GiB of vLLM's 8,192-token chunk)."""
    memory = estimate_memory(ctx.answers, ctx.shape, cuda_context_bytes=default_chunk.cuda_context_bytes,
                             large_card=True)
    usable = usable_bytes(ctx, gpu)
    if memory.total_bytes <= usable or default_chunk.total_bytes > usable:
        return memory
    task = ctx.answers.task
    engine = stacks.serving_engine(task.serving_engine, ctx.answers.scenario, task.precision)
    chunk, large_chunk = stacks.PREFILL_CHUNK_TOKENS[engine], stacks.LARGE_CARD_CHUNK_TOKENS[engine]
    answered = ctx.answers.with_value("task", "prefill_chunk_tokens", chunk)
    default_chunk = estimate_memory(answered, ctx.shape, cuda_context_bytes=default_chunk.cuda_context_bytes)
    return replace(default_chunk, formula=(*default_chunk.formula, (
        f"run {stacks.SERVING_ENGINE_LABELS[engine]} with {stacks.PREFILL_CHUNK_FLAG[engine]} {chunk} "
        f"(task.prefill_chunk_tokens = {chunk}): its default of {large_chunk:,} tokens a prefill step on this card "
        f"needs {memory.total_bytes / GIB:.1f} GiB, more than its {usable / GIB:.1f} usable")))


def _offloaded_on(ctx: Context, gpu: Part, memory: MemoryBreakdown) -> MemoryBreakdown:
    """What stays on this card of an offloaded job: the experts or layers that fit (llama.cpp's --n-cpu-moe, -ngl)."""
    if ctx.answers.task.expert_offload:  # the experts that fit beside the rest, with the margin, stay on the GPU
        room = usable_bytes(ctx, gpu) / (1 + ctx.rules.gpu.estimate_margin_fraction) - memory.total_bytes
        memory = experts_kept_on_gpus(memory, ctx.shape, room, ctx.answers.scale.gpu_count)
    elif ctx.answers.task.layer_offload and chosen_by_you(ctx, gpu) and gpu["memory_kind"] != "shared":
        usable = usable_bytes(ctx, gpu) / (1 + ctx.rules.gpu.estimate_margin_fraction)
        memory = layers_kept_on_gpus(memory, ctx.answers, ctx.shape, usable, ctx.answers.scale.gpu_count)
    return memory


def needed_bytes(ctx: Context, gpu: Part) -> int:
    return memory_on(ctx, gpu).total_bytes


# How the workload sits in a card's usable memory: with the declared margin, only without it, or not at all.
ROOMY, TIGHT, SHORT = 2, 1, 0


def margin_base_bytes(memory: MemoryBreakdown) -> int:
    """What the estimator's margin is on: all of the need, or, for an engine that plans its card by a fraction (vLLM's
    0.9 already keeps a tenth back), what it does not count itself: its weights are the checkpoint's and its KV pool
    is sized in blocks from what is left (audit YZ5: Nemotron-Nano-9B-v2 at 128k, which NVIDIA serves on a 22 GiB
    A10G, was a tight fit on a 24 GB RTX 4090 and the build bought an RTX 5090)."""
    if memory.usable_fraction:
        return memory.total_bytes - memory.weights_bytes - memory.kv_cache_bytes
    return memory.total_bytes


def margin_bytes(ctx: Context, memory: MemoryBreakdown) -> float:
    return ctx.rules.gpu.estimate_margin_fraction * margin_base_bytes(memory) + memory.extra_margin_bytes


def memory_fit(ctx: Context, gpu: Part) -> int:
    memory, usable = memory_on(ctx, gpu), usable_bytes(ctx, gpu)
    need = memory.total_bytes
    if need + margin_bytes(ctx, memory) <= usable:
        return ROOMY
    return TIGHT if need <= usable else SHORT


def run_fits(ctx: Context, asm: Assembly) -> bool:
    """Whether the workload fits the chosen GPU's memory (a CPU-only build holds it in RAM)."""
    chosen = asm.chosen.get("gpu")
    return chosen is None or memory_fit(ctx, chosen[0]) != SHORT


# A model given by its parameter count trains with activations no count holds (presets' generic warning): its fit is
# its floor's (audit ZJ31: StyleTTS 2's 3.7 GiB "fit" 16 GB cards, where 4 x 24 GB cards ran out of memory).
FLOOR_ONLY = "by its floor (a model given by its parameter count: its activations not counted)"


def floor_only(answers: Answers) -> bool:
    """Whether the memory counted is a floor: training a model given by its parameter count alone."""
    return answers.workload.kind == "generic" and answers.task.mode == "training"


def fits_on(ctx: Context, gpu: Part, cards: str) -> str:
    """A lever's "fits <cards>", said TIGHT where it fits usable memory but not with the estimator's margin, and said
    of the floor alone where that is all that is counted."""
    if floor_only(ctx.answers):
        return f"fits {cards} {FLOOR_ONLY}"
    if memory_fit(ctx, gpu) != TIGHT:
        return f"fits {cards}"
    need, usable = needed_bytes(ctx, gpu) / GIB, usable_bytes(ctx, gpu) / GIB
    scaled = f" and the room for its scaled activations, {SCALED_ACTIVATION_MARGIN:.0%}" \
        if memory_on(ctx, gpu).extra_margin_bytes else ""
    return (f"fits {cards} TIGHT ({need:.1f} of {usable:.1f} GiB usable, short of the estimator's "
            f"{ctx.rules.gpu.estimate_margin_fraction:.0%} margin{scaled})")


TIGHT_FIT = "tight fit: "  # how the line (and the build's warning) of a fit short of the margin starts


def headroom_line(ctx: Context, gpu: Part) -> str:
    """How much room the estimate leaves on this card, and what a tight fit means."""
    memory = memory_on(ctx, gpu)
    need, usable = memory.total_bytes / GIB, usable_bytes(ctx, gpu) / GIB
    margin = ctx.rules.gpu.estimate_margin_fraction
    extra = margin_bytes(ctx, memory) / GIB
    scaled = (f" + {memory.extra_margin_bytes / GIB:.1f} GiB, {SCALED_ACTIVATION_MARGIN:.0%} of the activations "
              "scaled from its FLOPs") if memory.extra_margin_bytes else ""
    with_margin = f"{need:.1f} GiB x {1 + margin:g}{scaled} = {need + extra:.1f} GiB" if not memory.usable_fraction \
        else (
        f"{need:.1f} GiB + {margin:.0%} of the {margin_base_bytes(memory) / GIB:.1f} GiB beside the weights and the "
        f"KV pool the engine sizes itself = {need + extra:.1f} GiB")
    fit = memory_fit(ctx, gpu)
    if fit == ROOMY:
        return (f"headroom: {with_margin} <= {usable:.1f} GiB usable (a {margin:.0%} margin for the estimator's "
                "error, rules.toml)")
    if fit == TIGHT:
        return (f"{TIGHT_FIT}{need:.1f} of {usable:.1f} GiB usable, but {with_margin} with the estimator's "
                f"{margin:.0%} margin is more: no room for a longer sequence, a larger batch or a fragmentation "
                "spike; check the real peak (pth-top bench) before relying on it")
    return ""


def pinned_part(ctx: Context, role: str) -> Part:
    part_id = ctx.pins[role][0]
    part = ctx.catalog.get(part_id)
    if part is None:
        raise ValueError(f"pinned {ROLE_LABELS[role]} {part_id!r} is not in the catalog")
    return part


def rank(ctx: Context, asm: Assembly, role: str, candidates: list[tuple[float, Part, int]], fallback: list[Part],
         why_none: str, closest: Callable[[Part], tuple] | None = None) -> tuple[Part, int]:
    """Pick the pinned part or the cheapest candidate; remember the order for swaps.

    When nothing qualifies, the `fallback` part that sorts first by `closest` is taken and the rule goes
    on `asm.unsatisfied`; so does a pinned part the rules would not pick.
    """
    fallback = sorted(fallback, key=closest or (lambda part: (part_price(ctx, part), part.id)))
    candidates.sort(key=lambda item: (item[0], item[1].id))
    order = [part.id for _, part, _ in candidates]
    pinned = ctx.pins.get(role)
    if pinned:
        part = pinned_part(ctx, role)
        quantity = pinned[1] or next((qty for _, p, qty in candidates if p.id == part.id), 1)
        if part.id not in order:
            asm.unsatisfied_add(f"pinned {ROLE_LABELS[role]} {part.name} breaks the rule: {why_none}")
            order.insert(0, part.id)
    elif candidates:
        _, part, quantity = candidates[0]
    else:
        part, quantity = fallback[0], 1
        asm.unsatisfied_add(f"no {ROLE_LABELS[role]} in the catalog meets: {why_none} (closest shown: {part.name})")
        order = [p.id for p in fallback]
    asm.chosen[role] = (part, quantity)
    asm.unit_prices[role] = part_price(ctx, part)
    asm.alternatives[role] = tuple(order)
    return part, quantity
