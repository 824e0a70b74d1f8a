"""The exporter's HTTP(S) server: one thread per connection, each with a time limit, TLS handshakes included.

prometheus-client's own server wraps the listening socket, so a TLS handshake runs in the accept loop with
no time limit: one client that connects and sends nothing stops every scrape. Here the handshake runs in the
connection's thread: the first byte (request or ClientHello) must come within FIRST_BYTE_TIMEOUT_S, the
handshake plus the request head within CONNECTION_TIMEOUT_S. Idle connections cannot fill the server: each
address holds at most MAX_CONNECTIONS_PER_PEER, and a new one evicts the oldest that sent no request head yet.
"""

from __future__ import annotations

import io
import socket
import ssl
import sys
import threading
import time
from collections import Counter
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import make_wsgi_app

if TYPE_CHECKING:
    from prometheus_client.registry import CollectorRegistry

# Time a client gets for its TLS handshake plus request head, and then for taking the answer. Prometheus
# sends its request at once; a client that trickles or idles is cut off, so it holds its thread no longer.
CONNECTION_TIMEOUT_S = 15.0
# Prometheus sends its request (or ClientHello) at once; a connection silent this long is closed.
FIRST_BYTE_TIMEOUT_S = 3.0
# Connections served at once (a thread each, for up to CONNECTION_TIMEOUT_S): a flood costs no more threads.
MAX_CONNECTIONS = 256
# Connections one address holds at once (Prometheus uses a handful), so one peer cannot fill the server.
MAX_CONNECTIONS_PER_PEER = 16


class _Connections:
    """The open connections, oldest first: who may come in, and which idle one makes room for them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, list[Any]] = {}  # id -> [socket, peer, request head received]; insertion order
        self._per_peer: Counter[str] = Counter()

    def admit(self, request: socket.socket, peer: str) -> bool:
        """Room for `request`: over the peer's or the server's cap, the oldest headless one (the peer's own
        first) is shut; False (refused) when every open one has sent its request head."""
        with self._lock:
            victim = None
            if self._per_peer[peer] >= MAX_CONNECTIONS_PER_PEER:
                victim = self._oldest_headless(peer)
            elif len(self._open) >= MAX_CONNECTIONS:
                victim = self._oldest_headless(None)
            if victim is None and (self._per_peer[peer] >= MAX_CONNECTIONS_PER_PEER
                                   or len(self._open) >= MAX_CONNECTIONS):
                return False
            if victim is not None:
                self._forget(victim)
            self._open[id(request)] = [request, peer, False]
            self._per_peer[peer] += 1
        if victim is not None:
            _shut(victim[0])
        return True

    def wrapped(self, request: socket.socket, connection: socket.socket) -> None:
        """`request` now speaks through `connection` (TLS): an eviction shuts that one."""
        with self._lock:
            if id(request) in self._open:
                self._open[id(request)][0] = connection

    def head_received(self, request: socket.socket) -> None:
        with self._lock:
            if id(request) in self._open:
                self._open[id(request)][2] = True

    def release(self, request: socket.socket) -> None:
        with self._lock:
            entry = self._open.get(id(request))
            if entry is not None:
                self._forget(entry)

    def _oldest_headless(self, peer: str | None) -> list[Any] | None:
        return next((entry for entry in self._open.values()
                     if not entry[2] and (peer is None or entry[1] == peer)), None)

    def _forget(self, entry: list[Any]) -> None:
        key = next(key for key, value in self._open.items() if value is entry)
        del self._open[key]
        self._per_peer[entry[1]] -= 1
        if not self._per_peer[entry[1]]:
            del self._per_peer[entry[1]]


def _shut(connection: socket.socket) -> None:
    """Wakes the connection's thread with EOF (socket.socket's shutdown: an SSLSocket's would drop its state)."""
    try:
        socket.socket.shutdown(connection, socket.SHUT_RDWR)
    except OSError:
        pass


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

    def __init__(self, request: Any, client_address: Any, server: MetricsServer, deadline_s: float,
                 raw: socket.socket) -> None:
        self.deadline_s = deadline_s
        self.answer_timeout_s = server.timeout_s
        self.raw = raw
        self.connections = server.connections
        super().__init__(request, client_address, server)

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self.deadline_s))

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        self.connections.head_received(self.raw)  # a request in progress is never evicted
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
        self.connections = _Connections()
        super().__init__(address, _Handler)  # type: ignore[arg-type]  # finish_request builds it, with a deadline
        self.set_app(make_wsgi_app(registry))

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.connections.admit(request, str(client_address[0])):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.release(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release(request)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """In the connection's own thread: the TLS handshake (if any), then the request, all under one deadline."""
        deadline_s = time.monotonic() + self.timeout_s
        request.settimeout(min(FIRST_BYTE_TIMEOUT_S, self.timeout_s))
        if not request.recv(1, socket.MSG_PEEK):
            return  # closed without a word
        if self.tls is None:
            _Handler(request, client_address, self, deadline_s, request)
            return
        request.settimeout(self.timeout_s)  # the handshake as a whole gets this long (ssl counts one deadline)
        connection = self.tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        self.connections.wrapped(request, connection)
        try:
            connection.do_handshake()
            _Handler(connection, client_address, self, deadline_s, request)
        finally:
            connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left, stalled or failed the handshake is its own affair; anything else is reported."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)
