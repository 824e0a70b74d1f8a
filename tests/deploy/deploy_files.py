"""The deployable files the repo ships (deploy/) and the series names their PromQL reads."""

from __future__ import annotations

import re
from pathlib import Path

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
ALERT_RULES = DEPLOY / "prometheus" / "pth-top-alerts.yml"
RECORDING_RULES = DEPLOY / "prometheus" / "pth-top-recording.yml"
DASHBOARD = DEPLOY / "grafana" / "pth-top.json"
SERIES_NAME = re.compile(r"(?<![\w:])pth_top_[a-z0-9_]+(?![\w:])")


def series_names(promql: str) -> set[str]:
    """The pth_top_* names a PromQL expression reads (recording-rule names, with a colon, are not matched)."""
    return {name for name in SERIES_NAME.findall(promql) if ":" not in name}
