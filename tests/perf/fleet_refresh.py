"""Fleet view refresh cost against a real Prometheus holding 125 hosts x 8 GPUs (about 400 series a host).

One helper process serves 125 simulated hosts on 125 loopback ports (the /metrics text of a real
`pth-top export` on the scripted 8-GPU NVML, with per-host utilization); Prometheus scrapes them every 5 s
in three jobs of 8, 32 and 125 hosts. For each job: wall time and CPU time of one refresh (all queries,
JSON parsing, the snapshot) and of the screen's update, and CPU % of one core at a 5 s refresh.
Targets (issue 16): <= 300 ms a cycle, <= 5 % CPU at 5 s, cost growing sub-linearly with hosts.

Usage: .venv/bin/python tests/perf/fleet_refresh.py [--cycles N]
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fleet.fleet_tools import FleetHost  # noqa: E402
from tests.fleet.prometheus_tools import PrometheusServer, binary, free_port, http_get, wait_for  # noqa: E402

HOST_COUNTS = (8, 32, 125)
SCRAPE_INTERVAL_S = 5.0
REFRESH_INTERVAL_S = 5.0


def serve_hosts(ports_file: Path, template_file: Path, host_count: int) -> None:
    """Helper-process mode: serve `host_count` hosts' /metrics; writes the ports, then serves until killed."""
    template = template_file.read_text()
    pages = []
    for host in range(host_count):
        text = re.sub(r'(pth_top_gpu_utilization_ratio\{gpu="(\d+)"[^}]*\}) \S+',
                      lambda match, host=host: f"{match.group(1)} {(11 * host + 9 * int(match.group(2))) % 101 / 100}",
                      template)
        pages.append(text.encode())
    ports = []
    for page in pages:
        handler = type("Handler", (http.server.BaseHTTPRequestHandler,), {
            "do_GET": lambda self, page=page: (self.send_response(200),
                                               self.send_header("Content-Type", "text/plain; version=0.0.4"),
                                               self.send_header("Content-Length", str(len(page))),
                                               self.end_headers(), self.wfile.write(page)),
            "log_message": lambda self, *args: None,
        })
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        ports.append(server.server_address[1])
        threading.Thread(target=server.serve_forever, daemon=True).start()
    ports_file.write_text("\n".join(map(str, ports)) + "\n")
    threading.Event().wait()


class StartedPrometheus(PrometheusServer):
    """PrometheusServer's queries and stop, over the three-job config already written in `workdir`."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.log = open(workdir / "prometheus.log", "w")
        self.process = subprocess.Popen(
            [binary("prometheus"), f"--config.file={workdir / 'prometheus.yml'}",
             f"--storage.tsdb.path={workdir / 'data'}", f"--web.listen-address=127.0.0.1:{self.port}",
             "--log.level=warn"], stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        wait_for(self._ready, "Prometheus to answer /-/ready")


def prometheus_config(ports: list[int]) -> str:
    jobs = "".join(
        f"  - job_name: fleet-{count}\n"
        f"    static_configs: [{{targets: {[f'127.0.0.1:{port}' for port in ports[:count]]}}}]\n"
        for count in HOST_COUNTS
    )
    return (f"global: {{scrape_interval: {SCRAPE_INTERVAL_S:g}s, scrape_timeout: 4s, evaluation_interval: 5s}}\n"
            f"scrape_configs:\n{jobs}").replace("'", '"')


async def measure(base: str, job: str, cycles: int) -> dict[str, float]:
    from pth_top.fleet.connection import make_connection
    from pth_top.fleet.query import FleetReader, PrometheusClient

    clock = [time.time()]
    reader = FleetReader(PrometheusClient(make_connection(base)), job=job, clock=lambda: clock[0])
    walls, cpus, queries = [], [], []
    snapshot = await reader.refresh()  # warm: connection, targets
    for _ in range(cycles):
        clock[0] += SCRAPE_INTERVAL_S
        wall, cpu = time.perf_counter(), time.process_time()
        snapshot = await reader.refresh()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        queries.append(snapshot.query_count)
        assert snapshot.error is None, snapshot.error
    per_query_ms = {}
    for name, (promql, _) in reader.queries().items():
        times = []
        for _ in range(3):
            start = time.perf_counter()
            await reader.client.vector(promql)
            times.append(1000 * (time.perf_counter() - start))
        per_query_ms[name] = statistics.median(times)
    await reader.client.close()
    show_wall, show_cpu = await measure_screen(snapshot)
    return {"hosts": len(snapshot.hosts), "gpus": snapshot.gpu_count, "wall_ms": 1000 * statistics.median(walls),
            "wall_max_ms": 1000 * max(walls), "cpu_ms": 1000 * statistics.median(cpus),
            "queries": statistics.median(queries), "show_ms": show_wall, "show_cpu_ms": show_cpu,
            "per_query_ms": per_query_ms}


async def measure_screen(snapshot) -> tuple[float, float]:
    """Median wall and CPU ms of FleetScreen.show(snapshot) plus the repaint, in a headless app."""
    from textual.app import App

    from pth_top.tui.screens.fleet import FleetScreen

    class ScreenOnly(App):
        def on_mount(self) -> None:
            self.push_screen(FleetScreen("perf"))

    walls, cpus = [], []
    app = ScreenOnly()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        for _ in range(5):
            wall, cpu = time.perf_counter(), time.process_time()
            app.screen.show(snapshot)
            await pilot.pause()
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    return 1000 * statistics.median(walls), 1000 * statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--serve-hosts", nargs=3, metavar=("PORTS_FILE", "TEMPLATE", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_hosts:
        serve_hosts(Path(args.serve_hosts[0]), Path(args.serve_hosts[1]), int(args.serve_hosts[2]))
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="fleet-perf-"))
    one = FleetHost(0)
    try:
        template = http_get(one.url).decode()
    finally:
        one.stop()
    (workdir / "template.txt").write_text(template)
    series_per_host = sum(1 for line in template.splitlines() if line and not line.startswith("#"))
    ports_file = workdir / "ports"
    helper = subprocess.Popen([sys.executable, __file__, "--serve-hosts", str(ports_file),
                               str(workdir / "template.txt"), str(max(HOST_COUNTS))])
    prometheus = None
    try:
        wait_for(lambda: ports_file.exists() and len(ports_file.read_text().split()) == max(HOST_COUNTS),
                 "the simulated hosts")
        ports = [int(port) for port in ports_file.read_text().split()]
        (workdir / "prometheus.yml").write_text(prometheus_config(ports))
        prometheus = StartedPrometheus(workdir)
        total = sum(HOST_COUNTS)
        wait_for(lambda: prometheus.value("count(up == 1)") == float(total), f"{total} targets up", deadline_s=120)
        wait_for(lambda: prometheus.value('count(pth_top_gpu_utilization_ratio{job="fleet-125"})') == 1000.0,
                 "1000 GPUs stored", deadline_s=120)
        print(f"{series_per_host} series a host; scrape every {SCRAPE_INTERVAL_S:g} s; {args.cycles} cycles a job")
        print(f"{'hosts':>5} {'GPUs':>5} {'queries':>7} {'refresh ms':>10} {'max ms':>7} {'CPU ms':>7} "
              f"{'CPU % @5s':>9} {'screen ms':>9} {'screen CPU ms':>13}")
        for count in HOST_COUNTS:
            result = asyncio.run(measure(prometheus.base, f"fleet-{count}", args.cycles))
            cpu_percent = 100 * (result["cpu_ms"] + result["show_cpu_ms"]) / 1000 / REFRESH_INTERVAL_S
            print(f"{result['hosts']:>5.0f} {result['gpus']:>5.0f} {result['queries']:>7.0f} "
                  f"{result['wall_ms']:>10.1f} "
                  f"{result['wall_max_ms']:>7.1f} {result['cpu_ms']:>7.1f} {cpu_percent:>9.2f} "
                  f"{result['show_ms']:>9.1f} {result['show_cpu_ms']:>13.1f}")
            slowest = sorted(result["per_query_ms"].items(), key=lambda item: -item[1])[:4]
            print("      one at a time, slowest: " + ", ".join(f"{name} {ms:.0f} ms" for name, ms in slowest))
    finally:
        if prometheus is not None:
            prometheus.stop()
        helper.terminate()
        helper.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
