"""All-reduce (gloo on CPU, 2 and 4 real ranks) and the P2P matrix's CPU-only skip; the formula on known values."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from pth_top.benches.catalog import KERNELS_BY_NAME, SUITES

pytestmark = pytest.mark.usefixtures("torch")

KIB, MIB, GIB = 2**10, 2**20, 2**30


@pytest.fixture
def allreduce(torch):
    from pth_top.benches.child.kernels import allreduce as module

    return module


@pytest.fixture
def allreduce_sweep(torch):
    from pth_top.benches.child.kernels import allreduce_sweep as module

    return module


RANK_MARKERS = ("allreduce", "init_process_group", "time.sleep(600)", "no rendezvous")


def our_rank_processes() -> list[psutil.Process]:
    """This test process's descendants that are ranks or bench children of these tests (zombies included)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            command = " ".join(child.cmdline())
        except psutil.ZombieProcess:
            found.append(child)  # never reaped: left behind
            continue
        except psutil.NoSuchProcess:
            continue
        if any(marker in command for marker in RANK_MARKERS):
            found.append(child)
    return found


def no_children_left() -> bool:
    return not our_rank_processes()


def test_busbw_formula_on_known_values(allreduce):
    assert allreduce.bus_bandwidth_factor(2) == 1.0
    assert allreduce.bus_bandwidth_factor(4) == 1.5
    assert allreduce.bus_bandwidth_factor(8) == 1.75
    record = allreduce.size_record(10**9, 0.5, 8)
    assert record["algbw_gbps"] == pytest.approx(2.0)
    assert record["busbw_gbps"] == pytest.approx(3.5)
    assert allreduce.size_record(10**9, 0.5, 1)["busbw_gbps"] is None  # one rank: nothing crosses a link
    with pytest.raises(ValueError):
        allreduce.bus_bandwidth_factor(0)


def test_nccl_rows_record_the_nccl_variables_that_pick_the_algorithm(allreduce, monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    assert allreduce.backend_facts("nccl")["nccl_env"]["NCCL_NVLS_ENABLE"] == "0"
    assert allreduce.backend_facts("gloo") == {}


def test_payloads_start_at_32_kib_and_reach_1_gib_on_gpus(allreduce):
    assert allreduce.payload_sizes(MIB) == [32 * KIB * 2**step for step in range(6)]
    assert allreduce.top_payload_bytes("nccl", 0.01) == GIB
    assert allreduce.top_payload_bytes("nccl", 1.0) == 4 * GIB
    assert allreduce.top_payload_bytes("nccl", 1.0, device_memory_bytes=141 * 10**9) == 4 * GIB
    assert allreduce.top_payload_bytes("nccl", 1.0, device_memory_bytes=8 * GIB) == 2 * GIB
    assert allreduce.top_payload_bytes("gloo", 1.0) == 64 * MIB
    assert allreduce.top_payload_bytes("gloo", 0.01) == MIB


def test_new_kernels_are_opt_in_only():
    for name in ("allreduce", "p2p"):
        assert KERNELS_BY_NAME[name].opt_in
        assert all(name not in members for members in SUITES.values())


def result_rows(events) -> list[dict]:
    return [event.fields for event in events if event.kind == "result"]


def test_two_ranks_give_a_row_per_size_and_the_best(run_kernels):
    code, events = run_kernels("allreduce")
    assert code == 0, [event.fields for event in events if event.kind == "error"]
    rows = result_rows(events)
    sizes = [row["details"]["bytes"] for row in rows[:-1]]
    assert sizes == [32 * KIB * 2**step for step in range(6)]  # tiny scale: 32 KiB .. 1 MiB
    for row in rows[:-1]:
        assert row["status"] == "ok" and row["unit"] == "GB/s"
        details = row["details"]
        assert row["variant"].endswith(" busbw x2 gloo") and row["note"].startswith("algbw ")
        assert details["world_size"] == 2 and details["backend"] == "gloo" and details["timed_calls"] == 20
        assert details["busbw_gbps"] == pytest.approx(details["algbw_gbps"])  # factor 1 with 2 ranks
        assert details["algbw_gbps"] == pytest.approx(details["bytes"] / details["time_s"] / 1e9)
        assert row["value"] == details["busbw_gbps"]
        # The median of 5 timed blocks, each of at least 20 calls, and the blocks' spread.
        assert row["samples"] == len(details["block_times_s"]) == 5 and details["calls_per_block"] >= 20
        assert details["time_s"] == statistics.median(details["block_times_s"])
        assert row["rel_iqr"] >= 0 and isinstance(row["noisy"], bool)
    best = rows[-1]
    assert best["variant"] == "best busbw x2 gloo"
    assert best["value"] == max(row["value"] for row in rows[:-1])
    assert "no link peak on CPU" in best["note"] and best["details"]["link_peak_gbps"] is None
    assert no_children_left()


def test_four_ranks_use_the_four_rank_factor(allreduce, allreduce_sweep):
    records = allreduce_sweep.run_sweep(4, "gloo", [32 * KIB, 64 * KIB])
    assert [record["bytes"] for record in records] == [32 * KIB, 64 * KIB]
    for record in records:
        assert record["world_size"] == 4
        assert record["busbw_gbps"] == pytest.approx(record["algbw_gbps"] * 1.5)
        assert record["calls_per_block"] >= allreduce.TIMED_CALLS and len(record["block_times_s"]) == 5
    assert no_children_left()


DIE_AFTER_JOINING = (
    "import os, sys, torch, torch.distributed as dist\n"
    "dist.init_process_group('gloo', init_method='file://' + sys.argv[1], rank=1, world_size=2)\n"
    "dist.all_reduce(torch.ones(8192))\n"
    "os._exit(9)\n"
)


def test_a_rank_that_dies_mid_sweep_is_an_error_row_not_a_hang(run_kernels, allreduce_sweep, monkeypatch):
    real_argv = allreduce_sweep.default_rank_argv

    def argv(rank, world_size, init_file, *rest):
        if rank == 1:
            return [sys.executable, "-c", DIE_AFTER_JOINING, init_file]
        return real_argv(rank, world_size, init_file, *rest)

    monkeypatch.setattr(allreduce_sweep, "default_rank_argv", argv)
    code, events = run_kernels("allreduce")
    assert code == 1
    errors = [event.fields for event in events if event.kind == "error"]
    assert len(errors) == 1 and errors[0]["variant"] == "32 KiB busbw x2 gloo"
    assert "rank 1 of 2 exited with code 9" in errors[0]["message"]
    rest = result_rows(events)
    assert rest and all(row["status"] == "skipped" and "sweep failed" in row["note"] for row in rest)
    assert no_children_left()


def test_a_rank_that_never_joins_is_stopped_at_the_deadline(allreduce_sweep):
    def argv(rank, init_file):
        if rank == 1:
            return [sys.executable, "-c", "import time; time.sleep(600)"]
        return allreduce_sweep.default_rank_argv(rank, 2, init_file, "gloo", [32 * KIB], 600)

    with pytest.raises(allreduce_sweep.RankFailed, match="still running after 8 s"):
        allreduce_sweep.run_sweep(2, "gloo", [32 * KIB], timeout_s=8, rank_argv=argv)
    assert no_children_left()


def test_a_rank_that_fails_at_start_names_its_stderr(allreduce_sweep):
    def argv(rank, init_file):
        if rank == 1:
            return [sys.executable, "-c", "import sys; sys.stderr.write('no rendezvous\\x1b[2J\\n'); sys.exit(3)"]
        return allreduce_sweep.default_rank_argv(rank, 2, init_file, "gloo", [32 * KIB], 600)

    with pytest.raises(allreduce_sweep.RankFailed, match="rank 1 of 2 exited with code 3: no rendezvous"):
        allreduce_sweep.run_sweep(2, "gloo", [32 * KIB], rank_argv=argv)
    assert no_children_left()


@pytest.mark.skipif(shutil.which("torchrun", path=os.path.dirname(sys.executable)) is None,
                    reason="torchrun not installed next to this interpreter")
def test_runs_under_torchrun_from_its_environment(tmp_path):
    torchrun = shutil.which("torchrun", path=os.path.dirname(sys.executable))
    completed = subprocess.run(
        [torchrun, "--standalone", "--nproc-per-node=2", "-m", "pth_top.benches.child.kernels.allreduce",
         "--backend=gloo", f"--sizes={32 * KIB},{64 * KIB}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    records = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
    assert [record["bytes"] for record in records] == [32 * KIB, 64 * KIB]
    assert all(record["world_size"] == 2 and record["backend"] == "gloo" for record in records)


def test_p2p_on_a_machine_without_two_gpus_is_one_clear_skipped_row(run_kernels, torch):
    if torch.cuda.device_count() >= 2:
        pytest.skip("this machine has 2+ GPUs")
    code, events = run_kernels("p2p")
    assert code == 0
    [row] = result_rows(events)
    assert row["status"] == "skipped" and row["note"].startswith("needs 2+ GPUs")


def test_bench_list_marks_the_new_kernels_opt_in(cli, capsys):
    assert cli(["bench", "--list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "opt-in" in lines["allreduce"] and "opt-in" in lines["p2p"]
    assert "quick,standard" in lines["gemm"]


def test_world_size_one_gives_algbw_only(tmp_path, allreduce):
    from pth_top.benches.child.runner import plan, run_suite
    from pth_top.benches.protocol import decode_line, encode_event

    events = []
    code = run_suite(plan([KERNELS_BY_NAME["allreduce"]], ["cpu"]),
                     lambda kind, **fields: events.append(decode_line(encode_event(kind, **fields))),
                     scale=0.01, time_cap_s=0.05, options={"allreduce_ranks": 1}, devices=["cpu"])
    assert code == 0
    rows = result_rows(events)
    assert all(row["value"] == row["details"]["algbw_gbps"] > 0 and " algbw x1 " in row["variant"]
               for row in rows[:-1])
    assert "1 rank" in rows[0]["note"]
    assert rows[-1]["status"] == "skipped" and "2+ ranks" in rows[-1]["note"]


def test_the_rank_side_imports_only_stdlib_and_torch_so_it_runs_by_path(allreduce):
    tree = ast.parse(Path(allreduce.__file__).read_text())
    top_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = {alias.name.split(".")[0] for node in top_level if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module.split(".")[0] for node in top_level if isinstance(node, ast.ImportFrom) and node.module}
    assert "pth_top" not in names and "torch" in names


async def test_cancel_mid_sweep_ends_every_rank_and_removes_the_rendezvous(tmp_path, monkeypatch):
    from pth_top.benches.client.bench_process import BenchProcess
    from pth_top.benches.run_request import RunRequest

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    process = BenchProcess.for_request(None, RunRequest(kernels=("allreduce",), scale=1.0))
    await process.start()
    try:
        deadline = time.monotonic() + 120
        while len(our_rank_processes()) < 3:  # the bench child and its two ranks
            assert time.monotonic() < deadline, "the ranks did not start"
            await asyncio.sleep(0.05)
        assert any(path.name.startswith("pth-top-allreduce-") for path in tmp_path.iterdir())
        await process.cancel()
        await process.wait()
        while not no_children_left():
            assert time.monotonic() < deadline, "a rank outlived the cancel"
            await asyncio.sleep(0.05)
        assert not any(path.name.startswith("pth-top-allreduce-") for path in tmp_path.iterdir())
    finally:
        for child in our_rank_processes():
            child.kill()


def test_p2p_measures_every_ordered_pair_once(torch):
    from pth_top.benches.child.kernels._common import KernelContext
    from pth_top.benches.child.kernels.p2p import MIN_COPY_BYTES, copy_bytes, pair_variants

    names = [variant.name for variant in pair_variants(KernelContext(device="host", scale=1.0, time_cap_s=1.0), 3)]
    assert names == ["cuda:0->cuda:1", "cuda:0->cuda:2", "cuda:1->cuda:0", "cuda:1->cuda:2", "cuda:2->cuda:0",
                     "cuda:2->cuda:1"]
    assert copy_bytes(1.0) == 256 * MIB and copy_bytes(0.01) == MIN_COPY_BYTES


@pytest.mark.gpu
def test_nccl_sweep_on_the_gpus_here(tmp_path, torch):
    from tests.bench.conftest import run_in_process

    gpus = torch.cuda.device_count()
    code, events = run_in_process([KERNELS_BY_NAME["allreduce"], KERNELS_BY_NAME["p2p"]], tmp_path,
                                  devices=("cuda:0",))
    assert code == 0, [event.fields for event in events if event.kind == "error"]
    rows = [row for row in result_rows(events) if row["kernel"] == "allreduce"]
    sizes = [row["details"]["bytes"] for row in rows[:-1]]
    assert sizes[0] == 32 * KIB and sizes[-1] >= GIB
    assert all(row["details"]["backend"] == "nccl" and row["details"]["world_size"] == gpus for row in rows[:-1])
    if gpus == 1:
        assert all(row["value"] == row["details"]["algbw_gbps"] > 0 for row in rows[:-1])
    else:
        assert rows[-1]["value"] > 0 and rows[-1]["note"] and "nccl_version" in rows[-1]["details"]
    pairs = [row for row in result_rows(events) if row["kernel"] == "p2p"]
    assert len(pairs) == (1 if gpus == 1 else gpus * (gpus - 1))


def test_a_block_lasts_the_minimum_time_or_20_calls_whichever_is_longer(allreduce, monkeypatch, torch):
    timed: list[int] = []

    def time_block(tensor, calls):
        timed.append(calls)
        return 1e-4 if len(timed) == 1 else 2e-4 * len(timed)  # the calibration block, then slower blocks

    monkeypatch.setattr(allreduce, "_time_block", time_block)
    monkeypatch.setattr(allreduce, "_slowest", lambda values, device: list(values))
    monkeypatch.setattr(allreduce.dist, "all_reduce", lambda tensor, **kwargs: None)
    blocks_s, calls = allreduce.time_all_reduce(torch.zeros(4), warmup=5, min_calls=20, blocks=5, min_block_s=0.2)
    assert calls == 2000 and timed == [20] + [2000] * 5  # 0.2 s / 0.1 ms
    assert blocks_s == pytest.approx([4e-4, 6e-4, 8e-4, 1e-3, 1.2e-3])
    record = allreduce.size_record(MIB, statistics.median(blocks_s), 2, blocks_s, calls)
    assert record["time_s"] == pytest.approx(8e-4) and record["rel_iqr"] == pytest.approx(4e-4 / 8e-4)
    _, calls = allreduce.time_all_reduce(torch.zeros(4), warmup=0, min_calls=20, blocks=1, min_block_s=1e-6)
    assert calls == 20
