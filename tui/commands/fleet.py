"""`pth-top fleet --prometheus URL` or `--ssh HOST...`: every GPU host, in a screen or as JSON."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from pth_top.tui.commands import CliError, input_file_argument, seconds_argument

DEFAULT_JOB = "pth-top"
# The screen shows the hosts that answered within this long; the slower ones join as they answer.
SCREEN_FIRST_WAIT_S = 2.0


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that say how to reach Prometheus (shared with `pth-top serve --prometheus`)."""
    parser.add_argument("--prometheus", metavar="URL", help="Prometheus base URL, e.g. http://prom:9090")
    parser.add_argument("--job", default=DEFAULT_JOB, help=f"the scrape job of the exporters (default {DEFAULT_JOB})")
    auth = parser.add_argument_group("Prometheus authentication (never in the URL)")
    auth.add_argument("--prom-user", metavar="NAME", help="basic auth user; password from --prom-password-file "
                      "or $PTH_TOP_PROM_PASSWORD")
    # A folder, device, FIFO (it would hang the read) or socket is refused before anything runs.
    file: dict[str, Any] = {"metavar": "FILE", "type": input_file_argument}
    auth.add_argument("--prom-password-file", **file, help="file whose first line is the password")
    auth.add_argument("--prom-bearer-token-file", **file,
                      help="file whose first line is a bearer token (or $PTH_TOP_PROM_BEARER_TOKEN)")
    auth.add_argument("--prom-ca-file", **file, help="CA certificate(s) to verify an https Prometheus")
    auth.add_argument("--prom-cert-file", **file, help="client certificate (mutual TLS)")
    auth.add_argument("--prom-key-file", **file, help="key of --prom-cert-file")
    auth.add_argument("--prom-insecure-skip-verify", action="store_true", help="do not verify the server certificate")
    auth.add_argument("--prom-header", action="append", default=[], metavar="'NAME: VALUE'",
                      help="extra header on every request, e.g. 'X-Scope-OrgID: team' (repeatable); a secret one goes "
                      "in $PTH_TOP_PROM_HEADERS instead ('NAME: VALUE' a line), as the command line shows in ps")
    auth.add_argument("--prom-timeout", type=seconds_argument("--prom-timeout", 0.1, 300), default=10.0,
                      metavar="SECONDS", help="give up on a query after this long (default 10)")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fleet",
        help="every GPU host that Prometheus scrapes (pth-top export), worst first",
        description=(
            "A cluster view over Prometheus: hosts sorted worst first, a heat grid of every GPU (one cell a host, "
            "its worst GPU, when the fleet is too big for a line each), drill-down into one host. About ten "
            "queries a refresh whatever the fleet size, never faster than the scrape interval; pth-top's "
            "recording rules (deploy/prometheus/pth-top-recording.yml) are used where Prometheus has them. "
            "Needs httpx: pip install 'pth-top[fleet]'. Or over SSH (--ssh): one multiplexed "
            "connection per host, host keys checked against known_hosts (StrictHostKeyChecking=yes), no "
            "passwords asked (BatchMode), no agent or X11 forwarding; a small Python probe (stdlib, sent over the "
            "connection; pth-top snapshot --json where pth-top is installed) stays running on each host and "
            "answers each refresh."
        ),
        epilog=("Keys: Enter opens a host, Esc goes back, u m t p e h s sort, g colours the grid, x shows the "
                "highlighted host's GPUs in the grid, z zooms the grid (hosts or GPUs), q quits."),
    )
    add_connection_arguments(parser)
    ssh = parser.add_argument_group("Fleet over SSH (the system OpenSSH; nothing installed on the hosts)")
    ssh.add_argument("--ssh", nargs="*", metavar="HOST", help="read these hosts over SSH (names or ssh_config "
                     "aliases; a * or ? pattern matches the config's Host aliases; none: every Host alias)")
    ssh.add_argument("--ssh-hosts", metavar="FILE", type=input_file_argument,
                     help="hosts to read over SSH, one a line (# comments)")
    ssh.add_argument("--ssh-config", metavar="FILE", type=input_file_argument,
                     help="ssh config file instead of ~/.ssh/config (as ssh -F)")
    ssh.add_argument("--ssh-timeout", type=seconds_argument("--ssh-timeout", 1, 300), default=10.0,
                     metavar="SECONDS", help="a host that has not answered after this long shows down (default 10)")
    parser.add_argument("--interval", type=seconds_argument("--interval", 1, 3600), default=5.0, metavar="SECONDS",
                        help="refresh interval (default 5; never faster than the job's scrape interval)")
    parser.add_argument("--json", action="store_true", help="print one refresh as JSON and exit (for scripts)")
    parser.set_defaults(func=run)


def connection_from(args: argparse.Namespace) -> Any:
    """The checked Connection, or CliError (exit 2) naming the bad setting."""
    if not args.prometheus:
        raise CliError("--prometheus URL is required (the Prometheus that scrapes your pth-top exporters)")
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise CliError("the fleet view needs httpx: pip install 'pth-top[fleet]'") from None
    from pth_top.fleet.connection import ConnectionSettingError, make_connection

    try:
        return make_connection(
            args.prometheus, user=args.prom_user, password_file=args.prom_password_file,
            bearer_token_file=args.prom_bearer_token_file, headers=args.prom_header, ca_file=args.prom_ca_file,
            cert_file=args.prom_cert_file, key_file=args.prom_key_file,
            insecure_skip_verify=args.prom_insecure_skip_verify, timeout_s=args.prom_timeout,
        )
    except ConnectionSettingError as error:
        raise CliError(str(error)) from None


def snapshot_json(snapshot: Any, prometheus_url: str | None, job: str | None) -> dict[str, Any]:
    from pth_top.fleet.model import sorted_hosts

    return {
        "prometheus": prometheus_url,
        "job": job,
        "taken_at_s": snapshot.taken_at_s,
        "scrape_interval_s": snapshot.scrape_interval_s,
        "queries": snapshot.query_count,
        "malformed": snapshot.malformed,
        "error": snapshot.error,
        "hosts": [
            {
                "instance": host.instance, "hostname": host.hostname, "state": host.state.value,
                "reason": host.reason, "age_s": host.age_s, "gpu_count": host.gpu_count,
                "utilization_avg_ratio": host.utilization_avg_ratio,
                "utilization_min_ratio": host.utilization_min_ratio,
                "memory_used_ratio": host.memory_used_ratio,
                "temperature_max_celsius": host.temperature_max_celsius, "power_watts": host.power_watts,
                "errors": host.errors, "throttled_gpus": host.throttled_gpus,
                "gpus": [
                    {"gpu": gpu.gpu, "utilization_ratio": gpu.utilization_ratio,
                     "memory_used_ratio": gpu.memory_used_ratio, "temperature_celsius": gpu.temperature_celsius,
                     "power_watts": gpu.power_watts, "errors": gpu.errors, "throttled": gpu.throttled}
                    for gpu in host.gpus
                ],
            }
            for host in sorted_hosts(snapshot.hosts)
        ],
    }


async def one_snapshot(connection: Any, job: str) -> Any:
    from pth_top.fleet.query import FleetReader, PrometheusClient

    client = PrometheusClient(connection)
    try:
        return await FleetReader(client, job=job).refresh()
    finally:
        await client.close()


def ssh_reader_from(args: argparse.Namespace, first_wait_s: float | None = None) -> Any:
    """The SshFleetReader of the named hosts, or CliError (exit 2) naming the bad host or setting."""
    if args.prometheus:
        raise CliError("--prometheus and --ssh are two sources; give one")
    from pth_top.sshfleet.hosts import check_config, resolve_hosts
    from pth_top.sshfleet.reader import SshFleetReader
    from pth_top.sshfleet.transport import SshSettingError, SshTransport

    try:
        hosts = resolve_hosts(args.ssh or [], args.ssh_hosts, args.ssh_config)
        transport = SshTransport(args.ssh_config, timeout_s=args.ssh_timeout)
        check_config(transport.ssh, args.ssh_config, hosts[0])
    except SshSettingError as error:
        raise CliError(f"fleet: {error}") from None
    return SshFleetReader(hosts, transport, interval_s=args.interval, first_wait_s=first_wait_s)


async def one_ssh_snapshot(reader: Any) -> Any:
    try:
        return await reader.refresh()
    finally:
        await reader.close()


def run(args: argparse.Namespace) -> int:
    if args.ssh is not None or args.ssh_hosts:
        return run_ssh(args)
    connection = connection_from(args)
    if args.json:
        snapshot = asyncio.run(one_snapshot(connection, args.job))
        if snapshot.error is not None and not snapshot.hosts:
            raise CliError(f"fleet: {snapshot.error}", exit_code=1)
        return print_json(snapshot, connection.url, args.job)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CliError("not a terminal; the fleet view needs one. For scripts use 'pth-top fleet --json'.")
    from pth_top.tui.cli import prepare_terminal_environment
    from pth_top.tui.screens.fleet import FleetApp

    prepare_terminal_environment(os.environ)
    FleetApp(connection, job=args.job, interval_s=args.interval).run()
    return 0


def print_json(snapshot: Any, prometheus_url: str | None, job: str | None) -> int:
    try:
        text = json.dumps(snapshot_json(snapshot, prometheus_url, job), indent=1, allow_nan=False)
    except ValueError as error:  # all of it or nothing on stdout
        raise CliError(f"fleet: the answer does not make valid JSON: {error}", exit_code=1) from None
    sys.stdout.write(text + "\n")
    return 0


def run_ssh(args: argparse.Namespace) -> int:
    reader = ssh_reader_from(args, first_wait_s=None if args.json else SCREEN_FIRST_WAIT_S)
    if args.json:
        return print_json(asyncio.run(one_ssh_snapshot(reader)), None, None)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CliError("not a terminal; the fleet view needs one. For scripts use 'pth-top fleet --ssh ... --json'.")
    from pth_top.tui.cli import prepare_terminal_environment
    from pth_top.tui.screens.fleet import FleetApp

    prepare_terminal_environment(os.environ)
    FleetApp(reader=reader, interval_s=args.interval).run()
    return 0
