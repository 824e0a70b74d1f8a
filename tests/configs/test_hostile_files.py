"""The hostile corpus (tests/configs/hostile/{answers,build_files,catalog}): every bad file is exit 2,
one terminal-safe line, nothing written.

Each file is run through `pth-top wizard --answers`, `pth-top build show` and `pth-top build check`; a
catalog file is installed as the user's catalog and the wizard is run with good answers. Line 2 of each
file says what the message for its own kind must contain.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pth_top.tui import cli

HERE = Path(__file__).parent
HOSTILE = HERE / "hostile"
GOOD_ANSWERS = HERE / "good_answers.toml"
# Any C0/C1 control character but the newline that ends a line, and the bidi overrides.
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def corpus(kind: str) -> list[Path]:
    return sorted((HOSTILE / kind).glob("*.toml"))


def expected_fragment(path: Path) -> str:
    header = path.read_bytes().split(b"\n", 2)[1].decode("utf-8")
    assert header.startswith("# expect: "), path
    return header.removeprefix("# expect: ")


def tree(root: Path) -> dict[str, tuple[int, int] | None]:
    """Every file under `root` with (size, mtime_ns), every folder with None: nothing created or changed."""
    return {
        str(path.relative_to(root)): None if path.is_dir() else (path.lstat().st_size, path.lstat().st_mtime_ns)
        for path in root.rglob("*")
    }


@pytest.fixture(autouse=True)
def only_our_commands(monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("pth_top.tui.commands.wizard", "pth_top.tui.commands.build"))


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """cwd and the config dir in tmp_path; the corpus and the sandbox must be unchanged afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PTH_TOP_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "config").mkdir()
    before = (tree(tmp_path), tree(HOSTILE))
    yield tmp_path
    assert (tree(tmp_path), tree(HOSTILE)) == before


def run_refused(argv: list[str], capsys) -> str:
    """Run pth-top; assert exit 2, one line on stderr, no traceback, no raw control character; return stderr."""
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert err.startswith("pth-top: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "Traceback" not in out
    assert not RAW_CONTROL.search(out + err), ascii(out + err)
    return err


@pytest.mark.parametrize(
    "path", corpus("answers") + corpus("build_files"), ids=lambda path: f"{path.parent.name}-{path.stem}"
)
def test_hostile_answers_and_build_files_are_refused_by_every_command(sandbox, capsys, path):
    fragment = expected_fragment(path)
    messages = {
        "wizard": run_refused(["wizard", "--answers", str(path), "--out", str(sandbox / "out.toml")], capsys),
        "show": run_refused(["build", "show", str(path)], capsys),
        "check": run_refused(["build", "check", str(path)], capsys),
    }
    own = messages["wizard"] if path.parent.name == "answers" else messages["show"]
    assert fragment in own, own
    if path.parent.name == "build_files":
        assert messages["check"] == messages["show"]


@pytest.mark.parametrize("path", corpus("catalog"), ids=lambda path: path.stem)
def test_hostile_catalog_files_are_refused(sandbox, capsys, path):
    catalog_dir = sandbox / "config" / "catalog"
    catalog_dir.mkdir()
    (catalog_dir / "mine.toml").write_bytes(path.read_bytes())
    installed = tree(sandbox)
    message = run_refused(["wizard", "--answers", str(GOOD_ANSWERS), "--out", str(sandbox / "out.toml")], capsys)
    assert str(catalog_dir / "mine.toml") in message and expected_fragment(path) in message, message
    run_refused(["wizard", "--preset", "guide-personal", "--out", str(sandbox / "out.toml")], capsys)
    run_refused(["build", "show", str(path)], capsys)
    run_refused(["build", "check", str(path)], capsys)
    assert tree(sandbox) == installed
    (catalog_dir / "mine.toml").unlink()
    catalog_dir.rmdir()


def test_corpus_has_at_least_forty_files_of_each_family():
    counts = {kind: len(corpus(kind)) for kind in ("answers", "build_files", "catalog")}
    assert sum(counts.values()) >= 40 and min(counts.values()) >= 10, counts
