"""Burn-in: durations, NVML readings (scripted NVML), the per-device report, a CPU burn in process, CLI, screen."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import psutil
import pynvml as real_pynvml
import pytest

from pth_top.benches.catalog import KERNELS_BY_NAME, SUITES
from pth_top.benches.client.burn import BurnLog
from pth_top.benches.protocol import decode_line, encode_event
from pth_top.benches.run_request import RequestError, RunRequest, parse_duration_s
from tests.fakes.fake_pynvml import FakeDevice, FakePynvml
from tests.waiting import wait_for


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("60s", 60), ("10m", 600), ("1h", 3600),
                                               ("1.5h", 5400), (" 5s ", 5)])
def test_durations_read_as_seconds(text, seconds):
    assert parse_duration_s(text) == seconds


@pytest.mark.parametrize("text", ["", "10x", "0s", "-5s", "25h", "1e3", "nan", "10 minutes", "5m\x1b[2J", "\u0663s"])
def test_bad_durations_are_one_line_refusals(text):
    with pytest.raises(RequestError) as refused:
        parse_duration_s(text)
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value)


def test_the_burn_duration_travels_to_the_child_exactly():
    request = RunRequest(kernels=("burn",), burn_s=600.0)
    assert RunRequest.from_argv(request.to_argv()) == request
    with pytest.raises(RequestError):
        RunRequest(burn_s=float("inf"))


def test_burn_and_vram_test_are_opt_in():
    for name in ("burn", "vram_test"):
        assert KERNELS_BY_NAME[name].opt_in
        assert all(name not in members for members in SUITES.values())


@pytest.mark.parametrize("argv", [["--burn", "10x"], ["--burn", "0"], ["--burn", "1m", "--kernel", "gemm"],
                                  ["--accept", "--kernel", "disk"]])
def test_bad_burn_options_exit_2_with_one_line(cli, capsys, argv):
    from pth_top.configs.paths import user_data_dir

    assert cli(["bench", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert not user_data_dir().exists(), "a refused burn changes nothing on disk"


def test_nvml_readings_from_a_scripted_driver():
    from pth_top.benches.child.kernels.nvml_readings import NvmlReadings

    full = FakeDevice({"nvmlDeviceGetUUID": "GPU-aaaa", "nvmlDeviceGetClockInfo": lambda clock: {1: 1755}[clock],
                       "nvmlDeviceGetPowerUsage": 690_500, "nvmlDeviceGetTemperature": lambda sensor: 71,
                       "nvmlDeviceGetCurrentClocksEventReasons": 0x4})
    older = FakeDevice({"nvmlDeviceGetUUID": "GPU-bbbb", "nvmlDeviceGetCurrentClocksThrottleReasons": 0x20})
    fake = FakePynvml([full, older])
    by_uuid = {"GPU-bbbb": 1}
    fake.system_values["nvmlDeviceGetHandleByUUID"] = lambda uuid: fake.nvmlDeviceGetHandleByIndex(by_uuid[uuid])
    readings = NvmlReadings(fake)
    first = readings.handle(None, 0)
    assert readings.uuid(first) == "GPU-aaaa"
    assert readings.read(first) == {"sm_clock_mhz": 1755.0, "power_w": 690.5, "temperature_c": 71.0,
                                    "clock_event_mask": 0x4}
    second = readings.handle("GPU-bbbb", 0)  # by uuid, not by the (wrong) index
    assert readings.uuid(second) == "GPU-bbbb"
    assert readings.read(second) == {"sm_clock_mhz": None, "power_w": None, "temperature_c": None,
                                     "clock_event_mask": 0x20}
    readings.close()
    assert not fake.initialised


@pytest.mark.parametrize("torch_uuid", ["12-ab", "GPU-12-ab"])
def test_a_gpu_is_found_in_nvml_by_its_torch_uuid(monkeypatch, torch, torch_uuid):
    from types import SimpleNamespace

    from pth_top.benches.child.kernels import burn
    from pth_top.benches.child.kernels.nvml_readings import NvmlReadings

    properties = SimpleNamespace(name="H100", uuid=torch_uuid)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: properties)
    monkeypatch.setattr(torch.cuda, "_get_nvml_device_index", lambda index: 0, raising=False)  # the wrong GPU
    fake = FakePynvml([FakeDevice({"nvmlDeviceGetUUID": "GPU-00"}), FakeDevice({"nvmlDeviceGetUUID": "GPU-12-ab"})])
    by_uuid = {"GPU-12-ab": 1}
    fake.system_values["nvmlDeviceGetHandleByUUID"] = lambda uuid: fake.nvmlDeviceGetHandleByIndex(by_uuid[uuid])
    _, identity = burn.device_identity("cuda:0", NvmlReadings(fake))
    assert identity == {"name": "H100", "uuid": "GPU-12-ab"}


def test_without_a_driver_every_reading_is_none():
    from pth_top.benches.child.kernels.nvml_readings import NvmlReadings

    readings = NvmlReadings(FakePynvml(init_error=real_pynvml.NVMLError_DriverNotLoaded))
    assert readings.handle("GPU-x", 0) is None
    assert set(readings.read(None).values()) == {None}


def sample(device: str, t_s: float, tflops: float, power_w: float | None = 700.0, mask: int | None = 0x4) -> dict:
    return decode_line(encode_event("sample", kernel="burn", device=device, t_s=t_s, tflops=tflops, sm_clock_mhz=1755,
                                    power_w=power_w, temperature_c=70, clock_event_mask=mask)).fields


def test_the_report_names_the_slowest_device_and_the_throttled_ones():
    log = BurnLog()
    for second in range(1, 6):
        log.add(sample("cuda:0", second, 700.0))
        log.add(sample("cuda:1", second, 630.0, mask=0x4 | (0x20 if second > 3 else 0)))
    assert log.slowest() == "cuda:1"
    assert log.throttled() == {"cuda:0": {"power cap": 5}, "cuda:1": {"power cap": 5, "thermal (SW)": 2}}
    assert log.devices["cuda:0"].tflops_per_watt == pytest.approx(1.0)
    assert log.devices["cuda:1"].summary()["hardware_throttle_seconds"] == 2
    report = "\n".join(log.report_lines({"cuda:0": "NVIDIA H100 80GB HBM3"}))
    assert "slowest: cuda:1 (10.0 % below the fastest)" in report
    assert "cuda:1 (power cap 5 s, thermal (SW) 2 s)" in report
    assert "700.0 TFLOP/s median, 700 W, 1.00 TFLOP/s per W" in report
    curve = log.to_json()["devices"]["cuda:1"]["curve"]
    assert curve[-1] == [5.0, 630.0, 1755.0, 700.0, 70.0, 0x24]


def test_a_saved_burn_log_reads_back_and_odd_rows_are_skipped():
    log = BurnLog()
    log.add(sample("cuda:0", 1.0, 700.0))
    again = BurnLog.from_json(log.to_json())
    assert again.devices["cuda:0"].samples == log.devices["cuda:0"].samples
    odd = BurnLog.from_json({"devices": {"x\x1b[2J": {"curve": [[1, "fast", None, None, None, True], "junk", [1]]},
                                         "y": "junk"}})
    assert odd.devices["x\x1b[2J"].samples == [[1.0, None, None, None, None, None]]
    assert "\x1b[" not in "\n".join(odd.report_lines()) and not BurnLog.from_json(None).devices


def test_a_cpu_only_report_says_na_and_names_no_slowest():
    log = BurnLog()
    log.add(decode_line(encode_event("sample", kernel="burn", device="cpu", t_s=1.0, tflops=0.2, sm_clock_mhz=None,
                                     power_w=None, temperature_c=None, clock_event_mask=None)).fields)
    assert log.slowest() is None and log.throttled() == {}
    assert log.report_lines()[1] == "  cpu: 200.0 GFLOP/s median (no NVML readings)"
    assert log.devices["cpu"].live_line() == "cpu    1s   200.0 GFLOP/s", "no NA columns on a CPU"


def test_each_gemm_is_counted_as_its_event_completes_not_in_batches():
    from pth_top.benches.child.kernels.burn import CompletionCounter

    class Event:
        def __init__(self) -> None:
            self.complete = False

        def query(self) -> bool:
            return self.complete

        def synchronize(self) -> None:
            self.complete = True

    counter = CompletionCounter(limit=4)
    events = [Event() for _ in range(6)]
    assert [counter.add(event) for event in events[:4]] == [0, 0, 0, 0]  # queued, none done yet
    events[0].complete = True
    assert counter.add(events[4]) == 1, "one finished GEMM counts at once, not after a batch of 16"
    assert counter.add(events[5]) == 1 and events[1].complete, "over the limit: waits for the oldest only"
    assert counter.drain() == 4 and not counter.pending


@pytest.mark.usefixtures("torch")
def test_a_cpu_burn_in_process_samples_every_second_and_stops_its_workers():
    from pth_top.benches.child.kernels import burn
    from pth_top.benches.child.kernels._common import KernelContext

    events = []
    def emit(kind: str, **fields) -> None:
        events.append(decode_line(encode_event(kind, **fields)))  # through the wire format

    ctx = KernelContext(device="host", scale=0.05, time_cap_s=1.0,
                        options={"devices": ["cpu"], "burn_s": 2.0, "emit": emit})
    before = {thread.name for thread in threading.enumerate()}
    [variant] = burn.variants(ctx)
    fields = variant.run()
    samples = [event for event in events if event.kind == "sample"]
    assert samples and {event.get("device") for event in samples} == {"cpu"}  # one a second, fewer when loaded
    assert all(event.get("power_w") is None and event.get("clock_event_mask") is None for event in samples)
    assert samples[-1].get("t_s") >= 2.0
    cpu = fields["details"]["devices"]["cpu"]
    assert fields["value"] > 0 and cpu["dtype"] == "float32"
    assert cpu["matrix_size"] == burn.CPU_MATRIX_SIZE, "full size whatever the scale (0.05 here)"
    log = BurnLog()
    for event in samples:
        log.add(event.fields)
    assert fields["value"] == pytest.approx(log.devices["cpu"].median("tflops")), "the row says what the report says"
    assert fields["variant"] == "cpu" and "median" in fields["note"] and fields["details"]["mean_tflops"] > 0
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("burn-")
                and thread.name not in before]


def pth_top_command(*args: str) -> list[str]:
    """pth-top in a fresh interpreter with Ctrl-C's default action (a background job's parent may ignore SIGINT)."""
    return [sys.executable, "-c", "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from pth_top.tui.cli import main; sys.exit(main(sys.argv[1:]))", *args]


@pytest.mark.usefixtures("torch")
def test_ctrl_c_ends_a_burn_with_a_partial_report_and_leaves_no_child_or_temp_file(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    cli = subprocess.Popen(pth_top_command("bench", "--burn", "60s", "--device", "cpu"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(temp)})
    try:
        assert cli.stderr is not None
        first_line = cli.stderr.readline()  # the first second of the burn (the log line of cpu)
        assert first_line.startswith("cpu "), first_line
        children = psutil.Process(cli.pid).children(recursive=True)
        assert children, "the burn runs in a child process"
        cli.send_signal(signal.SIGINT)
        out, _ = cli.communicate(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 130
    assert "cancelled: partial report" in out and "Burn-in:" in out and "cpu:" in out
    wait_for(lambda: not [child for child in children if child.is_running()
                          and child.status() != psutil.STATUS_ZOMBIE], "the burn's processes to be gone")
    assert not list(temp.iterdir()), "no temp file left behind"


@pytest.mark.usefixtures("torch")
async def test_the_bench_screen_shows_a_cpu_burn_live_and_escape_ends_it_with_a_partial_report(tmp_path):
    from pth_top.tui.screens.bench import BenchScreen
    from pth_top.tui.screens.bench_burn import BurnView
    from tests.bench.test_screen import BenchApp
    from tests.waiting import wait_until

    screen = BenchScreen(RunRequest(kernels=("burn",), burn_s=600.0, scale=0.05, disk_dir=str(tmp_path)))
    app = BenchApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "Found" in str(screen.query_one("#status").content), timeout_s=60)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.query(BurnView), timeout_s=60, what="the burn view")
        view = screen.query_one(BurnView)
        await wait_until(pilot, lambda: len(view.burn_log.devices["cpu"].samples) >= 1, what="a first sample")
        first = str(view.render())
        await wait_until(pilot, lambda: len(view.burn_log.devices["cpu"].samples) >= 2, what="a second sample")
        await wait_until(pilot, lambda: str(view.render()) != first, what="the line to change")
        assert str(view.render()).startswith("cpu ")
        process = screen._process
        assert process is not None
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.running, timeout_s=60, what="the burn to end")
        assert process.returncode is not None
        status = str(screen.query_one("#status").content)
        assert "Cancelled" in status and "Burn so far: 1 device(s), throttled: none." in status


@pytest.mark.usefixtures("torch")
async def test_a_burn_from_the_bench_screen_ends_with_the_clis_report_and_saves_its_curve(tmp_path):
    from pth_top.benches.client.runs import load_run
    from pth_top.tui.commands.bench_burn import saved_report
    from pth_top.tui.screens.bench import BenchScreen
    from pth_top.tui.screens.bench_burn import BurnView
    from tests.bench.test_screen import BenchApp
    from tests.waiting import wait_until

    screen = BenchScreen(RunRequest(kernels=("burn",), burn_s=2.0, disk_dir=str(tmp_path)), runs_folder=tmp_path)
    app = BenchApp(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "Found" in str(screen.query_one("#status").content), timeout_s=60)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.last_saved is not None, timeout_s=120, what="the burn to be saved")
        view = screen.query_one(BurnView)
        assert view.report[0].startswith("Burn-in: ") and view.report[1].startswith("  cpu: ")
        assert "throttled: none" in str(view.render())
    assert screen.last_saved is not None
    reopened = saved_report(load_run(screen.last_saved))
    assert reopened[1:] == view.report, "--open rebuilds the same report from the saved curve"


async def test_cancel_is_not_lost_when_a_line_arrives_at_the_same_moment():
    """Ctrl-C during a burn: a sample line that lands with the cancel must not swallow it (asyncio.wait_for on 3.11)."""
    import asyncio

    from pth_top.benches.client.bench_process import BenchProcess

    process = BenchProcess.__new__(BenchProcess)
    BenchProcess.__init__(process, None, ["run"])
    arrived: asyncio.Future = asyncio.get_running_loop().create_future()
    line = encode_event("sample", kernel="burn", device="cpu", t_s=1.0).encode()

    async def read_line() -> bytes:
        if arrived.done():
            await asyncio.Event().wait()  # no second line
        return await arrived

    process.read_line = read_line

    async def consume() -> int:
        seen = 0
        async for _ in process.events():
            seen += 1
        return seen

    task = asyncio.ensure_future(consume())
    await asyncio.sleep(0)  # the task now waits for its first line
    await asyncio.sleep(0)
    arrived.set_result(line)  # the line and the cancel land in the same turn of the loop
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=5)


@pytest.mark.gpu
def test_a_gpu_burn_reads_nvml_each_second_on_every_gpu(torch):
    from pth_top.benches.child.kernels import burn
    from pth_top.benches.child.kernels._common import KernelContext

    devices = [f"cuda:{index}" for index in range(torch.cuda.device_count())]
    events: list = []
    ctx = KernelContext(device="host", scale=0.25, time_cap_s=1.0)  # the quick suite's scale: ignored
    fields = burn.run_burn(ctx, devices, 5.0, lambda kind, **values: events.append((kind, values)))
    log = BurnLog()
    for kind, values in events:
        if kind == "sample":
            log.add(values)
    assert set(log.devices) == set(devices)
    for device in devices:
        last = log.devices[device].samples[-1]
        assert len(log.devices[device].samples) >= 4
        assert all(value is not None for value in last), f"{device}: every NVML reading on a real GPU"
        assert fields["details"]["devices"][device]["uuid"].startswith("GPU-")
        assert fields["details"]["devices"][device]["dtype"] == "bfloat16"
        assert fields["details"]["devices"][device]["matrix_size"] == burn.GPU_MATRIX_SIZE
    assert fields["value"] == pytest.approx(sum(log.devices[device].median("tflops") for device in devices))


@pytest.mark.gpu
def test_the_vram_test_fills_most_of_a_gpu_and_finds_a_flipped_bit(torch):
    from pth_top.benches.child.kernels import vram_test
    from pth_top.benches.child.kernels._common import KernelContext

    free_bytes, _ = torch.cuda.mem_get_info(0)
    [variant] = vram_test.variants(KernelContext(device="host", scale=1.0, time_cap_s=1.0,
                                                 options={"devices": ["cuda:0"]}))
    fields = variant.run()
    assert fields["value"] == 0 and fields["details"]["bytes"] >= 0.8 * free_bytes
    buffer = torch.empty(2**27, dtype=torch.int64, device="cuda:0")  # 1 GiB, 4 chunks
    found = vram_test.check_patterns(buffer, seed=7, flip_word=3 * 2**25 + 5)
    assert {name: result["mismatches"] for name, result in found.items()} == dict.fromkeys(vram_test.PATTERNS, 1)
    assert found["address"]["first_bad_word"] == 3 * 2**25 + 5


@pytest.mark.usefixtures("torch")
def test_the_vram_patterns_hold_across_chunks_and_a_flipped_bit_is_found_once_per_pattern(monkeypatch):
    import torch

    from pth_top.benches.child.kernels import vram_test

    monkeypatch.setattr(vram_test, "CHUNK_WORDS", 1000)
    buffer = torch.empty(4500, dtype=torch.int64)
    clean = vram_test.check_patterns(buffer, seed=11)
    assert {result["mismatches"] for result in clean.values()} == {0}
    assert buffer.tolist() == list(range(4500)), "address-in-address: each word holds its own index"
    found = vram_test.check_patterns(buffer, seed=11, flip_word=3333)
    assert found == dict.fromkeys(vram_test.PATTERNS, {"mismatches": 1, "first_bad_word": 3333})
