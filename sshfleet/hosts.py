"""Which hosts `pth-top fleet --ssh` reads: names on the command line, a hosts file, or the Host aliases of ssh_config.

A name with * or ? is a pattern over the config's Host aliases. How each host is reached (HostName, User,
Port, ProxyJump, IdentityFile) is left to `ssh` itself; `ssh -G` checks that the config parses for them.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
import subprocess

from pth_top.sshfleet.transport import SshSettingError, check_host
from pth_top.text import printable

MAX_HOSTS = 4096
MAX_HOSTS_FILE_BYTES = 1024 * 1024


def default_config() -> str:
    return os.path.expanduser("~/.ssh/config")


def config_aliases(path: str) -> list[str]:
    """The literal Host aliases of an ssh_config file (patterns, negations and Include are left out)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_HOSTS_FILE_BYTES)
    except OSError as error:
        raise SshSettingError(f"cannot read ssh config {printable(path)}: {error.strerror}") from None
    aliases: list[str] = []
    for line in text.splitlines():
        words = line.strip().replace("=", " ", 1).split(None, 1)
        if len(words) == 2 and words[0].lower() == "host":
            try:
                names = shlex.split(words[1], comments=True)
            except ValueError:
                continue
            aliases += [name for name in names if not any(char in name for char in "*?!")]
    return list(dict.fromkeys(aliases))


def hosts_file(path: str) -> list[str]:
    """One host a line; blank lines and # comments are skipped."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_HOSTS_FILE_BYTES)
    except OSError as error:
        raise SshSettingError(f"cannot read --ssh-hosts {printable(path)}: {error.strerror}") from None
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def resolve_hosts(names: list[str], hosts_path: str | None, config_file: str | None) -> list[str]:
    """The hosts to read, each checked as an ssh host name; patterns expanded over the config's aliases."""
    wanted = list(names) + (hosts_file(hosts_path) if hosts_path else [])
    config = config_file or default_config()
    aliases: list[str] | None = None
    hosts: list[str] = []
    if not wanted and not (config_file or os.path.exists(config)):
        raise SshSettingError("no hosts: name them (--ssh HOST...), list them (--ssh-hosts FILE) or give "
                              "Host entries in ~/.ssh/config")
    for name in wanted or ["*"]:
        if any(char in name for char in "*?["):
            if aliases is None:
                aliases = config_aliases(config) if (config_file or os.path.exists(config)) else []
            matched = fnmatch.filter(aliases, name)
            if not matched:
                raise SshSettingError(f"no Host alias in {printable(config)} matches {printable(name, 80)!r}")
            hosts += matched
        else:
            hosts.append(check_host(name))
    hosts = list(dict.fromkeys(check_host(host) for host in hosts))
    if len(hosts) > MAX_HOSTS:
        raise SshSettingError(f"{len(hosts)} hosts; at most {MAX_HOSTS}")
    return hosts


def check_config(ssh: str, config_file: str | None, host: str) -> None:
    """`ssh -G` for one host: a config ssh cannot parse (or no ssh at all) is one line, before any connection."""
    argv = [ssh, *(["-F", config_file] if config_file else []), "-G", "--", host]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except FileNotFoundError:
        raise SshSettingError("no ssh client found: the fleet over SSH uses the system OpenSSH (apt install "
                              "openssh-client)") from None
    except subprocess.TimeoutExpired:
        raise SshSettingError("ssh -G did not answer within 10 s") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SshSettingError(f"ssh cannot use its config for {host}: "
                              f"{printable(lines[-1] if lines else done.returncode, 200)}")
