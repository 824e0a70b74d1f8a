"""All-reduce bus bandwidth as nccl-tests reports it: NCCL over every GPU, gloo over 2-4 CPU ranks.

algbw = bytes / t and busbw = algbw x 2(n-1)/n. Per payload, after 5 warm-up calls, BLOCKS timed blocks of
back-to-back calls, each >= 20 calls and >= `min_block_s` (nccl-tests' -n grown for small sizes); t is the
median over blocks of the slowest rank's per-call time, and the blocks' spread is the row's rel_iqr.
This file also runs alone (stdlib and torch only at import), as one rank, by path or under torchrun:
    torchrun --nproc-per-node=8 -m pth_top.benches.child.kernels.allreduce
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

KIB = 2**10
MIB = 2**20
GIB = 2**30
MIN_PAYLOAD_BYTES = 32 * KIB
WARMUP_CALLS = 5
TIMED_CALLS = 20  # at least, per block
BLOCKS = 5
MIN_BLOCK_S = 0.2  # a block lasts at least this long (capped by the run's time cap)
NOISY_REL_IQR = 0.05  # the harness's target: a wider spread over the blocks marks the row noisy
CPU_MAX_PAYLOAD_BYTES = 64 * MIB  # at scale 1; gloo on a small host
GPU_MIN_TOP_PAYLOAD_BYTES = GIB
GPU_MAX_PAYLOAD_BYTES = 4 * GIB  # at scale 1
CPU_RANKS_MIN, CPU_RANKS_MAX = 2, 4
# This file, run by path as each rank of a sweep (allreduce_sweep.py).
RANK_SCRIPT = os.path.abspath(__file__)


def bus_bandwidth_factor(world_size: int) -> float:
    """nccl-tests' all-reduce factor 2(n-1)/n: each element crosses 2(n-1) of n links."""
    if world_size < 1:
        raise ValueError(f"world size must be at least 1, got {world_size}")
    return 2 * (world_size - 1) / world_size


def size_record(nbytes: int, seconds: float, world_size: int, block_times_s: list[float] | None = None,
                calls_per_block: int | None = None) -> dict:
    """One payload's figures in GB/s (1e9 B/s); busbw is None with a single rank (nothing crosses a link).

    `seconds` is the median block's per-call time; rel_iqr is the blocks' IQR over their median.
    """
    algbw_gbps = nbytes / seconds / 1e9
    busbw_gbps = algbw_gbps * bus_bandwidth_factor(world_size) if world_size > 1 else None
    blocks = list(block_times_s or [seconds])
    return {"bytes": nbytes, "time_s": seconds, "algbw_gbps": algbw_gbps, "busbw_gbps": busbw_gbps,
            "world_size": world_size, "block_times_s": blocks, "calls_per_block": calls_per_block,
            "rel_iqr": _iqr(blocks) / statistics.median(blocks)}


def _iqr(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return quartiles[2] - quartiles[0]


def payload_sizes(max_bytes: int, min_bytes: int = MIN_PAYLOAD_BYTES) -> list[int]:
    """Powers of two from `min_bytes` to `max_bytes` (at least one size)."""
    sizes = [min_bytes]
    while sizes[-1] * 2 <= max_bytes:
        sizes.append(sizes[-1] * 2)
    return sizes


def _floor_power_of_two(value: float) -> int:
    return 1 << max(0, int(value).bit_length() - 1)


def top_payload_bytes(backend: str, scale: float, device_memory_bytes: int | None = None) -> int:
    """GPUs: >= 1 GiB (4 GiB at scale 1), within a quarter of memory; CPU: 64 MiB at scale 1, >= 1 MiB."""
    if backend == "nccl":
        top = max(GPU_MIN_TOP_PAYLOAD_BYTES, _floor_power_of_two(GPU_MAX_PAYLOAD_BYTES * scale))
        if device_memory_bytes:
            top = min(top, _floor_power_of_two(device_memory_bytes // 4))
        return top
    return max(MIB, _floor_power_of_two(CPU_MAX_PAYLOAD_BYTES * scale))


def size_label(nbytes: int) -> str:
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if nbytes >= unit and nbytes % unit == 0:
            return f"{nbytes // unit} {name}"
    return f"{nbytes} B"


# ---- one rank ---------------------------------------------------------------------------------------------------

def _time_block(tensor: torch.Tensor, calls: int) -> float:
    """Seconds per call on this rank over `calls` back-to-back calls: CUDA events and one sync on GPUs."""
    if tensor.is_cuda:
        torch.cuda.synchronize(tensor.device)
        dist.barrier()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            dist.all_reduce(tensor)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0 / calls
    dist.barrier()
    started = time.perf_counter()
    for _ in range(calls):
        dist.all_reduce(tensor)  # gloo returns when this rank's part is done
    return (time.perf_counter() - started) / calls


def _slowest(values: list[float], device: torch.device) -> list[float]:
    """Each value's maximum over the ranks (a collective: every rank calls it with as many values)."""
    found = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(found, op=dist.ReduceOp.MAX)
    return [float(value) for value in found.tolist()]


def time_all_reduce(tensor: torch.Tensor, warmup: int, min_calls: int, blocks: int,
                    min_block_s: float) -> tuple[list[float], int]:
    """The slowest rank's per-call seconds for each of `blocks` blocks, and the calls per block.

    Calls per block: >= `min_calls` and enough for `min_block_s`, from a calibration block the ranks agree on.
    """
    for _ in range(warmup):
        dist.all_reduce(tensor)
    [per_call_s] = _slowest([_time_block(tensor, min_calls)], tensor.device)
    calls = max(min_calls, math.ceil(min_block_s / max(per_call_s, 1e-9)))
    return _slowest([_time_block(tensor, calls) for _ in range(blocks)], tensor.device), calls


def _rank_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="One all-reduce rank; rank 0 prints a JSON line per payload. Under "
                                                 "torchrun, RANK/WORLD_SIZE/MASTER_ADDR come from the environment.")
    parser.add_argument("--init-file", help="file:// rendezvous (without torchrun)")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--backend", choices=("nccl", "gloo"), help="default: nccl with CUDA, else gloo")
    parser.add_argument("--sizes", help="payload bytes, comma separated (default 32 KiB up to the top size)")
    parser.add_argument("--warmup", type=int, default=WARMUP_CALLS)
    parser.add_argument("--iterations", type=int, default=TIMED_CALLS, help="timed calls per block, at least")
    parser.add_argument("--blocks", type=int, default=BLOCKS, help="timed blocks per payload (median reported)")
    parser.add_argument("--min-block-s", type=float, default=MIN_BLOCK_S, help="seconds a block lasts at least")
    parser.add_argument("--timeout-s", type=float, default=300.0, help="collective timeout")
    return parser


def rank_main(argv: list[str] | None = None) -> int:
    args = _rank_parser().parse_args(argv)
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun (or any env:// launcher)
        rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local_rank, init_method = int(os.environ.get("LOCAL_RANK", rank)), "env://"
    elif args.init_file:
        rank, world_size, local_rank = args.rank, args.world_size, args.rank
        init_method = f"file://{args.init_file}"
    else:
        print("allreduce: needs --init-file, or RANK and WORLD_SIZE from torchrun", file=sys.stderr)
        return 2
    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    device = torch.device("cuda", local_rank) if backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if args.sizes:
        sizes = [int(text) for text in args.sizes.split(",")]
    else:
        memory = torch.cuda.get_device_properties(device).total_memory if device.type == "cuda" else None
        sizes = payload_sizes(top_payload_bytes(backend, 1.0, memory))
    dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=args.timeout_s))
    try:
        for nbytes in sizes:
            tensor = torch.empty(nbytes // 4, dtype=torch.float32, device=device).uniform_()  # filled untimed
            # The collective ends with its slowest rank: each block's time is the slowest rank's.
            block_times_s, calls = time_all_reduce(tensor, args.warmup, args.iterations, max(1, args.blocks),
                                                   args.min_block_s)
            del tensor
            if rank == 0:
                record = size_record(nbytes, statistics.median(block_times_s), world_size, block_times_s, calls)
                print(json.dumps({**record, "backend": backend}), flush=True)
        dist.barrier()  # torch 2.4 + gloo: rank 0 hangs in destroy_process_group if a rank left before it
    finally:
        dist.destroy_process_group()
    return 0


# ---- the kernel's rows (allreduce_sweep.py starts the ranks) ----------------------------------------------------

def backend_facts(backend: str) -> dict:
    """What changes NCCL's choice of algorithm: its version and every NCCL_* variable the ranks inherit."""
    if backend != "nccl":
        return {}
    try:
        version = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:
        version = None
    return {"nccl_version": version, "nccl_env": {name: value for name, value in os.environ.items()
                                                  if name.startswith("NCCL_")}}


def variants(ctx):
    from pth_top.benches.catalog import PEAK_NONE
    from pth_top.benches.child.kernels._common import Skipped, Variant, row
    from pth_top.benches.child.kernels.allreduce_sweep import run_sweep

    use_gpus = any(str(device).startswith("cuda") for device in ctx.options.get("devices", ["cpu"]))
    if use_gpus and torch.cuda.is_available() and dist.is_nccl_available():
        backend, world_size = "nccl", torch.cuda.device_count()
        top = top_payload_bytes(backend, ctx.scale, min(torch.cuda.get_device_properties(index).total_memory
                                                        for index in range(world_size)))
        from pth_top.benches.child.link_peak import link_peak
        from pth_top.benches.child.pcie_link import pci_bus_id

        peak_gbps, peak_source = link_peak([pci_bus_id(torch.cuda.get_device_properties(index))
                                            for index in range(world_size)])
    else:
        backend = "gloo"
        world_size = int(ctx.options.get("allreduce_ranks") or
                         max(CPU_RANKS_MIN, min(CPU_RANKS_MAX, os.cpu_count() or 1)))
        top = top_payload_bytes(backend, ctx.scale)
        peak_gbps, peak_source = None, "no link peak on CPU (gloo over loopback)"
    sizes = payload_sizes(top)
    where = f"x{world_size} {backend}"
    state: dict = {}

    def records() -> dict[int, dict]:
        if "error" in state:
            raise Skipped(f"not measured: the sweep failed ({state['error']})")
        if "records" not in state:
            try:
                found = run_sweep(world_size, backend, sizes, progress=ctx.progress,
                                  min_block_s=min(MIN_BLOCK_S, ctx.time_cap_s))
            except Exception as error:
                state["error"] = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
                raise
            state["records"] = {record["bytes"]: record for record in found}
        return state["records"]

    def details_of(record: dict) -> dict:
        return {key: record.get(key) for key in ("bytes", "time_s", "algbw_gbps", "busbw_gbps", "world_size",
                                                 "block_times_s", "calls_per_block")} | {
            "backend": backend, "warmup_calls": WARMUP_CALLS, "timed_calls": TIMED_CALLS, "blocks": BLOCKS}

    def spread_of(record: dict) -> dict:
        """The row's spread over the timed blocks (rows.py shows it, and 'N samples' when there are few)."""
        rel_iqr = float(record.get("rel_iqr") or 0.0)
        return {"rel_iqr": rel_iqr, "noisy": rel_iqr > NOISY_REL_IQR,
                "samples": len(record.get("block_times_s") or [record["time_s"]]), "median_s": record["time_s"]}

    def size_name(nbytes: int) -> str:
        return f"{size_label(nbytes)} {'busbw' if world_size > 1 else 'algbw'} {where}"

    def size_variant(nbytes: int) -> Variant:
        def run() -> dict:
            record = records()[nbytes]
            if record["busbw_gbps"] is None:
                value, note = record["algbw_gbps"], "1 rank: algbw only (no busbw: nothing crosses a link)"
            else:
                value, note = record["busbw_gbps"], f"algbw {record['algbw_gbps']:.4g} GB/s"
            return row(variant=size_name(nbytes), value=value, unit="GB/s", peak_kind=PEAK_NONE,
                       details=details_of(record), note=note) | spread_of(record)
        return Variant(size_name(nbytes), run)

    def best_variant() -> dict:
        measured = [record for record in records().values() if record["busbw_gbps"] is not None]
        if not measured:
            raise Skipped("busbw needs 2+ ranks")
        best = max(measured, key=lambda record: record["busbw_gbps"])
        percent = 100.0 * best["busbw_gbps"] / peak_gbps if peak_gbps else None
        note = (f"{percent:.0f} % of {peak_gbps:g} GB/s ({peak_source})" if percent is not None else peak_source)
        details = details_of(best) | {"link_peak_gbps": peak_gbps, "link": peak_source,
                                      "percent_of_link_peak": percent, **backend_facts(backend)}
        return row(variant=f"best busbw {where}", value=best["busbw_gbps"], unit="GB/s", peak_kind=PEAK_NONE,
                   details=details, note=f"at {size_label(best['bytes'])}; {note}") | spread_of(best)

    return [size_variant(nbytes) for nbytes in sizes] + [Variant(f"best busbw {where}", best_variant)]


if __name__ == "__main__":
    sys.exit(rank_main())
