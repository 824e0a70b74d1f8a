"""UI-free packages import no textual/rich; the dashboard never imports torch; only pth_top is ours."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_MODULES = ("textual", "rich")
OUR_FOLDERS = ("tui", "widgets", "sensors", "doctor", "benches", "configs", "fleet")


def imported_after(*modules: str) -> set[str]:
    """Every module name loaded by a fresh interpreter that imports `modules` (outside the checkout)."""
    code = (
        "import importlib, json, sys\n"
        "for name in %r: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))" % (modules,)
    )
    result = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, check=True)
    return set(json.loads(result.stdout))


def top_level(loaded: set[str]) -> set[str]:
    return {name.split(".")[0] for name in loaded}


def modules_of(folder: str) -> list[str]:
    names = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        parts = [part for part in path.relative_to(ROOT).with_suffix("").parts if part != "__init__"]
        names.append(".".join(["pth_top", *parts]))
    return names


# Headless at run time too (import-linter checks the static imports; this catches importlib and plugins).
HEADLESS_MODULES = [*modules_of("sensors"), *modules_of("configs"), *modules_of("doctor"),
                    "pth_top.benches", "pth_top.benches.protocol", "pth_top.benches.run_request",
                    "pth_top.benches.client.spawn", "pth_top.benches.client.bench_process",
                    "pth_top.benches.client.runs"]


def test_headless_modules_load_no_ui_and_no_torch():
    loaded = top_level(imported_after(*HEADLESS_MODULES))
    assert not loaded & {*UI_MODULES, "torch"}


def test_widgets_know_nothing_of_the_machine():
    loaded = imported_after(*[m for m in modules_of("widgets") if m != "pth_top.widgets"])
    ours = {name for name in loaded if name.startswith("pth_top.") and not name.startswith("pth_top.widgets")}
    assert not ours and not top_level(loaded) & {"psutil", "pynvml", "torch"}


def test_dashboard_never_imports_torch():
    loaded = top_level(imported_after("pth_top.tui.app"))
    assert "torch" not in loaded
    assert "textual" in loaded


def test_only_pth_top_is_ours_at_the_top_level():
    """No generic top-level name (tui, configs, ...) is loaded: they would collide in a user's venv."""
    loaded = top_level(imported_after("pth_top.tui.app") | imported_after("pth_top.tui.cli"))
    assert not loaded & set(OUR_FOLDERS)
