"""The GPU panel's words on real activity (GPM) and its stuck / slow flags, driven with Pilot."""

from __future__ import annotations

from dataclasses import replace

from pth_top.sensors.gpu import GpuReader
from pth_top.sensors.model import GpuProcessUse, ProcessSample
from pth_top.sensors.nvml import NvmlSession
from pth_top.tui.app import PthTopApp
from pth_top.tui.panels.gpus import GpuPanel
from tests.fakes.gpm_profiles import TRAINING, enable_gpm, hang
from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.fakes.real_gpus import make_real_machine
from tests.fakes.snapshots import FixedSource, make_snapshot
from tests.sensors.helpers import FakeClock
from tests.tui.test_monitor_pilot import make_app, wait_for_rows
from tests.waiting import wait_until


def gpus_of(fake):
    """The GPUs as the live dashboard has them from its second sample (GPM needs an interval)."""
    reader = GpuReader(NvmlSession(fake, clock=FakeClock()))
    reader.sample()
    return reader.sample()


def rank(pid: int, gpu: int) -> ProcessSample:
    """A torchrun rank: child of the launcher (pid 100), one GPU each."""
    return ProcessSample(pid=pid, ppid=100, user="alice", cpu_percent=99.0, memory_percent=1.0, rss_bytes=1 << 30,
                         state="running", start_time_s=500.0, command=f"python train.py --rank {gpu}",
                         gpu_uses=(GpuProcessUse(gpu_index=gpu, gpu_memory_used_bytes=1 << 30, kind="compute"),))


def panel_text(app):
    table = app.screen.query_one("#gpu-table")
    rows = {key: [cell.plain for cell in table.get_row(key)] for key in table.row_keys}
    return rows, str(app.screen.query_one("#gpu-detail").content)


async def test_busy_but_waiting_says_so_beside_util():
    fake = hang(make_fake_gpus(2), 0)
    enable_gpm(fake, 1, TRAINING)
    app, _ = make_app(replace(make_snapshot(gpu_count=0), gpus=gpus_of(fake)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app)
        rows, detail = panel_text(app)
        assert rows["0"][2:4] == ["100%", "15/0"] and rows["1"][3] == "93/75"
        assert "busy 100%, SM active 15%, tensor 0%, DRAM 0%: waiting, not computing" in detail
        assert "kernel time" not in detail


async def test_without_gpm_util_is_labelled_kernel_time_and_nothing_is_invented():
    app, _ = make_app(replace(make_snapshot(gpu_count=0), gpus=gpus_of(make_real_machine("a10"))))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app)
        rows, detail = panel_text(app)
        assert rows["0"][3] == "N/A"
        assert "kernel time 0% (time any kernel ran; no SM activity counters on this GPU)" in detail
        assert "SM active" not in detail and "tensor" not in detail


async def test_a_hung_job_is_flagged_stuck_on_its_rows_after_a_minute():
    fake = make_fake_gpus(4)
    for index in range(4):
        hang(fake, index)
    hung = replace(make_snapshot(gpu_count=0), gpus=gpus_of(fake),
                   processes=tuple(rank(101 + index, index) for index in range(4)))
    source = FixedSource(hung)
    app = PthTopApp(interval_s=3600, source_factory=lambda: source)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app)
        screen = app.screen
        for step in range(14):
            screen.take_snapshot(replace(hung, timestamp_s=2000.0 + 5 * step))
        await pilot.pause()
        rows, detail = panel_text(app)
        assert [rows[key][1] for key in "0123"] == ["H100 80G STUCK"] * 4
        assert detail.startswith("GPU 0 NVIDIA H100 80GB HBM3  bus 00000000:18:00.0  likely stuck in a collective: "
                                 "all its group's GPUs busy at <= 22% of the power limit, SM active <= 15%, for 65 s")


def save_bench_run(device_name: str, bf16_tflops: float) -> None:
    from pth_top.benches.client.runs import RunRecord, save_run

    metadata = {"cuda_devices": {"cuda:0": {"name": device_name}}}
    save_run(RunRecord(suite="standard", devices=["cuda:0"], metadata=metadata,
                       rows=[{"kernel": "gemm", "device": "cuda:0", "variant": "bf16", "status": "ok",
                              "value": bf16_tflops}], finished={}))


async def detail_after_the_ceiling_is_read(fake):
    app, _ = make_app(replace(make_snapshot(gpu_count=0), gpus=gpus_of(fake)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app)
        panel = app.screen.query_one(GpuPanel)
        await wait_until(pilot, lambda: panel.ceiling_read, what="the bench run read")
        await pilot.pause()
        return panel_text(app)[1]


async def test_a_saved_bench_run_of_this_gpu_model_gives_the_estimated_share_of_its_matmul_ceiling():
    # In the temp data dir (PTH_TOP_DATA_DIR, tests/conftest.py): this machine's bf16 GEMM at 790 TFLOP/s.
    save_bench_run("NVIDIA H100 80GB HBM3", 790.0)
    detail = await detail_after_the_ceiling_is_read(enable_gpm(make_fake_gpus(1), 0, TRAINING))
    assert "tensor 75%" in detail
    assert "~75% of measured bf16 matmul, est. from tensor activity (~592 of 790 TFLOP/s)" in detail


async def test_no_estimate_without_gpm_or_a_run_of_the_same_model():
    training = enable_gpm(make_fake_gpus(1), 0, TRAINING)
    assert "measured bf16 matmul" not in await detail_after_the_ceiling_is_read(training), "no saved run"
    save_bench_run("NVIDIA GeForce RTX 4090", 160.0)
    assert "measured bf16 matmul" not in await detail_after_the_ceiling_is_read(training), "another GPU model"
    save_bench_run("NVIDIA A10", 120.0)
    assert "measured bf16 matmul" not in await detail_after_the_ceiling_is_read(make_real_machine("a10")), "no GPM"
