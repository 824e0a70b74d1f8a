"""`pth-top export`: a Prometheus exporter over pth-top's sensors (needs the `export` extra: prometheus-client).

This package's own namespace imports nothing heavy: the CLI reads these defaults without prometheus_client.
"""

# 9824: unused by the common exporters (node 9100, dcgm 9400, nvitop 8000; Prometheus 9090, Pushgateway 9091).
DEFAULT_PORT = 9824
DEFAULT_LISTEN = f"127.0.0.1:{DEFAULT_PORT}"
DEFAULT_PROCESSES_PER_GPU = 10
