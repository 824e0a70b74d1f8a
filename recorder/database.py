"""The recording file: opened safely (0600, never through a symlink, folder 0700), WAL, schema "pth-top.recording".

docs/recording-schema.md describes every table and column. Bump SCHEMA_VERSION when a column is renamed or
removed; adding a table or a column keeps it.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import sqlite3
import stat
from pathlib import Path

from pth_top.configs.paths import user_data_dir

SCHEMA_NAME = "pth-top.recording"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 5.0
# The WAL is emptied into the file at each checkpoint; past this it is truncated back, so it cannot grow for good.
JOURNAL_SIZE_LIMIT_BYTES = 8 * 1024 * 1024

# A sample's compressed JSON is 1-3 KB: 16 KiB pages hold several, where 4 KiB pages would waste half of each.
PAGE_SIZE_BYTES = 16384

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS keyframes (id INTEGER PRIMARY KEY, time_s REAL NOT NULL, snapshot BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS samples (
    id INTEGER PRIMARY KEY,
    time_s REAL NOT NULL UNIQUE,
    resolution_s REAL NOT NULL,
    cpu_percent REAL,
    load_average_1m REAL,
    memory_used_bytes INTEGER,
    memory_available_bytes INTEGER,
    memory_total_bytes INTEGER,
    swap_used_bytes INTEGER,
    disk_read_bytes_per_s REAL,
    disk_write_bytes_per_s REAL,
    net_rx_bytes_per_s REAL,
    net_tx_bytes_per_s REAL,
    process_count INTEGER,
    keyframe_id INTEGER NOT NULL,
    snapshot BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS gpus (
    gpu_index INTEGER NOT NULL,
    uuid TEXT NOT NULL,
    name TEXT NOT NULL,
    bus_id TEXT NOT NULL,
    first_seen_s REAL NOT NULL,
    last_seen_s REAL NOT NULL,
    PRIMARY KEY (gpu_index, uuid)
);
CREATE TABLE IF NOT EXISTS gpu_samples (
    time_s REAL NOT NULL,
    gpu_index INTEGER NOT NULL,
    lost INTEGER NOT NULL,
    utilization_percent REAL,
    memory_utilization_percent REAL,
    memory_used_bytes INTEGER,
    memory_total_bytes INTEGER,
    temperature_c REAL,
    power_draw_w REAL,
    power_limit_w REAL,
    sm_clock_mhz REAL,
    memory_clock_mhz REAL,
    pcie_rx_bytes_per_s REAL,
    pcie_tx_bytes_per_s REAL,
    throttle_reasons TEXT NOT NULL,
    ecc_volatile_uncorrected_errors INTEGER,
    xid_errors INTEGER,
    PRIMARY KEY (time_s, gpu_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS processes (
    pid INTEGER NOT NULL,
    start_time_s REAL NOT NULL,
    user TEXT NOT NULL,
    container TEXT NOT NULL,
    name TEXT NOT NULL,
    command TEXT NOT NULL,
    first_seen_s REAL NOT NULL,
    last_seen_s REAL NOT NULL,
    max_cpu_percent REAL NOT NULL,
    peak_rss_bytes INTEGER NOT NULL,
    peak_gpu_memory_bytes INTEGER,
    gpus TEXT NOT NULL,
    PRIMARY KEY (pid, start_time_s)
);
CREATE INDEX IF NOT EXISTS processes_last_seen ON processes (last_seen_s);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    time_s REAL NOT NULL,
    kind TEXT NOT NULL,
    severity TEXT NOT NULL,
    gpu_index INTEGER,
    gpu_uuid TEXT NOT NULL,
    pid INTEGER,
    message TEXT NOT NULL,
    evidence TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_time ON events (time_s);
"""


class RecordingRefused(OSError):
    """The path is no file pth-top records into or replays from: `strerror` says why, in one line."""


def default_recording_path() -> Path:
    """<data dir>/recordings/<hostname>.sqlite: one file per host."""
    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname()) or "localhost"
    return user_data_dir() / "recordings" / f"{host.lstrip('.') or 'localhost'}.sqlite"


def _refuse_link_or_odd(path: Path) -> bool:
    """True when `path` exists (a regular file); RecordingRefused for a symlink or something not a file."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise RecordingRefused(errno.ELOOP, f"{path} is a symbolic link; a recording is never written through one")
    if not stat.S_ISREG(info.st_mode):
        raise RecordingRefused(errno.EINVAL, f"{path} is not a regular file")
    return True


def _make_private_folder(folder: Path) -> None:
    """The folder and its missing parents, each made 0700; an existing one is left as it is."""
    missing = [part for part in (folder, *folder.parents) if not part.exists()]
    for part in reversed(missing):
        try:
            part.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except NotADirectoryError:
            raise RecordingRefused(errno.ENOTDIR, f"{part}: a part of the path is not a folder") from None


def open_recording(path: str | os.PathLike[str], *, create: bool,
                   fsync_each_commit: bool = False) -> sqlite3.Connection:
    """A connection to the recording at `path` (made 0600 when `create`), checked to be one, in WAL mode."""
    target = Path(path)
    if os.fspath(path).endswith(os.sep):
        raise RecordingRefused(errno.EISDIR, f"{target} names a folder; give a file name")
    for sidecar in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        _refuse_link_or_odd(sidecar)
    if create:
        _make_private_folder(target.parent)
    elif not target.exists():
        raise RecordingRefused(errno.ENOENT, f"{target}: no such file")
    flags = (os.O_RDWR if create else os.O_RDONLY) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags | (os.O_CREAT if create else 0), 0o600)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise RecordingRefused(errno.ELOOP, f"{target} is a symbolic link; not opened") from None
        raise RecordingRefused(error.errno or errno.EIO, f"{target}: {error.strerror}") from None
    try:
        opened = os.fstat(fd)
        if create and stat.S_IMODE(opened.st_mode) & 0o077:
            os.fchmod(fd, 0o600)  # SQLite gives its -wal and -shm files the mode of the database
        connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        # What SQLite opened by name must be the file we checked (no symlink swapped in meanwhile).
        now = os.lstat(target)
        if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino) or stat.S_ISLNK(now.st_mode):
            connection.close()
            raise RecordingRefused(errno.ELOOP, f"{target} changed while it was opened; not used")
    finally:
        os.close(fd)
    try:
        _prepare(connection, create, fsync_each_commit)
    except sqlite3.DatabaseError as error:
        connection.close()
        raise RecordingRefused(errno.EINVAL, f"{target}: not a pth-top recording ({error})") from None
    return connection


def _prepare(connection: sqlite3.Connection, create: bool, fsync_each_commit: bool) -> None:
    if create:
        # Set before the first table exists: freed pages can then be given back to the filesystem.
        connection.execute(f"PRAGMA page_size = {PAGE_SIZE_BYTES}")  # first: later pragmas fix the page size
        connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(f"PRAGMA synchronous = {'FULL' if fsync_each_commit else 'NORMAL'}")
        connection.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT_BYTES}")
        connection.executescript(SCHEMA_SQL)
    meta = dict(connection.execute("SELECT key, value FROM meta").fetchall()) if _has_meta(connection) else {}
    if not meta and create:
        with connection:
            connection.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", [
                ("schema", SCHEMA_NAME), ("schema_version", str(SCHEMA_VERSION)),
                ("snapshot_schema", "pth-top.snapshot"), ("snapshot_schema_version", "1"),
                ("hostname", socket.gethostname()),
            ])
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("schema") != SCHEMA_NAME:
        raise sqlite3.DatabaseError("no pth-top.recording meta row")
    version = meta.get("schema_version", "")
    if not version.isdigit() or int(version) > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(f"schema version {version!r}, newer than this pth-top reads ({SCHEMA_VERSION})")


def _has_meta(connection: sqlite3.Connection) -> bool:
    found = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    return found is not None


def used_bytes(connection: sqlite3.Connection) -> int:
    """Bytes the recording holds: its pages in use (free pages excluded), as the size cap counts them."""
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    free = connection.execute("PRAGMA freelist_count").fetchone()[0]
    return int((pages - free) * page_size)
