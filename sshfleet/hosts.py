"""Which hosts `pth-top fleet --ssh` reads: names on the command line, a hosts file, or the Host aliases of ssh_config.

A name with * or ? is a pattern over the config's Host aliases. How each host is reached (HostName, User,
Port, ProxyJump, IdentityFile) is left to `ssh` itself; `ssh -G` checks that the config parses for them.
The config's Include lines are followed as ssh follows them in a user config (ssh_config(5), readconf.c).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import shlex
import subprocess

from pth_top.configs.fileio import read_regular_file
from pth_top.sshfleet.transport import SshSettingError, check_host
from pth_top.text import printable

MAX_HOSTS = 4096
MAX_HOSTS_FILE_BYTES = 1024 * 1024
# OpenSSH's READCONF_MAX_DEPTH: Include files nest at most this deep (a loop of Includes ends here too).
READCONF_MAX_DEPTH = 16


def default_config() -> str:
    return os.path.expanduser("~/.ssh/config")


def read_text(path: str, what: str) -> str:
    """A regular file's text (at most MAX_HOSTS_FILE_BYTES); a folder, device, FIFO or socket is refused unread."""
    try:
        return read_regular_file(path, MAX_HOSTS_FILE_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError) as error:  # ValueError: a NUL byte in the path
        reason = getattr(error, "strerror", None) or str(error)
        raise SshSettingError(f"cannot read {what} {printable(path)}: {printable(reason)}") from None


def ssh_pattern_matches(patterns: list[str], name: str) -> bool:
    """Whether a Host line's patterns take `name` as ssh does: one plain pattern matches, no !negated one does."""
    def matches(pattern: str) -> bool:
        return re.fullmatch(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", "."), name) is not None
    return any(matches(pattern) for pattern in patterns if not pattern.startswith("!")) and \
        not any(matches(pattern[1:]) for pattern in patterns if pattern.startswith("!"))


def include_paths(argument: str) -> list[str]:
    """The files one Include argument names: relative to ~/.ssh (a user config), ~ expanded, globs in sorted order.

    What ssh reads nothing from is left out: a folder, a dangling link.
    """
    if not argument.startswith(("/", "~")):
        argument = "~/.ssh/" + argument
    return sorted(path for path in glob.glob(os.path.expanduser(argument))
                  if os.path.exists(path) and not os.path.isdir(path))


def config_aliases(path: str) -> list[str]:
    """The literal Host aliases of an ssh_config file and the files it Includes (patterns and negations left out).

    An Include under a Host line adds only the aliases those patterns take: ssh reads the file for no other host.
    Under a Match line (its criteria need the connection) or at the top of a file, it adds them all.
    """
    return list(dict.fromkeys(_file_aliases(path, [], 0)))


def _file_aliases(path: str, conditions: list[list[str]], depth: int) -> list[str]:
    if depth > READCONF_MAX_DEPTH:
        raise SshSettingError(f"ssh config {printable(path)}: Include files nest more than {READCONF_MAX_DEPTH} "
                              "deep (a loop?); ssh refuses them too")
    aliases: list[str] = []
    block: list[str] | None = None  # the Host patterns of the block a line is in
    for line in read_text(path, "ssh config").splitlines():
        words = line.strip().replace("=", " ", 1).split(None, 1)
        if len(words) != 2 or words[0].lower() not in ("host", "match", "include"):
            continue
        try:
            arguments = shlex.split(words[1], comments=True)
        except ValueError:
            continue
        keyword = words[0].lower()
        if keyword == "include":
            inner = conditions + ([block] if block is not None else [])
            for argument in arguments:
                for included in include_paths(argument):
                    aliases += _file_aliases(included, inner, depth + 1)
            continue
        block = arguments if keyword == "host" else None
        aliases += [name for name in (arguments if keyword == "host" else ())
                    if not any(char in name for char in "*?!")
                    and all(ssh_pattern_matches(patterns, name) for patterns in conditions)]
    return aliases


def hosts_file(path: str) -> list[str]:
    """One host a line; blank lines and # comments are skipped."""
    text = read_text(path, "--ssh-hosts")
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
