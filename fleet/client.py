"""Prometheus's HTTP API, bounded: one deadline per query, a size cap per answer, credentials kept at home.

Every credential (basic auth, bearer token, extra headers, the client certificate) is for the origin
(scheme, host, port) of --prometheus: a redirect within it is followed, one elsewhere is refused.
Needs httpx (the `fleet` extra).
"""

from __future__ import annotations

import asyncio
import threading
import urllib.parse
import zlib
from typing import AsyncIterator, Awaitable, Callable, Mapping, Sequence, TypeVar

import httpx
import msgspec

from pth_top.fleet import answers
from pth_top.fleet.connection import Connection
from pth_top.text import printable

MAX_REDIRECTS = 3
# The biggest answer of the view at 2,000 hosts x 8 GPUs is 16,000 series of ~250 bytes (~4 MB): 4x that.
# A bigger answer is a mistake or hostile, and is not held in memory.
MAX_ANSWER_BYTES = 16 * 1024 * 1024
# The answers of one refresh (its queries run at once) held together, before decoding, at most.
MAX_HELD_BYTES = 48 * 1024 * 1024
DEFAULT_PORTS = {"http": 80, "https": 443}
T = TypeVar("T")
# Answers are decoded in a worker thread, one at a time: the event loop runs on, and peak memory is one decode.
_DECODING = threading.Lock()


class QueryError(Exception):
    """A refresh failed; the message is one printable line saying what (refused, 401, bad query, timeout)."""


def origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL; None for anything else (file:, a bad port)."""
    try:
        parsed = urllib.parse.urlsplit(url)
        port = parsed.port
    except ValueError:
        return None
    if parsed.scheme not in DEFAULT_PORTS or not parsed.hostname:
        return None
    return parsed.scheme, parsed.hostname.lower(), port or DEFAULT_PORTS[parsed.scheme]


async def all_or_none(awaitables: Sequence[Awaitable[T]]) -> list[T]:
    """Every result, or the first failure with the others cancelled and awaited (none left running)."""
    tasks = [asyncio.ensure_future(awaitable) for awaitable in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class PrometheusClient:
    """POSTs instant queries; redirects only within the origin; errors become QueryError."""

    def __init__(self, connection: Connection, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.connection = connection
        self.queries_sent = 0
        self.malformed = 0  # series and targets skipped for their shape, since the start
        self.held_bytes = 0  # of answers received and not yet decoded, all queries together
        self._origin = origin(connection.url)
        # gzip, inflated here within the cap (httpx would inflate a whole chunk, or brotli, unbounded).
        self._headers = {"Accept-Encoding": "gzip", **dict(connection.headers)}
        if connection.authorization:
            self._headers["Authorization"] = connection.authorization
        self._client = httpx.AsyncClient(
            verify=connection.ssl_context(), follow_redirects=False, timeout=connection.timeout_s,
            transport=transport, trust_env=False,
        )

    async def close(self) -> None:
        await self._client.aclose()

    async def api(self, path: str, form: Mapping[str, str] | None = None,
                  decode: Callable[[msgspec.Raw], T] = lambda data: data) -> T:  # type: ignore[assignment,return-value]
        """`decode` of the still-encoded `data` of one API call: POST with `form`, GET without; --prom-timeout
        for all of it, decoding included."""
        self.queries_sent += 1
        try:
            return await asyncio.wait_for(self._api(path, form, decode), self.connection.timeout_s)
        except asyncio.TimeoutError:
            raise QueryError(
                f"Prometheus did not answer within {self.connection.timeout_s:g} s ({self.connection.url}{path})"
            ) from None

    async def _api(self, path: str, form: Mapping[str, str] | None, decode: Callable[[msgspec.Raw], T]) -> T:
        url = f"{self.connection.url}{path}"
        for _ in range(MAX_REDIRECTS + 1):
            status_code, location, body = await self._send(url, form)
            if location is None:
                try:
                    return await asyncio.to_thread(self._decoded, body, status_code, decode)
                finally:
                    self.held_bytes -= len(body)
            target = urllib.parse.urljoin(url, location)
            if origin(target) != self._origin:
                raise QueryError(printable(
                    f"{self.connection.url} redirected to {target[:200]}, another origin: refused, as the "
                    "credentials are for this one (point --prometheus there if that is the right server)"))
            url = target
        raise QueryError(f"more than {MAX_REDIRECTS} redirects from {self.connection.url}")

    def _decoded(self, body: bytes, status_code: int, decode: Callable[[msgspec.Raw], T]) -> T:
        """In a worker thread: the answer's `data`, decoded; AnswerError becomes QueryError."""
        with _DECODING:
            try:
                return decode(answers.api_data(body, status_code, self.connection.url))
            except answers.AnswerError as error:
                raise QueryError(str(error)) from None

    async def _send(self, url: str, form: Mapping[str, str] | None) -> tuple[int, str | None, bytes]:
        """(status, redirect location or None, body of at most MAX_ANSWER_BYTES) of one request."""
        request = self._client.build_request(
            "GET" if form is None else "POST", url, headers=self._headers, data=None if form is None else dict(form))
        try:
            response = await self._client.send(request, stream=True)
            try:
                if response.is_redirect:
                    return response.status_code, response.headers["location"], b""
                self._check_status(response)
                return response.status_code, None, await self._body(response)
            finally:
                await response.aclose()
        except httpx.TimeoutException:
            raise QueryError(f"Prometheus did not answer within {self.connection.timeout_s:g} s ({url})") from None
        except httpx.ConnectError as error:
            raise QueryError(printable(f"cannot connect to {self.connection.url}: {_reason(error)}")) from None
        except httpx.HTTPError as error:
            raise QueryError(printable(f"request to {self.connection.url} failed: {_reason(error)}")) from None
        except OSError as error:  # ssl.SSLError too: with TLS 1.3 a refused client certificate shows on read
            raise QueryError(printable(f"request to {self.connection.url} failed: {error}")) from None

    def _check_status(self, response: httpx.Response) -> None:
        if response.status_code in (401, 403):
            hint = "" if self.connection.authorization else " (no credentials were sent: see --prom-user)"
            raise QueryError(f"Prometheus refused the request: HTTP {response.status_code}{hint}")

    async def _body(self, response: httpx.Response) -> bytes:
        """The body as sent, or gunzipped; never more than MAX_ANSWER_BYTES of it held, nor more than MAX_HELD_BYTES
        of all answers in flight (counted in held_bytes until the caller has decoded it)."""
        too_big = QueryError(f"the answer from {self.connection.url} is larger than "
                             f"{MAX_ANSWER_BYTES // (1024 * 1024)} MiB: refused")
        declared = response.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            raise too_big
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            raise QueryError(printable(
                f"the answer from {self.connection.url} is {encoding[:40]}-encoded; only gzip is read"))
        if response.is_stream_consumed:  # read already, and inflated, by an in-memory transport (tests)
            encoding, chunks = "identity", _once(response.content)
        else:
            chunks = response.aiter_raw()
        inflate = zlib.decompressobj(wbits=31) if encoding == "gzip" else None
        body = bytearray()
        try:
            async for chunk in chunks:
                held_before = len(body)
                while chunk and len(body) <= MAX_ANSWER_BYTES:
                    if inflate is None:
                        body += chunk
                        break
                    body += inflate.decompress(chunk, MAX_ANSWER_BYTES + 1 - len(body))
                    chunk = inflate.unconsumed_tail
                self.held_bytes += len(body) - held_before
                if len(body) > MAX_ANSWER_BYTES:
                    raise too_big
                if self.held_bytes > MAX_HELD_BYTES:
                    raise QueryError(f"the answers from {self.connection.url} to one refresh are larger than "
                                     f"{MAX_HELD_BYTES // (1024 * 1024)} MiB together: refused")
        except zlib.error as error:
            self.held_bytes -= len(body)
            raise QueryError(printable(f"the answer from {self.connection.url} is not valid gzip: {error}")) from None
        except BaseException:
            self.held_bytes -= len(body)
            raise
        return bytes(body)

    async def vector(self, promql: str) -> list[answers.Series]:
        """An instant query's series as (labels, reading); malformed series are skipped and counted."""
        decoded = await self.api("/api/v1/query", {"query": promql}, answers.vector_series)
        if decoded is None:
            raise QueryError(printable(f"not an instant vector answer to {promql[:80]}"))
        series, malformed = decoded
        self.malformed += malformed
        return series

    async def readings(self, promql: str, label: str) -> answers.Readings:
        """An instant query's readings by (instance, `label`'s value); malformed series are skipped and counted."""
        decoded = await self.api("/api/v1/query", {"query": promql}, lambda data: answers.keyed_readings(data, label))
        if decoded is None:
            raise QueryError(printable(f"not an instant vector answer to {promql[:80]}"))
        readings, malformed = decoded
        self.malformed += malformed
        return readings

    async def target_intervals(self) -> list[tuple[answers.Labels, str]]:
        """Every active target's labels and scrape interval text; malformed targets are skipped and counted."""
        decoded = await self.api("/api/v1/targets?state=active", decode=answers.target_intervals)
        if decoded is None:
            raise QueryError(f"not a targets answer from {self.connection.url}")
        targets, malformed = decoded
        self.malformed += malformed
        return targets


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _reason(error: BaseException) -> str:
    """The most telling cause in the chain: 'connection refused' rather than httpx's 'All attempts failed'."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError) or "Connection refused" in str(cause):
            return "connection refused"
        cause = cause.__cause__ or cause.__context__
    if isinstance(error, httpx.ReadError) and not str(error):
        return "the server closed the connection without an answer (an HTTPS server asked over http?)"
    text = str(error) or type(error).__name__
    return text.splitlines()[-1][:200]
