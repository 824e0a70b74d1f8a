"""`fleet` and `serve`: every Prometheus secret, certificate and CA file option refuses what is no regular file.

A FIFO hung both commands (the secret was read with a plain open()), a folder or /dev/zero as --prom-ca-file
said "no such file", and an empty --prom-password-file was taken as not given.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pth_top.fleet.connection import ConnectionSettingError, make_connection

CLI_CODE = "import sys, pth_top.tui.cli as c; sys.exit(c.main(sys.argv[1:]))"
NOT_REGULAR = "not a regular file (a folder, device, FIFO or socket)"
# (flag, the other flags it needs); an https URL so that the TLS files are wanted.
FILE_OPTIONS = [
    ("--prom-password-file", ["--prom-user", "alice"]), ("--prom-bearer-token-file", []), ("--prom-ca-file", []),
    ("--prom-cert-file", ["--prom-key-file", "/etc/hostname"]),
    ("--prom-key-file", ["--prom-cert-file", "/etc/hostname"]),
]


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI_CODE, *arguments], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def no_file(tmp_path, kind: str) -> str:
    if kind == "fifo":
        os.mkfifo(tmp_path / "fifo")
        return str(tmp_path / "fifo")
    return {"empty": "", "folder": str(tmp_path), "device": "/dev/zero"}[kind]


@pytest.mark.parametrize("command", ["fleet", "serve"])
@pytest.mark.parametrize("flag, others", FILE_OPTIONS)
@pytest.mark.parametrize("kind", ["fifo", "folder", "device", "empty"])
def test_a_file_option_that_is_no_file_is_one_line_and_exit_2(tmp_path, command, flag, others, kind):
    path = no_file(tmp_path, kind)
    extra = ["--json"] if command == "fleet" else ["--listen", "127.0.0.1:0"]
    done = run_cli(command, "--prometheus", "https://127.0.0.1:9", flag, path, *others, *extra)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"argument {flag}: " + ("empty path" if kind == "empty" else f"{path}: {NOT_REGULAR}") in done.stderr
    assert "serve:" not in done.stdout, "serve started"


@pytest.mark.parametrize("setting, what", [
    ("password_file", "password"), ("bearer_token_file", "bearer token"), ("ca_file", "CA"),
    ("cert_file", "client certificate"), ("key_file", "client key"),
])
@pytest.mark.parametrize("kind, reason", [
    ("fifo", "not a regular file (a device, FIFO or socket)"), ("folder", "is a folder"),
    ("device", "not a regular file (a device, FIFO or socket)"), ("empty", "empty path"),
])
def test_make_connection_says_what_the_file_is(tmp_path, setting, what, kind, reason):
    """The tab processes of `serve` and any other caller get the same check, without the CLI's."""
    path = no_file(tmp_path, kind)
    settings: dict = {setting: path, "environ": {}}
    if setting == "password_file":
        settings["user"] = "alice"
    if setting in ("cert_file", "key_file"):
        settings.setdefault("cert_file", "/etc/hostname")
        settings.setdefault("key_file", "/etc/hostname")
    with pytest.raises(ConnectionSettingError) as caught:
        make_connection("https://127.0.0.1:9", **settings)
    message = str(caught.value)
    assert what in message and reason in message and "no such file" not in message, message
