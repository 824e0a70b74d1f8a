"""Atomic file writes: temp file in the same folder, fsync, rename; never a silent overwrite."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class FileExistsRefused(FileExistsError):
    """The target exists and the caller did not allow overwriting it."""


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False) -> Path:
    """Write `data` to `path` atomically. Raises FileExistsRefused if it exists and not `overwrite`.

    The folder is created if missing. On any failure the temp file is removed and the old file stays.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and not overwrite:
        raise FileExistsRefused(f"{target} already exists (use --force to overwrite)")
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(temp_name, target)
        else:
            # link() fails if the target appeared meanwhile, so a concurrent writer is never clobbered.
            try:
                os.link(temp_name, target)
            except FileExistsError:
                raise FileExistsRefused(f"{target} already exists (use --force to overwrite)") from None
            except OSError:
                if target.exists():
                    raise FileExistsRefused(f"{target} already exists (use --force to overwrite)") from None
                os.replace(temp_name, target)
        _fsync_directory(target.parent)
    finally:
        if os.path.exists(temp_name):
            os.unlink(temp_name)
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str, *, overwrite: bool = False) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"), overwrite=overwrite)


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
