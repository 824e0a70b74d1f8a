"""Builds a small /proc-style tree in a temp folder for the process reader tests."""

from __future__ import annotations

import os
from pathlib import Path


def stat_line(pid: int, comm: str, state: str = "S", ppid: int = 1, utime: int = 0, stime: int = 0,
              start_ticks: int = 100, rss_pages: int = 256, flags: int = 0x400100) -> str:
    # Fields 3.. of /proc/PID/stat; only the ones the reader uses carry meaning.
    fields = (
        [state, str(ppid)] + ["0"] * 4 + [str(flags)] + ["0"] * 4 + [str(utime), str(stime)] + ["0"] * 6
        + [str(start_ticks), "0", str(rss_pages)] + ["0"] * 28
    )
    return f"{pid} ({comm}) {' '.join(fields)}\n"


def add_process(root: Path, pid: int, comm: str, cmdline: list[str], nspid: tuple[int, ...] | None = None,
                **stat_fields) -> Path:
    directory = root / str(pid)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "stat").write_text(stat_line(pid, comm, **stat_fields))
    (directory / "cmdline").write_bytes(b"".join(arg.encode() + b"\0" for arg in cmdline))
    nspid = nspid or (pid,)
    (directory / "status").write_text(
        f"Name:\t{comm}\nUid:\t{os.getuid()}\t{os.getuid()}\t{os.getuid()}\t{os.getuid()}\n"
        f"NSpid:\t{chr(9).join(map(str, nspid))}\n"
    )
    return directory


def make_proc_root(root: Path, uptime_s: float = 1000.0) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "uptime").write_text(f"{uptime_s:.2f} 1234.00\n")
    return root
