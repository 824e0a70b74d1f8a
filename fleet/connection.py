"""How to reach a Prometheus: URL, credentials, TLS and extra headers, checked before anything is sent.

Credentials need neither the URL nor the command line (which every user sees in ps): a password from a file or
an environment variable, a bearer token from a file or an environment variable, a header carrying a secret from
$PTH_TOP_PROM_HEADERS (`serve` hands every header to its children that way, never in their argv).
Needs httpx (the `fleet` extra); imported only by the fleet view.
"""

from __future__ import annotations

import base64
import os
import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import Mapping

from pth_top.text import printable

PASSWORD_ENV = "PTH_TOP_PROM_PASSWORD"
BEARER_TOKEN_ENV = "PTH_TOP_PROM_BEARER_TOKEN"
# Extra headers, one 'Name: value' a line, read as if each were a --prom-header.
HEADERS_ENV = "PTH_TOP_PROM_HEADERS"
DEFAULT_TIMEOUT_S = 10.0
# A secret file is small; anything bigger is the wrong file.
SECRET_FILE_MAX_BYTES = 4096
# A CA bundle or certificate file is far smaller (the system bundle is about 200 KiB).
INPUT_FILE_MAX_BYTES = 4 * 2**20
HEADER_NAME_CHARS = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


class ConnectionSettingError(ValueError):
    """A bad --prometheus setting: the message is one printable line."""


@dataclass(frozen=True)
class Connection:
    url: str  # base URL without credentials, no trailing slash
    authorization: str | None = field(default=None, repr=False)  # the whole Authorization header value
    headers: tuple[tuple[str, str], ...] = ()
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure_skip_verify: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What httpx's `verify` takes: a context with our CA and client certificate, or the defaults."""
        if not self.url.startswith("https://"):
            return True
        try:
            context = ssl.create_default_context(cafile=self.ca_file)
        except (OSError, ssl.SSLError) as error:
            message = f"cannot load CA file {self.ca_file}: {getattr(error, 'reason', None) or error}"
            raise ConnectionSettingError(printable(message)) from None
        if self.insecure_skip_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            try:
                context.load_cert_chain(self.cert_file, self.key_file)
            except (OSError, ssl.SSLError) as error:
                message = f"cannot load client certificate {self.cert_file}: {error}"
                raise ConnectionSettingError(printable(message)) from None
        return context


def checked_url(url: str) -> str:
    """An http(s) URL with a host and no user:password; its trailing slash dropped."""
    parsed = urllib.parse.urlsplit(url.strip())
    if parsed.scheme not in ("http", "https"):
        raise ConnectionSettingError(f"--prometheus must be an http:// or https:// URL, got {printable(url)!r}")
    if parsed.username is not None or parsed.password is not None or "@" in parsed.netloc:
        raise ConnectionSettingError(
            "credentials in the --prometheus URL are refused (they end up in shell history and process lists); "
            f"use --prom-user with --prom-password-file or ${PASSWORD_ENV}, or --prom-bearer-token-file"
        )
    if not parsed.hostname:
        raise ConnectionSettingError(f"--prometheus URL has no host: {printable(url)!r}")
    if parsed.query or parsed.fragment:
        raise ConnectionSettingError(f"--prometheus URL must not carry a query or fragment: {printable(url)!r}")
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path.rstrip("/"), "", ""))


def read_input_file(path: str, what: str, max_bytes: int = INPUT_FILE_MAX_BYTES) -> bytes:
    """The bytes of a regular file named by a setting; a folder, device, FIFO or socket is refused, never read."""
    from pth_top.configs.fileio import read_regular_file

    if not path:
        raise ConnectionSettingError(f"{what} file: empty path")
    try:
        return read_regular_file(path, max_bytes)
    except FileNotFoundError:
        reason = "no such file"
    except IsADirectoryError:
        reason = "is a folder"
    except (OSError, ValueError) as error:  # ValueError: a NUL byte in the path
        reason = getattr(error, "strerror", None) or str(error)
    raise ConnectionSettingError(printable(f"cannot read {what} file {path}: {reason}", 400))


def read_secret(path: str, what: str) -> str:
    """The first line of a small secret file, whitespace stripped."""
    data = read_input_file(path, what, SECRET_FILE_MAX_BYTES)
    lines = data.decode("utf-8", errors="replace").splitlines()
    secret = lines[0].strip() if lines else ""
    if not secret:
        raise ConnectionSettingError(printable(f"{what} file {path} is empty"))
    return secret


def parse_header(text: str, source: str = "--prom-header") -> tuple[str, str]:
    """'Name: value' as a pair; the name a plain HTTP token, the value ASCII without control characters."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not name or not set(name) <= HEADER_NAME_CHARS:
        raise ConnectionSettingError(f"{source} must be 'Name: value', got {printable(text)!r}")
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise ConnectionSettingError(f"{source} value has a control character: {printable(text)!r}")
    if not value.isascii():
        raise ConnectionSettingError(f"{source} value must be ASCII: {printable(text)!r}")
    if name.lower() == "authorization":
        raise ConnectionSettingError(
            f"{source} cannot set Authorization; use --prom-bearer-token-file or --prom-user")
    return name, value


def environment_headers(environment: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The headers of $PTH_TOP_PROM_HEADERS: one 'Name: value' a line, blank lines skipped."""
    lines = environment.get(HEADERS_ENV, "").split("\n")
    return tuple(parse_header(line, f"${HEADERS_ENV}") for line in lines if line.strip())


def make_connection(
    url: str,
    user: str | None = None,
    password_file: str | None = None,
    bearer_token_file: str | None = None,
    headers: list[str] | tuple[str, ...] = (),
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    insecure_skip_verify: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    environ: dict[str, str] | None = None,
) -> Connection:
    """Check every setting and load the secrets; raises ConnectionSettingError with one line on the first problem."""
    environment = os.environ if environ is None else environ
    base = checked_url(url)
    authorization = None
    if user is not None and bearer_token_file is not None:
        raise ConnectionSettingError("--prom-user and --prom-bearer-token-file exclude each other")
    if user is not None:
        if ":" in user or not user:
            raise ConnectionSettingError("--prom-user must be a non-empty name without ':'")
        password = read_secret(password_file, "password") if password_file is not None else (
            environment.get(PASSWORD_ENV))
        if not password:
            raise ConnectionSettingError(f"--prom-user needs --prom-password-file or ${PASSWORD_ENV}")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        authorization = f"Basic {token}"
    elif password_file is not None:
        raise ConnectionSettingError("--prom-password-file needs --prom-user")
    elif bearer_token_file is not None:
        authorization = f"Bearer {read_secret(bearer_token_file, 'bearer token')}"
    elif environment.get(BEARER_TOKEN_ENV):
        authorization = f"Bearer {environment[BEARER_TOKEN_ENV].strip()}"
    if (cert_file is None) != (key_file is None):
        raise ConnectionSettingError("--prom-cert-file and --prom-key-file go together")
    for path, what in ((ca_file, "CA"), (cert_file, "client certificate"), (key_file, "client key")):
        if path is not None:
            read_input_file(path, what)  # checked here: ssl would block on a FIFO and read a device without end
    if (ca_file or cert_file or insecure_skip_verify) and not base.startswith("https://"):
        raise ConnectionSettingError("TLS options need an https:// --prometheus URL")
    connection = Connection(
        url=base, authorization=authorization,
        headers=environment_headers(environment) + tuple(parse_header(text) for text in headers),
        ca_file=ca_file, cert_file=cert_file, key_file=key_file, insecure_skip_verify=insecure_skip_verify,
        timeout_s=timeout_s,
    )
    connection.ssl_context()  # a bad client certificate is refused now, not at the first query
    return connection
