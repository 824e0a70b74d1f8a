"""configs/ must work without the UI: importing the engine loads no textual or rich."""

from __future__ import annotations

import subprocess
import sys


def test_engine_imports_no_ui_libraries():
    code = (
        "import sys\n"
        "import configs.answers, configs.build_file, configs.check, configs.compat, configs.memory, configs.parts,"
        " configs.presets, configs.recommend, configs.render, configs.rules\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'torch'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
