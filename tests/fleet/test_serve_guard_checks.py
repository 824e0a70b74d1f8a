"""Each of `pth-top serve`'s smaller guards on its own, against a real server on loopback and a websocket client:
the frame cap, dropped non-text stdin, the ping cap, no /download route, no static listing, the fontsize range,
the page's CSP and X-Frame-Options headers, and no token in the request log."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time

import pytest

from tests.fleet.prometheus_tools import DEADLINE_S
from tests.fleet.test_serve_browser import ServeProcess
from tests.fleet.test_serve_guard import accepts_connections, origin, poll, served_app, tab_processes
from tests.waiting import wait_for

aiohttp = pytest.importorskip("aiohttp")
pytestmark = pytest.mark.slow
FRAME_CAP = 256 * 1024


@pytest.fixture(scope="module")
def serve():
    started = ServeProcess()
    try:
        wait_for(lambda: accepts_connections(started.port), "pth-top serve's port", DEADLINE_S)
        yield started
    finally:
        started.stop()


async def open_tab(session, serve: ServeProcess):
    socket = await session.ws_connect(f"ws://127.0.0.1:{serve.port}/ws", origin=origin(serve))
    message = await socket.receive(timeout=DEADLINE_S)
    assert message.type == aiohttp.WSMsgType.BINARY, message  # the tab runs
    return socket


async def next_text(socket, deadline_s: float = DEADLINE_S):
    """The next text message (the tab's screen, binary, skipped), or the message that ended the connection."""
    give_up = time.monotonic() + deadline_s
    while time.monotonic() < give_up:
        try:
            message = await socket.receive(timeout=1)
        except asyncio.TimeoutError:
            continue
        if message.type != aiohttp.WSMsgType.BINARY:
            return message
    raise AssertionError(f"no text message in {deadline_s:g} s")


async def test_a_frame_over_256_kib_ends_the_connection(serve):
    async with aiohttp.ClientSession() as session:
        socket = await open_tab(session, serve)
        await socket.send_str(json.dumps(["stdin", "a" * FRAME_CAP]))
        await socket.send_str(json.dumps(["ping", "still there?"]))
        message = await next_text(socket)
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), message
        # 1009, or 1006 when the server's close overtakes the ping on the wire.
        assert socket.close_code in (aiohttp.WSCloseCode.MESSAGE_TOO_BIG, aiohttp.WSCloseCode.ABNORMAL_CLOSURE)
        await poll(lambda: not tab_processes(serve), "the tab's end with its connection")


async def test_stdin_that_is_not_text_is_dropped_and_the_tab_goes_on(serve):
    async with aiohttp.ClientSession() as session:
        socket = await open_tab(session, serve)
        for data in (5, ["q"], None, {"keys": "q"}, True):
            await socket.send_str(json.dumps(["stdin", data]))
        await socket.send_bytes(json.dumps(["stdin", "x"]).encode())
        await socket.send_str(json.dumps(["ping", "alive"]))
        message = await next_text(socket)
        assert message.type == aiohttp.WSMsgType.TEXT and message.json() == ["pong", "alive"], message
        assert served_app(serve) is not None
        await socket.close()
        await poll(lambda: not tab_processes(serve), "the tab's end")


async def test_a_ping_over_64_chars_gets_no_pong(serve):
    async with aiohttp.ClientSession() as session:
        socket = await open_tab(session, serve)
        await socket.send_str(json.dumps(["ping", "x" * 65]))
        await socket.send_str(json.dumps(["ping", "y" * 64]))
        message = await next_text(socket)
        assert message.type == aiohttp.WSMsgType.TEXT and message.json() == ["pong", "y" * 64], message.data[:80]
        await socket.close()
        await poll(lambda: not tab_processes(serve), "the tab's end")


async def test_no_download_route_and_no_static_folder_listing(serve):
    base = f"http://127.0.0.1:{serve.port}"
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{base}/download/0123456789abcdef") as answer:
            assert answer.status == 404 and "Download" not in await answer.text()
        for folder in ("/static/", "/static/js/", "/static/fonts/"):
            async with session.get(base + folder) as answer:
                text = await answer.text()
                assert answer.status in (403, 404) and "Index of" not in text and "textual.js" not in text, folder
        async with session.get(f"{base}/static/js/textual.js") as answer:
            assert answer.status == 200  # the files themselves are served


async def test_fontsize_stays_within_6_to_64(serve):
    async with aiohttp.ClientSession() as session:
        for asked, served in (("1000", "16"), ("5", "16"), ("-3", "16"), ("65", "16"), ("6", "6"), ("64", "64")):
            async with session.get(f"http://127.0.0.1:{serve.port}/?fontsize={asked}") as answer:
                assert answer.status == 200
                assert re.findall(r'data-font-size="(-?\d+)"', await answer.text()) == [served], asked


async def test_the_page_forbids_framing_and_fetching_elsewhere(serve):
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{serve.port}/") as answer:
            assert answer.headers.get("X-Frame-Options") == "DENY"
            policy = answer.headers.get("Content-Security-Policy", "")
            for directive in ("default-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"):
                assert directive in policy, policy


async def test_the_request_log_never_shows_the_token():
    serve = ServeProcess("--allow-actions")
    output: list[str] = []
    try:
        token = re.search(r"token=([\w-]+)", serve.first_line).group(1)
        reader = threading.Thread(target=lambda: output.append(serve.process.stdout.read()), daemon=True)
        reader.start()
        wait_for(lambda: accepts_connections(serve.port), "pth-top serve's port", DEADLINE_S)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{serve.port}/?token={token}") as answer:
                assert answer.status == 200
            async with session.ws_connect(f"ws://127.0.0.1:{serve.port}/ws/{token}", origin=origin(serve)) as socket:
                assert (await socket.receive(timeout=DEADLINE_S)).type == aiohttp.WSMsgType.BINARY
    finally:
        serve.stop()
    reader.join(timeout=30)
    log = "".join(output)
    assert "GET /" not in log and token not in log, log[-2000:]
