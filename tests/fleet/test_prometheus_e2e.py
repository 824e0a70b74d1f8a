"""A real Prometheus scrapes two exporters on a scripted 8-GPU NVML: stored values, `up`, counters over a restart."""

from __future__ import annotations

import pytest

from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.fleet.fixtures import energy_mj
from tests.fleet.prometheus_tools import ExporterProcess, PrometheusServer, binary, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def prometheus_bin():
    return binary("prometheus")


def served_values(name: str) -> dict[str, float]:
    """GPU index -> what the fake NVML serves for `name`, converted as the exporter must."""
    fake = make_fake_gpus(8)
    served = {}
    for index, device in enumerate(fake.devices):
        values = device.values
        served[str(index)] = {
            "pth_top_gpu_memory_used_bytes": float(values["nvmlDeviceGetMemoryInfo"].used),
            "pth_top_gpu_power_watts": values["nvmlDeviceGetPowerUsage"] / 1000,
            "pth_top_gpu_utilization_ratio": values["nvmlDeviceGetUtilizationRates"].gpu / 100,
            "pth_top_gpu_temperature_celsius": float(values["nvmlDeviceGetTemperature"](0)),
        }[name]
    return served


def test_prometheus_stores_what_the_fake_served_and_sees_restarts(tmp_path, prometheus_bin):
    first = ExporterProcess()
    second = ExporterProcess("--host-metrics")
    prometheus = None
    try:
        targets = [f"127.0.0.1:{first.port}", f"127.0.0.1:{second.port}"]
        prometheus = PrometheusServer(tmp_path, targets)
        wait_for(lambda: prometheus.value('count(up{job="pth-top"} == 1)') == 2.0, "both targets up")
        wait_for(lambda: len(prometheus.query("pth_top_gpu_memory_used_bytes")) == 16, "16 GPU series stored")

        first_instance = {"instance": targets[0]}
        for name in ("pth_top_gpu_memory_used_bytes", "pth_top_gpu_power_watts", "pth_top_gpu_utilization_ratio",
                     "pth_top_gpu_temperature_celsius"):
            stored = {item["metric"]["gpu"]: item["value"]
                      for item in prometheus.query(f'{name}{{instance="{first_instance["instance"]}"}}')}
            assert stored == pytest.approx(served_values(name)), name
        info = prometheus.query(f'pth_top_gpu_info{{instance="{targets[0]}",gpu="0"}}')
        assert info[0]["metric"]["name"] == "NVIDIA H100 80GB HBM3"
        assert info[0]["metric"]["uuid"].startswith("GPU-h10000")
        # Host metrics only where asked for; the Xid the fake GPU 2 reported is counted.
        assert prometheus.query(f'pth_top_host_memory_total_bytes{{instance="{targets[0]}"}}') == []
        assert (prometheus.value(f'pth_top_host_memory_total_bytes{{instance="{targets[1]}"}}') or 0) > 0
        wait_for(lambda: prometheus.value(f'pth_top_gpu_xid_errors_total{{instance="{targets[0]}",gpu="2",xid="79"}}')
                 == 1.0, "the Xid 79 of GPU 2")
        energy = prometheus.value(f'pth_top_gpu_energy_joules_total{{instance="{targets[0]}",gpu="1"}}')
        assert (energy or 0) > energy_mj(1) / 1000

        assert first.stop() == 0, "SIGTERM stops the exporter cleanly"
        wait_for(lambda: prometheus.value(f'up{{instance="{targets[0]}"}}') == 0.0, "up to go to 0")

        restarted = ExporterProcess(port=first.port)
        first = restarted
        wait_for(lambda: prometheus.value(f'up{{instance="{targets[0]}"}}') == 1.0, "up back to 1")
        # The energy counter goes on across the restart: its rate over the gap is the power draw.
        energy_series = f'pth_top_gpu_energy_joules_total{{instance="{targets[0]}",gpu="1"}}'
        wait_for(lambda: (prometheus.value(f"count_over_time({energy_series}[3s])") or 0) >= 3,
                 "samples after the restart")
        samples = prometheus.samples(energy_series, 300)
        gaps = [later[0] - earlier[0] for earlier, later in zip(samples, samples[1:], strict=False)]
        assert max(gaps) >= 2.0, "the window spans the time the exporter was down"
        # A window that starts at the first stored sample and ends at the last: no extrapolation into the void.
        window_ms = int((samples[-1][0] - samples[0][0]) * 1000)
        at_s = samples[-1][0]
        watts = served_values("pth_top_gpu_power_watts")["1"]
        assert prometheus.value(f"rate({energy_series}[{window_ms}ms])", at_s) == pytest.approx(watts, rel=0.05)
        assert prometheus.value(f"resets({energy_series}[{window_ms}ms])", at_s) == 0.0
    finally:
        first.stop()
        second.stop()
        if prometheus is not None:
            prometheus.stop()
