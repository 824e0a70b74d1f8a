"""Simulated fleet hosts (tests/fleet/fleet_host_main.py) behind one real Prometheus, for the fleet view tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

from tests.fleet.prometheus_tools import ExporterProcess, PrometheusServer, binary, end_process, free_port, wait_for

FLEET_HOST_MAIN = Path(__file__).with_name("fleet_host_main.py")


class FleetHost(ExporterProcess):
    """Host number `host_number` of the simulated fleet, serving on 127.0.0.1:`port` (0: any free port)."""

    def __init__(self, host_number: int, port: int = 0) -> None:
        self.host_number = host_number
        self.arguments = (f"--fake-host={host_number}",)
        self.process = subprocess.Popen(
            [sys.executable, str(FLEET_HOST_MAIN), "--listen", f"127.0.0.1:{port}", *self.arguments],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        line = self._first_line()
        if "serving" not in line:
            self.stop()
            raise AssertionError(f"fleet host {host_number} did not start: {line}")
        self.port = int(line.rsplit(":", 1)[1].split("/")[0])
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self.instance = f"127.0.0.1:{self.port}"


def start_fleet(workdir: Path, host_count: int) -> tuple[list[FleetHost], PrometheusServer]:
    """`host_count` hosts and a Prometheus scraping them every second, waited on until every host is up."""
    hosts: list[FleetHost] = []
    try:
        for number in range(host_count):
            hosts.append(FleetHost(number))
        prometheus = PrometheusServer(workdir, [host.instance for host in hosts])
    except BaseException:
        for host in hosts:
            host.stop()
        raise
    try:
        wait_for(lambda: prometheus.value('count(up{job="pth-top"} == 1)') == float(host_count), "every host up")
        wait_for(lambda: len(prometheus.query('pth_top_gpu_utilization_ratio{job="pth-top"}')) == 8 * host_count,
                 "every GPU stored")
    except BaseException:
        stop_fleet(hosts, prometheus)
        raise
    return hosts, prometheus


def stop_fleet(hosts: list[FleetHost], prometheus: PrometheusServer | None) -> None:
    for host in hosts:
        host.stop()
    if prometheus is not None:
        prometheus.stop()


class SecuredPrometheus:
    """`prometheus` behind its own --web.config.file (basic auth and/or TLS), scraping `targets`."""

    def __init__(self, workdir: Path, targets: list[str], web_config: str, ready_check: Callable[[str], bool]) -> None:
        self.port = free_port()
        (workdir / "web.yml").write_text(web_config)
        (workdir / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, scrape_timeout: 900ms}\n"
            f"scrape_configs:\n  - job_name: pth-top\n    static_configs: [{{targets: {json.dumps(targets)}}}]\n")
        self.log = open(workdir / "prometheus.log", "w")
        self.process = subprocess.Popen(
            [binary("prometheus"), f"--config.file={workdir / 'prometheus.yml'}",
             f"--storage.tsdb.path={workdir / 'data'}", f"--web.listen-address=127.0.0.1:{self.port}",
             f"--web.config.file={workdir / 'web.yml'}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        self.base = f"{'https' if 'tls_server_config' in web_config else 'http'}://127.0.0.1:{self.port}"

        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"prometheus exited: {Path(self.log.name).read_text()[-2000:]}")
            return ready_check(self.base)

        wait_for(ready, "the secured Prometheus to answer")

    def stop(self) -> None:
        end_process(self.process, self.log)
