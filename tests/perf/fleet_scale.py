"""Fleet view refresh cost as the fleet grows: 125, 500, 1,000 and 2,000 hosts x 8 GPUs, with and without
pth-top's recording rules (deploy/prometheus/pth-top-recording.yml), against a real Prometheus, in one run.

One helper process serves every simulated host from one loopback port (`/metrics?host=N`: the /metrics text
of a real `pth-top export` on the scripted 8-GPU NVML, about 400 series, utilization varied per host);
Prometheus scrapes each host as its own target (`instance` = host-NNNN:9824, the address rewritten to the
helper by relabeling) every 15 s, with the rules loaded. Per fleet size, a fresh Prometheus: once every host
is stored and the rules have recorded, a reader without the rules (raw aggregates) and one with them
refresh in turn on the same data. Printed: the first refresh (cold caches), then the median and worst of
the next ones, CPU of this process, time per host, and the slowest queries one at a time: ms until the answer
is in (the server's part: evaluating, encoding, sending), then ms with the client's decoding.
The data window is a minute or two, not the 15 minutes the error window reads on a long-running server.
--profile runs one more refresh a mode under cProfile and prints its costliest functions (own time);
--rules-only measures only the reader of the recording rules (no raw refreshes loading Prometheus between).

Usage: .venv/bin/python tests/perf/fleet_scale.py [--cycles N] [--hosts 125,500,1000,2000] [--profile] [--rules-only]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import http.server
import io
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pth_top.fleet.aggregates import AGGREGATES  # noqa: E402
from tests.deploy.deploy_files import RECORDING_RULES  # noqa: E402
from tests.fleet.fleet_tools import FleetHost  # noqa: E402
from tests.fleet.prometheus_tools import PrometheusServer, binary, free_port, http_get, wait_for  # noqa: E402

HOST_COUNTS = (125, 500, 1000, 2000)
PROFILE_LINES = 18
T = TypeVar("T")
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


async def profiled_refresh(reader: object, clock: list[float]) -> str:
    """The costliest functions (own time) of one refresh of `reader`, as pstats prints them.

    Decoding runs inline for it: cProfile sees only its own thread, not asyncio.to_thread's workers.
    """
    async def inline(function: Callable[..., T], /, *args: object) -> T:
        return function(*args)

    clock[0] += SCRAPE_INTERVAL_S
    to_thread, asyncio.to_thread = asyncio.to_thread, inline  # type: ignore[assignment]
    profiler = cProfile.Profile()
    try:
        profiler.enable()
        await reader.refresh()  # type: ignore[attr-defined]
    finally:
        profiler.disable()
        asyncio.to_thread = to_thread
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(PROFILE_LINES)
    return out.getvalue()


@dataclass
class ModeResult:
    """One mode's refreshes (recorded or raw) at one fleet size."""

    first_s: float = 0.0
    hosts: int = 0
    gpus: int = 0
    errors: float = 0.0
    walls_s: list[float] = field(default_factory=list)
    cpus_s: list[float] = field(default_factory=list)
    per_query_s: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (answered, decoded)
    profile: str = ""

    def line(self, recorded: bool) -> str:
        median_s = statistics.median(self.walls_s)
        slowest = sorted(self.per_query_s.items(), key=lambda item: -item[1][1])[:3]
        cpu_s = statistics.median(self.cpus_s)
        return (f"{self.hosts:>5} {self.gpus:>5} {'yes' if recorded else 'no':>5} {1000 * self.first_s:>9.0f} "
                f"{1000 * median_s:>10.0f} {1000 * max(self.walls_s):>7.0f} {1000 * cpu_s:>7.0f} "
                f"{1000 * median_s / self.hosts:>7.2f}  "
                + ", ".join(f"{name} {1000 * answered:.0f}/{1000 * decoded:.0f}"
                            for name, (answered, decoded) in slowest))


async def measure(base: str, cycles: int, profile: bool = False,
                  modes: tuple[bool, ...] = (False, True)) -> dict[bool, ModeResult]:
    """Per mode (recorded or raw): first refresh, then `cycles` more in turn with the other mode."""
    from pth_top.fleet.connection import make_connection
    from pth_top.fleet.query import FleetReader, PrometheusClient

    clock = [time.time()]
    readers = {recorded: FleetReader(PrometheusClient(make_connection(base, timeout_s=120.0)), job=JOB,
                                     scrape_interval_s=SCRAPE_INTERVAL_S, clock=lambda: clock[0], recorded=recorded)
               for recorded in modes}
    results = {recorded: ModeResult() for recorded in readers}
    for cycle in range(cycles + 1):
        clock[0] += SCRAPE_INTERVAL_S
        for recorded, reader in readers.items():
            wall, cpu = time.perf_counter(), time.process_time()
            snapshot = await reader.refresh()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            assert snapshot.error is None, snapshot.error
            result = results[recorded]
            if cycle == 0:
                result.first_s, result.hosts, result.gpus = wall, len(snapshot.hosts), snapshot.gpu_count
                result.errors = sum(host.errors for host in snapshot.hosts)
            else:
                result.walls_s.append(wall)
                result.cpus_s.append(cpu)
    for recorded, reader in readers.items():
        if profile:
            results[recorded].profile = await profiled_refresh(reader, clock)
        for name, (promql, label) in reader.queries().items():
            start = time.perf_counter()
            await reader.client.api("/api/v1/query", {"query": promql})  # the answer's data left encoded
            answered = time.perf_counter() - start
            start = time.perf_counter()
            await reader.client.readings(promql, label)
            results[recorded].per_query_s[name] = (answered, time.perf_counter() - start)
        await reader.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--hosts", default=",".join(map(str, HOST_COUNTS)))
    parser.add_argument("--profile", action="store_true", help="profile one more refresh a mode")
    parser.add_argument("--rules-only", action="store_true", help="only the reader that uses the recording rules")
    parser.add_argument("--serve-hosts", nargs=3, metavar=("PORT_FILE", "TEMPLATE", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_hosts:
        serve_hosts(Path(args.serve_hosts[0]), Path(args.serve_hosts[1]), int(args.serve_hosts[2]))
        return 0
    host_counts = [int(count) for count in args.hosts.split(",")]
    modes = (True,) if args.rules_only else (False, True)
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
          f"{'ms/host':>7}  slowest queries (one at a time: answered/decoded ms)")
    try:
        wait_for(lambda: port_file.exists() and port_file.read_text(), "the simulated hosts")
        helper_port = int(port_file.read_text())
        for count in host_counts:
            (workdir / str(count)).mkdir()
            prometheus = ScaledPrometheus(workdir / str(count), helper_port, count)
            try:
                wait_counted(prometheus, "pth_top_gpu_utilization_ratio", 8 * count)
                for aggregate in AGGREGATES:
                    wait_counted(prometheus, aggregate.record, 8 * count)
                results = asyncio.run(measure(prometheus.base, args.cycles, args.profile, modes))
            finally:
                prometheus.stop()
            for recorded in modes:
                print(results[recorded].line(recorded), flush=True)
            for recorded in modes:
                if args.profile:
                    print(f"profile, {count} hosts, rules {'yes' if recorded else 'no'}:\n{results[recorded].profile}")
            if len(modes) == 2:
                assert results[True].errors == results[False].errors, "the same errors either way"
    finally:
        helper.terminate()
        helper.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
