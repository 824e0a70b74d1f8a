"""Fast Linux process listing straight from /proc: one `stat` read and one inode stat per process.

psutil would open three or four files per process; this reads only what the process table shows and
re-reads a command line only when the process changes its name (exec).
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from typing import Callable

# One-letter states of /proc/PID/stat, in psutil's words.
STATE_WORDS = {
    "R": "running", "S": "sleeping", "D": "disk-sleep", "Z": "zombie", "T": "stopped",
    "t": "tracing-stop", "X": "dead", "x": "dead", "I": "idle", "P": "parked", "W": "waking", "K": "wake-kill",
}


@dataclass(frozen=True, slots=True)
class ProcStat:
    """The fields of /proc/PID/stat the process table needs."""

    pid: int
    comm: str
    state: str
    ppid: int
    cpu_ticks: int
    start_ticks: int
    rss_pages: int


def parse_stat(text: str) -> ProcStat:
    """Parse one /proc/PID/stat line; the command name may hold spaces and parentheses."""
    open_paren = text.index("(")
    close_paren = text.rindex(")")
    fields = text[close_paren + 2:].split()
    return ProcStat(
        pid=int(text[:open_paren]),
        comm=text[open_paren + 1:close_paren],
        state=fields[0],
        ppid=int(fields[1]),
        cpu_ticks=int(fields[11]) + int(fields[12]),
        start_ticks=int(fields[19]),
        rss_pages=int(fields[21]),
    )


class UserNames:
    """uid -> user name, looked up once per uid."""

    def __init__(self, lookup: Callable[[int], str] | None = None) -> None:
        self._lookup = lookup or _passwd_name
        self._names: dict[int, str] = {}

    def __call__(self, uid: int) -> str:
        name = self._names.get(uid)
        if name is None:
            name = self._names[uid] = self._lookup(uid)
        return name


def _passwd_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


@dataclass(frozen=True, slots=True)
class ProcEntry:
    stat: ProcStat
    uid: int


class ProcfsReader:
    """Lists processes under `proc_root`; vanished processes are skipped, never raised."""

    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self._commands: dict[int, tuple[int, str, str]] = {}

    def pids(self) -> list[int]:
        return [int(name) for name in os.listdir(self.proc_root) if name.isdigit()]

    def read(self, pid: int) -> ProcEntry | None:
        """The stat line and owner of one process; None when it has exited (or is unreadable)."""
        directory = f"{self.proc_root}/{pid}"
        try:
            # The /proc/PID inode belongs to the process's effective uid (root when not dumpable).
            uid = os.stat(directory).st_uid
            with open(f"{directory}/stat", "rb") as stat_file:
                text = stat_file.read().decode("utf-8", "replace")
            return ProcEntry(parse_stat(text), uid)
        except (OSError, ValueError, IndexError):
            return None

    def command(self, stat: ProcStat) -> str:
        """The command line; "[comm]" for kernel threads and zombies. Cached until the name changes."""
        cached = self._commands.get(stat.pid)
        if cached is not None and cached[0] == stat.start_ticks and cached[1] == stat.comm:
            return cached[2]
        try:
            with open(f"{self.proc_root}/{stat.pid}/cmdline", "rb") as cmdline_file:
                raw = cmdline_file.read()
        except OSError:
            raw = b""
        text = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
        command = text or f"[{stat.comm}]"
        self._commands[stat.pid] = (stat.start_ticks, stat.comm, command)
        return command

    def forget_except(self, live_pids: set[int]) -> None:
        for pid in [pid for pid in self._commands if pid not in live_pids]:
            del self._commands[pid]

    def uptime_s(self) -> float:
        with open(f"{self.proc_root}/uptime", "rb") as uptime_file:
            return float(uptime_file.read().split()[0])
