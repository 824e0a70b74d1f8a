"""`pth-top export`'s TLS file options: an empty path or a FIFO, device or folder is refused as input (exit 2).

An empty --tls-cert/--tls-key used to serve plain HTTP, and a FIFO hung the exporter before it listened.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CLI_CODE = "import sys, pth_top.tui.cli as c; sys.exit(c.main(sys.argv[1:]))"


@pytest.mark.parametrize("kind, message", [
    ("empty", "argument --tls-cert: empty path"),
    ("fifo", "fifo: not a regular file (a folder, device, FIFO or socket)"),
    ("folder", "folder: not a regular file (a folder, device, FIFO or socket)"),
])
def test_a_tls_file_that_is_no_file_is_exit_2_and_one_line(tmp_path, kind, message):
    path = {"empty": "", "fifo": str(tmp_path / "fifo"), "folder": str(tmp_path / "folder")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        os.mkdir(path)
    done = subprocess.run([sys.executable, "-c", CLI_CODE, "export", "--listen", "127.0.0.1:0",
                           "--tls-cert", path, "--tls-key", path], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and message in done.stderr, done.stderr
    assert "serving" not in done.stderr + done.stdout
