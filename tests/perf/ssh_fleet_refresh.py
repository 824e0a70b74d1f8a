"""Fleet over SSH: 50 hosts (aliases of one loopback sshd) refreshed through their persistent probe sessions, against
`ssh host nvidia-smi` with a new connection each time, side by side in one run.

Prints, per refresh of all 50 hosts: wall time and the viewing machine's CPU seconds (this process, its reaped
children: the mux clients, and the detached master connections read from /proc). The remote side (sshd
sessions, the probe's python3) runs on this same machine here; its CPU is printed apart, as it would be spent
on the hosts. Run as root with openssh-server installed: .venv/bin/python tests/perf/ssh_fleet_refresh.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pth_top.sshfleet.reader import SshFleetReader  # noqa: E402
from pth_top.sshfleet.transport import SshTransport, ssh_environment  # noqa: E402
from tests.sshfleet.ssh_lab import SKIP_REASON, SshLab, sshd_missing  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
NVIDIA_SMI = "nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total --format=csv,noheader"


def own_cpu_s() -> float:
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(each.ru_utime + each.ru_stime for each in usage)


def process_table() -> dict[int, tuple[int, float, float, bytes]]:
    """pid -> (ppid, own CPU s, reaped children's CPU s, command line), read once."""
    table = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        table[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS,
                             (int(fields[13]) + int(fields[14])) / TICKS, command)
    return table


def ssh_cpu_s(table: dict, control_dir: str) -> float:
    """The live `ssh` processes of our control folder (session clients, detached masters): not in getrusage."""
    return sum(own for _, own, _, command in table.values() if control_dir.encode() in command)


def remote_cpu_s(table: dict, listener: int) -> float:
    """sshd's sessions and what they ran (the probe, nvidia-smi): the hosts' share, spent here on loopback."""
    total, todo = table.get(listener, (0, 0.0, 0.0, b""))[2], [listener]
    while todo:
        parent = todo.pop()
        for pid, (ppid, own, reaped, _) in table.items():
            if ppid == parent:
                total += own + reaped
                todo.append(pid)
    return total


def measured(control_dir: str, listener: int) -> tuple[float, float]:
    """(viewer CPU s, remote CPU s) so far; the reading's own cost is left out of the viewer's."""
    own = own_cpu_s()
    table = process_table()
    return own + ssh_cpu_s(table, control_dir), remote_cpu_s(table, listener)


async def probe_rounds(lab: SshLab, hosts: list[str], rounds: int) -> list[tuple[float, float, float]]:
    reader = SshFleetReader(hosts, SshTransport(str(lab.config), timeout_s=30.0), interval_s=3600.0)
    reader._limit = asyncio.Semaphore(64)
    results = []
    try:
        await asyncio.gather(*(reader.probe_once(host) for host in hosts))  # connect: the masters start
        failed = [host for host in hosts if reader._state[host].reason]
        assert not failed, f"not up: {failed[:3]} {reader._state[failed[0]].reason if failed else ''}"
        control_dir, listener = reader.transport.control_dir, lab.sshds[0].process.pid
        for _ in range(rounds):
            viewer_before, remote_before = measured(control_dir, listener)
            started = time.monotonic()
            await asyncio.gather(*(reader.probe_once(host) for host in hosts))
            wall = time.monotonic() - started
            viewer_after, remote_after = measured(control_dir, listener)
            assert all(not reader._state[host].reason for host in hosts)
            results.append((wall, viewer_after - viewer_before, remote_after - remote_before))
    finally:
        await reader.close()
    return results


async def plain_ssh_rounds(lab: SshLab, hosts: list[str], rounds: int, concurrent: bool) -> list[tuple]:
    async def one(host: str) -> None:
        process = await asyncio.create_subprocess_exec(
            "ssh", "-F", str(lab.config), "-o", "BatchMode=yes", "-o", "ControlMaster=no", "-o", "ControlPath=none",
            host, NVIDIA_SMI, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=ssh_environment())
        stdout, stderr = await process.communicate()
        assert process.returncode == 0 and stdout, stderr

    results = []
    listener = lab.sshds[0].process.pid
    for _ in range(rounds):
        viewer_before, remote_before = measured("no control folder", listener)
        started = time.monotonic()
        if concurrent:
            await asyncio.gather(*(one(host) for host in hosts))
        else:
            for host in hosts:
                await one(host)
        wall = time.monotonic() - started
        viewer_after, remote_after = measured("no control folder", listener)
        results.append((wall, viewer_after - viewer_before, remote_after - remote_before))
    return results


def report(name: str, results: list[tuple[float, float, float]], hosts: int) -> None:
    walls = sorted(result[0] for result in results)
    cpu = sum(result[1] for result in results) / len(results)
    remote = sum(result[2] for result in results) / len(results)
    print(f"{name:<46} wall median {walls[len(walls) // 2]:6.2f} s (max {walls[-1]:5.2f}) | viewer CPU "
          f"{cpu:5.2f} s/refresh ({1000 * cpu / hosts:5.1f} ms/host) | remote CPU {remote:5.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if sshd_missing() or os.geteuid() != 0:
        print(f"skipped: {SKIP_REASON if sshd_missing() else 'needs root (the lab logs in as root)'}")
        return 0
    with tempfile.TemporaryDirectory() as root:
        lab = SshLab(Path(root))
        lab.start()
        try:
            hosts = lab.add_good_aliases(args.hosts)
            print(f"{args.hosts} hosts = aliases of one sshd on 127.0.0.1, {os.cpu_count()} CPUs, "
                  f"load {os.getloadavg()[0]:.1f}; {args.rounds} refreshes each")
            report("pth-top fleet --ssh (persistent sessions)", asyncio.run(probe_rounds(lab, hosts, args.rounds)),
                   args.hosts)
            report("ssh host nvidia-smi, new connection, parallel",
                   asyncio.run(plain_ssh_rounds(lab, hosts, args.rounds, concurrent=True)), args.hosts)
            report("ssh host nvidia-smi, new connection, in turn",
                   asyncio.run(plain_ssh_rounds(lab, hosts, max(1, args.rounds // 2), concurrent=False)), args.hosts)
        finally:
            lab.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
