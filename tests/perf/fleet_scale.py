"""Fleet view refresh cost as the fleet grows: 125, 500, 1,000 and 2,000 hosts x 8 GPUs, with and without
pth-top's recording rules (deploy/prometheus/pth-top-recording.yml), against a real Prometheus, in one run.

One helper process serves every simulated host from one loopback port (`/metrics?host=N`: the /metrics text
of a real `pth-top export` on the scripted 8-GPU NVML, about 400 series, utilization varied per host);
Prometheus scrapes each host as its own target (`instance` = host-NNNN:9824, the address rewritten to the
helper by relabeling) every 15 s, with the rules loaded. Per fleet size, a fresh Prometheus: once every host
is stored and the rules have recorded, a reader without the rules (raw aggregates) and one with them
refresh in turn on the same data. Printed: the first refresh (cold caches), then the median and worst of
the next ones, CPU of this process, time per host, and the slowest queries one at a time.
The data window is a minute or two, not the 15 minutes the error window reads on a long-running server.

Usage: .venv/bin/python tests/perf/fleet_scale.py [--cycles N] [--hosts 125,500,1000,2000]
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
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.deploy.deploy_files import RECORDING_RULES  # noqa: E402
from tests.fleet.fleet_tools import FleetHost  # noqa: E402
from tests.fleet.prometheus_tools import PrometheusServer, binary, free_port, http_get, wait_for  # noqa: E402

HOST_COUNTS = (125, 500, 1000, 2000)
SCRAPE_INTERVAL_S = 15.0
JOB = "fleet"


def host_name(number: int) -> str:
    return f"host-{number:04d}:9824"


def serve_hosts(port_file: Path, template_file: Path, host_count: int) -> None:
    """Helper-process mode: every host's page from one port (`?host=N`); writes the port, serves until killed."""
    template = template_file.read_text()
    pattern = re.compile(r'(pth_top_gpu_utilization_ratio\{gpu="(\d+)"[^}]*\}) \S+')

    def page(host: int) -> bytes:
        return pattern.sub(lambda match: f"{match.group(1)} {(11 * host + 9 * int(match.group(2))) % 101 / 100}",
                           template).encode()

    pages = [page(host) for host in range(host_count)]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            page = pages[int(query["host"][0].split("-")[1].split(":")[0])]
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_file.write_text(str(server.server_address[1]))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Event().wait()


class ScaledPrometheus(PrometheusServer):
    """Prometheus over `host_count` relabeled targets of the helper, with the recording rules."""

    def __init__(self, workdir: Path, helper_port: int, host_count: int) -> None:
        targets = ", ".join(f'"{host_name(number)}"' for number in range(host_count))
        (workdir / "prometheus.yml").write_text(
            f"global: {{scrape_interval: {SCRAPE_INTERVAL_S:g}s, scrape_timeout: 10s, evaluation_interval: 15s}}\n"
            f'rule_files: ["{RECORDING_RULES}"]\n'
            "scrape_configs:\n"
            f"  - job_name: {JOB}\n"
            f"    static_configs: [{{targets: [{targets}]}}]\n"
            "    relabel_configs:\n"
            "      - {source_labels: [__address__], target_label: instance}\n"
            "      - {source_labels: [__address__], target_label: __param_host}\n"
            f"      - {{target_label: __address__, replacement: '127.0.0.1:{helper_port}'}}\n")
        self.port = free_port()
        self.log = open(workdir / "prometheus.log", "w")
        self.process = subprocess.Popen(
            [binary("prometheus"), f"--config.file={workdir / 'prometheus.yml'}",
             f"--storage.tsdb.path={workdir / 'data'}", f"--web.listen-address=127.0.0.1:{self.port}",
             "--log.level=warn"], stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        wait_for(self._ready, "Prometheus to answer /-/ready")


def wait_counted(prometheus: PrometheusServer, name: str, count: int) -> None:
    """Until Prometheus holds `count` series `name` of the job; a busy Prometheus's slow answer is waited out."""
    def counted() -> bool:
        try:
            return prometheus.value(f'count({name}{{job="{JOB}"}})') == count
        except OSError:
            return False

    wait_for(counted, f"{count} series {name}", deadline_s=900)


async def measure(base: str, cycles: int) -> dict[bool, dict[str, object]]:
    """Per mode (recorded or raw): first refresh, then `cycles` more in turn with the other mode."""
    from pth_top.fleet.connection import make_connection
    from pth_top.fleet.query import FleetReader, PrometheusClient

    clock = [time.time()]
    readers = {recorded: FleetReader(PrometheusClient(make_connection(base, timeout_s=120.0)), job=JOB,
                                     scrape_interval_s=SCRAPE_INTERVAL_S, clock=lambda: clock[0], recorded=recorded)
               for recorded in (False, True)}
    results: dict[bool, dict[str, object]] = {recorded: {"walls": [], "cpus": []} for recorded in readers}
    for cycle in range(cycles + 1):
        clock[0] += SCRAPE_INTERVAL_S
        for recorded, reader in readers.items():
            wall, cpu = time.perf_counter(), time.process_time()
            snapshot = await reader.refresh()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            assert snapshot.error is None, snapshot.error
            if cycle == 0:
                results[recorded].update(first=wall, hosts=len(snapshot.hosts), gpus=snapshot.gpu_count,
                                         errors=sum(host.errors for host in snapshot.hosts))
            else:
                results[recorded]["walls"].append(wall)  # type: ignore[union-attr]
                results[recorded]["cpus"].append(cpu)  # type: ignore[union-attr]
    for recorded, reader in readers.items():
        per_query = {}
        for name, (promql, _) in reader.queries().items():
            start = time.perf_counter()
            await reader.client.vector(promql)
            per_query[name] = time.perf_counter() - start
        results[recorded]["per_query"] = per_query
        await reader.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--hosts", default=",".join(map(str, HOST_COUNTS)))
    parser.add_argument("--serve-hosts", nargs=3, metavar=("PORT_FILE", "TEMPLATE", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_hosts:
        serve_hosts(Path(args.serve_hosts[0]), Path(args.serve_hosts[1]), int(args.serve_hosts[2]))
        return 0
    host_counts = [int(count) for count in args.hosts.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="fleet-scale-"))
    one = FleetHost(0)
    try:
        template = http_get(one.url).decode()
    finally:
        one.stop()
    (workdir / "template.txt").write_text(template)
    series_per_host = sum(1 for line in template.splitlines() if line and not line.startswith("#"))
    port_file = workdir / "port"
    helper = subprocess.Popen([sys.executable, __file__, "--serve-hosts", str(port_file),
                               str(workdir / "template.txt"), str(max(host_counts))])
    print(f"{series_per_host} series a host; scrape every {SCRAPE_INTERVAL_S:g} s; {args.cycles} refreshes a mode")
    print(f"{'hosts':>5} {'GPUs':>5} {'rules':>5} {'first ms':>9} {'refresh ms':>10} {'max ms':>7} {'CPU ms':>7} "
          f"{'ms/host':>7}  slowest queries (one at a time)")
    try:
        wait_for(lambda: port_file.exists() and port_file.read_text(), "the simulated hosts")
        helper_port = int(port_file.read_text())
        for count in host_counts:
            (workdir / str(count)).mkdir()
            prometheus = ScaledPrometheus(workdir / str(count), helper_port, count)
            try:
                wait_counted(prometheus, "pth_top_gpu_utilization_ratio", 8 * count)
                wait_counted(prometheus, "instance_gpu:pth_top_gpu_hw_throttled:max", 8 * count)
                results = asyncio.run(measure(prometheus.base, args.cycles))
            finally:
                prometheus.stop()
            for recorded in (False, True):
                result = results[recorded]
                walls, cpus = result["walls"], result["cpus"]
                median = statistics.median(walls)  # type: ignore[arg-type]
                slowest = sorted(result["per_query"].items(), key=lambda item: -item[1])[:3]  # type: ignore[union-attr]
                print(f"{result['hosts']:>5} {result['gpus']:>5} {'yes' if recorded else 'no':>5} "
                      f"{1000 * result['first']:>9.0f} {1000 * median:>10.0f} {1000 * max(walls):>7.0f} "  # type: ignore[arg-type, operator]
                      f"{1000 * statistics.median(cpus):>7.0f} {1000 * median / count:>7.2f}  "  # type: ignore[arg-type]
                      + ", ".join(f"{name} {1000 * seconds:.0f}" for name, seconds in slowest), flush=True)
            assert results[True]["errors"] == results[False]["errors"], "the same errors either way"
    finally:
        helper.terminate()
        helper.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
