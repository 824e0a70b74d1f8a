"""`pth-top fleet` settings: credentials never in the URL, secrets from files or env, bad input exits 2 in one line."""

from __future__ import annotations

import pytest

from pth_top.fleet.connection import (
    PASSWORD_ENV,
    ConnectionSettingError,
    checked_url,
    make_connection,
    parse_header,
)
from pth_top.tui.cli import main


@pytest.mark.parametrize("url", [
    "http://alice:secret@prom:9090", "https://alice@prom:9090", "http://:pw@prom",
])
def test_credentials_in_the_url_are_refused_without_echoing_them(url):
    with pytest.raises(ConnectionSettingError, match="credentials in the --prometheus URL are refused") as caught:
        checked_url(url)
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize("url, problem", [
    ("prom:9090", "http:// or https://"), ("ftp://prom", "http:// or https://"), ("http://", "no host"),
    ("http://prom:9090/?x=1", "query or fragment"), ("file:///etc/passwd", "http:// or https://"),
])
def test_urls_that_are_not_a_prometheus_base(url, problem):
    with pytest.raises(ConnectionSettingError, match=problem):
        checked_url(url)


def test_url_keeps_a_path_prefix_and_drops_the_trailing_slash():
    assert checked_url("https://gw.example/prometheus/") == "https://gw.example/prometheus"


@pytest.mark.parametrize("text", ["NoColon", ": value", "Bad Name: x", "X-A: a\x1bb", "Authorization: Bearer x",
                                  "X-Team: caf\u00e9", "X-Team: \u2603", "X-Team: a\udcff"])
def test_bad_headers(text):
    with pytest.raises(ConnectionSettingError):
        parse_header(text)


def test_password_from_file_or_environment_and_bearer_token_from_file(tmp_path):
    password = tmp_path / "password"
    password.write_text("pw\nignored second line\n")
    assert make_connection("http://p", user="u", password_file=str(password)).authorization == "Basic dTpwdw=="
    assert make_connection("http://p", user="u", environ={PASSWORD_ENV: "pw"}).authorization == "Basic dTpwdw=="
    token = tmp_path / "token"
    token.write_text("abc\n")
    assert make_connection("http://p", bearer_token_file=str(token)).authorization == "Bearer abc"
    assert "abc" not in repr(make_connection("http://p", bearer_token_file=str(token))), "secrets stay out of repr"


@pytest.mark.parametrize("settings, problem", [
    ({"user": "u"}, "needs --prom-password-file"),
    ({"user": "u:x", "environ": {PASSWORD_ENV: "pw"}}, "without ':'"),
    ({"password_file": "/nonexistent"}, "needs --prom-user"),
    ({"user": "u", "password_file": "/nonexistent/pw"}, "cannot read password file"),
    ({"bearer_token_file": "/dev/null"}, "not a regular file"),
    ({"cert_file": "/etc/hostname"}, "go together"),
    ({"ca_file": "/etc/hostname"}, "need an https://"),
    ({"ca_file": "/nonexistent.pem", "url": "https://p"}, "no such file"),
])
def test_bad_settings_say_which(settings, problem):
    url = settings.pop("url", "http://p")
    settings.setdefault("environ", {})
    with pytest.raises(ConnectionSettingError, match=problem):
        make_connection(url, **settings)


def test_oversized_secret_file_is_refused(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(ConnectionSettingError, match="larger than"):
        make_connection("http://p", bearer_token_file=str(big))


@pytest.mark.parametrize("arguments, problem", [
    (["fleet", "--json"], "--prometheus URL is required"),
    (["fleet", "--prometheus", "http://a:b@p", "--json"], "credentials in the --prometheus URL are refused"),
    (["fleet", "--prometheus", "http://p", "--prom-header", "nope", "--json"], "--prom-header must be"),
    (["fleet", "--prometheus", "http://p", "--interval", "nan"], "--interval must be between"),
    (["fleet", "--prometheus", "http://p", "--prom-header", "X-Team: caf\u00e9", "--json"], "must be ASCII"),
])
def test_cli_bad_input_is_one_line_and_exit_2(arguments, problem, capsys):
    assert exit_code(arguments) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1


def exit_code(arguments: list[str]) -> int:
    """main()'s exit code, also when argparse exits."""
    try:
        return main(arguments)
    except SystemExit as stop:
        return int(stop.code or 0)


def test_cli_unreachable_prometheus_is_one_line_and_exit_1(capsys):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["fleet", "--prometheus", f"http://127.0.0.1:{port}", "--json"]) == 1
    err = capsys.readouterr().err
    assert "connection refused" in err and err.count("\n") == 1


def test_cli_screen_needs_a_terminal(capsys):
    assert main(["fleet", "--prometheus", "http://127.0.0.1:9"]) == 2
    assert "pth-top fleet --json" in capsys.readouterr().err


@pytest.mark.parametrize("ca_text", [
    "not a certificate\n", "-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n", "",
])
def test_cli_a_ca_file_that_is_not_pem_is_one_line_and_exit_2(ca_text, tmp_path, capsys):
    ca_file = tmp_path / "ca.pem"
    ca_file.write_text(ca_text)
    assert exit_code(["fleet", "--prometheus", "https://p", "--prom-ca-file", str(ca_file), "--json"]) == 2
    err = capsys.readouterr().err
    assert f"cannot load CA file {ca_file}" in err and err.count("\n") == 1 and "internal error" not in err
