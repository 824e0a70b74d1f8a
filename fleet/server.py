"""Serving /metrics: TLS, the Xid thread, and a clean stop on SIGTERM or Ctrl+C."""

from __future__ import annotations

import errno
import signal
import ssl
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from pth_top.fleet.collector import ExporterCollector, ExportOptions, make_registry
from pth_top.fleet.http_server import MetricsServer
from pth_top.fleet.listen import ListenError, parse_listen
from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.xid_events import XidEventWatcher, stop_and_join

if TYPE_CHECKING:
    from prometheus_client.registry import CollectorRegistry


@dataclass(frozen=True)
class TlsFiles:
    cert_file: str
    key_file: str
    client_ca_file: str | None = None


def tls_context(tls: TlsFiles) -> ssl.SSLContext:
    """The server's TLS context (client certificates required with a client CA); a bad file is one clear line."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(tls.cert_file, tls.key_file)
        if tls.client_ca_file is not None:
            context.load_verify_locations(tls.client_ca_file)
            context.verify_mode = ssl.CERT_REQUIRED
    except ssl.SSLError as error:
        raise ListenError(f"TLS certificate, key or client CA not usable: {error.reason or error}") from None
    except OSError as error:
        named = ", ".join(name for name in (tls.cert_file, tls.key_file, tls.client_ca_file) if name)
        raise ListenError(f"TLS file not readable ({error.strerror or error}): {named}") from None
    return context


def start_server(address: str, port: int, registry: CollectorRegistry, tls: TlsFiles | None) -> tuple[Any, int]:
    """Start the HTTP(S) server thread; (server, bound port). Raises ListenError for a bind or TLS failure."""
    context = tls_context(tls) if tls is not None else None
    try:
        server = MetricsServer((address, port), registry, context)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise ListenError(f"{address}:{port} is already in use (another exporter?); choose another --listen port") \
                from None
        if error.errno == errno.EADDRNOTAVAIL:
            raise ListenError(f"{address} is not an address of this machine") from None
        if error.errno == errno.EACCES:
            raise ListenError(f"not allowed to listen on port {port} (ports below 1024 need root)") from None
        raise ListenError(f"cannot listen on {address}:{port}: {error.strerror or error}") from None
    threading.Thread(target=server.serve_forever, name="pth-top-export-http", daemon=True).start()
    return server, server.server_address[1]


def serve(
    listen: str,
    options: ExportOptions,
    tls: TlsFiles | None = None,
    announce: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> int:
    """Run the exporter until SIGTERM/SIGINT; 0 on a clean stop. Raises ListenError for a bad address."""
    address, port = parse_listen(listen, allow_port_zero=True)
    session = NvmlSession()
    collector = ExporterCollector(session, options)
    server, bound_port = start_server(address, port, make_registry(collector), tls)
    stop = threading.Event()
    previous_handlers = {number: signal.signal(number, lambda *_: stop.set())
                         for number in (signal.SIGTERM, signal.SIGINT)}
    watcher, xid_thread = _start_xid_thread(session, collector)
    scheme = "https" if tls is not None else "http"
    host = f"[{address}]" if ":" in address else address
    announce(f"pth-top export: serving {scheme}://{host}:{bound_port}/metrics")
    if not session.available:
        announce(f"pth-top export: {session.unavailable_reason}; serving host metrics and pth_top_nvml_up 0")
    try:
        while not stop.wait(3600):
            pass
    finally:
        server.shutdown()
        server.server_close()
        xid_stopped = watcher is None or xid_thread is None or stop_and_join(watcher, xid_thread)
        if xid_stopped:  # else the Xid thread may be inside an NVML wait: leave NVML to the process exit
            session.shutdown()
        for number, handler in previous_handlers.items():
            signal.signal(number, handler)
    return 0


def _start_xid_thread(
    session: NvmlSession, collector: ExporterCollector
) -> tuple[XidEventWatcher | None, threading.Thread | None]:
    """The exporter's one background thread: it waits for Xid events (where the GPUs report them)."""
    if not session.available:
        return None, None
    watcher = XidEventWatcher(session)
    collector.xid_watcher = watcher
    if not watcher.register(collector.gpu_handles()):
        watcher.close()
        return watcher, None
    thread = threading.Thread(target=watcher.run, name="pth-top-xid-events", daemon=True)
    thread.start()
    return watcher, thread
