"""Which hosts `fleet --ssh` reads (command line, hosts file, Host aliases); names ssh could take as options refused."""

from __future__ import annotations

import pytest

from pth_top.sshfleet.hosts import config_aliases, hosts_file, resolve_hosts
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


def test_the_configs_literal_host_aliases_are_the_default_hosts(tmp_path):
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
