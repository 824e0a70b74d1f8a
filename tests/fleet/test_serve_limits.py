"""`pth-top serve` against a flooding client: a real server on loopback, a plain websocket client and raw sockets.

A tab's input is rate-limited (its memory stays bounded under a key flood) and the tab ends with its websocket;
malformed requests cost one short log line each at most, and the --allow-actions token never reaches the log.
"""

from __future__ import annotations

import json
import re
import socket as sockets
import threading

import pytest

from tests.fleet.test_serve_guard import origin, poll, receive_screen, serve_factory, served_app, tab_processes

aiohttp = pytest.importorskip("aiohttp")
pytestmark = pytest.mark.slow
__all__ = ["serve_factory"]
FLOOD_RSS_BOUND = 250 * 2**20  # before, ~7 MB of keys grew the tab from ~45 MB to 450-540 MB
FLOOD_FRAME = json.dumps(["stdin", "\x1b[A" * 30_000])  # 240 KB of arrow keys as JSON, under the frame cap


async def test_a_key_flood_leaves_the_tab_small_and_it_ends_with_its_websocket(serve_factory):
    serve = serve_factory()
    async with aiohttp.ClientSession() as session:
        socket = await session.ws_connect(f"ws://127.0.0.1:{serve.port}/ws?width=80&height=24", origin=origin(serve))
        tab = await poll(lambda: served_app(serve), "the tab's process")
        await receive_screen(socket, "\x1b[")  # the app runs: it reads its stdin from now on
        for _ in range(30):
            await socket.send_str(FLOOD_FRAME)
        peak = 0
        for _ in range(50):  # the tab handles what reached it
            peak = max(peak, tab.memory_info().rss)
            try:
                await socket.receive(timeout=0.2)
            except TimeoutError:
                pass
        assert peak < FLOOD_RSS_BOUND, f"the tab grew to {peak >> 20} MiB"
        await socket.close()
        await poll(lambda: not tab_processes(serve), "no tab process left once the websocket closed")


def read_all(stream, into: list[str]) -> threading.Thread:
    thread = threading.Thread(target=lambda: into.append(stream.read()), daemon=True)
    thread.start()
    return thread


async def test_malformed_requests_log_short_lines_without_the_token(serve_factory):
    serve = serve_factory("--allow-actions")
    token = re.search(r"token=([\w-]+)", serve.first_line).group(1)
    output: list[str] = []
    reader = read_all(serve.process.stdout, output)
    for path in (f"/ws/{token}", "/", f"/ws/{token}?x=\x01") * 20:
        with sockets.create_connection(("127.0.0.1", serve.port), timeout=10) as client:
            client.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n".encode())
            try:
                client.recv(100)
            except OSError:
                pass
    async with aiohttp.ClientSession() as session:  # a websocket handshake gone wrong (no Upgrade)
        async with session.get(f"http://127.0.0.1:{serve.port}/ws/{token}", headers={"Origin": origin(serve)}):
            pass
    serve.stop()
    reader.join(timeout=30)
    log = "".join(output)
    # Before, each malformed request logged a Rich traceback with local variables, the token among them.
    assert token not in log
    assert "Traceback" not in log and "locals" not in log.lower()
    assert len(log) < 60 * 400, f"{len(log)} characters of log for 60 malformed requests"
