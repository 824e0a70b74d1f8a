"""The shipped recording rules: promtool accepts them, they record what their test file says, and each is
the fleet view's own raw aggregate (pth_top.fleet.aggregates), so the two cannot drift apart."""

from __future__ import annotations

import yaml

from pth_top.fleet.aggregates import AGGREGATES
from pth_top.fleet.metrics import SPECS
from tests.deploy.deploy_files import RECORDING_RULES, series_names
from tests.deploy.test_alert_rules import promtool

RULE_TESTS = RECORDING_RULES.parents[2] / "tests" / "deploy" / "pth-top-recording.test.yml"


def rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RECORDING_RULES.read_text())["groups"] for rule in group["rules"]]


def test_promtool_checks_the_rules():
    result = promtool("check", "rules", str(RECORDING_RULES), cwd=RECORDING_RULES.parent)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_record_what_their_tests_say():
    result = promtool("test", "rules", RULE_TESTS.name, cwd=RULE_TESTS.parent)
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_rule_is_the_views_raw_aggregate_over_every_job():
    shipped = {rule["record"]: " ".join(rule["expr"].split()) for rule in rules()}
    assert shipped == {aggregate.record: aggregate.expression("") for aggregate in AGGREGATES}


def test_the_rules_read_only_series_the_exporter_serves():
    unknown = {name for rule in rules() for name in series_names(rule["expr"])} - set(SPECS)
    assert not unknown, f"not served by pth-top export: {sorted(unknown)}"
