"""`pth-top export`: serve this machine's GPU (and optionally host) metrics to Prometheus."""

from __future__ import annotations

import argparse

from pth_top.fleet import DEFAULT_LISTEN, DEFAULT_PROCESSES_PER_GPU
from pth_top.tui.commands import CliError, count_argument, input_file_argument


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="serve GPU (and host) metrics to Prometheus at /metrics",
        description=(
            "A Prometheus exporter: reads the sensors each time Prometheus scrapes and serves pth_top_* "
            "metrics in base units (bytes, watts, hertz, ratios 0-1). Listens on loopback unless told otherwise. "
            "Needs prometheus-client: pip install 'pth-top[export]'."
        ),
        epilog="Stop with Ctrl+C or SIGTERM. The README's 'Prometheus exporter' section has a scrape config.",
    )
    parser.add_argument("--listen", default=DEFAULT_LISTEN, metavar="ADDRESS:PORT",
                        help=f"where to serve (default {DEFAULT_LISTEN}; 0.0.0.0:PORT or [::]:PORT to expose it)")
    parser.add_argument("--host-metrics", action="store_true",
                        help="also serve host CPU, memory, disk, network, filesystem and /dev/shm metrics "
                             "(leave off where node_exporter runs)")
    parser.add_argument("--no-process-metrics", dest="process_metrics", action="store_false",
                        help="leave out per-process and per-user GPU memory")
    parser.add_argument("--processes-per-gpu", type=count_argument("--processes-per-gpu", 1, 1000),
                        default=DEFAULT_PROCESSES_PER_GPU, metavar="N",
                        help=f"largest processes per GPU to serve (default {DEFAULT_PROCESSES_PER_GPU})")
    parser.add_argument("--tls-cert", type=input_file_argument, metavar="FILE",
                        help="serve HTTPS with this certificate (PEM)")
    parser.add_argument("--tls-key", type=input_file_argument, metavar="FILE",
                        help="private key of --tls-cert (PEM)")
    parser.add_argument("--tls-client-ca", type=input_file_argument, metavar="FILE",
                        help="require client certificates signed by this CA (mutual TLS)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if (args.tls_cert is None) != (args.tls_key is None):
        raise CliError("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        raise CliError("--tls-client-ca needs --tls-cert and --tls-key")
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise CliError("pth-top export needs prometheus-client: pip install 'pth-top[export]'") from None
    from pth_top.fleet.collector import ExportOptions
    from pth_top.fleet.server import ListenError, TlsFiles, serve

    options = ExportOptions(
        host_metrics=args.host_metrics,
        process_metrics=args.process_metrics,
        processes_per_gpu=args.processes_per_gpu,
    )
    tls = TlsFiles(args.tls_cert, args.tls_key, args.tls_client_ca) if args.tls_cert else None
    try:
        return serve(args.listen, options, tls)
    except ListenError as error:
        raise CliError(str(error)) from None
