"""The shipped alert rules: promtool accepts them, and each alert fires (and stays quiet) as its test file says."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from pth_top.fleet.metrics import SPECS
from tests.deploy.deploy_files import ALERT_RULES, series_names
from tests.deploy.scripted_prometheus import scripted_prometheus
from tests.fleet.prometheus_tools import binary, http_get, wait_for

RULE_TESTS = Path(__file__).with_name("pth-top-alerts.test.yml")


def promtool(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([binary("promtool"), *arguments], cwd=cwd, capture_output=True, text=True, timeout=120)


def rules() -> list[dict]:
    """Every rule of the file: alerts and the recording rules they read."""
    return [rule for group in yaml.safe_load(ALERT_RULES.read_text())["groups"] for rule in group["rules"]]


def alerts() -> list[dict]:
    return [rule for rule in rules() if "alert" in rule]


def test_promtool_checks_the_rules():
    result = promtool("check", "rules", str(ALERT_RULES), cwd=ALERT_RULES.parent)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_fires_and_stays_quiet_as_its_tests_say():
    result = promtool("test", "rules", RULE_TESTS.name, cwd=RULE_TESTS.parent)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_is_tested_firing_and_quiet():
    tested: dict[str, set[bool]] = {}
    for group in yaml.safe_load(RULE_TESTS.read_text())["tests"]:
        for case in group["alert_rule_test"]:
            tested.setdefault(case["alertname"], set()).add(bool(case.get("exp_alerts")))
    names = {rule["alert"] for rule in alerts()}
    assert {name: {True, False} for name in names} == {name: tested.get(name, set()) for name in names}


def test_the_rules_read_only_series_the_exporter_serves_or_the_file_records():
    unknown = {name for rule in rules() for name in series_names(rule["expr"])} - set(SPECS)
    assert not unknown, f"not served by pth-top export: {sorted(unknown)}"
    recorded = {rule["record"] for rule in rules() if "record" in rule}
    read = {name for rule in rules() for name in re.findall(r"[a-z_]+:[a-z0-9_]+:[a-z0-9_]+", rule["expr"])}
    assert read <= recorded, f"recorded nowhere: {sorted(read - recorded)}"


def test_the_xid_rule_is_the_one_the_readme_gives():
    xid = next(rule for rule in alerts() if rule["alert"] == "PthTopGpuXidError")
    expected = ("(((pth_top_gpu_xid_errors_total unless pth_top_gpu_xid_errors_total offset 15m) and on (instance, job)"
                " up offset 15m) or increase(pth_top_gpu_xid_errors_total[15m])) > 0")
    assert " ".join(xid["expr"].split()) == expected


def rule_health(base: str) -> dict[str, tuple[str, str]]:
    groups = json.loads(http_get(f"{base}/api/v1/rules"))["data"]["groups"]
    return {rule["name"]: (rule["health"], rule.get("lastError", "")) for group in groups for rule in group["rules"]}


@pytest.mark.slow
def test_a_real_prometheus_evaluates_every_rule_on_the_exporters_series_without_error(tmp_path):
    """Label sets promtool's inputs may not have (many processes and jobs a GPU) must not break a match."""
    with scripted_prometheus(tmp_path, rule_files=(ALERT_RULES,)) as prometheus:
        names = {rule.get("alert") or rule["record"] for rule in rules()}
        wait_for(lambda: prometheus.query("gpu_job:pth_top_gpu_sm_active:ratio"), "the GPU-job activity recorded")
        wait_for(lambda: {name for name, (health, _) in rule_health(prometheus.base).items() if health == "ok"}
                 == names, "every rule evaluated")
        assert all(health == "ok" for health, _ in rule_health(prometheus.base).values()), rule_health(prometheus.base)
        jobs = {item["metric"].get("job_id") for item in prometheus.query("gpu_job:pth_top_gpu_sm_active:ratio")}
        assert jobs and None not in jobs, "the exporter's process series carry the GPUs' job"
