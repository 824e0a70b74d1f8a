"""A lab of 'hosts' on loopback for the fleet-over-SSH tests: Debian's real sshd, generated keys, a temp ssh config.

Two sshd processes (non-daemon, `sshd -D -e`) on free 127.0.0.1 ports with their own host keys, root's
login through a temp AuthorizedKeysFile (never the real ~/.ssh or /etc/ssh), and Host aliases with different
fates: good, drops (its sshd is killed mid-run), hangs (a TCP listener that never speaks), changed (known_hosts
holds another key for it), unknown (no key known), nopython (a PATH without python3). Each user key runs
under an authorized_keys command= wrapper that sets the remote PATH: a fake `nvidia-smi` first, printing CSV
made from a real machine's readings.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.fakes.real_gpus import A100_SXM4_X4
from tests.waiting import wait_for

SSHD = "/usr/sbin/sshd"
REPO = Path(__file__).resolve().parents[2]
SKIP_REASON = f"no OpenSSH server at {SSHD} (make install-test installs Debian's openssh-server as root)"


def sshd_missing() -> bool:
    return not (os.access(SSHD, os.X_OK) and shutil.which("ssh") and shutil.which("ssh-keygen"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().split()[1]


@dataclass(frozen=True)
class GpuReading:
    """One GPU as both fakes give it (nvidia-smi's CSV and the compiled NVML): a real machine's readings."""

    uuid: str
    name: str
    bus_id: str
    utilization_percent: int
    memory_used_mib: int
    memory_total_mib: int
    temperature_c: int
    power_draw_w: float
    power_limit_w: float
    sm_clock_mhz: int
    memory_clock_mhz: int
    pstate: int
    driver_version: str
    cuda_version: int
    clocks_event_mask: int
    remapped_rows: tuple[int, int, int, int]  # correctable, uncorrectable, pending, failed
    memory_utilization_percent: int = 0
    ecc_volatile_corrected: int = 0
    ecc_volatile_uncorrected: int = 0
    ecc_enabled: bool = True


def a100_readings(busy_gpu: int = 1) -> list[GpuReading]:
    """The 4 x A100 in tests/fakes/real_gpus.py (no fan: N/A), one of them busy with a training job."""
    board, gpus = A100_SXM4_X4
    return [GpuReading(
        uuid=gpu.uuid, name=board.name, bus_id=gpu.bus_id,
        utilization_percent=97 if index == busy_gpu else 0, memory_used_mib=61234 if index == busy_gpu else 1,
        memory_total_mib=board.memory_total_mib, temperature_c=gpu.temperature_c, power_draw_w=gpu.power_draw_w,
        power_limit_w=board.power_limit_w, sm_clock_mhz=gpu.sm_clock_mhz, memory_clock_mhz=board.memory_clock_mhz,
        pstate=board.pstate, driver_version=board.driver_version, cuda_version=board.cuda_version,
        clocks_event_mask=gpu.clocks_event_mask, remapped_rows=gpu.remapped_rows,
        ecc_volatile_corrected=gpu.ecc_volatile_corrected,
    ) for index, gpu in enumerate(gpus)]


def a100_csv(busy_gpu: int = 1) -> tuple[str, str, str, str]:
    """(query-gpu, extra query-gpu, query-remapped-rows) CSV of a100_readings, and the busy GPU's uuid."""
    main, extra, remaps = [], [], []
    readings = a100_readings(busy_gpu)
    for index, gpu in enumerate(readings):
        main.append(f"{index}, {gpu.uuid}, {gpu.name}, {gpu.bus_id}, {gpu.utilization_percent}, "
                    f"{gpu.memory_utilization_percent}, {gpu.memory_used_mib}, {gpu.memory_total_mib}, "
                    f"{gpu.temperature_c}, [N/A], {gpu.power_draw_w:.2f}, {gpu.power_limit_w:.2f}, "
                    f"{gpu.sm_clock_mhz}, {gpu.memory_clock_mhz}, P{gpu.pstate}, {gpu.driver_version}")
        extra.append(f"{gpu.uuid}, 0x{gpu.clocks_event_mask:016x}, {gpu.ecc_volatile_uncorrected}, "
                     f"{'Enabled' if gpu.ecc_enabled else 'Disabled'}")
        correctable, uncorrectable, pending, failed = gpu.remapped_rows
        remaps.append(f"{gpu.uuid}, {correctable}, {uncorrectable}, {pending}, {failed}")
    return "\n".join(main) + "\n", "\n".join(extra) + "\n", "\n".join(remaps) + "\n", readings[busy_gpu].uuid


FAKE_NVIDIA_SMI = """#!/bin/sh
# Fake nvidia-smi: answers the probe's queries with CSV recorded from a real machine's readings.
dir=$(/usr/bin/dirname "$0")
case "$1" in
  --query-gpu=uuid,*) exec /bin/cat "$dir/extra.csv" ;;
  --query-gpu=*) exec /bin/cat "$dir/gpus.csv" ;;
  --query-remapped-rows=*) exec /bin/cat "$dir/remaps.csv" ;;
  --query-compute-apps=*) exec /bin/cat "$dir/apps.csv" ;;
esac
echo "fake nvidia-smi: unknown query $1" >&2
exit 2
"""


@dataclass
class Sshd:
    port: int
    process: subprocess.Popen
    host_key: str  # base64 public host key

    def kill(self) -> None:
        """The listener and every connection it serves (its children): the host drops off the network."""
        children = [int(pid) for pid in _children(self.process.pid)]
        for pid in [self.process.pid, *children]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(10)


def _children(pid: int) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found += [entry, *_children(int(entry))]
    return found


@dataclass
class SshLab:
    root: Path
    sshds: list[Sshd] = field(default_factory=list)
    listeners: list[socket.socket] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> its config block
    gpu_process: subprocess.Popen | None = None

    @property
    def config(self) -> Path:
        return self.root / "ssh_config"

    @property
    def known_hosts(self) -> Path:
        return self.root / "known_hosts"

    def start(self) -> None:
        """Keys, fake GPUs, the authorized_keys wrappers and two sshds (good and drops) plus the hanging port."""
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder (Debian's path)
        self.fakebin = self.root / "fakebin"
        self.nopybin = self.root / "nopybin"
        for folder in (self.fakebin, self.nopybin):
            folder.mkdir()
        gpus, extra, remaps, busy_uuid = a100_csv()
        self.gpu_process = subprocess.Popen(["sleep", "600"])  # the 'training job' on the busy GPU
        (self.fakebin / "gpus.csv").write_text(gpus)
        (self.fakebin / "extra.csv").write_text(extra)
        (self.fakebin / "remaps.csv").write_text(remaps)
        (self.fakebin / "apps.csv").write_text(f"{busy_uuid}, {self.gpu_process.pid}, 61000\n")
        for folder in (self.fakebin, self.nopybin):
            script = folder / "nvidia-smi"
            script.write_text(FAKE_NVIDIA_SMI)
            script.chmod(0o755)
        for name in ("gpus.csv", "extra.csv", "remaps.csv", "apps.csv"):
            (self.nopybin / name).write_text((self.fakebin / name).read_text())
        self.pthtopbin = self.root / "pthtopbin"
        self.pthtopbin.mkdir()
        (self.pthtopbin / "pth-top").symlink_to(REPO / ".venv" / "bin" / "pth-top")
        self.authorized: list[str] = []
        self.user_key_good = self.user_key("good", f"{self.fakebin}:/usr/bin:/bin")
        self.user_key_nopython = self.user_key("nopython", str(self.nopybin))
        self.user_key_pthtop = self.user_key("pthtop", f"{self.pthtopbin}:{self.fakebin}:/usr/bin:/bin")
        self.other_key = keygen(self.root / "other_host_key")
        self.sshds = [self._sshd(name) for name in ("a", "b")]
        hang = socket.socket()
        hang.bind(("127.0.0.1", 0))
        hang.listen(64)  # never accepted, never a banner: the kernel completes the handshake, then nothing
        self.listeners.append(hang)
        a, b = self.sshds
        self.known_hosts.write_text(
            f"[127.0.0.1]:{a.port} ssh-ed25519 {a.host_key}\n[127.0.0.1]:{b.port} ssh-ed25519 {b.host_key}\n"
            f"changed-host ssh-ed25519 {self.other_key}\n")
        self.add("good", a.port)
        self.add("drops", b.port)
        self.add("hangs", hang.getsockname()[1])
        self.add("changed", a.port, "HostKeyAlias changed-host")
        self.add("unknown", a.port, "HostKeyAlias unknown-host")
        self.add("nopython", a.port, key=self.user_key_nopython)
        self.add("with-pth-top", a.port, key=self.user_key_pthtop)
        self.add("jumphost", a.port, key=self.user_key("jump", None))
        self.add("jumped", a.port, "ProxyJump jumphost")

    def user_key(self, name: str, path: str | None) -> Path:
        """A login key whose sessions run the client's command with PATH=`path` (None: a plain login)."""
        key = self.root / f"user_{name}"
        public = keygen(key)
        # The probe reads the fake nvidia-smi, never a real NVML of the machine the tests run on.
        wrapper = (f'command="PATH={path} PTH_TOP_PROBE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 '
                   'exec /bin/sh -c \\"$SSH_ORIGINAL_COMMAND\\"",restrict ' if path else "")
        self.authorized.append(f"{wrapper}ssh-ed25519 {public}\n")
        (self.root / "authorized_keys").write_text("".join(self.authorized))
        return key

    def answering_host(self, alias: str, answer: str) -> None:
        """A host whose 'python3' ignores the probe and answers each request with `answer`'s output."""
        folder = self.root / f"bin_{alias}"
        folder.mkdir()
        script = folder / "python3"
        script.write_text(f"#!/bin/sh\nread -r _\nwhile read -r _; do {answer}; printf '\\n\\036\\n'; done\n")
        script.chmod(0o755)
        self.add(alias, self.sshds[0].port, key=self.user_key(alias, f"{folder}:/usr/bin:/bin"))

    def json_host(self, alias: str, body: str) -> None:
        """A host whose 'python3' ignores the probe and answers `body`."""
        answer = self.root / f"answer_{alias}.json"
        answer.write_text(body)
        self.answering_host(alias, f"/bin/cat {answer}")

    def add(self, alias: str, port: int, extra: str = "", key: Path | None = None) -> None:
        lines = [f"Host {alias}", "  HostName 127.0.0.1", f"  Port {port}", "  User root",
                 f"  IdentityFile {key or self.user_key_good}", "  IdentitiesOnly yes", "  IdentityAgent none",
                 f"  UserKnownHostsFile {self.known_hosts}", "  GlobalKnownHostsFile /dev/null"]
        if extra:
            lines.append(f"  {extra}")
        self.aliases[alias] = "\n".join(lines)
        self.config.write_text("\n\n".join(self.aliases.values()) + "\n")

    def add_good_aliases(self, count: int) -> list[str]:
        names = [f"node{index:03d}" for index in range(count)]
        for name in names:
            self.add(name, self.sshds[0].port)
        return names

    def _sshd(self, name: str) -> Sshd:
        host_key = self.root / f"host_{name}"
        public = keygen(host_key)
        port = free_port()
        config = self.root / f"sshd_{name}.conf"
        config.write_text("\n".join([
            "ListenAddress 127.0.0.1", f"HostKey {host_key}", "PidFile none",
            f"AuthorizedKeysFile {self.root / 'authorized_keys'}", "PermitRootLogin prohibit-password",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
            "MaxStartups 200:30:400", "MaxSessions 200", "AllowTcpForwarding local", "X11Forwarding no",
            "AllowAgentForwarding no", "PermitUserEnvironment no", "LogLevel ERROR", "",
        ]))
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config), "-p", str(port)],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=open(self.root / f"sshd_{name}.log", "wb"))
        wait_for(lambda: _listening(port) or process.poll() is not None, what=f"sshd {name} listening")
        if process.poll() is not None:
            raise RuntimeError(f"sshd {name} exited: {(self.root / f'sshd_{name}.log').read_text()[-500:]}")
        return Sshd(port=port, process=process, host_key=public)

    def session_count(self) -> int:
        """Connections the good sshd serves now (each has a child process of its own)."""
        return len([pid for pid in _children(self.sshds[0].process.pid)
                    if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
                    == self.sshds[0].process.pid])

    def stop(self) -> None:
        for sshd in self.sshds:
            if sshd.process.poll() is None:
                sshd.kill()
        for listener in self.listeners:
            listener.close()
        if self.gpu_process is not None:
            self.gpu_process.kill()
            self.gpu_process.wait()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        time.sleep(0.05)
        return False
