"""Capped reads of regular files; atomic writes (temp file, fsync, rename), never a silent overwrite."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from pth_top.units import MIB

# A TOML file pth-top reads is a few KiB; anything this large is not one (and /dev/zero never ends).
MAX_READ_BYTES = 4 * MIB


class FileExistsRefused(FileExistsError):
    """The target exists and the caller did not allow overwriting it."""


class WriteRefused(OSError):
    """The target is something pth-top does not write to (a symbolic link): `strerror` says why."""


class FolderRefused(NotADirectoryError):
    """The folder to write in cannot be made: a part of its path is a file or a dangling symbolic link."""


class UnreadableFile(OSError):
    """Not a regular file (a device, FIFO or socket), or larger than the cap: `strerror` says which."""


def read_regular_file(path: str | os.PathLike[str], max_bytes: int = MAX_READ_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; never blocks on a FIFO or reads a device.

    Raises FileNotFoundError, IsADirectoryError, UnreadableFile or another OSError.
    """
    _refuse_unless_regular(os.stat(path), max_bytes)
    # O_NONBLOCK: a FIFO swapped in after the stat opens at once (and is refused), instead of waiting for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        _refuse_unless_regular(os.fstat(fd), max_bytes)
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise UnreadableFile(errno.EFBIG, f"larger than {max_bytes:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _refuse_unless_regular(info: os.stat_result, max_bytes: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFile(errno.EINVAL, "not a regular file (a device, FIFO or socket)")
    if info.st_size > max_bytes:
        raise UnreadableFile(errno.EFBIG, f"larger than {max_bytes:,} bytes")


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False) -> Path:
    """Write `data` to `path` atomically. Raises FileExistsRefused if it exists and not `overwrite`.

    What check_write_target refuses is refused. The folder is created if missing. On any failure the
    temp file is removed and the old file stays.
    """
    target = check_write_target(path)
    make_folder(target.parent)
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


def check_write_target(path: str | os.PathLike[str]) -> Path:
    """`path`, or OSError (`strerror` says why) for a path ending in "/", a symbolic link, a directory,
    or a device, FIFO or socket (replacing one, root would turn /dev/null into a file)."""
    if os.fspath(path).endswith(("/", os.sep)):
        raise IsADirectoryError(errno.EISDIR, "names a folder; give a file name")
    target = Path(path)
    if target.is_symlink():
        raise WriteRefused(errno.ELOOP, "is a symbolic link; not written through or over")
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory")
    if target.exists() and not target.is_file():
        raise WriteRefused(errno.EINVAL, "is not a regular file (a device, FIFO or socket); not written over")
    return target


def make_folder(folder: Path) -> None:
    """`folder` and its missing parents; FolderRefused (`strerror` says which part is what) when one is no folder."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        problem = folder_problem(folder)
        if problem is None:
            raise
        raise FolderRefused(errno.ENOTDIR, problem) from None


def folder_problem(folder: Path) -> str | None:
    """One line on the part of `folder`'s path that is not a folder (a file, a dangling link), or None.

    None too where the path cannot be looked at (a NUL byte, a name too long): the caller's own error says that.
    """
    from pth_top.text import printable

    try:
        blocking = next((part for part in (*reversed(folder.parents), folder) if not part.is_dir()), None)
        if blocking is None or not (blocking.exists() or blocking.is_symlink()):
            return None
        if blocking.exists():
            what = "is a file, not a directory" if blocking.is_file() else "is not a directory"
        else:
            what = f"is a dangling symbolic link to {printable(os.readlink(blocking), 200)}"
    except (OSError, ValueError):
        return None
    shown = printable(str(blocking), 200)
    return f"{shown} {what}" if blocking == folder else f"{printable(str(folder), 200)} cannot be made: {shown} {what}"


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
