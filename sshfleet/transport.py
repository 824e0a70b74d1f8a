"""The system `ssh` as transport: one multiplexed connection per host (ControlMaster), checked host keys, no prompts.

Each host runs one session over its master: the probe (or a loop around the host's own pth-top) stays running
and answers a request line with one snapshot, so a refresh starts no process on either side. A session that
fails or overruns the timeout is killed; the next try starts a new one (and a new master if that one died).

Every call adds options that the command line makes win over any ssh_config: host keys only from
known_hosts (StrictHostKeyChecking=yes, never accept-new), BatchMode (no password is ever asked), no agent
or X11 forwarding, no port forwardings. `ssh` runs in its own session, without a controlling terminal, so
nothing it or a jump host might ask can reach the screen.
"""

from __future__ import annotations

import asyncio
import base64
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
# Ends each answer on the session's stdout (JSON never holds a raw 0x1e).
FRAME_END = b"\n\x1e\n"
STDERR_TAIL_BYTES = 4096
# The remote side, a loop that answers each request line: pth-top itself when installed, else the probe on the
# host's python3 (isolated: no site, no PYTHON* variables), else one line why. The first line is the probe.
REMOTE_COMMAND = (
    "exec /bin/sh -c 'if command -v pth-top >/dev/null 2>&1; then read -r _; while read -r _; do "
    "pth-top snapshot --json --interval 0.2 </dev/null || exit 1; printf \"\\n\\036\\n\"; done; "
    "elif command -v python3 >/dev/null 2>&1; then exec python3 -I -S -c \"import sys; exec(sys.stdin.readline())\"; "
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
    if returncode == 255:
        return "the connection closed (ssh exit status 255)"
    return f"the session ended without an answer (exit status {returncode})"


class SshTransport:
    """Runs the probe on hosts through `ssh`, each host over its own master connection."""

    def __init__(self, config_file: str | None = None, timeout_s: float = 10.0, ssh: str = "ssh",
                 control_dir: str | None = None) -> None:
        self.config_file = config_file
        self.timeout_s = timeout_s
        self.ssh = shutil.which(ssh) or ssh
        self.control_dir = control_dir or private_runtime_dir()
        self._owns_dir = control_dir is None
        self._bootstrap = bootstrap_line()
        self._sessions: dict[str, _Session] = {}
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
        session = self._sessions.get(host)
        try:
            if session is None:
                session = self._sessions[host] = await self._start(host)
            return ProbeResult(await asyncio.wait_for(session.ask(), self.timeout_s), "")
        except asyncio.TimeoutError:
            reason = f"no answer within {self.timeout_s:g}s"
        except AnswerTooBig:
            reason = f"its answer is over {MAX_ANSWER_BYTES // (1024 * 1024)} MiB"
        except SessionEnded:
            reason = ""
        await self._end(host)
        assert session is not None
        return ProbeResult(None, reason or failure_line(bytes(session.stderr_tail), session.process.returncode))

    async def _start(self, host: str) -> _Session:
        process = await asyncio.create_subprocess_exec(
            *self.probe_argv(host), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, env=ssh_environment(), limit=MAX_ANSWER_BYTES)
        session = _Session(process)
        session.send(self._bootstrap)
        return session

    async def _end(self, host: str) -> None:
        session = self._sessions.pop(host, None)
        if session is not None:
            await session.end()

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
        """End every session (its stdin closed: the probe's loop ends), then every master connection."""
        sessions, self._sessions = list(self._sessions.values()), {}
        await asyncio.gather(*(session.end(grace_s=5.0) for session in sessions))
        await asyncio.gather(*(self.close_host(host) for host in hosts))
        if self._owns_dir:
            shutil.rmtree(self.control_dir, ignore_errors=True)


class AnswerTooBig(Exception):
    pass


class SessionEnded(Exception):
    pass


class _Session:
    """One `ssh host <probe loop>`: a request is a line on its stdin, an answer ends with FRAME_END."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        self.process = process
        self.stdin, self.stdout, self.stderr = process.stdin, process.stdout, process.stderr
        self.stderr_tail = bytearray()
        self._turn = asyncio.Lock()
        self._stderr_task = asyncio.ensure_future(self._keep_stderr_tail())

    async def _keep_stderr_tail(self) -> None:
        while chunk := await self.stderr.read(4096):
            self.stderr_tail += chunk
            del self.stderr_tail[:-STDERR_TAIL_BYTES]

    def send(self, line: bytes) -> None:
        try:
            self.stdin.write(line)
        except (BrokenPipeError, ConnectionResetError):
            raise SessionEnded from None

    async def ask(self) -> bytes:
        async with self._turn:  # one request at a time: answers come back in order, unmarked
            self.send(b"\n")
            try:
                await self.stdin.drain()
                return (await self.stdout.readuntil(FRAME_END))[:-len(FRAME_END)]
            except asyncio.LimitOverrunError:
                raise AnswerTooBig from None
            except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError):
                raise SessionEnded from None

    async def end(self, grace_s: float = 0.0) -> None:
        """Close its stdin and give it `grace_s` to end; then kill `ssh` with its group (a ProxyCommand, a jump
        `ssh`), drain its pipes and reap it: Python 3.11's wait() returns only once the pipes are seen closed."""
        with contextlib.suppress(OSError):
            self.stdin.close()
        if grace_s:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.process.wait(), grace_s)
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)

        async def drain() -> None:
            while await self.stdout.read(1 << 16):
                pass

        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.gather(drain(), self._stderr_task, self.process.wait()), 10.0)


def bootstrap_line() -> bytes:
    """The first line the host's python3 reads: the probe itself, base64 on one line."""
    return b"import base64;exec(base64.b64decode('" + base64.b64encode(probe_source()) + b"'))\n"


def ssh_environment() -> dict[str, str]:
    """Our environment without what would let ssh ask anything (askpass programs, a display)."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("SSH_ASKPASS", "DISPLAY", "WAYLAND_DISPLAY")}
    environment["SSH_ASKPASS_REQUIRE"] = "never"
    return environment

