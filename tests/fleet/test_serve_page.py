"""The page `pth-top serve` sends, in headless Chromium: nothing fetched from elsewhere, the whole terminal
visible at common window sizes, and the --allow-actions token URL working end to end."""

from __future__ import annotations

import json
import re
from urllib.parse import urljoin, urlsplit

import pytest

from tests.fleet.browser_tools import HeadlessChromium, chromium_binary
from tests.fleet.test_serve_browser import ServeProcess, open_served_page
from tests.fleet.test_serve_guard import accepts_connections
from tests.waiting import wait_for

aiohttp = pytest.importorskip("aiohttp")
pytestmark = pytest.mark.slow
URL_IN_PAGE = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)|url\(\s*["']?([^"')]+)""")

# Where the terminal's rows and columns end, and what the page and its scrolling viewport leave visible.
GEOMETRY = """JSON.stringify((() => {
  const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
  const viewport = document.querySelector('.xterm-viewport');
  const box = viewport.getBoundingClientRect();
  return {right: screen.right, bottom: screen.bottom, width: screen.width, height: screen.height,
          visibleRight: Math.min(window.innerWidth, box.left + viewport.clientWidth),
          visibleBottom: Math.min(window.innerHeight, box.top + viewport.clientHeight)};
})())"""


@pytest.fixture
def serve_factory():
    started: list[ServeProcess] = []

    def start(*arguments: str) -> ServeProcess:
        serve = ServeProcess(*arguments)
        started.append(serve)
        wait_for(lambda: accepts_connections(serve.port), "pth-top serve's port", 60)
        return serve

    yield start
    for serve in started:
        serve.stop()


def external(url: str, served_origin: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https", "ws", "wss") and f"{parts.scheme}://{parts.netloc}" != served_origin


async def test_the_page_references_nothing_outside_its_own_origin(serve_factory):
    serve = serve_factory()
    served_origin = f"http://127.0.0.1:{serve.port}"
    async with aiohttp.ClientSession() as session:
        async with session.get(serve.url) as response:
            page = await response.text()
        stylesheets = [urljoin(serve.url, url) for url in (a or b for a, b in URL_IN_PAGE.findall(page))
                       if url.endswith(".css") and not external(urljoin(serve.url, url), served_origin)]
        texts = [page]
        for stylesheet in stylesheets:
            async with session.get(stylesheet) as response:
                assert response.status == 200, stylesheet
                texts.append(await response.text())
    referenced = [a or b for text in texts for a, b in URL_IN_PAGE.findall(text)]
    assert referenced and not [url for url in referenced if external(url, served_origin)], referenced
    assert not re.search(r"https?://(?!127\.0\.0\.1)", page)


@pytest.mark.parametrize("window", [(1280, 800), (1400, 900)])
async def test_the_last_column_and_the_key_bar_are_visible(serve_factory, tmp_path, window):
    chromium_binary()
    chromium = HeadlessChromium(tmp_path, window_size=window)
    serve = serve_factory()
    try:
        page = await open_served_page(chromium, serve.url)
        try:
            await page.wait_for_text("^p")  # the key bar's last binding, drawn at the size the page asked for
            assert await page.evaluate("window.outerWidth") == window[0]
            resizes = [json.loads(frame)[1] for frame in page.sent_frames if frame.startswith('["resize"')]
            assert resizes, page.sent_frames
            geometry = json.loads(await page.evaluate(GEOMETRY))
            columns, rows = resizes[-1]["width"], resizes[-1]["height"]
            assert columns >= 100 and rows >= 30, (columns, rows)
            # The app draws columns x rows cells; every one of them lies inside what the page shows.
            assert geometry["right"] <= geometry["visibleRight"], geometry
            assert geometry["bottom"] <= geometry["visibleBottom"], geometry
            cell_width, cell_height = geometry["width"] / columns, geometry["height"] / rows
            assert geometry["visibleRight"] - geometry["right"] < cell_width, "a whole column left unused"
            assert geometry["visibleBottom"] - geometry["bottom"] < cell_height, "a whole row left unused"
        finally:
            await page.close()
    finally:
        chromium.stop()
    served = f"http://127.0.0.1:{serve.port}"
    assert page.requested_urls and not [url for url in page.requested_urls if external(url, served)], \
        page.requested_urls


async def test_the_token_url_works_end_to_end_with_actions_allowed(serve_factory, tmp_path):
    chromium_binary()
    chromium = HeadlessChromium(tmp_path)
    serve = serve_factory("--allow-actions")
    printed = re.search(r"http://\S+\?token=\S+", serve.first_line)
    assert printed, serve.first_line
    try:
        page = await open_served_page(chromium, printed.group())
        try:
            for text in ("CPU", "PID", "Kill"):
                await page.wait_for_text(text)
            assert page.websocket_urls and all("/ws/" in url for url in page.websocket_urls)
            await page.click(640, 400)
            await page.press("k")
            await page.wait_for_text("Send a signal to PID")  # the kill dialog opens: actions are allowed
        finally:
            await page.close()
    finally:
        chromium.stop()
