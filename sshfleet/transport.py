"""The system `ssh` as transport: one multiplexed connection per host (ControlMaster), checked host keys, no prompts.

Every call adds options that the command line makes win over any ssh_config: host keys only from
known_hosts (StrictHostKeyChecking=yes, never accept-new), BatchMode (no password is ever asked), no agent
or X11 forwarding, no port forwardings. `ssh` runs in its own session, without a controlling terminal, so
nothing it or a jump host might ask can reach the screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import signal
import tempfile
from dataclasses import dataclass
from importlib import resources

from pth_top.sshfleet.answer import MAX_ANSWER_BYTES
from pth_top.text import printable

# After the last use the master connection stays this long (pth-top ends it on exit; this covers a kill -9).
CONTROL_PERSIST_S = 60
# The master notices a dead host after this many seconds of silence, times the count.
SERVER_ALIVE_INTERVAL_S = 5
SERVER_ALIVE_COUNT = 2
REASON_MAX_CHARS = 200
# What `ssh` (and an alias) may be called; nothing that starts with '-' (an option) or holds spaces.
HOST_PATTERN = re.compile(r"[A-Za-z0-9_.%@:\[\]+][A-Za-z0-9_.%@:\[\]+-]{0,254}")
# The remote side: pth-top itself when installed, else the probe on the host's python3, else one line why.
REMOTE_COMMAND = (
    "exec /bin/sh -c 'if command -v pth-top >/dev/null 2>&1; then exec pth-top snapshot --json --interval 0.2; "
    "elif command -v python3 >/dev/null 2>&1; then exec python3 -; "
    "else echo \"pth-top-probe: no python3 (and no pth-top) on the host PATH\" >&2; exit 127; fi'"
)
FORCED_OPTIONS = (
    "BatchMode=yes", "StrictHostKeyChecking=yes", "UpdateHostKeys=no", "ForwardAgent=no", "ForwardX11=no",
    "ClearAllForwardings=yes", "PermitLocalCommand=no", "RequestTTY=no",
)


class SshSettingError(ValueError):
    """A host name or ssh setting that cannot be used; the message is one printable line."""


def check_host(name: str) -> str:
    if not HOST_PATTERN.fullmatch(name):
        raise SshSettingError(f"not a host name ssh can take: {printable(name, 80)!r}")
    return name


def probe_source() -> bytes:
    return resources.files("pth_top.sshfleet").joinpath("probe.py").read_bytes()


def private_runtime_dir() -> str:
    """A new 0700 folder for the control sockets, in $XDG_RUNTIME_DIR when that is ours, else the temp folder."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    parent = None
    if runtime:
        try:
            info = os.lstat(runtime)
            if os.path.isdir(runtime) and info.st_uid == os.getuid() and not info.st_mode & 0o077:
                parent = runtime
        except OSError:
            parent = None
    return tempfile.mkdtemp(prefix="pth-top-ssh-", dir=parent)


@dataclass(frozen=True)
class ProbeResult:
    body: bytes | None  # the answer on stdout, None on failure
    reason: str  # why it failed, one printable line ("" when it worked)


def failure_line(stderr: bytes, returncode: int | None) -> str:
    """ssh's (or the remote's) last meaningful stderr line, printable: the reason the host is down."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(("Warning: Permanently", "**"))]
    if any("REMOTE HOST IDENTIFICATION HAS CHANGED" in line for line in lines):
        return "host key changed (known_hosts holds another key): refused"
    if any(re.match(r"No \S+ host key is known for", line) for line in lines):
        return "host key unknown (not in known_hosts; StrictHostKeyChecking=yes): refused"
    if lines:
        return printable(lines[-1], REASON_MAX_CHARS)
    return f"ssh exited with status {returncode}"


class SshTransport:
    """Runs the probe on hosts through `ssh`, each host over its own master connection."""

    def __init__(self, config_file: str | None = None, timeout_s: float = 10.0, ssh: str = "ssh",
                 control_dir: str | None = None) -> None:
        self.config_file = config_file
        self.timeout_s = timeout_s
        self.ssh = shutil.which(ssh) or ssh
        self.control_dir = control_dir or private_runtime_dir()
        self._owns_dir = control_dir is None
        self._probe = probe_source()
        self.sent = 0

    def control_path(self, host: str) -> str:
        """A short socket name per host and config (aliases of one machine must not share a master)."""
        digest = hashlib.sha256(f"{self.config_file}\0{host}".encode()).hexdigest()[:16]
        return os.path.join(self.control_dir, digest)

    def base_argv(self, host: str) -> list[str]:
        argv = [self.ssh, "-a", "-x", "-T"]
        if self.config_file:
            argv += ["-F", self.config_file]
        for option in (*FORCED_OPTIONS, "ControlMaster=auto", f"ControlPath={self.control_path(host)}",
                       f"ControlPersist={CONTROL_PERSIST_S}", f"ConnectTimeout={max(1, int(self.timeout_s))}",
                       f"ServerAliveInterval={SERVER_ALIVE_INTERVAL_S}", f"ServerAliveCountMax={SERVER_ALIVE_COUNT}"):
            argv += ["-o", option]
        return argv

    def probe_argv(self, host: str) -> list[str]:
        return [*self.base_argv(check_host(host)), "--", host, REMOTE_COMMAND]

    async def probe(self, host: str) -> ProbeResult:
        """The host's answer, or why there is none; never longer than timeout_s, whatever the host does."""
        self.sent += 1
        process = await asyncio.create_subprocess_exec(
            *self.probe_argv(host), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, env=ssh_environment())
        try:
            stdout, stderr = await asyncio.wait_for(self._exchange(process), self.timeout_s)
        except asyncio.TimeoutError:
            return ProbeResult(None, f"no answer within {self.timeout_s:g}s")
        except AnswerTooBig:
            return ProbeResult(None, f"its answer is over {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")
        finally:
            await _finish(process)
        if process.returncode != 0:
            return ProbeResult(None, failure_line(stderr, process.returncode))
        return ProbeResult(stdout, "")

    async def _exchange(self, process: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        try:
            process.stdin.write(self._probe)
            await process.stdin.drain()
            process.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass  # ssh ended at once: its stderr says why
        reads = [asyncio.ensure_future(_read_capped(stream)) for stream in (process.stdout, process.stderr)]
        try:
            stdout, stderr = await asyncio.gather(*reads)
        finally:
            for read in reads:  # one stream over the cap: the other is left unread too
                read.cancel()
        await process.wait()
        return stdout, stderr

    async def close_host(self, host: str) -> None:
        """End the host's master connection (if any)."""
        if not os.path.exists(self.control_path(host)):
            return
        process = await asyncio.create_subprocess_exec(
            *self.base_argv(host), "-O", "exit", "--", host, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
            env=ssh_environment())
        try:
            await asyncio.wait_for(process.wait(), 5.0)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()

    async def close(self, hosts: list[str]) -> None:
        await asyncio.gather(*(self.close_host(host) for host in hosts))
        if self._owns_dir:
            shutil.rmtree(self.control_dir, ignore_errors=True)


class AnswerTooBig(Exception):
    pass


async def _finish(process: asyncio.subprocess.Process) -> None:
    """Kill `ssh` if it still runs, with its group (a ProxyCommand, a jump `ssh`); drain its pipes and reap it.

    Python 3.11's wait() returns only once the pipes close, and a pipe left unread is never seen closing.
    """
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    async def drain(stream: asyncio.StreamReader | None) -> None:
        while stream is not None and await stream.read(1 << 16):
            pass

    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.gather(drain(process.stdout), drain(process.stderr), process.wait()), 10.0)


async def _read_capped(stream: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(1 << 16):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise AnswerTooBig
        chunks.append(chunk)
    return b"".join(chunks)


def ssh_environment() -> dict[str, str]:
    """Our environment without what would let ssh ask anything (askpass programs, a display)."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("SSH_ASKPASS", "DISPLAY", "WAYLAND_DISPLAY")}
    environment["SSH_ASKPASS_REQUIRE"] = "never"
    return environment

