"""Headless Debian Chromium driven over the DevTools protocol (a websocket, via aiohttp): no Playwright.

`HeadlessChromium(workdir)` starts the browser on loopback with a throw-away profile; `page()` connects
to its first tab. The page records every websocket frame it receives (textual-serve sends the app's
screen updates that way: the terminal itself is a canvas, so its text is not in the DOM).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fleet.prometheus_tools import DEADLINE_S, end_process, wait_for

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--window-size=1280,800",
)


def chromium_binary() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("chromium is not installed; `make install-test` installs Debian's chromium when run as root")
    return path


class HeadlessChromium:
    def __init__(self, workdir: Path, window_size: tuple[int, int] | None = None) -> None:
        profile = workdir / "chromium-profile"
        profile.mkdir()
        self.log = open(workdir / "chromium.log", "w")
        flags = CHROMIUM_FLAGS if window_size is None else (*CHROMIUM_FLAGS, "--window-size={},{}".format(*window_size))
        # Chromium leaves org.chromium.Chromium.* folders in TMPDIR: a short one of its own (its socket path must
        # fit 108 bytes, which pytest's folders do not), removed by stop().
        binary = chromium_binary()
        self.scratch = Path(tempfile.mkdtemp(prefix="pth-chromium-"))
        self.process = subprocess.Popen([binary, *flags, f"--user-data-dir={profile}", "about:blank"],
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "TMPDIR": str(self.scratch)})
        port_file = profile / "DevToolsActivePort"

        def port_written() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"chromium exited: {Path(self.log.name).read_text()[-2000:]}")
            return port_file.exists() and port_file.read_text().count("\n") >= 1

        try:
            wait_for(port_written, "chromium's DevTools port")
        except BaseException:
            self.stop()
            raise
        self.port = int(port_file.read_text().splitlines()[0])

    async def page(self) -> "DevToolsPage":
        import aiohttp

        session = aiohttp.ClientSession()
        async with session.get(f"http://127.0.0.1:{self.port}/json/list") as response:
            targets = await response.json()
        page_url = next(target["webSocketDebuggerUrl"] for target in targets if target["type"] == "page")
        socket = await session.ws_connect(page_url, max_msg_size=0)
        page = DevToolsPage(session, socket)
        page.reader = asyncio.create_task(page.read_forever())
        return page

    def stop(self) -> None:
        end_process(self.process, self.log)
        shutil.rmtree(self.scratch, ignore_errors=True)


class DevToolsPage:
    def __init__(self, session: Any, socket: Any) -> None:
        self.session = session
        self.socket = socket
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.received_frames: list[str] = []
        self.sent_frames: list[str] = []  # text frames the page sent on its websockets
        self.requested_urls: list[str] = []  # every URL the page asked for (Network.requestWillBeSent)
        self.websocket_urls: list[str] = []
        self.reader: asyncio.Task[None] | None = None

    async def read_forever(self) -> None:
        async for message in self.socket:
            event = json.loads(message.data)
            if "id" in event and event["id"] in self.pending:
                self.pending.pop(event["id"]).set_result(event)
            elif event.get("method") == "Network.webSocketFrameReceived":
                response = event["params"]["response"]
                data = response["payloadData"]
                if response.get("opcode") == 2:
                    data = base64.b64decode(data).decode("utf-8", errors="replace")
                self.received_frames.append(data)
            elif event.get("method") == "Network.webSocketFrameSent":
                self.sent_frames.append(event["params"]["response"]["payloadData"])
            elif event.get("method") == "Network.requestWillBeSent":
                self.requested_urls.append(event["params"]["request"]["url"])
            elif event.get("method") == "Network.webSocketCreated":
                self.websocket_urls.append(event["params"]["url"])

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        message_id = next(self.ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[message_id] = future
        await self.socket.send_str(json.dumps({"id": message_id, "method": method, "params": params}))
        answer = await asyncio.wait_for(future, DEADLINE_S)
        if "error" in answer:
            raise AssertionError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def screen_text(self) -> str:
        """Everything the app sent to the page so far, escape sequences and all."""
        return "".join(self.received_frames)

    async def wait_for_text(self, text: str) -> None:
        give_up = time.monotonic() + DEADLINE_S
        while text not in self.screen_text():
            if time.monotonic() >= give_up:
                raise AssertionError(f"waited {DEADLINE_S:g} s for {text!r} in the page, in vain")
            await asyncio.sleep(0.1)

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def press(self, key: str) -> None:
        for kind in ("keyDown", "keyUp"):
            await self.call("Input.dispatchKeyEvent", type=kind, key=key, text=key if kind == "keyDown" else "")

    async def click(self, x: int, y: int) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            await self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    async def screenshot(self, path: Path) -> bytes:
        png = base64.b64decode((await self.call("Page.captureScreenshot", format="png"))["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
        return png

    async def close(self) -> None:
        await self.socket.close()
        if self.reader is not None:
            self.reader.cancel()
        await self.session.close()
