"""Benchmark (not a test): `pth-top export` scrape time and idle CPU against a minimal Gauge-loop exporter.

    .venv/bin/python tests/perf/exporter_scrape.py [--processes 1000] [--scrapes 50] [--idle-seconds 60]

Both exporters read the same sensors on the same scripted 8-GPU NVML (tests/fleet/fixtures.py) with
--processes real `sleep` children on the host, all of them reported by NVML as GPU processes (125 per
GPU: the per-process cap and the owner lookups at their worst). Prints:
  * scrape time: median and p95 of a full scrape (sensors + exposition), in process and over HTTP;
  * idle CPU: % of one core each exporter process used while scraped every --scrape-interval seconds
    (targets: scrape <= 30 ms, idle <= 0.5 %). The Gauge loop updates every --scrape-interval too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

GPU_COUNT = 8
# Longer than the exporter's sample reuse (0.5 s), so every timed HTTP scrape reads the sensors.
REUSE_GAP_S = 0.6


def fake_nvml(pids: list[int]):
    from tests.fleet.fixtures import make_exporter_gpus

    per_gpu = {index: pids[index::GPU_COUNT] for index in range(GPU_COUNT)}
    return make_exporter_gpus(GPU_COUNT, process_pids=per_gpu, wall_clock=time.time)


def run_gauge_loop(port: int, interval_s: float, pids: list[int]) -> None:
    """The anchor: direct instrumentation (Gauges) refreshed by a timer, as nvitop-exporter does."""
    from prometheus_client import CollectorRegistry, Gauge, start_http_server

    from pth_top.sensors.gpu import GpuReader
    from pth_top.sensors.gpu_process_owners import GpuProcessOwners
    from pth_top.sensors.gpu_processes import read_gpu_processes
    from pth_top.sensors.nvml import NvmlSession

    session = NvmlSession(fake_nvml(pids))
    session.start()
    reader, owners = GpuReader(session), GpuProcessOwners()
    registry = CollectorRegistry()
    labels = ["gpu", "uuid"]
    gauges = {name: Gauge(f"loop_gpu_{name}", name, labels, registry=registry)
              for name in ("utilization_ratio", "memory_used_bytes", "memory_total_bytes", "power_watts",
                           "temperature_celsius", "sm_clock_hertz")}
    process_gauge = Gauge("loop_process_gpu_memory_bytes", "per process", [*labels, "pid", "user", "comm"],
                          registry=registry)
    start_http_server(port, addr="127.0.0.1", registry=registry)
    print("serving", flush=True)
    while True:
        gpus = reader.sample()
        handles = [(slot.index, slot.handle) for slot in reader.slots or () if slot.handle is not None]
        processes = read_gpu_processes(session, handles)
        known = owners.identify(process.pid for process in processes)
        process_gauge.clear()
        for gpu in gpus:
            values = (gpu.utilization_percent / 100, gpu.memory_used_bytes, gpu.memory_total_bytes, gpu.power_draw_w,
                      gpu.temperature_c, gpu.sm_clock_mhz * 1e6)
            for gauge, value in zip(gauges.values(), values, strict=True):
                gauge.labels(str(gpu.index), gpu.uuid).set(value)
        for process in processes:
            owner = known.get(process.pid)
            process_gauge.labels(str(process.gpu_index), gpus[process.gpu_index].uuid, str(process.pid),
                                 owner.user if owner else "", owners.comm(process.pid) or "").set(
                process.gpu_memory_used_bytes)
        time.sleep(interval_s)


def run_exporter(port: int, pids: list[int]) -> None:
    sys.modules["pynvml"] = fake_nvml(pids)
    from pth_top.tui.cli import main

    sys.exit(main(["export", "--listen", f"127.0.0.1:{port}"]))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_child(mode: str, port: int, pids_file: Path, interval_s: float) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, __file__, "--child", mode, "--port", str(port),
                              "--pids-file", str(pids_file), "--scrape-interval", str(interval_s)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = child.stdout.readline() if child.stdout else ""
    if "serving" not in line:
        raise SystemExit(f"{mode} did not start: {line}")
    return child


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


def stats_ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {1000 * statistics.median(ordered):6.1f} ms  p95 {1000 * p95:6.1f} ms"


def measure_in_process(pids: list[int], scrapes: int) -> None:
    from prometheus_client import generate_latest

    from pth_top.fleet.collector import ExporterCollector, ExportOptions, make_registry
    from pth_top.sensors.nvml import NvmlSession

    collector = ExporterCollector(NvmlSession(fake_nvml(pids)), ExportOptions(reuse_s=0.0))
    registry = make_registry(collector)
    size = len(generate_latest(registry))
    times = []
    for _ in range(scrapes):
        started = time.perf_counter()
        generate_latest(registry)
        times.append(time.perf_counter() - started)
    print(f"pth-top export, in process: {stats_ms(times)}  ({size} bytes per scrape)")


def measure_over_http(url: str, label: str, scrapes: int) -> None:
    get(url)
    times = []
    for _ in range(scrapes):
        time.sleep(REUSE_GAP_S)
        started = time.perf_counter()
        get(url)
        times.append(time.perf_counter() - started)
    print(f"{label}, over HTTP:   {stats_ms(times)}")


def measure_idle(children: dict[str, tuple[subprocess.Popen, str]], interval_s: float, seconds: float) -> None:
    stop = threading.Event()

    def scrape_every_interval() -> None:
        while not stop.wait(interval_s):
            for _child, url in children.values():
                get(url)

    before = {label: cpu_seconds(child.pid) for label, (child, _url) in children.items()}
    started = time.monotonic()
    scraper = threading.Thread(target=scrape_every_interval, daemon=True)
    scraper.start()
    time.sleep(seconds)
    stop.set()
    scraper.join(60)
    elapsed = time.monotonic() - started
    for label, (child, _url) in children.items():
        used = cpu_seconds(child.pid) - before[label]
        print(f"{label}: idle CPU {100 * used / elapsed:.2f} % of a core over {elapsed:.0f} s "
              f"(scraped every {interval_s:g} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--scrapes", type=int, default=50)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--scrape-interval", type=float, default=5.0)
    parser.add_argument("--child", choices=("exporter", "gauge-loop"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pids-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        pids = [int(word) for word in args.pids_file.read_text().split()]
        if args.child == "exporter":
            run_exporter(args.port, pids)
        else:
            run_gauge_loop(args.port, args.scrape_interval, pids)
        return 0

    from tests.fleet.prometheus_tools import free_port

    sleepers = [subprocess.Popen(["sleep", "900"]) for _ in range(args.processes)]
    pids_file = Path(tempfile.mkstemp(prefix="exporter_scrape_pids.")[1])
    pids_file.write_text(" ".join(str(child.pid) for child in sleepers))
    children: dict[str, tuple[subprocess.Popen, str]] = {}
    try:
        print(f"{GPU_COUNT} fake GPUs, {args.processes} host processes, all on GPUs ({len(os.listdir('/proc'))} "
              f"entries in /proc)")
        measure_in_process([child.pid for child in sleepers], args.scrapes)
        for label, mode in (("pth-top export", "exporter"), ("Gauge loop", "gauge-loop")):
            port = free_port()
            children[label] = (start_child(mode, port, pids_file, args.scrape_interval),
                               f"http://127.0.0.1:{port}/metrics")
        for label, (_child, url) in children.items():
            measure_over_http(url, label, args.scrapes)
        measure_idle(children, args.scrape_interval, args.idle_seconds)
    finally:
        for child, _url in children.values():
            child.terminate()
            child.wait(30)
        for sleeper in sleepers:
            sleeper.kill()
        for sleeper in sleepers:
            sleeper.wait(30)
        pids_file.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
