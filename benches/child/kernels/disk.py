"""Sequential disk write (timed through fsync) and read (O_DIRECT, else after dropping cached pages).

The temp file is registered with benches/child/cleanup.py, so SIGTERM, an exception or a normal end removes it;
files left by a killed run (dead pid in the name) are removed by the next run in that folder.
"""

from __future__ import annotations

import mmap
import os
import time
import uuid
from pathlib import Path

from pth_top.benches.child import cleanup
from pth_top.benches.child.kernels._common import KernelContext, Variant, row

CHUNK_BYTES = 8 * 2**20
TEMP_PREFIX = ".pth-top-bench-"
# Sequential MB/s ceilings of drive classes (SATA III link ~600 MB/s; NVMe x4 links per PCIe generation).
DRIVE_CLASSES = (
    (250.0, "HDD or network-class"),
    (600.0, "SATA SSD class (SATA III tops out ~550-600 MB/s)"),
    (3500.0, "NVMe PCIe 3.0 x4 class"),
    (7500.0, "NVMe PCIe 4.0 x4 class"),
    (14500.0, "NVMe PCIe 5.0 x4 class"),
)


def classify(mb_per_s: float) -> str:
    for ceiling, label in DRIVE_CLASSES:
        if mb_per_s <= ceiling:
            return label
    return "faster than any single NVMe drive: page cache, RAM disk or RAID"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_files(folder: Path) -> list[str]:
    removed = []
    for path in folder.glob(f"{TEMP_PREFIX}*.tmp"):
        try:
            pid = int(path.name[len(TEMP_PREFIX):].split("-", 1)[0])
        except ValueError:
            continue
        if pid != os.getpid() and not _pid_alive(pid):
            try:
                path.unlink()
                removed.append(path.name)
            except OSError:
                pass
    return removed


def write_file(path: str, size_bytes: int, ctx: KernelContext) -> float:
    payload = os.urandom(CHUNK_BYTES)  # random, so compressing or deduplicating storage cannot cheat
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    cleanup.register(path)
    try:
        started = time.perf_counter()
        written = 0
        while written < size_bytes:
            count = min(CHUNK_BYTES, size_bytes - written)
            written += os.write(fd, payload[:count])
            ctx.progress(0.5 * written / size_bytes, "write")
        os.fsync(fd)
        return time.perf_counter() - started
    finally:
        os.close(fd)


def read_file(path: str, size_bytes: int, ctx: KernelContext) -> tuple[float, str]:
    """Seconds to read the file, and how the page cache was kept out ('O_DIRECT' or 'fadvise')."""
    mode = "O_DIRECT"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
        if not hasattr(os, "O_DIRECT"):
            raise OSError("no O_DIRECT")
        buffer = mmap.mmap(-1, CHUNK_BYTES)  # page-aligned, as O_DIRECT requires
        try:
            os.readv(fd, [buffer])
        except OSError:
            os.close(fd)
            raise
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        mode = "fadvise"
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        buffer = mmap.mmap(-1, CHUNK_BYTES)
    try:
        started = time.perf_counter()
        total = 0
        while True:
            count = os.readv(fd, [buffer])
            if count <= 0:
                break
            total += count
            ctx.progress(0.5 + 0.5 * min(1.0, total / size_bytes), "read")
        return time.perf_counter() - started, mode
    finally:
        os.close(fd)
        buffer.close()


def variants(ctx: KernelContext) -> list[Variant]:
    folder = Path(ctx.options.get("disk_dir") or os.getcwd())
    size_bytes = max(CHUNK_BYTES, int(ctx.options.get("disk_size_mib", 1024)) * 2**20)
    size_bytes -= size_bytes % CHUNK_BYTES
    state: dict[str, object] = {}

    def write() -> dict:
        if not folder.is_dir():
            raise FileNotFoundError(f"disk folder {folder} does not exist")
        stale = remove_stale_files(folder)
        path = str(folder / f"{TEMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
        state["path"] = path
        try:
            seconds = write_file(path, size_bytes, ctx)
        except BaseException:
            cleanup.remove(path)
            raise
        mb_per_s = size_bytes / seconds / 1e6
        details = {"folder": str(folder), "bytes": size_bytes, "chunk_bytes": CHUNK_BYTES, "fsync": True,
                   "class": classify(mb_per_s), "stale_files_removed": stale}
        return row(variant="sequential write", value=mb_per_s, details=details, note=classify(mb_per_s))

    def read() -> dict:
        path = state.get("path")
        if not path or not os.path.exists(str(path)):
            raise RuntimeError("no file to read: the write step failed")
        try:
            seconds, mode = read_file(str(path), size_bytes, ctx)
        finally:
            cleanup.remove(str(path))
        mb_per_s = size_bytes / seconds / 1e6
        details = {"folder": str(folder), "bytes": size_bytes, "chunk_bytes": CHUNK_BYTES, "cache_bypass": mode,
                   "class": classify(mb_per_s)}
        note = classify(mb_per_s) if mode == "O_DIRECT" else f"{classify(mb_per_s)} (O_DIRECT refused; cache dropped)"
        return row(variant="sequential read", value=mb_per_s, details=details, note=note)

    return [Variant("sequential write", write), Variant("sequential read", read)]
