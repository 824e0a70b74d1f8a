"""OOM kills: the oom_kill counters of the recorded processes' memory cgroups (cgroup v2 `memory.events`, or
cgroup v1 `memory.oom_control` where the memory controller is bound to v1, kernel 4.13 and later), and the
kernel log (/dev/kmsg, readable as root) for the killed process's PID and name.

A kill both sources see (same cgroup, same poll or the next) is one event with the evidence of both.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, Sequence

from pth_top.recorder.event import Event
from pth_top.sensors.model import ProcessSample, Snapshot
from pth_top.text import printable

# Cgroups watched at most: the recorded processes' cgroups; a bound so a fork storm cannot grow it without end.
MAX_CGROUPS = 512
KMSG_READ_BYTES = 8192
# Kernel log "oom-kill:" details kept for a "Killed process" line that comes in a later poll.
MAX_PENDING_DETAILS = 64
# "Memory cgroup out of memory: Killed process ..." (older kernels: no reason); before 4.19 "Task in" names the
# cgroups where later kernels print an "oom-kill:" line.
_KILLED = re.compile(r"Killed process (\d+) \(([^)]*)\)")
_OOM_KILL = re.compile(r"oom-kill:.*?oom_memcg=([^,]*),task_memcg=([^,]*),task=([^,]*),pid=(\d+)")
_TASK_IN = re.compile(r"Task in (\S+) killed as a result of limit of (\S+)")
_ESCAPED = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class CgroupHierarchy:
    """A mounted cgroup hierarchy holding the memory controller, and the file of its oom_kill counter."""

    version: int  # 2, or 1 for the v1 memory hierarchy
    mount: str  # where it is mounted
    root: str  # the mount's root inside the hierarchy: "/" unless a container sees only its own subtree
    counter_file: str  # memory.events (v2) or memory.oom_control (v1)

    def counter_path(self, cgroup: str) -> str | None:
        """The counter file of `cgroup` (a path as /proc/PID/cgroup gives it); None where the mount cannot see it."""
        root = self.root.rstrip("/")
        if cgroup != root and not cgroup.startswith(root + "/"):
            return None
        return f"{self.mount.rstrip('/')}{cgroup[len(root):].rstrip('/')}/{self.counter_file}"


def _mounts(mountinfo_path: str) -> list[tuple[str, str, str, list[str]]]:
    """(mount point, root, filesystem type, super options) of each mount in a mountinfo file; [] if unreadable."""
    found = []
    try:
        with open(mountinfo_path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                left, _, right = line.rstrip("\n").partition(" - ")
                fields, tail = left.split(" "), right.split(" ")
                if len(fields) < 5 or len(tail) < 3:
                    continue
                point, root = (_ESCAPED.sub(lambda match: chr(int(match.group(1), 8)), fields[index])
                               for index in (4, 3))
                found.append((point, root, tail[0], tail[2].split(",")))
    except OSError:
        return []
    return found


def cgroup2_mount(mountinfo_path: str = "/proc/self/mountinfo") -> str | None:
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or .../unified on hybrid systems); None without."""
    return next((point for point, _, kind, _ in _mounts(mountinfo_path) if kind == "cgroup2"), None)


def memory_hierarchies(mountinfo_path: str = "/proc/self/mountinfo") -> list[CgroupHierarchy]:
    """The cgroup v2 hierarchy and the v1 one with the memory controller, as mounted here (either may be absent)."""
    found: list[CgroupHierarchy] = []
    for point, root, kind, options in _mounts(mountinfo_path):
        if kind == "cgroup2" and not any(hierarchy.version == 2 for hierarchy in found):
            found.append(CgroupHierarchy(2, point, root, "memory.events"))
        elif kind == "cgroup" and "memory" in options and not any(hierarchy.version == 1 for hierarchy in found):
            found.append(CgroupHierarchy(1, point, root, "memory.oom_control"))
    return found


def process_cgroups(pid: int, proc_root: str = "/proc") -> dict[int, str]:
    """The cgroup paths of `pid` from /proc/PID/cgroup: {2: "0::" path, 1: the "N:memory:" path}; {} when gone."""
    paths: dict[int, str] = {}
    try:
        with open(f"{proc_root}/{pid}/cgroup", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                number, _, rest = line.rstrip("\n").partition(":")
                controllers, _, path = rest.partition(":")
                if not path.startswith("/"):
                    continue
                if number == "0" and controllers == "":
                    paths[2] = path
                elif "memory" in controllers.split(","):
                    paths[1] = path
    except OSError:
        return {}
    return paths


def read_oom_kills(counter_path: str) -> int | None:
    """The oom_kill count of one memory.events or memory.oom_control file; None when it cannot be read."""
    try:
        with open(counter_path, encoding="ascii", errors="replace") as handle:
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


class KernelMessages(Protocol):
    """What the watcher reads of a KernelLog."""

    unavailable_reason: str | None

    def messages(self) -> list[str]: ...

    def close(self) -> None: ...


@dataclass
class _Watched:
    cgroup: str
    count: int
    container: str


class OomWatcher:
    """An EventSource: oom_kill events for the cgroups of the processes `choose(snapshot)` names."""

    def __init__(self, choose: Callable[[Snapshot], Iterable[ProcessSample]], proc_root: str = "/proc",
                 hierarchies: Sequence[CgroupHierarchy] | None = None,
                 kernel_log: KernelMessages | None = None) -> None:
        self._choose = choose
        self._proc_root = proc_root
        # v2 first: on a hybrid host its memory.events is missing unless the memory controller is there.
        found = memory_hierarchies() if hierarchies is None else hierarchies
        self.hierarchies = sorted(found, key=lambda hierarchy: -hierarchy.version)
        self.kernel_log = kernel_log
        self._seen: set[tuple[int, float]] = set()  # processes whose cgroup was looked at
        self._watched: dict[str, _Watched] = {}  # by counter file
        self._deferred: set[str] = set()  # counters that rose with no kernel log line yet
        self._details: dict[str, dict[str, str]] = {}  # kernel "oom-kill:" details by PID
        self._task_in: dict[str, str] = {}  # the last "Task in" line's cgroups (older kernels), for the next kill

    @property
    def watched_cgroups(self) -> set[str]:
        """The cgroups whose oom_kill counters are read each poll."""
        return {watched.cgroup for watched in self._watched.values()}

    def poll(self, snapshot: Snapshot) -> list[Event]:
        now = snapshot.timestamp_s
        if self.hierarchies:
            self._watch(self._choose(snapshot))
        kills = self._kernel_kills()
        log_readable = self.kernel_log is not None and self.kernel_log.unavailable_reason is None
        events = []
        for counter, watched in list(self._watched.items()):
            before, cgroup = watched.count, watched.cgroup
            after = read_oom_kills(counter)
            if after is None:  # the cgroup is gone
                del self._watched[counter]
                self._deferred.discard(counter)
                continue
            if after <= before:
                watched.count = after
                continue
            seen = [kill for kill in kills if cgroup in (kill.get("task_memcg"), kill.get("oom_memcg"))]
            if not seen and log_readable and counter not in self._deferred:
                self._deferred.add(counter)  # the kernel counts the kill just before it logs the victim
                continue
            self._deferred.discard(counter)
            watched.count = after
            evidence: dict[str, object] = {"cgroup": cgroup, "oom_kill_before": before, "oom_kill_after": after,
                                           "container": watched.container, "counter": counter}
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
        seen = self._seen
        for process in processes:
            key = (process.pid, process.start_time_s)
            if key in seen:
                continue
            if len(seen) > 4 * MAX_CGROUPS:
                seen.clear()
            seen.add(key)
            if len(self._watched) < MAX_CGROUPS:
                self._add_counter(process)

    def _add_counter(self, process: ProcessSample) -> None:
        """Watch the counter of `process`'s memory cgroup: the first of v2, v1 that has one."""
        paths = process_cgroups(process.pid, self._proc_root)
        for hierarchy in self.hierarchies:
            cgroup = paths.get(hierarchy.version)
            counter = None if cgroup is None else hierarchy.counter_path(cgroup)
            if cgroup is None or counter is None:
                continue
            if counter in self._watched:
                return
            count = read_oom_kills(counter)
            if count is not None:
                self._watched[counter] = _Watched(cgroup, count, process.container)
                return

    def _kernel_kills(self) -> list[dict[str, str]]:
        if self.kernel_log is None:
            return []
        kills: list[dict[str, str]] = []
        details = self._details
        for message in self.kernel_log.messages():
            detail = _OOM_KILL.search(message)
            if detail:
                if len(details) >= MAX_PENDING_DETAILS:
                    details.clear()
                details[detail.group(4)] = {"oom_memcg": detail.group(1), "task_memcg": detail.group(2),
                                            "task": detail.group(3)}
                continue
            task_in = _TASK_IN.search(message)
            if task_in:
                self._task_in = {"task_memcg": task_in.group(1), "oom_memcg": task_in.group(2)}
                continue
            killed = _KILLED.search(message)
            if killed:
                pid = killed.group(1)
                kills.append({"pid": pid, "task": killed.group(2), **self._task_in, **details.pop(pid, {}),
                              "line": printable(message, 400)})
                self._task_in = {}
        return kills

    def close(self) -> None:
        if self.kernel_log is not None:
            self.kernel_log.close()
