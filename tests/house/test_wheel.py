"""The built wheel installs one import name, pth_top, with every package and data file under it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> list[str]:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    # Build from a copy of the checkout's files: an in-tree build/ keeps stale modules between builds.
    source = tmp_path_factory.mktemp("source")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "TMPDIR": str(build)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    (wheel,) = out.glob("pth_top-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_pth_top_is_the_only_top_level_name(wheel_names):
    top = {name.split("/")[0] for name in wheel_names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"pth_top"}


def test_every_source_module_and_data_file_is_in_the_wheel(wheel_names):
    expected = set()
    for folder in ("tui", "widgets", "sensors", "doctor", "benches", "configs", "fleet"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".toml", ".tcss", ".json") and "__pycache__" not in path.parts:
                expected.add("pth_top/" + path.relative_to(ROOT).as_posix())
    assert expected - set(wheel_names) == set()
