"""OOM kills: the cgroup v2 `memory.events` oom_kill counters of the recorded processes' cgroups, and the
kernel log (/dev/kmsg, readable as root) for the killed process's PID and name.

A kill both sources see (same cgroup, same poll) is one event with the evidence of both.
"""

from __future__ import annotations

import errno
import os
import re
from typing import Callable, Iterable

from pth_top.recorder.event import Event
from pth_top.sensors.model import ProcessSample, Snapshot
from pth_top.text import printable

# Cgroups watched at most: the recorded processes' cgroups; a bound so a fork storm cannot grow it without end.
MAX_CGROUPS = 512
KMSG_READ_BYTES = 8192
_KILLED = re.compile(r"(?:Memory cgroup out of memory|Out of memory): Killed process (\d+) \(([^)]*)\)")
_OOM_KILL = re.compile(r"oom-kill:.*?oom_memcg=([^,]*),task_memcg=([^,]*),task=([^,]*),pid=(\d+)")


def cgroup2_mount(mountinfo_path: str = "/proc/self/mountinfo") -> str | None:
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or .../unified on hybrid systems); None without."""
    try:
        with open(mountinfo_path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    return left.split(" ")[4]
    except OSError:
        return None
    return None


def unified_cgroup(pid: int, proc_root: str = "/proc") -> str | None:
    """The cgroup v2 path of `pid` ("0::/path" in /proc/PID/cgroup); None when gone or without one."""
    try:
        with open(f"{proc_root}/{pid}/cgroup", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("0::/"):
                    return line[3:].rstrip("\n")
    except OSError:
        return None
    return None


def read_oom_kills(events_path: str) -> int | None:
    """The oom_kill count of one memory.events file; None when it cannot be read."""
    try:
        with open(events_path, encoding="ascii", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    except (OSError, ValueError):
        return None
    return None


class KernelLog:
    """New records of /dev/kmsg since it was opened (older ones are skipped); nothing where it is not readable."""

    def __init__(self, path: str = "/dev/kmsg") -> None:
        self.unavailable_reason: str | None = None
        self._fd: int | None = None
        try:
            self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            os.lseek(self._fd, 0, os.SEEK_END)
        except OSError as error:
            self.unavailable_reason = f"{path}: {error.strerror}"
            self.close()

    def messages(self) -> list[str]:
        found: list[str] = []
        while self._fd is not None:
            try:
                record = os.read(self._fd, KMSG_READ_BYTES)
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno == errno.EPIPE:  # records overwritten before we read them: go on with the next
                    continue
                self.unavailable_reason = f"kernel log: {error.strerror}"
                self.close()
                break
            if not record:
                break
            header, _, text = record.decode("utf-8", "replace").partition(";")
            found.append(text.split("\n", 1)[0])
        return found

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class OomWatcher:
    """An EventSource: oom_kill events for the cgroups of the processes `choose(snapshot)` names."""

    def __init__(self, choose: Callable[[Snapshot], Iterable[ProcessSample]], proc_root: str = "/proc",
                 cgroup_root: str | None = None, kernel_log: KernelLog | None = None) -> None:
        self._choose = choose
        self._proc_root = proc_root
        self.cgroup_root = cgroup_root if cgroup_root is not None else cgroup2_mount()
        self.kernel_log = kernel_log
        self._cgroup_of: dict[tuple[int, float], str | None] = {}
        self._counts: dict[str, int] = {}
        self._container_of: dict[str, str] = {}

    def poll(self, snapshot: Snapshot) -> list[Event]:
        now = snapshot.timestamp_s
        if self.cgroup_root is not None:
            self._watch(self._choose(snapshot))
        kills = self._kernel_kills()
        events = []
        for cgroup, before in list(self._counts.items()):
            after = read_oom_kills(f"{self.cgroup_root}{cgroup}/memory.events")
            if after is None:  # the cgroup is gone
                del self._counts[cgroup]
                continue
            self._counts[cgroup] = after
            if after <= before:
                continue
            evidence: dict[str, object] = {"cgroup": cgroup, "oom_kill_before": before, "oom_kill_after": after,
                                           "container": self._container_of.get(cgroup, "")}
            seen = [kill for kill in kills if cgroup in (kill.get("task_memcg"), kill.get("oom_memcg"))]
            pid = None
            if seen:
                kills = [kill for kill in kills if kill not in seen]
                evidence["kernel_log"] = [kill["line"] for kill in seen]
                pid = int(seen[0]["pid"])
            name = f" ({seen[0]['task']})" if seen and seen[0].get("task") else ""
            message = f"OOM kill in cgroup {cgroup}{name}: {after - before} process(es) killed"
            events.append(Event(now, "oom_kill", "critical", printable(message, 400), pid=pid, evidence=evidence))
        for kill in kills:
            events.append(Event(now, "oom_kill", "critical",
                                printable(f"OOM kill: process {kill['pid']} ({kill.get('task', '?')}) killed", 400),
                                pid=int(kill["pid"]), evidence={"cgroup": kill.get("task_memcg", ""),
                                                                "kernel_log": [kill["line"]]}))
        return events

    def _watch(self, processes: Iterable[ProcessSample]) -> None:
        known = self._cgroup_of
        for process in processes:
            key = (process.pid, process.start_time_s)
            if key in known:
                continue
            if len(known) > 4 * MAX_CGROUPS:
                known.clear()
            cgroup = known[key] = unified_cgroup(process.pid, self._proc_root)
            if cgroup is None or cgroup in self._counts or len(self._counts) >= MAX_CGROUPS:
                continue
            count = read_oom_kills(f"{self.cgroup_root}{cgroup}/memory.events")
            if count is not None:
                self._counts[cgroup] = count
                self._container_of[cgroup] = process.container

    def _kernel_kills(self) -> list[dict[str, str]]:
        if self.kernel_log is None:
            return []
        kills: list[dict[str, str]] = []
        memcg: dict[str, dict[str, str]] = {}
        for message in self.kernel_log.messages():
            detail = _OOM_KILL.search(message)
            if detail:
                memcg[detail.group(4)] = {"oom_memcg": detail.group(1), "task_memcg": detail.group(2),
                                          "task": detail.group(3)}
                continue
            killed = _KILLED.search(message)
            if killed:
                pid = killed.group(1)
                kills.append({"pid": pid, "task": killed.group(2), **memcg.get(pid, {}),
                              "line": printable(message, 400)})
        return kills

    def close(self) -> None:
        if self.kernel_log is not None:
            self.kernel_log.close()
