"""UI-free packages import no textual/rich; the dashboard never imports torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UI_MODULES = ("textual", "rich")


def imported_after(module: str) -> set[str]:
    code = (
        "import importlib, json, sys; importlib.import_module(%r); "
        "print(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))" % module
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(result.stdout))


def ui_free_modules() -> list[str]:
    names = []
    for package in ("sensors", "configs"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).with_suffix("")
            parts = [part for part in relative.parts if part != "__init__"]
            names.append(".".join(parts))
    for protocol_module in ("benches", "benches.protocol", "benches.launcher"):
        if (ROOT / Path(*protocol_module.split("."))).with_suffix(".py").exists() or protocol_module == "benches":
            names.append(protocol_module)
    return names


@pytest.mark.parametrize("module", ui_free_modules())
def test_ui_free_module_imports_no_ui_and_no_torch(module):
    loaded = imported_after(module)
    assert not loaded & {*UI_MODULES, "torch"}, f"{module} pulled in {sorted(loaded & {*UI_MODULES, 'torch'})}"


@pytest.mark.parametrize("module", sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "widgets").glob("*.py") if p.stem != "__init__"
))
def test_widgets_know_nothing_of_the_machine(module):
    loaded = imported_after(module)
    assert not loaded & {"sensors", "benches", "configs", "psutil", "pynvml", "torch"}


def test_dashboard_never_imports_torch():
    loaded = imported_after("tui.app")
    assert "torch" not in loaded
    assert "textual" in loaded
