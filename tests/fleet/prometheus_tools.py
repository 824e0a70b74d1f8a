"""Real Prometheus and exporter processes for the tests: loopback only, temp dirs, every wait bounded."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable

import pytest

from tests import waiting

FAKE_EXPORTER = Path(__file__).with_name("fake_exporter_main.py")
# Generous: a loaded 2-core machine; a wait returns as soon as its condition holds.
DEADLINE_S = 60.0
POLL_S = 0.1
INSTALL_HINT = "`make install-test` installs Debian's prometheus package when run as root"


def binary(name: str) -> str:
    """Path of `prometheus` or `promtool`; skips the test (saying why) when it cannot be had."""
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
    if path is None:
        pytest.skip(f"{name} is not installed; {INSTALL_HINT}")
    return path


def wait_for(condition: Callable[[], Any], what: str, deadline_s: float = DEADLINE_S) -> Any:
    """The suite's wait, with the longer deadline a starting Prometheus needs."""
    return waiting.wait_for(condition, what, deadline_s)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_get(url: str, timeout_s: float = 10.0, **kwargs: Any) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s, **kwargs) as response:
        return response.read()



def end_process(process: subprocess.Popen, log) -> None:
    """SIGTERM, SIGKILL after 30 s if it lingers, then close its log: how every test server here stops."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
    log.close()

class ExporterProcess:
    """The fake-NVML exporter in a child process; `port` is read from its 'serving ...' line."""

    def __init__(self, *arguments: str, port: int = 0) -> None:
        self.arguments = arguments
        self.process = subprocess.Popen(
            [sys.executable, str(FAKE_EXPORTER), "--listen", f"127.0.0.1:{port}", *arguments],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        line = self._first_line()
        if "serving" not in line:
            self.stop()
            raise AssertionError(f"exporter did not start: {line}")
        self.port = int(line.rsplit(":", 1)[1].split("/")[0])
        self.url = f"http://127.0.0.1:{self.port}/metrics"

    def _first_line(self) -> str:
        """The exporter's first stderr line, waiting at most DEADLINE_S (a hung start fails, never blocks)."""
        stderr = self.process.stderr
        assert stderr is not None
        ready = wait_for(
            lambda: self.process.poll() is not None or select.select([stderr], [], [], POLL_S)[0],
            "the exporter's 'serving' line",
        )
        return stderr.readline() if ready else ""

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=30)


class PrometheusServer:
    """`prometheus` on 127.0.0.1 with a temp data dir, scraping `targets` every second (and evaluating `rule_files`)."""

    def __init__(self, workdir: Path, targets: list[str], rule_files: tuple[Path, ...] = ()) -> None:
        self.port = free_port()
        config = workdir / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}\n"
            + (f"rule_files: {json.dumps([str(path) for path in rule_files])}\n" if rule_files else "")
            + "scrape_configs:\n"
            "  - job_name: pth-top\n"
            f"    static_configs: [{{targets: {json.dumps(targets)}}}]\n"
        )
        self.log = open(workdir / "prometheus.log", "w")
        self.process = subprocess.Popen(
            [binary("prometheus"), f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        wait_for(self._ready, "Prometheus to answer /-/ready")

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"prometheus exited: {Path(self.log.name).read_text()[-2000:]}")
        try:
            return http_get(f"{self.base}/-/ready", timeout_s=2).startswith(b"Prometheus")
        except OSError:
            return False

    def _api_query(self, promql: str, at_s: float | None) -> dict[str, Any]:
        parameters = {"query": promql, **({"time": f"{at_s:.3f}"} if at_s is not None else {})}
        body = json.loads(http_get(f"{self.base}/api/v1/query?" + urllib.parse.urlencode(parameters)))
        assert body["status"] == "success", body
        return body["data"]

    def query(self, promql: str, at_s: float | None = None) -> list[dict[str, Any]]:
        """The instant vector of `promql` (at Unix time `at_s`, default now) as [{'metric': {...}, 'value': float}]."""
        return [{"metric": item["metric"], "value": float(item["value"][1])}
                for item in self._api_query(promql, at_s)["result"]]

    def value(self, promql: str, at_s: float | None = None) -> float | None:
        result = self.query(promql, at_s)
        return result[0]["value"] if len(result) == 1 else None

    def samples(self, selector: str, range_s: int) -> list[tuple[float, float]]:
        """The raw (time, value) samples of the one series `selector` picks over the last `range_s` seconds."""
        result = self._api_query(f"{selector}[{range_s}s]", None)["result"]
        assert len(result) == 1, result
        return [(float(timestamp), float(value)) for timestamp, value in result[0]["values"]]

    def stop(self) -> None:
        end_process(self.process, self.log)
