"""`pth-top fleet --ssh` on the fleet screens (the same ones Prometheus feeds) and as `--json`, against real sshd."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pth_top.sshfleet.reader import SshFleetReader
from pth_top.sshfleet.transport import SshTransport
from pth_top.tui.cli import main
from pth_top.tui.screens.fleet import FleetApp, HostScreen
from pth_top.widgets.heat_grid import HeatGrid
from pth_top.widgets.row_table import RowTable
from tests.waiting import wait_until


async def test_the_fleet_screen_lists_ssh_hosts_worst_first_and_opens_one(lab):
    reader = SshFleetReader(["good", "nopython", "changed"], SshTransport(str(lab.config), timeout_s=20.0),
                            interval_s=1.0, first_wait_s=0.0)
    app = FleetApp(reader=reader, interval_s=1.0)
    async with app.run_test(size=(140, 36)) as pilot:
        table = app.fleet_screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 3 and table.get_row("good")[1].plain == "up",
                         what="three hosts, good up", timeout_s=40)
        assert table.row_keys[-1] == "good", "the hosts that are down come first"
        assert {table.get_row(key)[1].plain for key in table.row_keys[:2]} == {"down"}
        notes = [row.note for row in app.fleet_screen.query_one(HeatGrid).rows]
        assert any("host key changed" in note for note in notes) and any("no python3" in note for note in notes)
        assert "ssh -F" in str(app.fleet_screen.query_one("#fleet-status").render())
        await pilot.press("end")
        assert table.highlighted_key == "good"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, HostScreen) and len(app.screen.detail.gpus) == 4,
                         what="the good host's 4 GPUs")
        gpus = app.screen.query_one("#host-gpus", RowTable)
        assert [cell.plain for cell in gpus.get_row("1")][1:3] == ["NVIDIA A100-SXM4-80GB", "97%"]
        processes = app.screen.query_one("#host-processes", RowTable)
        await wait_until(pilot, lambda: processes.row_count == 1, what="the GPU process")
        row = [cell.plain for cell in processes.get_row(processes.row_keys[0])]
        assert row[1] == str(lab.gpu_process.pid) and row[2] == "root" and row[3] == "sleep"
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HostScreen), what="back to the fleet")


def fleet_json(lab, *hosts: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pth_top.tui.cli", "fleet", "--ssh-config", str(lab.config),
                           "--ssh-timeout", "20", "--json", "--ssh", *hosts],
                          capture_output=True, text=True, timeout=120)


def test_json_lists_every_host_worst_first_in_the_prometheus_views_layout(lab):
    from pth_top.fleet.model import FleetSnapshot
    from pth_top.tui.commands.fleet import snapshot_json

    done = fleet_json(lab, "good", "changed")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == set(snapshot_json(FleetSnapshot(taken_at_s=0.0, scrape_interval_s=5.0), None, None))
    assert [(host["instance"], host["state"]) for host in answer["hosts"]] == [("changed", "down"), ("good", "up")]
    assert answer["hosts"][0]["reason"].startswith("host key changed")
    assert answer["hosts"][1]["gpu_count"] == 4 and answer["hosts"][1]["gpus"][1]["utilization_ratio"] == 0.97


def test_hosts_come_from_a_file_or_the_configs_host_aliases(lab, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("# the lab\ngood   # the one that works\n\nnopython\n")
    done = subprocess.run([sys.executable, "-m", "pth_top.tui.cli", "fleet", "--ssh-config", str(lab.config),
                           "--ssh-hosts", str(hosts), "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(host["instance"] for host in json.loads(done.stdout)["hosts"]) == ["good", "nopython"]
    done = fleet_json(lab, "no*", "jump*")
    assert sorted(host["instance"] for host in json.loads(done.stdout)["hosts"]) == ["jumped", "jumphost", "nopython"]


def run_main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit:  # argparse's own refusals
        return int(exit.code or 0)


@pytest.mark.parametrize("argv, message", [
    (["--ssh", "bad host"], "not a host name ssh can take: 'bad host'"),
    (["--ssh", "-oProxyCommand=touch /tmp/x"], "not a host name ssh can take: '-oProxyCommand"),
    (["--ssh", "good", "--prometheus", "http://prom:9090"], "--prometheus and --ssh are two sources; give one"),
    (["--ssh", "zz*"], "no Host alias in"),
    (["--ssh", "good", "--ssh-timeout", "0"], "--ssh-timeout"),
    (["--ssh-hosts", "/nonexistent/hosts"], "cannot read --ssh-hosts /nonexistent/hosts"),
])
def test_bad_ssh_input_is_one_line_and_exit_2(lab, capsys, argv, message):
    code = run_main(["fleet", "--ssh-config", str(lab.config), *argv, "--json"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err
    assert len([line for line in err.splitlines() if line.startswith("pth-top")]) == 1, err


def test_a_config_ssh_cannot_parse_is_one_line(lab, capsys):
    lab.config.write_text("Host good\n  NoSuchOption yes\n")
    assert main(["fleet", "--ssh-config", str(lab.config), "--ssh", "good", "--json"]) == 2
    err = capsys.readouterr().err
    assert "ssh cannot use its config for good" in err and len(err.strip().splitlines()) == 1, err
