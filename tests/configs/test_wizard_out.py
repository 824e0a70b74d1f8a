"""Issue 10 L6 (config part): odd --out targets and user folders are one line and exit 2, nothing damaged."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pth_top.tui import cli

GOOD_ANSWERS = Path(__file__).parent / "good_answers.toml"
# Mode bits do not bind root: there the refusal the kernel would give is injected instead.
AS_ROOT = os.geteuid() == 0


@pytest.fixture(autouse=True)
def only_our_commands(monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("pth_top.tui.commands.wizard", "pth_top.tui.commands.build"))


def refused(argv: list[str], capsys) -> str:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and err.startswith("pth-top: ") and err.count("\n") == 1, (code, out, err)
    return err


def wizard(out: str, *extra: str) -> list[str]:
    return ["wizard", "--answers", str(GOOD_ANSWERS), "--out", out, *extra]


def test_an_empty_out_is_refused_not_the_default_folder(tmp_path, capsys):
    builds = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / "builds"
    assert "--out needs a file name" in refused(wizard(""), capsys)
    assert "--out needs a file name" in refused(wizard("  "), capsys)
    assert not builds.exists()


def test_out_ending_in_a_slash_names_a_folder_not_a_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "names a folder" in refused(wizard("dir/"), capsys)
    assert "names a folder" in refused(wizard(str(tmp_path / "other") + "/", "--force"), capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("force", [(), ("--force",)])
def test_out_onto_a_directory_leaves_it_alone(tmp_path, capsys, force):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "keep").write_text("k", encoding="utf-8")
    assert "is a directory" in refused(wizard(str(folder), *force), capsys)
    assert [path.name for path in folder.iterdir()] == ["keep"]


@pytest.mark.parametrize("force", [(), ("--force",)])
@pytest.mark.parametrize("dangling", [False, True])
def test_out_onto_a_symlink_is_refused_and_both_ends_are_intact(tmp_path, capsys, force, dangling):
    target = tmp_path / "target.toml"
    if not dangling:
        target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    assert "is a symbolic link" in refused(wizard(str(link), *force), capsys)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert (target.read_text(encoding="utf-8") == "old") if not dangling else not target.exists()
    expected = ["link.toml"] if dangling else ["link.toml", "target.toml"]
    assert sorted(path.name for path in tmp_path.iterdir()) == expected


def test_out_into_a_read_only_folder_keeps_the_old_file(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "b.toml").write_text("old", encoding="utf-8")
    folder.chmod(0o555)
    if AS_ROOT:
        def denied(*args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(tempfile, "mkstemp", denied)
    try:
        err = refused(wizard(str(folder / "b.toml"), "--force"), capsys)
        assert "cannot write: Permission denied" in err
        assert (folder / "b.toml").read_text(encoding="utf-8") == "old" and len(list(folder.iterdir())) == 1
    finally:
        folder.chmod(0o755)


def test_a_full_disk_keeps_the_old_file_and_leaves_no_temp_file(tmp_path):
    out = tmp_path / "b.toml"
    out.write_text("old", encoding="utf-8")

    def small_file_limit() -> None:  # files may not grow past 2 KiB: a build file is ~10 KiB
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    env = {**os.environ, "PTH_TOP_CONFIG_DIR": str(tmp_path / "config"), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pth_top.tui.cli", *wizard(str(out), "--force")],
        capture_output=True, text=True, timeout=300, preexec_fn=small_file_limit, env=env,
    )
    assert result.returncode == 2, result
    assert result.stderr.count("\n") == 1 and "cannot write: File too large" in result.stderr, result.stderr
    assert out.read_text(encoding="utf-8") == "old" and [path.name for path in tmp_path.iterdir()] == ["b.toml"]


def test_a_tilde_in_the_config_dir_is_expanded(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PTH_TOP_CONFIG_DIR", "~/pth")
    assert cli.main(["wizard", "--answers", str(GOOD_ANSWERS)]) == 0
    assert len(list((tmp_path / "home" / "pth" / "builds").glob("*.toml"))) == 1
    assert not (tmp_path / "~").exists()


@pytest.mark.parametrize("value", ["relative/config", "~nosuchuser-pth-top/config"])
def test_a_relative_config_dir_is_refused(tmp_path, capsys, monkeypatch, value):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PTH_TOP_CONFIG_DIR", value)
    err = refused(["wizard", "--answers", str(GOOD_ANSWERS)], capsys)
    assert "PTH_TOP_CONFIG_DIR must be an absolute path" in err and value in err
    assert list(tmp_path.iterdir()) == []


def test_an_unreadable_catalog_folder_is_reported(tmp_path, capsys, monkeypatch):
    catalog = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / "catalog"
    catalog.mkdir(parents=True)
    catalog.chmod(0o000)
    if AS_ROOT:
        real_listdir = os.listdir

        def listdir(path=".", *args):
            if Path(path) == catalog:
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real_listdir(path, *args)

        monkeypatch.setattr(os, "listdir", listdir)
    try:
        err = refused(wizard(str(tmp_path / "b.toml")), capsys)
    finally:
        catalog.chmod(0o755)
    assert f"{catalog}: cannot read the user catalog folder: Permission denied" in err
    assert not (tmp_path / "b.toml").exists()


def test_a_catalog_that_is_a_file_is_reported(tmp_path, capsys):
    catalog = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / "catalog"
    catalog.parent.mkdir(parents=True)
    catalog.write_text("[[gpu]]\n", encoding="utf-8")
    assert "not a folder" in refused(wizard(str(tmp_path / "b.toml")), capsys)
