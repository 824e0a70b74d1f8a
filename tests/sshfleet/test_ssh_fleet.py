"""The fleet over SSH against real OpenSSH servers on loopback: each host's fate, refused keys, hostile answers."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time

from pth_top.fleet.model import HostState
from pth_top.sshfleet.hosts import check_config, resolve_hosts
from pth_top.sshfleet.reader import SshFleetReader
from pth_top.sshfleet.transport import SshTransport


def reader_for(lab, hosts, timeout_s=20.0, interval_s=1.0, first_wait_s=None):
    transport = SshTransport(str(lab.config), timeout_s=timeout_s)
    return SshFleetReader(hosts, transport, interval_s=interval_s, first_wait_s=first_wait_s)


async def refresh_until(reader, predicate, what, timeout_s=45.0):
    deadline_s = time.monotonic() + timeout_s
    while True:
        snapshot = await reader.refresh()
        if predicate(snapshot):
            return snapshot
        if time.monotonic() > deadline_s:
            raise AssertionError(f"waited {timeout_s:g} s for {what}, in vain: {snapshot.hosts}")
        await asyncio.sleep(0.1)


def host(snapshot, name):
    row = snapshot.host(name)
    assert row is not None, f"{name} missing from {[row.instance for row in snapshot.hosts]}"
    return row


async def test_each_host_shows_its_fate_and_a_dropped_host_goes_down_while_the_others_stay_fresh(lab):
    names = ["good", "drops", "changed", "unknown", "nopython", "jumped"]
    reader = reader_for(lab, names)
    known_hosts_before = lab.known_hosts.read_bytes()
    try:
        snapshot = await reader.refresh()
        good = host(snapshot, "good")
        assert good.state is HostState.UP and good.gpu_count == 4 and good.hostname
        assert [gpu.temperature_celsius for gpu in good.gpus] == [25, 22, 23, 23], "the A100 readings"
        assert good.gpus[1].utilization_ratio == 0.97 and good.gpus[1].errors == 1, "busy, a row remap pending"
        assert host(snapshot, "jumped").state is HostState.UP, "through ProxyJump, as ssh resolves it"
        assert host(snapshot, "drops").state is HostState.UP
        assert host(snapshot, "changed").state is HostState.DOWN
        assert host(snapshot, "changed").reason == "host key changed (known_hosts holds another key): refused"
        assert host(snapshot, "unknown").reason.startswith("host key unknown (not in known_hosts")
        assert host(snapshot, "nopython").reason == "pth-top-probe: no python3 (and no pth-top) on the host PATH"
        assert lab.known_hosts.read_bytes() == known_hosts_before, "no key accepted or added"

        lab.sshds[1].kill()
        snapshot = await refresh_until(reader, lambda s: host(s, "drops").state is HostState.DOWN, "drops down")
        drops = host(snapshot, "drops")
        assert drops.reason and drops.gpu_count == 4, "its last GPUs are kept, greyed, with the reason"
        assert host(snapshot, "good").state is HostState.UP and host(snapshot, "good").age_s < 15
        snapshot = await refresh_until(reader, lambda s: "Connection refused" in host(s, "drops").reason,
                                       "a reconnect that finds the port closed")
        assert host(snapshot, "drops").state is HostState.DOWN
    finally:
        await reader.close()


async def test_a_host_that_never_speaks_is_down_on_its_timeout_while_the_others_refresh_meanwhile(lab):
    reader = reader_for(lab, ["good", "hangs"], timeout_s=30.0, interval_s=0.5, first_wait_s=0.0)
    try:
        snapshot = await refresh_until(reader, lambda s: host(s, "good").state is HostState.UP, "good up")
        first_good_at = reader.answered_at_s("good")
        started = time.monotonic()
        await refresh_until(reader, lambda s: reader.answered_at_s("good") != first_good_at, "a second answer")
        snapshot = await reader.refresh()
        assert host(snapshot, "hangs").reason == "connecting (no answer yet)", "in its first try: nobody waits"
        assert time.monotonic() - started < 30
        snapshot = await refresh_until(reader, lambda s: host(s, "hangs").reason.startswith("no answer"),
                                       "hangs timed out", timeout_s=60)
        assert host(snapshot, "hangs").reason == "no answer within 30s"
        assert host(snapshot, "good").state is HostState.UP
    finally:
        await reader.close()


async def test_config_cannot_loosen_host_key_checking_or_turn_on_forwarding(lab):
    lab.add("lax", lab.sshds[0].port, "HostKeyAlias lax-host\n  StrictHostKeyChecking no\n  ForwardAgent yes\n"
            "  BatchMode no\n  ControlMaster no")
    reader = reader_for(lab, ["lax"])
    try:
        snapshot = await reader.refresh()
        assert host(snapshot, "lax").state is HostState.DOWN
        assert host(snapshot, "lax").reason.startswith("host key unknown")
        assert "lax-host" not in lab.known_hosts.read_text()
        argv = reader.transport.probe_argv("lax")
        for option in ("BatchMode=yes", "StrictHostKeyChecking=yes", "ForwardAgent=no", "ForwardX11=no",
                       "ClearAllForwardings=yes"):
            assert option in argv
        assert "-a" in argv and "-x" in argv and argv[-3] == "--"
    finally:
        await reader.close()


async def test_one_master_connection_per_host_in_a_private_folder_ended_on_close(lab):
    reader = reader_for(lab, ["good", "nopython"])
    folder = reader.transport.control_dir
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    await reader.refresh()
    sockets = sorted(os.listdir(folder))
    assert len(sockets) == 2, "aliases of one machine with other keys get masters of their own"
    masters = lab.session_count()
    for _ in range(3):
        assert (await reader.transport.probe("good")).body
    assert lab.session_count() == masters, "later probes ride the master: no new connection"
    await reader.close()
    assert not os.path.exists(folder)


async def test_hostile_answers_are_cut_down_to_printable_lines(lab):
    escape = "\x1b]52;c;aGk=\x07\x1b[2J"
    lab.json_host("hostile", json.dumps({
        "schema": "pth-top.snapshot", "schema_version": 1, "timestamp_s": 1.0, "host": {"hostname": f"evil{escape}"},
        "gpus": [{"index": 0, "name": f"G{escape}", "utilization_percent": 1e308, "temperature_c": 50}],
        "processes": [{"pid": 1, "user": f"u{escape}", "name": "n",
                       "gpu_uses": [{"gpu_index": 0, "gpu_memory_used_bytes": 1024}]}],
    }))
    lab.answering_host("garbage", "printf 'Last login: \\033[31myesterday\\n'")
    lab.answering_host("huge", "head -c 9000000 /dev/zero")
    lab.answering_host("deep", "/usr/bin/python3 -c \"print('{\\\"schema\\\":1,\\\"x\\\":' + '['*100000)\"")
    reader = reader_for(lab, ["hostile", "garbage", "huge", "deep"])
    try:
        snapshot = await reader.refresh()
        hostile = host(snapshot, "hostile")
        assert hostile.state is HostState.UP and hostile.hostname == "evil\\x1b]52;c;aGk=\\x07\\x1b[2J"
        assert hostile.gpus[0].utilization_ratio is None, "an implausible reading is no reading"
        detail = await reader.host_detail("hostile")
        assert detail.gpus[0].name.startswith("G\\x1b") and detail.processes[0].user.startswith("u\\x1b")
        for name in ("garbage", "huge", "deep"):
            row = host(snapshot, name)
            assert row.state is HostState.DOWN and "\x1b" not in row.reason and "\n" not in row.reason, row.reason
        assert host(snapshot, "garbage").reason.startswith("its answer is no pth-top snapshot")
        assert host(snapshot, "huge").reason == "its answer is over 8 MiB"
        assert snapshot.malformed == 2
    finally:
        await reader.close()


async def test_a_host_with_pth_top_answers_with_its_own_snapshot(lab):
    reader = reader_for(lab, ["with-pth-top"], timeout_s=60.0)
    try:
        snapshot = await reader.refresh()
        row = host(snapshot, "with-pth-top")
        # pth-top reads NVML (none here), not the fake nvidia-smi the probe would have read.
        assert row.state is HostState.NVML_DOWN and row.gpu_count == 0 and "NVIDIA" in row.reason, row
    finally:
        await reader.close()


async def test_the_hosts_of_an_included_config_are_read_through_it(lab, tmp_path):
    including = tmp_path / "including_config"
    including.write_text(f"Host good no*\n  Include {lab.config}\n")  # only the aliases this block takes
    hosts = resolve_hosts([], None, str(including))
    assert hosts == ["good", "nopython"]
    check_config("ssh", str(including), "good")
    reader = SshFleetReader(hosts, SshTransport(str(including), timeout_s=20.0), interval_s=1.0)
    try:
        snapshot = await reader.refresh()
        assert host(snapshot, "good").state is HostState.UP and host(snapshot, "good").gpu_count == 4
        assert host(snapshot, "nopython").reason == "pth-top-probe: no python3 (and no pth-top) on the host PATH"
    finally:
        await reader.close()
