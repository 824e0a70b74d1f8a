"""Each query is bounded in size and in time, over real loopback sockets: an answer past MAX_ANSWER_BYTES is
refused as it streams in or inflates, and --prom-timeout bounds the whole query, not each read (a trickler)."""

from __future__ import annotations

import asyncio
import gzip
import threading
import time
import zlib

import pytest

from pth_top.fleet.client import MAX_ANSWER_BYTES
from pth_top.fleet.connection import make_connection
from pth_top.fleet.query import PrometheusClient, QueryError
from pth_top.tui.cli import main
from tests.fleet.loopback_prometheus import LoopbackPrometheus, send, vector_answer

# Past the cap, then silence: without a cap the client would hold all of it and then wait on the next read.
SENT_BYTES = MAX_ANSWER_BYTES * 3
OUTER_DEADLINE_S = 90.0


def answering(stop: threading.Event, declared: int | None = None):
    """A vector answer that never ends well: far too long (chunked past the cap), or one byte at a time.

    With `declared`, the Content-Length says so and the bytes trickle; either way the server gives up after
    OUTER_DEADLINE_S, so that a client without bounds fails the test rather than hangs it.
    """
    chunk = b'{"metric":{"instance":"node:9824"},"value":[1,"1"]},' * 20_000

    def respond(handler, seen) -> None:
        give_up = time.monotonic() + OUTER_DEADLINE_S
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(SENT_BYTES if declared is None else declared))
        handler.end_headers()
        handler.wfile.write(b'{"status":"success","data":{"resultType":"vector","result":[')
        sent = 0
        while not stop.is_set() and time.monotonic() < give_up:
            if declared is None and sent < SENT_BYTES:
                handler.wfile.write(chunk)
                sent += len(chunk)
            elif declared is not None:
                handler.wfile.write(b" ")
                handler.wfile.flush()
                stop.wait(0.2)
            else:
                stop.wait(0.2)

    return respond


async def query_error(base: str, timeout_s: float) -> tuple[str, float]:
    client = PrometheusClient(make_connection(base, timeout_s=timeout_s))
    started = time.monotonic()
    try:
        with pytest.raises(QueryError) as caught:
            await asyncio.wait_for(client.vector("up"), OUTER_DEADLINE_S)
    finally:
        await client.close()
    return str(caught.value), time.monotonic() - started


@pytest.mark.parametrize("declared", [None, 10**12])
async def test_an_answer_past_the_cap_is_refused_as_it_streams_in(declared):
    stop = threading.Event()
    with LoopbackPrometheus(answering(stop, declared)) as server:
        try:
            message, _ = await query_error(server.base, timeout_s=60)
        finally:
            stop.set()
    assert message == f"the answer from {server.base} is larger than 16 MiB: refused"


async def test_a_server_that_trickles_is_cut_off_at_the_query_deadline():
    stop = threading.Event()
    with LoopbackPrometheus(answering(stop, 10**6)) as server:
        try:
            message, took_s = await query_error(server.base, timeout_s=1.5)
        finally:
            stop.set()
    assert message.startswith("Prometheus did not answer within 1.5 s") and took_s < OUTER_DEADLINE_S / 2


def test_the_cli_says_so_in_one_line_and_prints_nothing_else(capsys):
    stop = threading.Event()
    with LoopbackPrometheus(answering(stop, 10**6)) as server:
        started = time.monotonic()
        try:
            code = main(["fleet", "--prometheus", server.base, "--json", "--prom-timeout", "1"])
        finally:
            stop.set()
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and err.count("\n") == 1 and "did not answer within 1 s" in err
    assert time.monotonic() - started < OUTER_DEADLINE_S / 2, "the whole query, not each read"


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """A valid vector answer, 4 x the cap of blanks when inflated, some 256 KiB as sent."""
    deflate = zlib.compressobj(9, wbits=31)
    parts = [deflate.compress(b'{"status":"success","data":{"resultType":"vector","result":[')]
    blanks = b" " * (1 << 20)
    parts += [deflate.compress(blanks) for _ in range(4 * MAX_ANSWER_BYTES // len(blanks))]
    parts.append(deflate.compress(b"]}}") + deflate.flush())
    return b"".join(parts)


@pytest.mark.parametrize("encoding, message", [
    ("gzip", "is larger than 16 MiB: refused"), ("br", "is br-encoded; only gzip is read"),
])
async def test_a_compressed_answer_is_inflated_within_the_cap(encoding, message, gzip_bomb):
    with LoopbackPrometheus(lambda handler, seen: send(handler, gzip_bomb, headers={
            "Content-Encoding": encoding})) as server:
        text, _ = await query_error(server.base, timeout_s=60)
    assert text == f"the answer from {server.base} {message}"


async def test_a_gzipped_answer_is_read():
    answer = gzip.compress(vector_answer([({"instance": "node:9824"}, 1.0)]))
    gzipped = {"Content-Encoding": "gzip"}
    with LoopbackPrometheus(lambda handler, seen: send(handler, answer, headers=gzipped)) as server:
        client = PrometheusClient(make_connection(server.base))
        try:
            assert await client.vector("up") == [({"instance": "node:9824"}, 1.0)]
        finally:
            await client.close()
    assert server.requests[0].headers["accept-encoding"] == "gzip"
