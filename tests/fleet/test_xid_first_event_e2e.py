"""A one-off Xid after Prometheus began scraping: a real Prometheus sees it, the fleet view counts it, the rule fires.

Its series used to be born at 1, and `increase()` never sees a series' first value: a real Prometheus missed
a single Xid 48 and the fleet view showed 0 errors. The window is shortened from 15m so the test is quick.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from pth_top.fleet.collector import ExporterCollector, ExportOptions, make_registry
from pth_top.fleet.connection import make_connection
from pth_top.fleet.query import FleetReader, PrometheusClient
from pth_top.fleet.server import start_server
from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.xid_events import XidEventWatcher
from tests.fleet.fixtures import XidQueue, make_exporter_gpus
from tests.fleet.prometheus_tools import DEADLINE_S, PrometheusServer, binary, http_get, wait_for

pytestmark = pytest.mark.slow
WINDOW = "30s"
WINDOW_S = 30
# The alert rule the README gives (with 15m there): a series born inside the window counts whole.
XID = "pth_top_gpu_xid_errors_total"
ALERT_RULE = f"""groups:
  - name: pth-top
    rules:
      - alert: GpuXidError
        expr: >-
          ((({XID} unless {XID} offset {WINDOW}) and on (instance, job) up offset {WINDOW})
          or increase({XID}[{WINDOW}])) > 0
        labels: {{severity: critical}}
        annotations: {{summary: "Xid {{{{ $labels.xid }}}} on GPU {{{{ $labels.gpu }}}} of {{{{ $labels.instance }}}}"}}
"""
PRECREATED_GPU, PRECREATED_XID = 1, 48  # a code served from 0
NEW_GPU, NEW_XID = 0, 109  # a code that appears at its first event
QUIET_GPU = 3  # no Xid, no remap, no uncorrected ECC in the fixture


@pytest.fixture
def exporter():
    queue = XidQueue()
    session = NvmlSession(make_exporter_gpus(4, xid_queue=queue))
    collector = ExporterCollector(session, ExportOptions(reuse_s=0))
    watcher = XidEventWatcher(session)
    assert watcher.register(collector.gpu_handles())
    collector.xid_watcher = watcher
    thread = threading.Thread(target=watcher.run, kwargs={"timeout_ms": 50}, daemon=True)
    thread.start()
    server, port = start_server("127.0.0.1", 0, make_registry(collector), None)
    yield queue, f"127.0.0.1:{port}"
    server.shutdown()
    server.server_close()
    watcher.stop()
    thread.join(10)


def firing(prometheus: PrometheusServer) -> set[tuple[str, str]]:
    alerts = json.loads(http_get(f"{prometheus.base}/api/v1/alerts"))["data"]["alerts"]
    return {(alert["labels"]["gpu"], alert["labels"]["xid"]) for alert in alerts
            if alert["state"] == "firing" and alert["labels"]["alertname"] == "GpuXidError"}


async def test_a_single_xid_after_scraping_began_counts_and_fires(tmp_path, exporter, monkeypatch):
    binary("prometheus")
    monkeypatch.setattr("pth_top.fleet.aggregates.ERROR_WINDOW", WINDOW)
    queue, target = exporter
    rules = tmp_path / "rules.yml"
    rules.write_text(ALERT_RULE)
    prometheus = PrometheusServer(tmp_path, [target], rule_files=(rules,))
    reader = FleetReader(PrometheusClient(make_connection(prometheus.base)))
    try:
        wait_for(lambda: prometheus.value(f'up{{instance="{target}"}} offset {WINDOW}') == 1.0,
                 f"{WINDOW} of scrapes before the Xid", DEADLINE_S + WINDOW_S)
        queue.push(PRECREATED_GPU, PRECREATED_XID)
        queue.push(NEW_GPU, NEW_XID)
        wait_for(lambda: prometheus.value(f'{XID}{{gpu="{NEW_GPU}",xid="{NEW_XID}"}}') == 1.0, "both Xids stored")

        give_up = time.monotonic() + DEADLINE_S
        while True:
            snapshot = await reader.refresh()
            host = snapshot.host(target)
            errors = {gpu.gpu: gpu.errors for gpu in host.gpus} if host is not None else {}
            if errors.get(str(PRECREATED_GPU), 0) > 0 and errors.get(str(NEW_GPU), 0) > 0:
                break
            assert time.monotonic() < give_up, f"the fleet view never counted the Xids: {errors} {snapshot.error}"
            await asyncio.sleep(0.5)
        assert errors[str(QUIET_GPU)] == 0
        assert errors[str(NEW_GPU)] == pytest.approx(1.0), "a new code's first event counts once, not extrapolated"
        one_off = f'increase({XID}{{gpu="{PRECREATED_GPU}",xid="{PRECREATED_XID}"}}[{WINDOW}])'
        assert (prometheus.value(one_off) or 0) > 0, "a code served from 0 rises, so increase() sees its first event"
        expected = {(str(PRECREATED_GPU), str(PRECREATED_XID)), (str(NEW_GPU), str(NEW_XID))}
        wait_for(lambda: expected <= firing(prometheus), "the alert to fire for both Xids")
        assert all(gpu != str(QUIET_GPU) for gpu, _ in firing(prometheus))
    finally:
        await reader.client.close()
        prometheus.stop()
