"""The exporter's HTTP(S) server: one thread per connection, each with a time limit, TLS handshakes included.

prometheus-client's own server wraps the listening socket, so a TLS handshake runs in the accept loop with
no time limit: one client that connects and sends nothing stops every scrape. Here the handshake runs in the
connection's thread, and the handshake plus the request head must arrive within CONNECTION_TIMEOUT_S.
"""

from __future__ import annotations

import io
import socket
import ssl
import sys
import threading
import time
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import make_wsgi_app

if TYPE_CHECKING:
    from prometheus_client.registry import CollectorRegistry

# Time a client gets for its TLS handshake plus request head, and then for taking the answer. Prometheus
# sends its request at once; a client that trickles or idles is cut off, so it holds its thread no longer.
CONNECTION_TIMEOUT_S = 15.0
# Connections served at once (a thread each, for up to CONNECTION_TIMEOUT_S); more are closed on arrival,
# so a flood of connections costs the host no more than this many threads.
MAX_CONNECTIONS = 256


class _DeadlineReader(io.RawIOBase):
    """Reads a socket under one deadline for all reads together: trickling a byte at a time does not extend it."""

    def __init__(self, connection: socket.socket, deadline_s: float) -> None:
        self._connection = connection
        self._deadline_s = deadline_s

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining_s = self._deadline_s - time.monotonic()
        if remaining_s <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._connection.settimeout(remaining_s)
        return self._connection.recv_into(buffer)


class _Handler(WSGIRequestHandler):
    """One request per connection (wsgiref), its head read under the connection's deadline; logs nothing."""

    def __init__(self, request: Any, client_address: Any, server: MetricsServer, deadline_s: float) -> None:
        self.deadline_s = deadline_s
        self.answer_timeout_s = server.timeout_s
        super().__init__(request, client_address, server)

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self.deadline_s))

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        self.connection.settimeout(self.answer_timeout_s)  # to send the answer
        return parsed

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class names it so)
        """Log nothing: a scrape is no news."""


class MetricsServer(ThreadingMixIn, WSGIServer):
    """Serves `registry` at any path, over TLS with `tls`; every connection is bounded by `timeout_s`."""

    daemon_threads = True
    request_queue_size = socket.SOMAXCONN  # not socketserver's 5: a burst of scrapes and probes is not refused

    def __init__(self, address: tuple[str, int], registry: CollectorRegistry, tls: ssl.SSLContext | None,
                 timeout_s: float | None = None) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.tls = tls
        self.timeout_s = CONNECTION_TIMEOUT_S if timeout_s is None else timeout_s
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, _Handler)  # type: ignore[arg-type]  # finish_request builds it, with a deadline
        self.set_app(make_wsgi_app(registry))

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def finish_request(self, request: Any, client_address: Any) -> None:
        """In the connection's own thread: the TLS handshake (if any), then the request, all under one deadline."""
        deadline_s = time.monotonic() + self.timeout_s
        if self.tls is None:
            _Handler(request, client_address, self, deadline_s)
            return
        request.settimeout(self.timeout_s)  # the handshake as a whole gets this long (ssl counts one deadline)
        connection = self.tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        try:
            connection.do_handshake()
            _Handler(connection, client_address, self, deadline_s)
        finally:
            connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left, stalled or failed the handshake is its own affair; anything else is reported."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)
