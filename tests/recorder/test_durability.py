"""A recording survives its writer: a SIGKILL mid-write loses at most the interval being written, a disk that
fills ends in a disk_full event (no crash), and the file is 0600, its new folder 0700, never a symlink."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.recorder.helpers import PTH_TOP, RECORD_MAIN, REPO
from tests.waiting import WAIT_TIMEOUT_S, wait_for


def sample_count(path: Path) -> int:
    if not path.exists():
        return 0
    connection = sqlite3.connect(path, timeout=5)
    try:
        return connection.execute("SELECT count(*) FROM samples").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0
    finally:
        connection.close()


def record(path: Path, *arguments: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([*RECORD_MAIN, "--out", str(path), *arguments], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def test_sigkill_during_writes_loses_at_most_the_last_interval(tmp_path):
    path = tmp_path / "r.sqlite"
    child = record(path, "--interval", "0.1", "--min-free", "0")
    try:
        wait_for(lambda: sample_count(path) >= 5, "five committed samples")
        committed = sample_count(path)  # every sample a reader saw was committed
        child.send_signal(signal.SIGKILL)
        child.wait(WAIT_TIMEOUT_S)
    finally:
        child.kill()
        child.wait(WAIT_TIMEOUT_S)
    assert child.returncode == -signal.SIGKILL
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert connection.execute("SELECT count(*) FROM samples").fetchone()[0] >= committed
        assert connection.execute("SELECT count(*) FROM gpu_samples").fetchone()[0] >= 8 * committed
    finally:
        connection.close()
    again = subprocess.run([*RECORD_MAIN, "--out", str(path), "--duration", "1", "--min-free", "0"], cwd=REPO,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert sample_count(path) > committed, "the file takes new samples after the kill"


def test_a_disk_that_fills_ends_in_a_disk_full_event_without_a_crash(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a 2 MiB tmpfs needs root")
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", f"pth-top-test-{uuid.uuid4().hex[:8]}",
                              str(mount_point)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"mount -t tmpfs not permitted here: {mounted.stderr.strip()}")
    try:
        path = mount_point / "r.sqlite"
        child = record(path, "--interval", "0.1", "--min-free", "1M")

        def disk_full_recorded() -> bool:
            assert child.poll() is None, child.communicate()
            shown = subprocess.run([*PTH_TOP, "replay", str(path), "--events"], cwd=REPO, capture_output=True)
            return b"disk_full" in shown.stdout

        try:
            wait_for(disk_full_recorded, "the disk_full event", timeout_s=4 * WAIT_TIMEOUT_S)
            assert child.poll() is None, child.communicate()
            child.send_signal(signal.SIGTERM)
            _, stderr = child.communicate(timeout=WAIT_TIMEOUT_S)
        finally:
            child.kill()
            child.wait(WAIT_TIMEOUT_S)
        assert child.returncode == 0, stderr
        assert "Traceback" not in stderr
        shown = subprocess.run([*PTH_TOP, "replay", str(path), "--events"], cwd=REPO, capture_output=True,
                               text=True, timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert "recorder paused" in shown.stdout and "below the floor" in shown.stdout
        statvfs = os.statvfs(mount_point)
        assert statvfs.f_bavail * statvfs.f_frsize > 0, "the recorder left the disk some room"
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def test_file_is_0600_new_folder_0700_and_a_symlink_is_refused(tmp_path):
    path = tmp_path / "new" / "deeper" / "r.sqlite"
    done = subprocess.run([*RECORD_MAIN, "--out", str(path), "--duration", "0.5", "--min-free", "0"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (path.stat().st_mode & 0o777) == 0o600
    assert (path.parent.stat().st_mode & 0o777) == 0o700 and (path.parent.parent.stat().st_mode & 0o777) == 0o700

    victim = tmp_path / "victim"
    victim.write_text("keep me")
    link = tmp_path / "link.sqlite"
    link.symlink_to(victim)
    refused = subprocess.run([*RECORD_MAIN, "--out", str(link), "--duration", "0.5"], cwd=REPO,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.strip().count("\n") == 0 and "symbolic link" in refused.stderr
    assert victim.read_text() == "keep me"

    wal_link = tmp_path / "other.sqlite-wal"
    wal_link.symlink_to(victim)
    refused = subprocess.run([*RECORD_MAIN, "--out", str(tmp_path / "other.sqlite"), "--duration", "0.5"],
                             cwd=REPO, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "symbolic link" in refused.stderr
    assert victim.read_text() == "keep me"
