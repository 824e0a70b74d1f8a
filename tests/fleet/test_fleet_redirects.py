"""Credentials stay with the origin they were given for: two real loopback servers, the first redirects.

Whatever the credential (basic auth, bearer token, --prom-header, $PTH_TOP_PROM_HEADERS, a client
certificate), the second server never sees a connection, and `fleet --json` says so in one line, exit 1.
"""

from __future__ import annotations

import ssl
import subprocess
import sys

import pytest

from pth_top.tui.cli import main
from tests.fleet.loopback_prometheus import LoopbackPrometheus, redirect, send, targets_answer, vector_answer
from tests.fleet.test_export_cli import tls_files


def fleet_answers(handler, seen) -> None:
    """What a real Prometheus of one host would answer: had the client followed, `fleet --json` would succeed."""
    if "/api/v1/targets" in seen.path:
        send(handler, targets_answer([{"labels": {"job": "pth-top"}, "scrapeInterval": "5s"}]))
    else:
        send(handler, vector_answer([({"instance": "node:9824", "gpu": "0"}, 1.0)]))


CREDENTIALS = {
    "basic auth": (["--prom-user", "alice"], {"PTH_TOP_PROM_PASSWORD": "s3cret"}),
    "bearer token": (["--prom-bearer-token-file", "{token}"], {}),
    "--prom-header": (["--prom-header", "X-Api-Key: key-123"], {}),
    "$PTH_TOP_PROM_HEADERS": ([], {"PTH_TOP_PROM_HEADERS": "X-Scope-OrgID: tenant-9\nX-Api-Key: key-456"}),
}
SECRETS = ("s3cret", "c3VjcmV0", "YWxpY2U6czNjcmV0", "tok-789", "key-123", "tenant-9", "key-456")


def run_fleet(arguments: list[str], environment: dict[str, str], monkeypatch, capsys) -> tuple[int, str, str]:
    for name in ("PTH_TOP_PROM_PASSWORD", "PTH_TOP_PROM_BEARER_TOKEN", "PTH_TOP_PROM_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    code = main(["fleet", *arguments, "--json", "--prom-timeout", "20"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind", list(CREDENTIALS))
def test_a_redirect_to_another_port_is_refused_and_the_target_sees_no_credential(kind, tmp_path, monkeypatch,
                                                                                 capsys):
    token = tmp_path / "token"
    token.write_text("tok-789\n")
    flags, environment = CREDENTIALS[kind]
    with LoopbackPrometheus(fleet_answers) as target, LoopbackPrometheus(redirect(target.base)) as origin:
        arguments = ["--prometheus", origin.base, *(flag.format(token=token) for flag in flags)]
        code, out, err = run_fleet(arguments, environment, monkeypatch, capsys)
        assert code == 1 and out == ""
        assert err.count("\n") == 1 and "another origin: refused" in err, err
        assert not any(secret in err for secret in SECRETS)
        assert origin.requests, "the origin was asked"
        assert any(secret in str(origin.requests[0].headers) for secret in SECRETS), "with the credential"
        assert target.connections == 0 and target.requests == [], "the redirect target never hears of it"


def test_a_redirect_to_another_https_port_never_presents_the_client_certificate(tmp_path, monkeypatch, capsys):
    files = tls_files(tmp_path)

    def server_context() -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(files["server"], files["server-key"])
        context.load_verify_locations(files["ca"])
        context.verify_mode = ssl.CERT_OPTIONAL  # records whether the client showed its certificate
        return context

    with LoopbackPrometheus(fleet_answers, tls=server_context()) as target, \
            LoopbackPrometheus(redirect(target.base), tls=server_context()) as origin:
        arguments = ["--prometheus", origin.base, "--prom-ca-file", files["ca"], "--prom-cert-file", files["client"],
                     "--prom-key-file", files["client-key"]]
        code, out, err = run_fleet(arguments, {}, monkeypatch, capsys)
        assert code == 1 and out == "" and err.count("\n") == 1 and "another origin: refused" in err, err
        assert origin.requests and origin.requests[0].client_certificate, "the origin saw the certificate"
        assert target.connections == 0, "the redirect target never saw a handshake"


def test_a_redirect_within_the_origin_keeps_every_credential(tmp_path, monkeypatch, capsys):
    def gateway(handler, seen) -> None:
        if seen.path.startswith("/prom/"):
            fleet_answers(handler, seen)
        else:
            send(handler, b"", 308, {"Location": "/prom" + seen.path.split("?")[0]})

    with LoopbackPrometheus(gateway) as server:
        arguments = ["--prometheus", server.base, "--prom-user", "alice", "--prom-header", "X-Api-Key: key-123"]
        code, out, err = run_fleet(arguments, {"PTH_TOP_PROM_PASSWORD": "s3cret"}, monkeypatch, capsys)
        assert code == 0 and err == "", err
        followed = [seen for seen in server.requests if seen.path.startswith("/prom/")]
        assert followed and all(seen.headers.get("authorization") == "Basic YWxpY2U6czNjcmV0"
                                and seen.headers.get("x-api-key") == "key-123" for seen in followed)


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://127.0.0.1/x", "http://127.0.0.1:0/x"])
def test_a_redirect_to_another_scheme_is_one_line_and_nothing_else(location):
    with LoopbackPrometheus(redirect(location)) as server:
        result = subprocess.run(
            [sys.executable, "-W", "always", "-m", "pth_top.tui.cli", "fleet", "--prometheus",
             server.base, "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "another origin: refused" in result.stderr, result.stderr
