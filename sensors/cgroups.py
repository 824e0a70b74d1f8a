"""Which container or batch job a process runs in, from its /proc/PID/cgroup (cgroup v1 and v2).

The answer is one short string: "docker:<12 hex>" (Docker, as `docker ps` shows ids), "container:<12 hex>"
(containerd, CRI-O, Podman outside Kubernetes), "pod:<uid>/<12 hex>" (a Kubernetes pod and its container, any
runtime; "pod:<uid>" where the path stops at the pod), "slurm:<job id>", or "" (a host process, a systemd service
or a user's login slice).

A hint, not attribution: the path is the process's to choose where it may create cgroups (a delegated
subtree, e.g. a user's systemd manager), so any process there can name itself docker:<anything>.
"""

from __future__ import annotations

import re

# Slurm: cgroup v1 "/slurm/uid_1000/job_17/step_0", cgroup v2 "/system.slice/slurmstepd.scope/job_17/step_0"
# (the scope may carry the node name: "<node>_slurmstepd.scope").
_SLURM_JOB = re.compile(r"/slurm/uid_\d+/job_(\d+)(?:/|$)|slurmstepd\.scope/job_(\d+)(?:/|$)")
# Kubernetes: "/kubepods/besteffort/pod<uid>/..." (cgroupfs driver) or "kubepods-...-pod<uid_with_underscores>.slice".
_POD_UID = re.compile(
    r"kubepods.*?pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})(?:\.slice)?(?:/|$)"
)
# A 64-hex container id as one path segment: bare (cgroupfs driver) or a systemd scope of its runtime.
_CONTAINER_SEGMENT = re.compile(r"^(docker-|cri-containerd-|crio-|libpod-)?([0-9a-f]{64})(?:\.scope)?$")


def cgroup_paths(text: str) -> list[str]:
    """The distinct cgroup paths below the root in a /proc/PID/cgroup text: the v2 line ("0::") first, then v1's."""
    unified: list[str] = []
    controllers: dict[str, None] = {}
    for line in text.splitlines():
        hierarchy, _, rest = line.partition(":")
        controller_names, _, path = rest.partition(":")
        if len(path) < 2 or path[0] != "/":
            continue
        if hierarchy == "0" and not controller_names:
            unified.append(path)
        else:
            controllers[path] = None
    return unified + [path for path in controllers if path not in unified]


def container_of_path(path: str) -> str:
    """The container or job one cgroup path names ("" for none)."""
    # Substring tests first: most paths are a service or a session, and a regex costs microseconds.
    slurm = _SLURM_JOB.search(path) if "slurm" in path else None
    if slurm:
        return f"slurm:{slurm.group(1) or slurm.group(2)}"
    pod = _POD_UID.search(path) if "kubepods" in path else None
    if pod:
        # Its container is a segment below the pod's: "pod<uid>/<64 hex>", ".slice/cri-containerd-<64 hex>.scope".
        inner = _innermost_container(path[pod.end(1):].split("/"))
        return "pod:" + pod.group(1).replace("_", "-") + (f"/{inner[1]}" if inner else "")
    if len(path) < 65:
        return ""
    inner = _innermost_container(path.split("/"))
    return f"{inner[0]}:{inner[1]}" if inner else ""


def _innermost_container(segments: list[str]) -> tuple[str, str] | None:
    """(runtime, 12-hex id) of the innermost container among a path's segments (Docker in Docker), or None."""
    for position in range(len(segments) - 1, 0, -1):
        if len(segments[position]) < 64:
            continue
        match = _CONTAINER_SEGMENT.match(segments[position])
        if match:
            # A bare id is Docker's under /docker or at the root (its cgroupfs driver), another runtime's elsewhere.
            bare_docker = match.group(1) is None and segments[position - 1] in ("", "docker")
            return ("docker" if match.group(1) == "docker-" or bare_docker else "container", match.group(2)[:12])
    return None


def container_of_cgroup(text: str) -> str:
    """The container or job of a process, from its /proc/PID/cgroup text ("" for none)."""
    for path in cgroup_paths(text):
        found = container_of_path(path)
        if found:
            return found
    return ""
