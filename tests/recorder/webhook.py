"""A real webhook receiver on 127.0.0.1 (http.server in a thread) for Apprise's json:// posts."""

from __future__ import annotations

import http.server
import json
import threading
import time
from typing import Any


class Receiver:
    """Answers each POST with `status` (after `hang` is cleared when hanging); keeps every body it got."""

    def __init__(self, status: int = 200, hanging: bool = False) -> None:
        self.status = status
        self.bodies: list[dict[str, Any]] = []
        self.arrivals_s: list[float] = []
        self.paths: list[str] = []
        self.release = threading.Event()
        if not hanging:
            self.release.set()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                receiver.arrivals_s.append(time.monotonic())
                receiver.paths.append(self.path)
                receiver.bodies.append(body)
                receiver.release.wait(60)
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str = "hook/T0KEN-s3cret") -> str:
        return f"json://127.0.0.1:{self.port}/{path}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def dead_port() -> int:
    """A loopback port nobody listens on (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
