"""textual-serve's Server with its holes closed: what a browser may ask of `pth-top serve` is checked here.

- a websocket from another page's Origin is refused (403) before any process starts, so a web page the
  operator visits cannot watch (or, with --allow-actions, drive) the dashboard through the SSH tunnel;
- with --allow-actions the page and its websocket need the per-start token printed at startup;
- at most --max-tabs tabs (each is a ~43 MiB process) run at once;
- every browser message is checked: sizes clamped to MAX_COLUMNS x MAX_ROWS, wrong types dropped,
  frames over MAX_MESSAGE_BYTES end the connection; no download route, no static directory listing;
- a tab's input is rate-limited (InputBudget: a human types far less), a tab whose stdin stays blocked for
  SEND_TIMEOUT_S ends, and a closed tab's slot is free at once;
- the log is one plain line per event (no tracebacks with locals), the token redacted, repeats rate-limited.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import time
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from textual_serve.server import Server, log

from pth_top.text import printable
from pth_top.tui.serve_page import PAGE_HEADERS, page_html
from pth_top.tui.serve_tab import TabService

MAX_COLUMNS, MAX_ROWS = 500, 200
DEFAULT_SIZE = (80, 24)
MAX_MESSAGE_BYTES = 256 * 1024  # a paste into the terminal; aiohttp closes the websocket on a bigger frame
MAX_PING_CHARS = 64
FONT_SIZES = range(6, 65)
DEFAULT_FONT_SIZE = 16
HEARTBEAT_S = 15.0
# A tab's input (keys, resizes, pings: every message's bytes, at least MIN_MESSAGE_COST): a burst of
# INPUT_BURST_BYTES, then INPUT_BYTES_PER_S; the excess is dropped and counted. A human types well under 1 KB/s.
INPUT_BURST_BYTES = 16 * 1024
INPUT_BYTES_PER_S = 4 * 1024
MIN_MESSAGE_COST = 64
# A tab that does not take its input for this long is ended: the relay never waits on it without end.
SEND_TIMEOUT_S = 5.0
# The log: at most LOG_LINES_PER_WINDOW lines per LOG_WINDOW_S, then one line saying how many were dropped.
LOG_LINES_PER_WINDOW = 20
LOG_WINDOW_S = 10.0
LOG_LINE_MAX_CHARS = 300


class InputBudget:
    """A token bucket of bytes for one tab's input."""

    def __init__(self) -> None:
        self.left = float(INPUT_BURST_BYTES)
        self.at_s = time.monotonic()
        self.dropped = 0

    def allows(self, size: int) -> bool:
        now_s = time.monotonic()
        self.left = min(float(INPUT_BURST_BYTES), self.left + (now_s - self.at_s) * INPUT_BYTES_PER_S)
        self.at_s = now_s
        cost = max(size, MIN_MESSAGE_COST)
        if cost > self.left:
            self.dropped += 1
            return False
        self.left -= cost
        return True


class PlainLogFilter(logging.Filter):
    """Each record becomes one short printable line (exceptions as type: message), the token redacted;
    past LOG_LINES_PER_WINDOW lines in LOG_WINDOW_S, records are dropped and counted."""

    def __init__(self, token: str | None) -> None:
        super().__init__()
        self.token = token
        self.window_at_s = time.monotonic()
        self.lines = self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        now_s = time.monotonic()
        if now_s - self.window_at_s >= LOG_WINDOW_S:
            dropped, self.dropped, self.lines, self.window_at_s = self.dropped, 0, 0, now_s
        else:
            dropped = 0
        if self.lines >= LOG_LINES_PER_WINDOW:
            self.dropped += 1
            return False
        self.lines += 1
        line = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            line = f"{line}: {type(error).__name__}: {error}"
        if dropped:
            line = f"({dropped} log lines dropped) {line}"
        if self.token:
            line = line.replace(self.token, "<token>")
        record.msg, record.args, record.exc_info, record.exc_text, record.stack_info = (
            printable(line, LOG_LINE_MAX_CHARS), None, None, None, None)
        return True


def clamped_size(width: object, height: object) -> tuple[int, int] | None:
    """A terminal size within 1..MAX_COLUMNS x 1..MAX_ROWS; None for anything but two integers."""
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in (width, height)):
        return None
    assert isinstance(width, int) and isinstance(height, int)
    return min(max(width, 1), MAX_COLUMNS), min(max(height, 1), MAX_ROWS)


def query_size(query: Any) -> tuple[int, int]:
    """The initial size from the websocket URL's ?width=&height= (clamped; the default when not integers)."""
    try:
        size = clamped_size(int(query.get("width", "")), int(query.get("height", "")))
    except ValueError:
        size = None
    return size or DEFAULT_SIZE


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def names_no_other_site(hostname: str) -> bool:
    """An IP literal or localhost: a name DNS rebinding cannot point an attacker's page at."""
    if hostname == "localhost" or hostname.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(hostname)
    except ValueError:
        return False
    return True


def origin_allowed(origin: str | None, host_header: str | None, public_url: str) -> bool:
    """The websocket comes from the served page: the --public-url origin, or the very host:port the browser
    asked for when that is an IP address or localhost (an SSH tunnel may use any local port)."""
    if not origin:
        return False  # browsers always send one; a page elsewhere cannot leave it out
    origin = origin.lower()
    if origin == origin_of(public_url):
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not host_header or parts.netloc != host_header.lower():
        return False
    return names_no_other_site(parts.hostname or "")


class GuardedServer(Server):
    """Serves one TabService per accepted websocket; see the module docstring for what it refuses."""

    def __init__(self, command: str, *, host: str, port: int, title: str, public_url: str,
                 token: str | None, max_tabs: int) -> None:
        super().__init__(command, host=host, port=port, title=title, public_url=public_url)
        self.token = token
        self.max_tabs = max_tabs
        self.tabs: set[TabService] = set()

    def initialize_logging(self) -> None:
        """Plain one-line records (textual-serve's shows tracebacks with locals: big, and they hold the token)."""
        handler = logging.StreamHandler()
        handler.addFilter(PlainLogFilter(self.token))
        logging.basicConfig(level="DEBUG" if self.debug else "INFO", format="%(message)s", handlers=[handler],
                            force=True)
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # request lines would log the token

    async def on_startup(self, app: web.Application) -> None:
        """pth-top serve printed its own startup line."""

    async def _make_app(self) -> web.Application:
        app = web.Application()
        app.add_routes([
            web.get("/", self.handle_index),
            web.get("/ws", self.handle_websocket),
            web.get("/ws/{token}", self.handle_websocket),
            web.static("/static", self.statics_path, show_index=False),
        ])
        app.on_startup.append(self.on_startup)
        return app

    def token_presented(self, presented: str) -> bool:
        return self.token is None or hmac.compare_digest(presented.encode(), self.token.encode())

    def tabs_full_text(self) -> str:
        return (f"pth-top serve: all {self.max_tabs} browser tabs are in use (--max-tabs {self.max_tabs}); "
                "close one and reload this page")

    async def handle_index(self, request: web.Request) -> web.Response:
        if not self.token_presented(request.query.get("token", "")):
            raise web.HTTPForbidden(text="pth-top serve: this server lets browsers act (--allow-actions): open the "
                                         "URL with ?token=... that it printed when it started")
        if len(self.tabs) >= self.max_tabs:
            raise web.HTTPServiceUnavailable(text=self.tabs_full_text())
        try:
            font_size = int(request.query.get("fontsize", DEFAULT_FONT_SIZE))
        except ValueError:
            font_size = DEFAULT_FONT_SIZE
        socket_path = "ws" if self.token is None else f"ws/{self.token}"
        html = page_html(self.title, socket_path, font_size if font_size in FONT_SIZES else DEFAULT_FONT_SIZE)
        return web.Response(text=html, content_type="text/html", headers=PAGE_HEADERS)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if not origin_allowed(request.headers.get("Origin"), request.headers.get("Host"), self.public_url):
            raise web.HTTPForbidden(text="pth-top serve: websocket refused: it does not come from this server's page")
        if not self.token_presented(request.match_info.get("token", "")):
            raise web.HTTPForbidden(text="pth-top serve: websocket refused: missing or wrong token")
        if len(self.tabs) >= self.max_tabs:
            raise web.HTTPServiceUnavailable(text=self.tabs_full_text())
        websocket = web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=MAX_MESSAGE_BYTES)

        async def close() -> None:
            await websocket.close()

        tab = TabService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                         close=close, download_manager=self.download_manager, debug=self.debug)
        self.tabs.add(tab)  # counted before the first await: concurrent handshakes cannot pass the cap together
        try:
            await websocket.prepare(request)
            await tab.start(*query_size(request.query))
            await self.relay_messages(websocket, tab)
        except asyncio.TimeoutError:
            log.warning("pth-top serve: a tab did not take its input for %g s: ended", SEND_TIMEOUT_S)
        except Exception as error:
            log.exception(error)
        finally:
            self.tabs.discard(tab)  # the slot is free now; the process ends within stop's grace periods
            await websocket.close()
            await tab.stop()
        return websocket

    async def relay_messages(self, websocket: web.WebSocketResponse, tab: TabService) -> None:
        """Pass the browser's messages to the tab, each checked and within the InputBudget; anything malformed
        or over budget is dropped. asyncio.TimeoutError when the tab takes no input for SEND_TIMEOUT_S."""
        budget = InputBudget()
        async for message in websocket:
            if message.type != WSMsgType.TEXT or not budget.allows(len(message.data)):
                continue
            try:
                envelope = json.loads(message.data)
            except ValueError:
                continue
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await asyncio.wait_for(tab.send_bytes(data.encode("utf-8", errors="replace")), SEND_TIMEOUT_S)
            elif kind == "resize" and isinstance(data, dict):
                size = clamped_size(data.get("width"), data.get("height"))
                if size is not None:
                    await asyncio.wait_for(tab.set_terminal_size(*size), SEND_TIMEOUT_S)
            elif kind == "ping" and isinstance(data, str) and len(data) <= MAX_PING_CHARS:
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await tab.blur()
            elif kind == "focus":
                await tab.focus()
