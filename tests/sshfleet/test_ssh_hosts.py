"""Which hosts `fleet --ssh` reads (command line, hosts file, Host aliases); names ssh could take as options refused."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pth_top.sshfleet.hosts import READCONF_MAX_DEPTH, config_aliases, hosts_file, resolve_hosts
from pth_top.sshfleet.transport import SshSettingError, check_host, failure_line

CONFIG = """\
Host gpu1 gpu2 "gpu3"
  HostName 10.0.0.1
Host *.lab !gpu9 gpu?x
Host=gpu4   # a comment
Match host gpu5
  User x
host jump
Include other.conf
"""


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home of the test's own: relative Include paths resolve in its .ssh, as ssh resolves them."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    return tmp_path


def test_the_configs_literal_host_aliases_are_the_default_hosts(tmp_path, home):
    config = tmp_path / "config"
    config.write_text(CONFIG)
    assert config_aliases(str(config)) == ["gpu1", "gpu2", "gpu3", "gpu4", "jump"]
    assert resolve_hosts([], None, str(config)) == ["gpu1", "gpu2", "gpu3", "gpu4", "jump"]
    assert resolve_hosts(["gpu[12]", "jump", "gpu1"], None, str(config)) == ["gpu1", "gpu2", "jump"]
    with pytest.raises(SshSettingError, match="no Host alias in .* matches 'zz\\*'"):
        resolve_hosts(["zz*"], None, str(config))


def test_a_hosts_file_skips_blank_lines_and_comments(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("# lab\n\nnode1  # rack 1\n  root@node2:22\n")
    assert hosts_file(str(hosts)) == ["node1", "root@node2:22"]
    assert resolve_hosts(["node0"], str(hosts), None) == ["node0", "node1", "root@node2:22"]


@pytest.mark.parametrize("name", ["-oProxyCommand=x", "a b", "a\x1b]2;x\x07", "", "host;rm", "x" * 300, "-"])
def test_names_ssh_could_read_as_an_option_or_that_are_no_host_are_refused(name):
    with pytest.raises(SshSettingError, match="not a host name ssh can take") as caught:
        check_host(name)
    assert "\x1b" not in str(caught.value)


def test_the_reason_a_host_is_down_is_ssh_s_last_line_printable():
    assert failure_line(b"Warning: Permanently added x\nssh: connect to host a port 22: No route\n", 255) == \
        "ssh: connect to host a port 22: No route"
    assert failure_line(b"evil \x1b]52;c;aGk=\x07 line\n", 1) == "evil \\x1b]52;c;aGk=\\x07 line"
    assert failure_line(b"", 255) == "the connection closed (ssh exit status 255)"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def included_tree(home: Path) -> Path:
    """A user config that Includes relatively, by glob, by ~ and absolutely, nested, under Host and Match lines."""
    ssh = home / ".ssh"
    write(ssh / "conf.d" / "b.conf", "Host b1\n  HostName defined.invalid\n")
    write(ssh / "conf.d" / "a.conf", "Include nested/deeper.conf\nHost a1 a2\n  HostName defined.invalid\n")
    (ssh / "conf.d" / "folder.conf").mkdir()  # ssh reads nothing from a folder a glob names
    (ssh / "conf.d" / "dangling.conf").symlink_to(ssh / "nowhere")
    write(ssh / "nested" / "deeper.conf", "Host deep1\n  HostName defined.invalid\n")
    write(ssh / "gpus.conf", "Host gpu1 gpu9 cpu1\n  HostName defined.invalid\n"
          "Host *\n  Include ~/.ssh/gpus-more.conf\n")
    write(ssh / "gpus-more.conf", "Host gpu2 cpu2\n  HostName defined.invalid\n")
    write(home / "elsewhere" / "all.conf", "Host m1\n  HostName defined.invalid\n")
    return write(ssh / "config", "Include conf.d/*.conf missing-*.conf\n"
                 "Host top\n  HostName defined.invalid\n"
                 "Host gpu* !gpu9\n  Include gpus.conf\n"
                 f"Match all\n  Include {home}/elsewhere/all.conf\n")


INCLUDED = ["deep1", "a1", "a2", "b1", "top", "gpu1", "gpu2", "m1"]


def test_include_is_followed_as_ssh_follows_it(home):
    config = included_tree(home)
    assert config_aliases(str(config)) == INCLUDED
    assert resolve_hosts(["gpu*"], None, str(config)) == ["gpu1", "gpu2"]


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no OpenSSH client to compare with")
def test_the_included_aliases_are_those_ssh_itself_gives_settings_to(home):
    config = included_tree(home)
    for alias in [*INCLUDED, "gpu9", "cpu1", "cpu2", "nowhere"]:
        done = subprocess.run(["ssh", "-G", "-F", str(config), alias], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "HOME": str(home)}, stdin=subprocess.DEVNULL, check=True)
        defined = "hostname defined.invalid" in done.stdout.splitlines()
        assert defined == (alias in INCLUDED), f"ssh -G {alias}: {defined}, config_aliases: {alias in INCLUDED}"


def test_an_include_loop_stops_at_sshs_depth_limit(home):
    ssh = home / ".ssh"
    for depth in range(READCONF_MAX_DEPTH + 1):
        write(ssh / f"f{depth}.conf", f"Include f{depth + 1}.conf\nHost h{depth}\n")
    assert config_aliases(str(ssh / "f0.conf")) == [f"h{depth}" for depth in range(READCONF_MAX_DEPTH, -1, -1)]
    write(ssh / f"f{READCONF_MAX_DEPTH + 1}.conf", "Host one-too-deep\n")
    with pytest.raises(SshSettingError, match="Include files nest more than 16 deep"):
        config_aliases(str(ssh / "f0.conf"))
    write(ssh / "loop.conf", "Host loop\nInclude loop.conf\n")
    with pytest.raises(SshSettingError, match="nest more than 16 deep"):
        config_aliases(str(ssh / "loop.conf"))


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_an_included_fifo_or_device_is_refused_unread(home, target):
    ssh = home / ".ssh"
    if target == "fifo":
        os.mkfifo(ssh / "fifo")  # nobody writes: reading it would block for ever
    write(ssh / "config", f"Host a\nInclude {target}\n")
    with pytest.raises(SshSettingError, match="cannot read ssh config .*: not a regular file"):
        config_aliases(str(ssh / "config"))
    with pytest.raises(SshSettingError, match="cannot read --ssh-hosts .*: not a regular file"):
        hosts_file(str(ssh / target))
