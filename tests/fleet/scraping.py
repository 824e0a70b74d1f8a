"""Scrape a registry (or text) and look samples up by name and labels, through prometheus_client's parser."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families


@dataclass
class Scrape:
    text: str
    # (sample name, sorted label pairs) -> value
    values: dict[tuple[str, tuple[tuple[str, str], ...]], float]
    types: dict[str, str]

    def get(self, sample_name: str, /, **labels: str) -> float | None:
        return self.values.get((sample_name, tuple(sorted(labels.items()))))

    def series(self, name: str) -> dict[tuple[tuple[str, str], ...], float]:
        return {labels: value for (sample, labels), value in self.values.items() if sample == name}

    def names(self) -> set[str]:
        return {sample for sample, _ in self.values}


def parse(text: str) -> Scrape:
    values = {}
    types = {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return Scrape(text, values, types)


def scrape(registry) -> Scrape:
    return parse(generate_latest(registry).decode())


def promtool_problems(text: str) -> str:
    """What `promtool check metrics` says about `text` ('' when clean)."""
    result = subprocess.run([shutil.which("promtool") or "promtool", "check", "metrics"], input=text,
                            capture_output=True, text=True, timeout=60)
    return "" if result.returncode == 0 else (result.stdout + result.stderr)
