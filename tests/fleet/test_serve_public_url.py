"""`pth-top serve --public-url`: only an http(s) URL with a host, no credentials, query or fragment; path ends in '/'.

It was printed unchecked (javascript:alert(1) too), "" fell back to the default, and a path without its
trailing slash sent the page's relative URLs (static files, the websocket) one folder up.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys

import pytest

from tests.fleet.test_serve_browser import ServeProcess

CLI_CODE = "import sys, pth_top.tui.cli as c; sys.exit(c.main(sys.argv[1:]))"


@pytest.fixture
def taken_port():
    """A port already in use: a serve that got past its arguments fails at once instead of serving."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


@pytest.mark.parametrize("url, problem", [
    ("javascript:alert(1)", "http:// or https:// URL with a host"),
    ("", "http:// or https:// URL with a host"),
    ("ftp://proxy.example/", "http:// or https:// URL with a host"),
    ("http:///pth/", "http:// or https:// URL with a host"),
    ("https://alice:secret@proxy.example/", "must not carry user:password"),
    ("https://proxy.example/pth/?x=1", "query or fragment"),
    ("https://proxy.example/pth/#top", "query or fragment"),
    ("https://proxy.example:99999/", "not a URL"),
    ("https://proxy.example/\x1b]0;owned\x07", "plain ASCII without spaces"),
])
def test_a_bad_public_url_is_one_line_and_exit_2(taken_port, url, problem):
    done = subprocess.run([sys.executable, "-c", CLI_CODE, "serve", "--listen", f"127.0.0.1:{taken_port}",
                           "--public-url", url], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "argument --public-url: " in done.stderr and problem in done.stderr, done.stderr
    assert "secret" not in done.stderr and "\x1b" not in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_a_public_url_path_gets_its_trailing_slash():
    serve = ServeProcess("--public-url", "https://proxy.example/pth")
    try:
        printed = re.search(r"https://\S+", serve.first_line)
        assert printed, serve.first_line
        assert printed.group() == "https://proxy.example/pth/", serve.first_line
    finally:
        serve.stop()
