"""The fleet client against Prometheus's own --web.config.file: basic auth (bcrypt) over TLS, and mutual TLS.

Each refusal is one line naming what failed; with the right settings the client reads the fleet's GPUs.
"""

from __future__ import annotations

import ssl

import httpx
import pytest

from pth_top.fleet.connection import make_connection
from pth_top.fleet.query import FleetReader, PrometheusClient, QueryError
from tests.fleet.fleet_tools import FleetHost, SecuredPrometheus
from tests.fleet.prometheus_tools import binary
from tests.fleet.test_export_cli import tls_files

pytestmark = pytest.mark.slow
PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="module")
def fleet_host():
    binary("prometheus")
    host = FleetHost(0)
    yield host
    host.stop()


def bcrypt_hash(password: str) -> str:
    bcrypt = pytest.importorskip("bcrypt", reason="bcrypt (the test extra) makes the password hash")
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()


def answers(base: str, **client: object) -> bool:
    try:
        return httpx.get(f"{base}/-/ready", timeout=5, **client).status_code == 200  # type: ignore[arg-type]
    except httpx.HTTPError:
        return False


async def read_gpu_count(connection) -> int:
    """GPUs seen once the host is up: polls with the client itself (errors raise QueryError)."""
    import asyncio
    import time

    client = PrometheusClient(connection)
    try:
        give_up = time.monotonic() + 60
        while True:
            utilization = await client.vector('pth_top_gpu_utilization_ratio{job="pth-top"}')
            if len(utilization) == 8 or time.monotonic() > give_up:
                reader = FleetReader(client, scrape_interval_s=1.0)
                snapshot = await reader.refresh()
                assert snapshot.error is None, snapshot.error
                return snapshot.gpu_count
            await asyncio.sleep(0.2)
    finally:
        await client.close()


async def refused(connection) -> str:
    client = PrometheusClient(connection)
    try:
        with pytest.raises(QueryError) as caught:
            await client.vector("up")
    finally:
        await client.close()
    message = str(caught.value)
    assert "\n" not in message
    return message


async def test_basic_auth_over_tls(tmp_path, fleet_host):
    files = tls_files(tmp_path)
    web_config = (
        f"tls_server_config:\n  cert_file: {files['server']}\n  key_file: {files['server-key']}\n"
        f"basic_auth_users:\n  alice: '{bcrypt_hash(PASSWORD)}'\n"
    )
    trusted = ssl.create_default_context(cafile=files["ca"])
    prometheus = SecuredPrometheus(tmp_path, [fleet_host.instance], web_config,
                                   lambda base: answers(base, verify=trusted, auth=("alice", PASSWORD)))
    try:
        password_file = tmp_path / "password"
        password_file.write_text(PASSWORD + "\n")
        wrong_file = tmp_path / "wrong"
        wrong_file.write_text("guess\n")
        assert "certificate verify failed" in await refused(make_connection(prometheus.base))
        assert "no credentials were sent" in await refused(make_connection(prometheus.base, ca_file=files["ca"]))
        assert "HTTP 401" in await refused(make_connection(prometheus.base, ca_file=files["ca"], user="alice",
                                                           password_file=str(wrong_file)))
        plain_http = await refused(make_connection(prometheus.base.replace("https", "http"), user="alice",
                                                   password_file=str(password_file)))
        # Prometheus answers plain HTTP with a 400, then closes: which of the two the client sees first varies.
        assert ("HTTP 400" in plain_http and "HTTPS server" in plain_http) or (
            "an HTTPS server asked over http?" in plain_http)
        good = make_connection(prometheus.base, ca_file=files["ca"], user="alice", password_file=str(password_file),
                               headers=["X-Scope-OrgID: team-a"])
        assert await read_gpu_count(good) == 8
        from_environment = make_connection(prometheus.base, ca_file=files["ca"], user="alice",
                                           environ={"PTH_TOP_PROM_PASSWORD": PASSWORD})
        assert await read_gpu_count(from_environment) == 8
    finally:
        prometheus.stop()


async def test_mutual_tls_needs_the_client_certificate(tmp_path, fleet_host):
    files = tls_files(tmp_path)
    web_config = (
        f"tls_server_config:\n  cert_file: {files['server']}\n  key_file: {files['server-key']}\n"
        f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {files['ca']}\n"
    )
    trusted = ssl.create_default_context(cafile=files["ca"])
    trusted.load_cert_chain(files["client"], files["client-key"])
    prometheus = SecuredPrometheus(tmp_path, [fleet_host.instance], web_config,
                                   lambda base: answers(base, verify=trusted))
    try:
        message = await refused(make_connection(prometheus.base, ca_file=files["ca"]))
        assert message.startswith(("cannot connect", "request to")), message
        good = make_connection(prometheus.base, ca_file=files["ca"], cert_file=files["client"],
                               key_file=files["client-key"])
        assert await read_gpu_count(good) == 8
    finally:
        prometheus.stop()
