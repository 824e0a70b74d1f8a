"""`pth-top serve`: the dashboard (or the fleet view) in a browser, via textual-serve; read-only by default."""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import shlex
import socket
import sys
import urllib.parse
from typing import MutableMapping

from pth_top.fleet.listen import ListenError, parse_listen
from pth_top.text import printable
from pth_top.tui.commands import CliError, count_argument, seconds_argument
from pth_top.tui.commands.fleet import add_connection_arguments, connection_from

DEFAULT_SERVE_PORT = 8824
DEFAULT_SERVE_LISTEN = f"127.0.0.1:{DEFAULT_SERVE_PORT}"
DEFAULT_MAX_TABS = 8
# Connection flags passed on to each browser tab's process: (attribute, flag).
FORWARDED_VALUES = (
    ("prometheus", "--prometheus"), ("job", "--job"), ("prom_user", "--prom-user"),
    ("prom_password_file", "--prom-password-file"), ("prom_bearer_token_file", "--prom-bearer-token-file"),
    ("prom_ca_file", "--prom-ca-file"), ("prom_cert_file", "--prom-cert-file"), ("prom_key_file", "--prom-key-file"),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="the dashboard in a web browser (textual-serve), read-only unless --allow-actions",
        description=(
            "Serves the dashboard over HTTP for a browser; each browser tab runs its own pth-top. Read-only by "
            "default: kill is refused, Bench and Wizard (benchmarks, saved files) do not open, the Doctor does "
            "not load the GPUs, and processes show by name, not command line (arguments carry secrets). No login "
            "and no TLS: keep it on loopback and reach it through an SSH tunnel or an authenticating reverse proxy. "
            "Only the served page may open its websocket (its Origin is checked); --allow-actions also needs the "
            "URL with the secret ?token= printed at start. "
            "With --prometheus it serves the fleet view instead. Needs textual-serve: pip install 'pth-top[web]'."
        ),
    )
    parser.add_argument("--listen", default=DEFAULT_SERVE_LISTEN, metavar="ADDRESS:PORT",
                        help=f"where to serve (default {DEFAULT_SERVE_LISTEN})")
    parser.add_argument("--public-url", metavar="URL", type=public_url_argument,
                        help="the URL browsers use, when it differs (a reverse proxy): http(s), a host, no "
                             "user:password, query or fragment; default http://ADDRESS:PORT/")
    parser.add_argument("--allow-actions", action="store_true",
                        help="let browser users kill processes, run benchmarks, save builds and see full "
                             "command lines; the page then needs the ?token= URL printed at start")
    parser.add_argument("--max-tabs", type=count_argument("--max-tabs", 1, 1000), default=DEFAULT_MAX_TABS,
                        metavar="N", help=f"browser tabs served at once, each its own ~45 MiB process; the next "
                                          f"is refused with a message (default {DEFAULT_MAX_TABS})")
    parser.add_argument("--interval", type=seconds_argument("--interval", 0.25, 3600), default=1.0,
                        metavar="SECONDS", help="dashboard refresh interval (default 1)")
    add_connection_arguments(parser)
    parser.set_defaults(func=run)




def public_url_argument(text: str) -> str:
    """An argparse type: an http(s) URL with a host, no credentials, query or fragment; its path ends in '/'
    (the page's URLs are relative to it)."""
    shown = printable(text, 200)
    if not text.isascii() or any(char.isspace() or not char.isprintable() for char in text):
        raise argparse.ArgumentTypeError(f"must be plain ASCII without spaces: {shown!r}")
    try:
        parts = urllib.parse.urlsplit(text)
        hostname = parts.hostname
        parts.port  # noqa: B018 (raises ValueError on a port that is no number or out of range)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a URL: {shown!r}") from None
    if parts.scheme not in ("http", "https") or not hostname:
        raise argparse.ArgumentTypeError(f"must be an http:// or https:// URL with a host, got {shown!r}")
    if "@" in parts.netloc:
        raise argparse.ArgumentTypeError("must not carry user:password (the URL is printed and shared)")
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise argparse.ArgumentTypeError(f"must not carry a query or fragment: {shown!r}")
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def check_bindable(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise CliError(f"cannot listen on {printable(host)}:{port}: {error.strerror or error}") from None


def child_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs for each browser tab."""
    arguments = [sys.executable, "-m", "pth_top.tui.served_app", "--interval", f"{args.interval:g}"]
    if args.allow_actions:
        arguments.append("--allow-actions")
    if args.prometheus:
        for attribute, flag in FORWARDED_VALUES:
            if getattr(args, attribute) is not None:
                arguments += [flag, str(getattr(args, attribute))]
        if args.prom_insecure_skip_verify:
            arguments.append("--prom-insecure-skip-verify")
        arguments += ["--prom-timeout", f"{args.prom_timeout:g}"]
    return shlex.join(arguments)


def hand_headers_to_children(headers: list[str], environ: MutableMapping[str, str]) -> None:
    """Each browser tab's process reads the --prom-header values from the environment it inherits, not its argv."""
    from pth_top.fleet.connection import HEADERS_ENV

    if headers:
        inherited = environ.get(HEADERS_ENV, "").split("\n")
        environ[HEADERS_ENV] = "\n".join(line for line in (*inherited, *headers) if line.strip())


def run(args: argparse.Namespace) -> int:
    try:
        host, port = parse_listen(args.listen)
    except ListenError as error:
        raise CliError(str(error)) from None
    if args.prometheus:
        connection_from(args)  # bad settings fail here, once, not in every browser tab
    try:
        from pth_top.tui.serve_guard import GuardedServer
    except ImportError:
        raise CliError("pth-top serve needs textual-serve: pip install 'pth-top[web]'") from None
    check_bindable(host, port)
    shown_host = f"[{host}]" if ":" in host else host
    public_url = args.public_url or f"http://{shown_host}:{port}/"
    token = secrets.token_urlsafe(24) if args.allow_actions else None
    page_url = public_url if token is None else f"{public_url}?token={token}"
    mode = "actions allowed (kill, benchmarks, saves) to whoever has this URL" if args.allow_actions else (
        "read-only: kill, Bench and Wizard refused")
    print(f"pth-top serve: {printable(page_url)} ({mode}). No login and no TLS here: reach it through an SSH "
          f"tunnel (ssh -N -L {port}:127.0.0.1:{port} THIS_HOST) or an authenticating reverse proxy.", flush=True)
    if not ipaddress.ip_address(host).is_loopback:
        print(f"pth-top serve: WARNING: {host} is not loopback; anyone who can reach port {port} sees this machine.",
              file=sys.stderr, flush=True)
    what = "pth-top fleet" if args.prometheus else "pth-top"
    if args.prometheus:
        hand_headers_to_children(args.prom_header, os.environ)
    GuardedServer(child_command(args), host=host, port=port, title=what, public_url=public_url, token=token,
                  max_tabs=args.max_tabs).serve()
    return 0
