"""Simulated fleet hosts (tests/fleet/fleet_host_main.py) behind one real Prometheus, for the fleet view tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.fleet.prometheus_tools import ExporterProcess, PrometheusServer, wait_for

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
