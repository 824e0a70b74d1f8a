"""`--listen ADDRESS:PORT` for `pth-top export` and `pth-top serve`: parsed once, refused in one line."""

from __future__ import annotations

import ipaddress

from pth_top.text import printable


class ListenError(ValueError):
    """A --listen value or a bind that cannot work; the message is one line for the user."""


def parse_listen(text: str, allow_port_zero: bool = False) -> tuple[str, int]:
    """"127.0.0.1:9824", "[::1]:9824", "0.0.0.0:9824" -> (address, port); port 0 (a free one) only if allowed."""
    host, colon, port_text = text.rpartition(":")
    if not colon or not host:
        raise ListenError(f"--listen wants IP:PORT (e.g. 127.0.0.1:PORT or [::1]:PORT), got {printable(text)!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise ListenError("--listen wants IP:PORT; the address must be an IP address (e.g. 127.0.0.1 or ::1), "
                          f"got {printable(host)!r}") from None
    lowest_port = 0 if allow_port_zero else 1
    if not (port_text.isascii() and port_text.isdigit()) or not lowest_port <= int(port_text) <= 65535:
        raise ListenError(f"--listen port must be a number from {lowest_port} to 65535, got {printable(port_text)!r}")
    return host, int(port_text)
