"""`pth-top serve` in headless Chromium: the dashboard renders in the page, read-only holds from the browser.

Screenshots are kept under tests/artifacts/ (git-ignored): serve-dashboard.png and serve-fleet.png.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet.browser_tools import HeadlessChromium, chromium_binary
from tests.fleet.fleet_tools import start_fleet, stop_fleet
from tests.fleet.prometheus_tools import binary, free_port

pytestmark = pytest.mark.slow
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


class ServeProcess:
    """`pth-top serve` on a free loopback port, in its own process group (each browser tab is a child)."""

    def __init__(self, *arguments: str) -> None:
        pytest.importorskip("textual_serve", reason="pth-top serve needs textual-serve (the web extra)")
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pth_top.tui.cli", "serve", "--listen", f"127.0.0.1:{self.port}", *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )
        assert self.process.stdout is not None
        self.first_line = self.process.stdout.readline()
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


async def open_served_page(chromium: HeadlessChromium, url: str):
    page = await chromium.page()
    await page.call("Network.enable")
    await page.call("Page.enable")
    await page.call("Page.navigate", url=url)
    return page


@pytest.fixture
def chromium(tmp_path):
    chromium_binary()
    browser = HeadlessChromium(tmp_path)
    yield browser
    browser.stop()


async def test_dashboard_renders_in_chromium_and_kill_is_refused_from_the_browser(chromium):
    serve = ServeProcess()
    try:
        assert "read-only" in serve.first_line and "SSH tunnel" in serve.first_line, serve.first_line
        page = await open_served_page(chromium, serve.url)
        try:
            for text in ("CPU", "Mem", "PID", "Kill"):
                await page.wait_for_text(text)
            assert "-first-byte" in await page.evaluate("document.body.className"), "the terminal got the app"
            assert await page.evaluate("document.querySelectorAll('.textual-terminal canvas').length") > 0
            await page.click(640, 400)
            await page.press("k")
            await page.wait_for_text("kill is off")
            await page.wait_for_text("read-only browser view")
            png = await page.screenshot(ARTIFACTS / "serve-dashboard.png")
            width, height = png_size(png)
            assert width >= 800 and height >= 400 and len(png) > 10_000
        finally:
            await page.close()
    finally:
        serve.stop()


async def test_fleet_view_renders_in_chromium(chromium, tmp_path):
    binary("prometheus")
    (tmp_path / "fleet").mkdir()
    hosts, prometheus = start_fleet(tmp_path / "fleet", 1)
    serve = None
    try:
        serve = ServeProcess("--prometheus", prometheus.base)
        page = await open_served_page(chromium, serve.url)
        try:
            await page.wait_for_text("job=pth-top")
            await page.wait_for_text("1 hosts (0 not up)")
            hostname = prometheus.query("pth_top_host_info")[0]["metric"]["hostname"]
            await page.wait_for_text("· 8 GPUs ·")
            await page.wait_for_text(f"{hostname}   ")  # the host table's first cell, padded to its column
            await page.screenshot(ARTIFACTS / "serve-fleet.png")
        finally:
            await page.close()
    finally:
        if serve is not None:
            serve.stop()
        stop_fleet(hosts, prometheus)
