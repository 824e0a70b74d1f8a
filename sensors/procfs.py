"""Fast Linux process listing straight from /proc: one `stat` read per process per sample.

psutil would open three or four files per process; this reads only what the process table shows,
keeps each stat file open between samples (a re-read is one pread), and re-reads a command line and
owner only when the process changes its name (exec).
"""

from __future__ import annotations

import fcntl
import functools
import os
import pwd
import resource
import time
import weakref
from typing import Callable, Container, NamedTuple

from pth_top.sensors.cgroups import container_of_cgroup

# PF_KTHREAD in the flags field of /proc/PID/stat.
KERNEL_THREAD_FLAG = 0x00200000
# One-letter states of /proc/PID/stat, in psutil's words.
STATE_WORDS = {
    "R": "running", "S": "sleeping", "D": "disk-sleep", "Z": "zombie", "T": "stopped",
    "t": "tracing-stop", "X": "dead", "x": "dead", "I": "idle", "P": "parked", "W": "waking", "K": "wake-kill",
}


class ProcStat(NamedTuple):
    """The fields of /proc/PID/stat the process table needs (a tuple: cheap to build 1000 times a tick)."""

    pid: int
    comm: str
    state: str
    ppid: int
    flags: int
    cpu_ticks: int
    start_ticks: int
    rss_pages: int


def parse_stat(raw: bytes) -> ProcStat:
    """Parse one /proc/PID/stat line; the command name may hold spaces and parentheses."""
    open_paren = raw.index(b"(")
    close_paren = raw.rindex(b")")
    fields = raw[close_paren + 2:].split()
    return ProcStat(
        pid=int(raw[:open_paren]),
        comm=raw[open_paren + 1:close_paren].decode("utf-8", "replace"),
        state=fields[0].decode("ascii", "replace"),
        ppid=int(fields[1]),
        flags=int(fields[6]),
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


def read_small_file(path: str) -> bytes:
    """One read of a /proc file (os.open/os.read: half the cost of open() for these tiny files)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        return os.read(descriptor, 65536)
    finally:
        os.close(descriptor)


@functools.cache
def boot_time_s(proc_root: str = "/proc") -> float:
    """Wall-clock time of boot, read once per process: start times derived from it never wobble,
    even across a clock step, so the kill dialog can compare them with the table's."""
    return time.time() - float(read_small_file(f"{proc_root}/uptime").split()[0])


# Kept files take descriptor numbers from here up, leaving the ones below FD_SETSIZE to code using select().
KEPT_DESCRIPTOR_FLOOR = 1024


def raise_open_file_limit(wanted: int = 16384) -> int:
    """Raise the soft RLIMIT_NOFILE towards `wanted` (never past the hard limit); the new soft limit.

    For the long-running dashboard: with a server's default soft limit (1024) no stat file stays open.
    """
    soft_limit, hard_limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard_limit == resource.RLIM_INFINITY else min(wanted, hard_limit)
    if soft_limit != resource.RLIM_INFINITY and soft_limit < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard_limit))
        except (ValueError, OSError):
            return soft_limit
        return target
    return soft_limit


def descriptor_budget() -> int:
    """How many stat files may stay open: the descriptor numbers between the floor and the soft limit."""
    soft_limit, _hard_limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft_limit == resource.RLIM_INFINITY:
        soft_limit = KEPT_DESCRIPTOR_FLOOR + 65536
    return max(0, soft_limit - KEPT_DESCRIPTOR_FLOOR)


def _close_all(descriptors: dict[int, int]) -> None:
    for descriptor in descriptors.values():
        os.close(descriptor)
    descriptors.clear()


class StatFiles:
    """/proc/PID/stat files kept open between samples: re-reading one is a single pread.

    An open file still names its process after the PID is reused: reading it then fails (ESRCH), and the
    PID's new file is opened instead. Past `max_open` files, a file is opened and closed per read. The
    files are closed by `close()`, or when this object is garbage-collected.
    """

    def __init__(self, proc_root: str = "/proc", max_open: int | None = None) -> None:
        self.proc_root = proc_root
        self.max_open = descriptor_budget() if max_open is None else max_open
        self._descriptors: dict[int, int] = {}
        self._finalizer = weakref.finalize(self, _close_all, self._descriptors)

    @property
    def open_count(self) -> int:
        return len(self._descriptors)

    def read(self, pid: int) -> bytes | None:
        """The stat line of `pid`, or None when the process is gone or unreadable."""
        descriptor = self._descriptors.get(pid)
        if descriptor is not None:
            try:
                return os.pread(descriptor, 4096, 0)
            except OSError:
                del self._descriptors[pid]
                os.close(descriptor)
        try:
            descriptor = os.open(f"{self.proc_root}/{pid}/stat", os.O_RDONLY)
        except OSError:
            return None
        try:
            raw = os.pread(descriptor, 4096, 0)
        except OSError:
            os.close(descriptor)
            return None
        self._keep(pid, descriptor)
        return raw

    def _keep(self, pid: int, descriptor: int) -> None:
        """Keep a copy of `descriptor` above the floor while the budget allows; closes the original."""
        try:
            if len(self._descriptors) < self.max_open:
                self._descriptors[pid] = fcntl.fcntl(descriptor, fcntl.F_DUPFD_CLOEXEC, KEPT_DESCRIPTOR_FLOOR)
        except OSError:
            # No free number above the floor (a lowered limit): stop trying, read by path from now on.
            self.max_open = len(self._descriptors)
        finally:
            os.close(descriptor)

    def keep_only(self, live_pids: Container[int]) -> None:
        """Close the files of processes that are no longer listed."""
        gone = [pid for pid in self._descriptors if pid not in live_pids]
        for pid in gone:
            os.close(self._descriptors.pop(pid))

    def close(self) -> None:
        self._finalizer()


class ProcfsReader:
    """Lists processes under `proc_root`; vanished processes are skipped, never raised."""

    def __init__(self, proc_root: str = "/proc", max_open_files: int | None = None) -> None:
        self.proc_root = proc_root
        self.stat_files = StatFiles(proc_root, max_open_files)
        self._commands: dict[int, tuple[int, str, str]] = {}
        self._owners: dict[int, tuple[int, str, int]] = {}
        self._containers: dict[int, tuple[int, str, str]] = {}

    def pids(self) -> list[int]:
        """Every visible process, lowest PID first."""
        return sorted(int(name) for name in os.listdir(self.proc_root) if name.isdigit())

    def read_stat_line(self, pid: int) -> bytes | None:
        """The raw stat line of one process; None when it has exited (or is unreadable)."""
        return self.stat_files.read(pid)

    def owner_uid(self, stat: ProcStat) -> int | None:
        """The uid owning /proc/PID (the effective uid; root when not dumpable).

        Cached until the process execs (its name changes): a setuid exec is what changes owners.
        """
        cached = self._owners.get(stat.pid)
        if cached is not None and cached[0] == stat.start_ticks and cached[1] == stat.comm:
            return cached[2]
        try:
            uid = os.stat(f"{self.proc_root}/{stat.pid}").st_uid
        except OSError:
            return None
        self._owners[stat.pid] = (stat.start_ticks, stat.comm, uid)
        return uid

    def command(self, stat: ProcStat) -> str:
        """The command line; "[comm]" for kernel threads and zombies. Cached until the name changes."""
        cached = self._commands.get(stat.pid)
        if cached is not None and cached[0] == stat.start_ticks and cached[1] == stat.comm:
            return cached[2]
        try:
            raw = read_small_file(f"{self.proc_root}/{stat.pid}/cmdline")
        except OSError:
            raw = b""
        text = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
        command = text or f"[{stat.comm}]"
        self._commands[stat.pid] = (stat.start_ticks, stat.comm, command)
        return command

    def container(self, stat: ProcStat) -> str:
        """The container or job from /proc/PID/cgroup ("" for none and for kernel threads).

        Read once per process (PID and start time) and again after an exec, when a runtime has moved it in.
        """
        if stat.flags & KERNEL_THREAD_FLAG:
            return ""
        cached = self._containers.get(stat.pid)
        if cached is not None and cached[0] == stat.start_ticks and cached[1] == stat.comm:
            return cached[2]
        try:
            text = read_small_file(f"{self.proc_root}/{stat.pid}/cgroup").decode("ascii", "replace")
        except OSError:
            text = ""
        container = container_of_cgroup(text)
        self._containers[stat.pid] = (stat.start_ticks, stat.comm, container)
        return container

    def forget_except(self, live_pids: Container[int]) -> None:
        """Drop open stat files, command lines, owners and containers of processes that are gone."""
        self.stat_files.keep_only(live_pids)
        for cache in (self._commands, self._owners, self._containers):
            for pid in [pid for pid in cache if pid not in live_pids]:
                del cache[pid]

    def close(self) -> None:
        self.stat_files.close()
