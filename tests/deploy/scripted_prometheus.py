"""A real Prometheus scraping the scripted dashboard exporter (dashboard_exporter_main.py), for tests/deploy."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

import pytest

from tests.fleet import prometheus_tools
from tests.fleet.prometheus_tools import ExporterProcess, PrometheusServer, binary

DASHBOARD_EXPORTER = Path(__file__).with_name("dashboard_exporter_main.py")


@contextlib.contextmanager
def scripted_prometheus(workdir: Path, rule_files: tuple[Path, ...] = ()) -> Iterator[PrometheusServer]:
    """Prometheus (1 s scrapes and rule evaluations) over one scripted 4-GPU exporter; both stopped after."""
    binary("prometheus")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prometheus_tools, "FAKE_EXPORTER", DASHBOARD_EXPORTER)
        exporter = ExporterProcess()
    prometheus = None
    try:
        prometheus = PrometheusServer(workdir, [f"127.0.0.1:{exporter.port}"], rule_files=rule_files)
        yield prometheus
    finally:
        if prometheus is not None:
            prometheus.stop()
        exporter.stop()
