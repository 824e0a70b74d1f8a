"""The exporter against hostile clients and a hostile driver: idle and trickling connections, huge and raw labels.

Real sockets on loopback: an idle client must not stop other scrapes (TLS handshakes included), and every
connection is cut off after the (here shortened) time limit, giving its thread back.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time

import pytest

from pth_top.fleet.collector import ExporterCollector, ExportOptions, make_registry
from pth_top.fleet.metrics import MAX_LABEL_CHARS
from pth_top.fleet.server import TlsFiles, start_server
from pth_top.sensors.nvml import NvmlSession
from pth_top.text import printable
from tests.fleet.fixtures import make_exporter_gpus
from tests.fleet.prometheus_tools import http_get
from tests.fleet.scraping import parse, scrape
from tests.fleet.test_export_cli import tls_files
from tests.waiting import wait_for

# Short, so the test sees clients cut off; the waits below stay generous (a loaded 2-core machine).
TEST_TIMEOUT_S = 1.5
IDLE_CLIENTS = 30


@pytest.fixture
def short_timeout(monkeypatch):
    monkeypatch.setattr("pth_top.fleet.http_server.CONNECTION_TIMEOUT_S", TEST_TIMEOUT_S)


def fake_registry():
    return make_registry(ExporterCollector(NvmlSession(make_exporter_gpus(2)), ExportOptions(reuse_s=0)))


def connection_threads() -> int:
    return sum("process_request_thread" in thread.name for thread in threading.enumerate())


def closed_by_server(client: socket.socket) -> bool:
    """True once the server has closed `client` (EOF or reset); False while it is still open."""
    client.settimeout(0.05)
    try:
        return client.recv(1) == b""
    except TimeoutError:
        return False
    except (ConnectionResetError, ssl.SSLError):
        return True


def scraped(port: int) -> bool:
    try:
        return parse(http_get(f"http://127.0.0.1:{port}/metrics", timeout_s=10).decode()).get("pth_top_nvml_up") == 1.0
    except OSError:
        return False


@pytest.fixture
def tls_server(tmp_path, short_timeout):
    files = tls_files(tmp_path)
    server, port = start_server("127.0.0.1", 0, fake_registry(),
                                TlsFiles(files["server"], files["server-key"], files["ca"]))
    trusted = ssl.create_default_context(cafile=files["ca"])
    trusted.load_cert_chain(files["client"], files["client-key"])
    yield f"https://127.0.0.1:{port}/metrics", port, trusted, files
    server.shutdown()
    server.server_close()


def test_an_idle_tls_client_does_not_stop_scrapes_and_is_cut_off(tls_server):
    url, port, trusted, files = tls_server
    idle = socket.create_connection(("127.0.0.1", port))
    try:
        started = time.monotonic()
        # Before, the handshake ran in the accept loop: this scrape waited for the idle client forever.
        assert parse(http_get(url, timeout_s=10, context=trusted).decode()).get("pth_top_nvml_up") == 1.0
        assert time.monotonic() - started < 10
        wait_for(lambda: closed_by_server(idle), "the idle TLS client to be cut off")
    finally:
        idle.close()
    untrusted = ssl.create_default_context(cafile=files["ca"])
    with pytest.raises((OSError, ssl.SSLError)):
        http_get(url, timeout_s=10, context=untrusted)


def test_a_client_trickling_its_handshake_is_cut_off(tls_server):
    """A time limit per read is not enough: one byte now and then must not keep the connection."""
    _url, port, _trusted, _files = tls_server
    client = socket.create_connection(("127.0.0.1", port))
    hello = b"\x16\x03\x01\x02\x00" + b"\x01" * 512  # a TLS record header and a ClientHello it never finishes
    try:
        cut_off = False
        give_up = time.monotonic() + 15 * TEST_TIMEOUT_S
        for byte in hello:
            if closed_by_server(client) or time.monotonic() > give_up:
                cut_off = closed_by_server(client)
                break
            try:
                client.sendall(bytes([byte]))
            except OSError:
                cut_off = True
                break
            time.sleep(TEST_TIMEOUT_S / 10)
        assert cut_off, "the server kept a connection that never finished its handshake"
    finally:
        client.close()


def test_idle_and_trickling_http_clients_are_cut_off_and_their_threads_end(short_timeout):
    server, port = start_server("127.0.0.1", 0, fake_registry(), None)
    before = connection_threads()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(IDLE_CLIENTS)]
    trickler = socket.create_connection(("127.0.0.1", port))
    try:
        wait_for(lambda: connection_threads() > before, "threads for the idle clients")
        assert parse(http_get(f"http://127.0.0.1:{port}/metrics", timeout_s=10).decode()).get("pth_top_nvml_up") == 1.0
        give_up = time.monotonic() + 15 * TEST_TIMEOUT_S
        request = b"GET /metrics HTTP/1.1\r\n" + b"X-Slow: " + b"a" * 4000
        for byte in request:
            if closed_by_server(trickler) or time.monotonic() > give_up:
                break
            try:
                trickler.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(TEST_TIMEOUT_S / 10)
        assert closed_by_server(trickler), "a request head sent a byte at a time must not hold the connection"
        wait_for(lambda: all(closed_by_server(client) for client in idle), "the idle clients to be cut off")
        wait_for(lambda: connection_threads() <= before, "the idle clients' threads to end")
    finally:
        for client in (*idle, trickler):
            client.close()
        server.shutdown()
        server.server_close()


HUGE = 100_000


def hostile_gpus():
    fake = make_exporter_gpus(2)
    fake.devices[0].values["nvmlDeviceGetName"] = "NVIDIA \x1b]52;c;cm0gLXJmIH4=\x07H100" + "A" * HUGE
    fake.devices[1].values["nvmlDeviceGetName"] = "\u202eevil\u2066" + "B" * HUGE
    fake.devices[1].values["nvmlDeviceGetVbiosVersion"] = b"96.00\x1b[2J" + b"\xff" * HUGE
    fake.system_values["nvmlSystemGetNVMLVersion"] = "12.550\x1b[31m\x00" + "9" * HUGE
    return fake


def test_every_label_is_printable_and_capped_whatever_the_driver_says():
    result = scrape(make_registry(ExporterCollector(NvmlSession(hostile_gpus()), ExportOptions(reuse_s=0))))
    labels = [value for (_name, pairs) in result.values for _label, value in pairs]
    assert labels and max(len(value) for value in labels) <= MAX_LABEL_CHARS
    assert all(printable(value) == value for value in labels), [value for value in labels if printable(value) != value]
    build = next(dict(pairs) for (name, pairs) in result.values if name == "pth_top_build_info")
    assert build["nvml_version"].startswith("12.550\\x1b[31m\\x00")
    names = {dict(pairs)["gpu"]: dict(pairs)["name"] for (name, pairs) in result.values if name == "pth_top_gpu_info"}
    assert names["0"].startswith("NVIDIA \\x1b]52;c;") and names["1"].startswith("\\u202eevil\\u2066")
    assert len(result.text) < 200_000, "no 100,000-character label is served"


def test_a_flood_of_connections_holds_no_more_threads_than_the_cap(monkeypatch):
    monkeypatch.setattr("pth_top.fleet.http_server.MAX_CONNECTIONS", 5, raising=False)
    monkeypatch.setattr("pth_top.fleet.http_server.CONNECTION_TIMEOUT_S", 60.0)
    monkeypatch.setattr("pth_top.fleet.http_server.FIRST_BYTE_TIMEOUT_S", 60.0)
    server, port = start_server("127.0.0.1", 0, fake_registry(), None)
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
    try:
        wait_for(lambda: connection_threads() >= 5, "a thread for each held connection")
        # Before, the new connection was refused while the idle ones kept their slots: scrapes failed.
        assert scraped(port), "a scrape when the pool is full of idle connections"
        wait_for(lambda: closed_by_server(held[0]), "the oldest idle connection to make room")
        assert not any(closed_by_server(client) for client in held[2:]), "the newer idle ones are still open"
        wait_for(lambda: connection_threads() <= 5, "no more threads than the cap")
    finally:
        for client in held:
            client.close()
        server.shutdown()
        server.server_close()


def scrape_from(source: str, port: int) -> bytes:
    """One plain GET /metrics from the loopback address `source` (127.0.0.x is all loopback)."""
    with socket.socket() as client:
        client.bind((source, 0))
        client.settimeout(10)
        client.connect(("127.0.0.1", port))
        client.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    return answer


def test_idle_connections_from_one_peer_stop_no_scrape(monkeypatch):
    monkeypatch.setattr("pth_top.fleet.http_server.CONNECTION_TIMEOUT_S", 60.0)
    server, port = start_server("127.0.0.1", 0, fake_registry(), None)
    held = []
    try:
        for _ in range(260):  # the tester's attack: more idle connections than the server's cap, one address
            client = socket.socket()
            client.bind(("127.0.0.1", 0))
            client.connect(("127.0.0.1", port))
            held.append(client)
        # Before, all 256 slots were held for 15 s and every new connection was closed on arrival.
        assert b"pth_top_nvml_up 1.0" in scrape_from("127.0.0.2", port), "another peer still scrapes"
        started = time.monotonic()
        answer = scrape_from("127.0.0.1", port)
        assert b"pth_top_nvml_up 1.0" in answer, "the same peer scrapes too, evicting its own idle connections"
        assert time.monotonic() - started < 30.0
        assert connection_threads() <= 40, "one address holds no more than its share of threads"
    finally:
        for client in held:
            client.close()
        server.shutdown()
        server.server_close()


def test_a_connection_silent_past_the_first_byte_deadline_is_closed(monkeypatch):
    monkeypatch.setattr("pth_top.fleet.http_server.CONNECTION_TIMEOUT_S", 120.0)
    monkeypatch.setattr("pth_top.fleet.http_server.FIRST_BYTE_TIMEOUT_S", 0.5, raising=False)
    server, port = start_server("127.0.0.1", 0, fake_registry(), None)
    idle = socket.create_connection(("127.0.0.1", port))
    try:
        # Before, a silent client kept its connection for the whole CONNECTION_TIMEOUT_S (120 s here).
        wait_for(lambda: closed_by_server(idle), "the silent connection to be closed", timeout_s=30)
        assert scraped(port)
    finally:
        idle.close()
        server.shutdown()
        server.server_close()
