"""Beyond one machine: when no machine of at most 8 GPUs holds the job, how many 8-GPU nodes do, what links them,
what they rent for, and the single-node ways that exist instead.

Sources: an 8 x 80 GB node is NVIDIA's DGX/HGX H100 (8 SXM5 GPUs, eight ConnectX-7 400 Gb/s ports, one per GPU, for
the compute fabric: NVIDIA DGX H100 datasheet); ZeRO-Infinity (Rajbhandari et al. 2021, arXiv:2104.07857) keeps
model states on NVMe and streams them in; FSDP-QLoRA (Answer.AI, 2024) shards a 4-bit base across GPUs.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

from pth_top.configs.answers import MAX_GPUS, Answers
from pth_top.configs.assembly import ROOMY, SHORT, Context, buyable, memory_fit, offered, part_price, usable_bytes
from pth_top.configs.cheap_levers import small_activations, small_activations_label
from pth_top.configs.market import MARKET_NAMES, money
from pth_top.configs.memory_methods import pretraining
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.owned import without_owned
from pth_top.configs.part_types import HOST_FREE_FORMS, SYSTEM_GPU_FORMS
from pth_top.configs.parts import Part
from pth_top.configs.platforms import systems_for, whole_systems
from pth_top.configs.sequence_split import offered_split, training_split
from pth_top.configs.speed import SLOW_RUN_DAYS, duration
from pth_top.configs.speed_build import job_figures, training_rate
from pth_top.configs.speed_comm import ALLREDUCE_LINK_FRACTION, step_communication
from pth_top.configs.speed_epoch import epoch_seconds
from pth_top.units import GIB

MAX_NODES = 64
NODE_MEMORY_MIN_GIB = 80
INTERCONNECT = ("InfiniBand NDR (or RoCE) at 8 x 400 Gb/s per node, one NIC per GPU as in NVIDIA's DGX H100")
NIC_GB_PER_S = 50.0  # one 400 Gb/s port a GPU
# One PCIe 4.0 NVMe drive reads ~7 GB/s (guide §3.2): the floor on ZeRO-Infinity's streaming of the weights.
NVME_READ_BYTES_PER_S = 7e9
LLAMA2_SCALING = ("Llama 2 34B's 2T tokens took 1,038,336 A100 GPU-hours, 535 tokens/s a GPU on clusters that 'scaled "
                  "almost as well' over RoCE as InfiniBand to 2,000 GPUs: arXiv:2307.09288 §2.2.1, Table 2")


def interconnect(gpu: Part) -> str:
    """What links the nodes, and the GPUs inside one: NVLink for SXM modules; PCIe cards (H100 PCIe) have no 8-way
    NVLink, at most bridged pairs."""
    inside = "NVLink inside each node" if gpu["form"] == "sxm" else "PCIe inside each node (no 8-way NVLink)"
    return f"{INTERCONNECT}; {inside}"


def rent_market_note(market: str) -> str:
    """The rent table is US cloud list prices: said so to a buyer elsewhere (a China lab rents from its own clouds)."""
    return "" if market == "us" else " (US cloud list prices; clouds in the buyer's market price differently)"


def node_gpu(ctx: Context) -> tuple[Part, float] | None:
    """The cheapest rented GPU of an 8-GPU node (SXM/OAM, >= 80 GB) and its price per GPU-hour in USD."""
    options = []
    for gpu_id, usd in ctx.rules.rent.usd_per_gpu_hour.items():
        gpu = ctx.catalog.get(gpu_id)
        if gpu is not None and gpu["form"] in SYSTEM_GPU_FORMS and gpu["memory_gib"] >= NODE_MEMORY_MIN_GIB:
            options.append((usd, gpu.id, gpu))
    if not options:
        return None
    usd, _, gpu = min(options, key=lambda option: option[:2])
    return gpu, usd


def spread(ctx: Context, context_for: Callable[[Answers], Context], gpus: int, answers: Answers | None = None
           ) -> Context:
    """The job over `gpus` GPUs: ZeRO-3 for training, tensor and pipeline parallel for inference."""
    answers = (answers or ctx.answers).with_value("scale", "gpu_count", gpus)
    if answers.task.mode == "training":
        answers = answers.with_value("scale", "sharding", "zero3")
    return context_for(answers)


def beyond_one_machine(ctx: Context, context_for: Callable[[Answers], Context]) -> list[str]:
    """Lines for a job that no machine of at most 8 GPUs holds (none otherwise): the node count and interconnect,
    the rent per hour and per day, then the single-node ways."""
    found = node_gpu(ctx)
    if ctx.edge or found is None:
        return []
    gpu, usd = found
    one_machine = spread(ctx, context_for, MAX_GPUS)
    # The cards a machine can be built of, as this buyer can buy them (a China buyer of new parts has no B200): a module
    # (SXM/OAM) only with a whole server for it in the catalog.
    cards = [part for part in offered(ctx, "gpu") if buyable(ctx, part) and part["form"] not in HOST_FREE_FORMS and (
        part["form"] not in SYSTEM_GPU_FORMS or systems_for(ctx, part))]
    largest = max((usable_bytes(one_machine, part) for part in cards), default=0.0)
    if one_machine.memory.total_bytes <= largest:
        return []
    if _one_node_at_micro_batch_1(ctx, context_for, gpu):
        return []
    sold = "sold new" if ctx.answers.budget.condition == "new" else "sold new or used"
    where = "China" if ctx.market == "cn" else f"the {MARKET_NAMES[ctx.market]} market"
    head = (f"beyond one machine: across {MAX_GPUS} GPUs this needs {one_machine.memory.total_bytes / GIB:.0f} GiB per "
            f"GPU, more than the largest card {sold} in {where} holds ({largest / GIB:.0f} GiB usable)")
    lines = _nodes_lines(ctx, context_for, gpu, usd, head)
    return lines[:1] + bought_nodes(ctx, context_for) + lines[1:]


class Bought(NamedTuple):
    """Whole servers bought for a job no one machine holds: how many, what they cost and how long a run takes."""

    system: Part
    gpu: Part
    nodes: int
    fewest: int  # the fewest that hold it; more where a training run finishes sooner within the budget
    price: float
    run_s: float  # an epoch at a node's rate; 0 for inference
    spread_out: Context  # the job over the fewest, or over `nodes` as answered (as_answered)
    how: str
    node_figures: dict[str, float]  # a node's predicted figures (_epoch_seconds')
    as_answered: bool = False  # sized at the job's own micro-batch across more nodes (as_answered_for_a_month)


def bought_nodes(ctx: Context, context_for: Callable[[Answers], Context]) -> list[str]:
    """best_bought's line, where there is one."""
    best = best_bought(ctx, context_for)
    return [bought_line(ctx, best)] if best is not None else []


def best_bought(ctx: Context, context_for: Callable[[Answers], Context]) -> Bought | None:
    """Whole 8-GPU servers this buyer can buy that hold the job together, priced against the budget: the fewest that
    hold it, or for a training run as many as finish it in SLOW_RUN_DAYS that the budget buys (audits ZJ22:
    LongCat-Flash in BF16, 'at least two nodes (e.g., 16xH800-80G)' by its guide, was told 'more nodes' unsized with two
    HGX H200 servers within CNY 4M; ZW26: BloombergGPT's 569B tokens on the 2 nodes that hold it, ~426 days, with
    $2.5M left)."""
    options: list[Bought] = []
    # Bought nodes are priced as bought, the buyer's own modules or not (review r73: 3 DGX H100 at $0 beside 4 owned).
    buying = context_for(without_owned(ctx.answers)) if ctx.answers.budget.owned_gpu else ctx
    for system in whole_systems(ctx):
        gpu = ctx.catalog.get(system.get("gpu_id") or "")
        if gpu is None or system["gpu_count"] != MAX_GPUS or not buyable(ctx, gpu):
            continue
        fewest, spread_out, holds, how = _fewest_nodes_and_how(ctx, context_for, gpu)
        if not holds:
            continue
        each = part_price(buying, system)
        seconds, _, _, figures = _epoch_seconds(ctx, gpu, spread_out, fewest)
        nodes, work_s, as_answered = fewest, seconds * fewest, False  # a node-second's work: near-linear over them
        if seconds > SLOW_RUN_DAYS * 86400:  # data parallel: more nodes, near-linearly less time, as the budget allows
            month = as_answered_for_a_month(ctx, context_for, gpu, fewest, spread_out, work_s)
            affordable = int(ctx.budget_cny // each)
            if month is not None and month[0] <= affordable:  # only training has a month to size
                (nodes, work_s, spread_out, figures), how, as_answered = month, "ZeRO-3", True
            else:
                nodes = max(fewest, min(math.ceil(work_s / (SLOW_RUN_DAYS * 86400)), affordable))
        run = work_s / nodes
        options.append(Bought(system, gpu, nodes, fewest, nodes * each, run, spread_out, how, figures, as_answered))
    # Within budget first, then the shortest run, the cheapest, the catalog's order.
    return min(options, key=lambda option: (option.price > ctx.budget_cny, option.run_s, option.price,
                                            option.system.id)) if options else None


def as_answered_for_a_month(ctx: Context, context_for: Callable[[Answers], Context], gpu: Part, fewest: int,
                            spread_out: Context, work_s: float
                            ) -> tuple[int, float, Context, dict[str, float]] | None:
    """For a run of over SLOW_RUN_DAYS whose fewest nodes hold it only at micro-batch 1 with full recompute: the nodes
    that finish it in SLOW_RUN_DAYS at the job's own micro-batch and recompute, where ZeRO-3 across them shards enough
    to hold it (audit BC49: Phi-3.5-MoE's 4.9T tokens were sized at 73 nodes at the recomputed rate, ~49 by the
    published one); its nodes, node-seconds of work, the job over them and a node's figures, or None."""
    if spread_out.answers.task == ctx.answers.task:  # held as answered already
        return None
    own = spread(ctx, context_for, MAX_GPUS * fewest, ctx.answers)
    own_s, _, _, _ = _epoch_seconds(ctx, gpu, own, fewest)
    if not own_s or own_s * fewest >= work_s:
        return None
    nodes = max(fewest, math.ceil(own_s * fewest / (SLOW_RUN_DAYS * 86400)))
    across = spread(ctx, context_for, MAX_GPUS * nodes, ctx.answers)
    if across.memory.total_bytes > usable_bytes(across, gpu) or nodes > MAX_NODES:
        return None
    # A node timed at the micro-batch each GPU runs across them, so ZeRO-3's gathers are weighed against its compute.
    batch = ctx.answers.workload.batch_size
    node = across.answers.with_value("scale", "gpu_count", MAX_GPUS).with_value("workload", "batch_size",
                                                                                -(-batch // nodes))
    figures = job_figures(node, ctx.shape, dict(gpu.spec), gpu.name, MAX_GPUS)
    rate = training_rate(figures)
    seconds = epoch_seconds(node, ctx.shape, rate * nodes)[0] if rate else 0.0
    return (nodes, seconds * nodes, across, figures) if seconds else None


def bought_line(ctx: Context, bought: Bought, holds_on_one: bool = False) -> str:
    """'bought: ZeRO-3 across 9 x <server> (72 GPUs, ...): <price>, within <budget> ...; one epoch in ~...';
    `holds_on_one`: one server holds the job as answered, so the fewest that hold it across them go unsaid."""
    system, gpu, nodes, fewest, price, run, spread_out, how, figures, as_answered = bought
    budget = money(ctx.budget_cny, ctx.currency, ctx.rules)
    against = (f"{money(price - ctx.budget_cny, ctx.currency, ctx.rules)} over {budget}" if price > ctx.budget_cny
               else f"within {budget}")
    rented = node_gpu(ctx)
    linked = ("the same way" if rented is not None and interconnect(rented[0]) == interconnect(gpu) else
              interconnect(gpu))
    time = (f"; one epoch in ~{duration(run)} at a node's rate"
            + nic_bound_text(spread_out.answers, ctx.shape, gpu, nodes, run, figures)) if run else ""
    held = f"{spread_out.memory.total_bytes / GIB:.1f} GiB per GPU"
    if holds_on_one:
        held = ""
    elif as_answered:
        held = (f", {held} at the job's own micro-batch and recompute; {fewest} hold it at "
                f"{small_activations_label(ctx.answers, ctx.shape)}")
    else:
        held = f", {fewest} hold it at {held}" if nodes > fewest else f", {held}"
    return (f"bought: {how} across {nodes} x {system.name} ({nodes * MAX_GPUS} GPUs{held}), linked {linked}: "
            f"{money(price, ctx.currency, ctx.rules)}, {against} (the fabric's switches and cables not priced "
            f"here){time}")


def nic_bound_text(answers: Answers, shape: ModelShape, gpu: Part, nodes: int, seconds: float,
                   node_figures: dict[str, float] | None = None) -> str:
    """', up to ~T where ZeRO-3's gathers across the NICs are not hidden (...)' for a training run of `seconds` at a
    node's rate on `nodes` nodes of 8 x `gpu` (a node's figures, predicted here where not given), where those gathers
    outlast a step's compute; else ''."""
    node = answers.with_value("scale", "gpu_count", MAX_GPUS)
    figures = node_figures if node_figures is not None else job_figures(node, shape, dict(gpu.spec), gpu.name,
                                                                        MAX_GPUS)
    slower, text = _nic_slowdown(node, shape, figures, nodes)
    if slower is None or slower <= 1:
        return ""
    return (f", up to ~{duration(seconds * slower)} where ZeRO-3's gathers across the NICs are not "
            f"hidden ({text}; hybrid sharding, ZeRO-3 within each node and replicas across them as OLMo-core's "
            "HSDP, or tensor parallel in each node and pipeline parallel across them keep it near the first)")


def _nic_slowdown(node: Answers, shape: ModelShape, figures: dict[str, float], nodes: int
                  ) -> tuple[float | None, str]:
    """How many times a step's compute ZeRO-3's gathers across `nodes` nodes' NICs take, and what they move; None on
    one node or where a step's compute is not predicted."""
    traffic_s, compute_s, text = sharded_traffic_across_nodes(node, shape, figures, MAX_GPUS * nodes, NIC_GB_PER_S)
    return (traffic_s / compute_s if nodes >= 2 and compute_s > 0 else None), text


def _one_node_at_micro_batch_1(ctx: Context, context_for: Callable[[Answers], Context], gpu: Part) -> bool:
    """Whether the same global batch at micro-batch 1 (training) holds the job in one rented node of `gpu`: a lever,
    not more nodes (audit KK: a 410M pretraining sized at 2 nodes of 8 x H100)."""
    training = ctx.answers.task.mode == "training"
    small = small_activations(ctx.answers) if training else ctx.answers
    tries = [small] if small != ctx.answers else []
    # Or each sequence split over the node's GPUs (audit AL43: EasyContext's 512K on 8 A100s was "shrink the job").
    split = offered_split(ctx.answers.with_value("scale", "gpu_count", MAX_GPUS), ctx.shape.kind,
                          ctx.shape.sequence_length)
    if split is not None:
        tries.append(small_activations(split))
    nodes = [spread(ctx, context_for, MAX_GPUS, each) for each in tries]
    return any(node.memory.total_bytes <= usable_bytes(node, gpu) for node in nodes)


def rented_nodes(ctx: Context, context_for: Callable[[Answers], Context]) -> list[str]:
    """Rented nodes for a job one machine holds but none within budget, when one rented node does not hold it."""
    found = node_gpu(ctx)
    if ctx.edge or found is None:
        return []
    gpu, usd = found
    one_node = spread(ctx, context_for, MAX_GPUS)
    if one_node.memory.total_bytes <= usable_bytes(one_node, gpu) or _one_node_at_micro_batch_1(ctx, context_for, gpu):
        return []
    head = (f"rented: across one node of {MAX_GPUS} x {gpu.name} this needs {one_node.memory.total_bytes / GIB:.0f} "
            f"GiB per GPU, more than its {usable_bytes(one_node, gpu) / GIB:.0f} GiB usable")
    return _nodes_lines(ctx, context_for, gpu, usd, head)


def _nodes_lines(ctx: Context, context_for: Callable[[Answers], Context], gpu: Part, usd: float, head: str
                 ) -> list[str]:
    """How many nodes of 8 x `gpu` hold the job, what links them and what they rent for; then one node's ways."""
    nodes, spread_out, holds, how = _fewest_nodes_and_how(ctx, context_for, gpu)
    rent, rate = ctx.rules.rent, ctx.rules.currency.cny_per_usd
    hour = usd * rate * MAX_GPUS * nodes
    if not holds:
        lines = [f"{head}; even {MAX_NODES} nodes of {MAX_GPUS} x {gpu.name} do not hold it: shrink the job"]
    else:
        lines = [f"{head}: {how} across {nodes} nodes of {MAX_GPUS} x {gpu.name} ({MAX_GPUS * nodes} GPUs, "
                 f"{spread_out.memory.total_bytes / GIB:.1f} GiB per GPU), linked by {interconnect(gpu)}; rented at "
                 f"${usd:g}/GPU-hour that is ~{money(hour, ctx.currency, ctx.rules)}/h, "
                 f"~{money(hour * 24, ctx.currency, ctx.rules)}/day ({rent.source}, as of "
                 f"{rent.as_of}){rent_market_note(ctx.market)}"]
        run_time = _run_time(ctx, context_for, gpu, usd, nodes, spread_out)
        lines[0] += f"; {run_time}" if run_time else ""
    lines.extend(single_node_ways(ctx, context_for, gpu, usd * rate * MAX_GPUS))
    return lines


def _fewest_nodes_and_how(ctx: Context, context_for: Callable[[Answers], Context], gpu: Part
                          ) -> tuple[int, Context, bool, str]:
    """The fewest nodes of 8 x `gpu` that hold the job (training also at micro-batch 1, which keeps it), the job over
    them, whether they hold it, and how it is split."""
    training = ctx.answers.task.mode == "training"
    how = "ZeRO-3" if training else "tensor parallel in each node and pipeline parallel"
    nodes, spread_out, holds = fewest_nodes(ctx, context_for, gpu, ctx.answers)
    small = small_activations(ctx.answers) if training else ctx.answers
    if small != ctx.answers:  # micro-batch 1 with accumulation keeps the job and may need fewer nodes
        fewer, small_out, small_holds = fewest_nodes(ctx, context_for, gpu, small)
        if small_holds and (fewer < nodes or not holds):
            nodes, spread_out, holds = fewer, small_out, True
            how += f" at {small_activations_label(ctx.answers, ctx.shape)}"
    return nodes, spread_out, holds, how


def sharded_traffic_across_nodes(answers: Answers, shape: ModelShape, figures: dict[str, float], gpus: int,
                                 nic_gb_per_s: float) -> tuple[float, float, str]:
    """ZeRO-3 over `gpus` GPUs in several nodes: (seconds a step of its gathers and reduce-scatters over each GPU's
    NIC, seconds of a node's compute a step from `figures`, the formula a micro-batch)."""
    comm = step_communication(answers, shape, gpus, "zero3")
    busbw = nic_gb_per_s * ALLREDUCE_LINK_FRACTION
    traffic_s = comm.collective_bytes / (busbw * 1e9)
    compute_s = figures.get("step_s", 0.0) - figures.get("communication_exposed_s", 0.0)
    micro = max(1, answers.task.accumulation_steps)
    return traffic_s, compute_s, (f"{comm.collective_bytes / micro / 1e9:,.0f} GB a GPU a micro-batch at "
                                  f"{busbw:,.1f} GB/s ({nic_gb_per_s:g} x {ALLREDUCE_LINK_FRACTION:g}) = "
                                  f"{duration(traffic_s / micro)} against {duration(compute_s / micro)} of "
                                  "compute")


def _epoch_seconds(ctx: Context, gpu: Part, spread_out: Context, nodes: int
                   ) -> tuple[float, str, Answers, dict[str, float]]:
    """A training epoch's seconds on `nodes` nodes of 8 x `gpu` at a node's rate times the nodes, what it reads, and a
    node's answers and predicted figures; 0 seconds for inference or a data set of no stated size."""
    node = spread_out.answers.with_value("scale", "gpu_count", MAX_GPUS)
    if ctx.answers.task.mode != "training":
        return 0.0, "", node, {}
    figures = job_figures(node, ctx.shape, dict(gpu.spec), gpu.name, MAX_GPUS)
    per_node = training_rate(figures)
    seconds, what, _ = epoch_seconds(node, ctx.shape, per_node * nodes) if per_node else (0.0, "", False)
    return seconds, what, node, figures


def _run_time(ctx: Context, context_for: Callable[[Answers], Context], gpu: Part, usd: float, nodes: int,
              spread_out: Context) -> str:
    """How long a training epoch takes on the rented nodes and what it costs: a node's rate (ZeRO-3 over its NVLink)
    times the nodes, as data parallel scales near-linearly across them; and the nodes that finish it in SLOW_RUN_DAYS
    (Apertus-70B's 15T tokens on 3 nodes: ~22 years at the rate, not a rent a day alone)."""
    seconds, what, node, figures = _epoch_seconds(ctx, gpu, spread_out, nodes)
    if not seconds:
        return ""
    per_node = training_rate(figures)
    gpu_hours = seconds / 3600 * MAX_GPUS * nodes
    cost = money(gpu_hours * usd * ctx.rules.currency.cny_per_usd, ctx.currency, ctx.rules)
    unit = "tokens" if ctx.shape.kind == "transformer" else "samples"
    line = (f"one epoch of {what} at ~{per_node:,.0f} {unit}/s a node takes ~{duration(seconds)} on {nodes} nodes: "
            f"{gpu_hours:,.0f} GPU-hours, ~{cost}")
    across, nic_bound = _across_nodes(ctx, node, figures, nodes, seconds)
    line += across
    if seconds > SLOW_RUN_DAYS * 86400:
        needed = math.ceil(gpu_hours / (MAX_GPUS * SLOW_RUN_DAYS * 24))
        # ZeRO-3 moves as much a GPU over more nodes: the month holds where the NICs do not set the pace (audit ZW26).
        how = (", with Megatron's tensor parallel in each node and pipeline parallel across them, not ZeRO-3 at this "
               "micro-batch, whose gathers set the pace above" if nic_bound else "")
        same = " for the same GPU-hours"
        month = as_answered_for_a_month(ctx, context_for, gpu, nodes, spread_out, seconds * nodes)
        if month is not None:  # across more nodes the job holds at its own micro-batch, without the recompute
            needed, own_work_s, held, month_figures = month
            same = (f" at the job's own micro-batch and recompute, which ZeRO-3 across them holds "
                    f"({held.memory.total_bytes / GIB:.1f} GiB per GPU): {own_work_s / 3600 * MAX_GPUS:,.0f} "
                    "GPU-hours" + nic_bound_text(held.answers, ctx.shape, gpu, needed, own_work_s / needed,
                                                 month_figures))
            how = ""
        line += (f"; {needed:,} nodes ({needed * MAX_GPUS:,} GPUs) finish it in ~{SLOW_RUN_DAYS:g} days{same}{how}, "
                 f"as data parallel scales near-linearly across nodes ({LLAMA2_SCALING})"
                 f"{global_batch_note(ctx.answers.workload.batch_size, needed, training_split(ctx.answers))}")
    return line


def _across_nodes(ctx: Context, node: Answers, figures: dict[str, float], nodes: int, seconds: float
                  ) -> tuple[str, bool]:
    """What ZeRO-3's traffic over the nodes' NICs adds where compute cannot hide it (audit YF2: Falcon-180B's full
    fine-tune on 6 nodes at micro-batch 1 moves ~1 TB a GPU a step), and whether it sets the pace; Megatron's tensor
    parallel in a node and pipeline parallel across nodes keep most of it on NVLink."""
    slower, text = _nic_slowdown(node, ctx.shape, figures, nodes)
    if slower is None:
        return " (a node's rate)", False
    if slower <= 1:
        return f" (a node's rate; ZeRO-3's gathers across the nodes' NICs, {text}, hide behind it)", False
    text = (f" at a node's rate over NVLink; ZeRO-3's gathers across the nodes' NICs take {text}, so up to "
            f"~{duration(seconds * slower)} ({slower:.1f}x) where they are not hidden: a larger micro-batch, or "
            "tensor parallel in each node and pipeline parallel across them (Megatron-LM), keeps it near the first")
    return text, True


def global_batch_note(batch_size: int, nodes: int, split: int = 1) -> str:
    """Data parallel gives each GPU at least one sequence of the global batch a step, each group of `split` GPUs one
    where a sequence is split over them (task.sequence_parallel): what more nodes need."""
    takers = max(1, MAX_GPUS // split)  # a node's GPUs, or groups, that each take their own sequences
    most = max(1, batch_size // takers)
    if nodes <= most:
        return ""
    return (f"; a global batch of {batch_size:,} sequences spreads over at most {most} nodes: {nodes * takers:,} or "
            f"more a step for {nodes} (a larger batch may need a new learning-rate schedule)")


def fewest_nodes(ctx: Context, context_for: Callable[[Answers], Context], gpu: Part, answers: Answers
                  ) -> tuple[int, Context, bool]:
    """The fewest nodes of 8 x `gpu` (2 to MAX_NODES) that hold `answers`, the job spread over them, and whether
    even the last holds it."""
    nodes = 2
    while True:
        spread_out = spread(ctx, context_for, MAX_GPUS * nodes, answers)
        holds = spread_out.memory.total_bytes <= usable_bytes(spread_out, gpu)
        if holds or nodes >= MAX_NODES:
            return nodes, spread_out, holds
        nodes += 1


def single_node_ways(ctx: Context, context_for: Callable[[Answers], Context], gpu: Part, node_cny_per_hour: float
                     ) -> list[str]:
    """What one node of 8 x `gpu` can do instead: QLoRA of the model or ZeRO-Infinity (training), int4 weights
    (inference)."""
    answers, lines = ctx.answers, []
    node = f"one node of {MAX_GPUS} x {gpu.name} (~{money(node_cny_per_hour, ctx.currency, ctx.rules)}/h)"
    if answers.task.mode == "inference":
        if answers.task.precision != "int4":
            quantized = spread(ctx, context_for, MAX_GPUS, answers.with_precision("int4"))
            if quantized.memory.total_bytes <= usable_bytes(quantized, gpu):
                lines.append(f"on {node} instead: int4 weights, {quantized.memory.total_bytes / GIB:.1f} GiB per GPU")
        return lines
    if ctx.shape.kind == "transformer" and answers.task.method != "qlora" and not pretraining(answers,
                                                                                             ctx.shape.parameters):
        qlora = spread(ctx, context_for, MAX_GPUS, answers.with_value("task", "method", "qlora"))
        if qlora.memory.total_bytes <= usable_bytes(qlora, gpu):
            lines.append(f"on {node} instead: QLoRA of the model (FSDP over a 4-bit base, as Answer.AI's "
                         f"FSDP-QLoRA), {qlora.memory.total_bytes / GIB:.1f} GiB per GPU")
    weights = ctx.shape.parameters * 2.0
    seconds = 2 * weights / NVME_READ_BYTES_PER_S
    lines.append(f"or on {node}: ZeRO-Infinity (arXiv:2104.07857) keeps weights, gradients and optimizer states on "
                 f"NVMe; every step streams the {weights / 1e9:,.0f} GB of 16-bit weights in for forward and again for "
                 f"backward, >= {seconds:,.0f} s of reads per step at one PCIe 4.0 drive's ~7 GB/s (a striped array "
                 "of n drives divides it), so expect it many times slower than the multi-node run")
    return lines


def rent_line(ctx: Context, context_for: Callable[[Answers], Context]) -> str:
    """The cheapest listed cloud GPU that holds the workload, by the hour, as a comparison with buying; when none
    holds it at this GPU count, the fewest GPUs of one machine (doubling up to 8: ZeRO-3 across them for training,
    tensor parallel for inference) at which one does."""
    if ctx.edge:
        return ""
    rented, split = ctx, ""
    training = ctx.answers.task.mode == "training"
    while True:
        line = _rent_option(ctx, rented, split)
        if line or rented.gpu_count * 2 > MAX_GPUS:
            return line
        count = rented.gpu_count * 2
        more = ctx.answers.with_value("scale", "gpu_count", count)
        rented = context_for(more.with_value("scale", "sharding", "zero3") if training else more)
        how = "ZeRO-3" if training else "tensor parallel"
        split = f", {how} across {count} GPUs: {rented.memory.total_bytes / GIB:.1f} GiB per GPU"


def _rent_option(ctx: Context, rented: Context, sharded: str) -> str:
    rent = ctx.rules.rent
    options = []
    for gpu_id, usd in rent.usd_per_gpu_hour.items():
        gpu = ctx.catalog.get(gpu_id)
        if gpu is not None and (fit := memory_fit(rented, gpu)) != SHORT:
            options.append((fit != ROOMY, usd, gpu))
    if not options:
        return ""
    tight, usd, gpu = min(options, key=lambda option: (option[0], option[1], option[2].id))  # the margin first
    cny = usd * ctx.rules.currency.cny_per_usd * rented.gpu_count
    count = f"{rented.gpu_count} x " if rented.gpu_count > 1 else ""
    hourly = money(cny, ctx.currency, ctx.rules, cents=True)
    sharded += " (tight: inside usable memory, not the estimator's margin)" if tight else ""
    return (f"rent {count}{gpu.name}{sharded} at ${usd:g}/GPU-hour (~{hourly}/h for the machine; "
            f"{rent.source}, as of {rent.as_of}): {money(ctx.budget_cny, ctx.currency, ctx.rules)} buys "
            f"~{ctx.budget_cny / cny:,.0f} hours")
