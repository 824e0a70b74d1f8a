"""A hand-made 'Prometheus' on 127.0.0.1 for the hostile-answer tests: real sockets, any answer, every request seen."""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import threading
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable

import httpx


@dataclass(frozen=True)
class Seen:
    method: str
    path: str  # with the URL's query string, if any
    headers: dict[str, str]  # names lower-cased
    client_certificate: bool
    body: bytes  # the POSTed form

    @property
    def promql(self) -> str:
        return urllib.parse.parse_qs(self.body.decode()).get("query", [""])[0]


def vector_answer(series: list[tuple[dict[str, Any], Any]]) -> bytes:
    """An instant-vector answer; each value as given (a number, or any JSON to break the shape)."""
    result = [{"metric": labels, "value": [1700000000.0, value if isinstance(value, str) else repr(value)]}
              for labels, value in series]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()


def targets_answer(targets: list[Any]) -> bytes:
    return json.dumps({"status": "success", "data": {"activeTargets": targets}}).encode()


class LoopbackPrometheus:
    """Serves `respond(handler, seen)` on 127.0.0.1 (https with `tls`); counts connections, records requests."""

    def __init__(self, respond: Callable[[http.server.BaseHTTPRequestHandler, Seen], None],
                 tls: ssl.SSLContext | None = None) -> None:
        self.requests: list[Seen] = []
        self.connections = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.answer()

            def do_POST(self) -> None:
                self.answer()

            def answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                certificate = isinstance(self.connection, ssl.SSLSocket) and bool(self.connection.getpeercert())
                seen = Seen(self.command, self.path, {name.lower(): value for name, value in self.headers.items()},
                            certificate, body)
                owner.requests.append(seen)
                try:
                    respond(self, seen)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    self.close_connection = True

            def log_message(self, *arguments: object) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def get_request(self) -> tuple[socket.socket, Any]:
                connection, address = self.socket.accept()
                owner.connections += 1
                if tls is not None:
                    connection = tls.wrap_socket(connection, server_side=True)
                return connection, address

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> LoopbackPrometheus:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def send(handler: http.server.BaseHTTPRequestHandler, body: bytes, status: int = 200,
         headers: dict[str, str] | None = None) -> None:
    handler.send_response(status)
    for name, value in {"Content-Type": "application/json", "Content-Length": str(len(body)),
                        **(headers or {})}.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def serving(handle: Callable[[httpx.Request], httpx.Response]) -> Callable[[Any, Seen], None]:
    """A responder that answers as `handle` (an httpx.MockTransport handler, such as FakeFleet.handle) would."""
    def respond(handler: http.server.BaseHTTPRequestHandler, seen: Seen) -> None:
        response = handle(httpx.Request(seen.method, f"http://prom{seen.path}", content=seen.body))
        send(handler, response.content, response.status_code)
    return respond


def redirect(location: str) -> Callable[[http.server.BaseHTTPRequestHandler, Seen], None]:
    def respond(handler: http.server.BaseHTTPRequestHandler, seen: Seen) -> None:
        send(handler, b"", 307, {"Location": location + seen.path.split("?")[0]})
    return respond
