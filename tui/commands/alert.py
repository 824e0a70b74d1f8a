"""`pth-top alert`: try the alert destinations of the settings file, and show the rules in force."""

from __future__ import annotations

import argparse
import socket
import time

from pth_top.text import printable
from pth_top.tui.commands import CliError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "alert",
        help="send a test alert to the configured destinations; list the alert rules",
        description=(
            "Alerts are set in the [alerts] table of the dashboard settings file "
            "(<config dir>/dashboard.toml; PTH_TOP_CONFIG_DIR overrides the folder)."
        ),
    )
    actions = parser.add_subparsers(dest="alert_action", metavar="ACTION", required=True)
    test = actions.add_parser(
        "test",
        help="send one test alert to every destination (or --to URL); one line each, exit 1 if any failed",
        description=(
            "Send one test alert, one try each with the configured timeout, and print ok or failed per destination "
            "(URLs masked). Exit 0 when all went, 1 when any failed, 2 when there is nothing to send to."
        ),
    )
    test.add_argument("--to", metavar="URL", help="this Apprise URL instead of the configured destinations")
    test.set_defaults(func=run_test)
    rules = actions.add_parser("rules", help="print the alert rules in force and the destinations (masked)")
    rules.set_defaults(func=run_rules)


def _settings():
    from pth_top.tui.settings import load_settings, settings_path

    settings, problem = load_settings()
    if problem is not None:
        raise CliError(f"alert: {problem.replace('; using defaults', '')}")
    return settings.alerts, settings_path()


def run_test(args: argparse.Namespace) -> int:
    from pth_top.recorder.delivery import mask_url, send_once
    from pth_top.recorder.event import Event

    alerts, path = _settings()
    if args.to is not None:
        if "://" not in args.to:
            raise CliError("alert test: --to must be an Apprise URL (scheme://...)")
        urls: tuple[str, ...] = (args.to,)
    else:
        urls = alerts.destinations
    if not urls:
        raise CliError(f"alert test: no destinations: set alerts.destinations in {printable(path, 200)} or give --to")
    host = socket.gethostname()
    test_alert = Event(time.time(), "alert", "info", f"pth-top test alert from {host}: alerts reach this destination",
                       evidence={"rule": "test", "host": printable(host, 60)})
    failed = 0
    for url in urls:
        problem = send_once(url, test_alert, alerts.delivery.timeout_s)
        failed += problem is not None
        print(f"ok      {mask_url(url)}" if problem is None else f"failed  {mask_url(url)}: {problem}", flush=True)
    return 1 if failed else 0


def run_rules(args: argparse.Namespace) -> int:
    import msgspec

    from pth_top.recorder.delivery import mask_url

    alerts, path = _settings()
    print(f"alerts {'on' if alerts.enabled else 'off'} (settings: {printable(path, 200)}), "
          f"bell {'on' if alerts.bell else 'off'}")
    for name, rule in alerts.rule_items():
        values = {key: value for key, value in msgspec.structs.asdict(rule).items() if key != "enabled"}
        shown = ", ".join(f"{key}={printable(value, 80)}" for key, value in values.items())
        print(f"  {name:<16}{'on ' if rule.enabled else 'off'} {shown}".rstrip())
    delivery = alerts.delivery
    print(f"destinations ({len(alerts.destinations)}): timeout {delivery.timeout_s:g} s, {delivery.retries} retries, "
          f"at most {delivery.per_minute} a minute each")
    for url in alerts.destinations:
        print(f"  {mask_url(url)}")
    return 0
