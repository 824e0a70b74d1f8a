"""The few job variables of a process's environment (/proc/PID/environ), read once per process.

/proc/PID/environ is readable for the process's own user and root only; for anyone else the tags stay
empty and sensors/jobs.py falls back to the cgroup path and the process tree. Only the names below are
kept: an environment holds tokens and passwords, and nothing else of it leaves this module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Container

# Stop reading an environment past this (a real one is a few KiB; the variables we want come early).
MAX_ENVIRON_BYTES = 1 << 20
_READ_CHUNK = 65536
_WANTED = {
    b"TORCHELASTIC_RUN_ID": "torchelastic_run_id",
    b"SLURM_JOB_ID": "slurm_job_id",
    b"POD_NAMESPACE": "pod_namespace",
    b"POD_NAME": "pod_name",
}
# Longest value kept: an id, not a payload.
MAX_TAG_CHARS = 128


@dataclass(frozen=True, slots=True)
class JobTags:
    torchelastic_run_id: str = ""
    slurm_job_id: str = ""
    pod_namespace: str = ""
    pod_name: str = ""


NO_TAGS = JobTags()


def tags_from_environ(raw: bytes) -> JobTags:
    """The job variables of a NUL-separated environment block."""
    found: dict[str, str] = {}
    for entry in raw.split(b"\0"):
        name, equals, value = entry.partition(b"=")
        field_name = _WANTED.get(name) if equals else None
        if field_name is not None and field_name not in found:
            found[field_name] = value[:MAX_TAG_CHARS].decode("utf-8", "replace")
    return JobTags(**found) if found else NO_TAGS


def read_environ(path: str) -> bytes:
    """The environment block at `path`, at most MAX_ENVIRON_BYTES; b"" when unreadable."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    chunks: list[bytes] = []
    size = 0
    try:
        while size < MAX_ENVIRON_BYTES:
            chunk = os.read(descriptor, _READ_CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return b""
    finally:
        os.close(descriptor)
    return b"".join(chunks)


class EnvironTags:
    """pid -> JobTags, read once per (pid, start time): a process's environment block never changes after exec
    in the ways that matter here, and a reused PID has another start time."""

    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self.known: dict[int, tuple[float, JobTags]] = {}
        self.reads = 0

    def tags(self, pid: int, start_time_s: float) -> JobTags:
        cached = self.known.get(pid)
        if cached is not None and cached[0] == start_time_s:
            return cached[1]
        self.reads += 1
        tags = tags_from_environ(read_environ(f"{self.proc_root}/{pid}/environ"))
        self.known[pid] = (start_time_s, tags)
        return tags

    def forget_except(self, live_pids: Container[int]) -> None:
        for pid in [pid for pid in self.known if pid not in live_pids]:
            del self.known[pid]
