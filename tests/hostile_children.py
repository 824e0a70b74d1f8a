"""Real child processes with hostile names, as any local user could start them, for the terminal-safety tests."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

# The repro: an OSC 52 sequence in argv[0] writes "pwned" to the viewer's clipboard.
OSC52_TAIL = "\x1b]52;c;cHduZWQ=\x1b\\tail"
# Newline, carriage return, BEL, backspace, DEL, a C1 CSI, a right-to-left override and a line separator.
CONTROLS_TAIL = "\n\r\x07\x08\x7f\u009b2J\u202eevil\u2028end"
# A zombie shows its comm (its command line is gone): at most 15 bytes, set through /proc/self/comm.
ZOMBIE_COMM = b"zz\x1b]0;pwn\x07\n)("
LONG_COMMAND_CHARS = 100_000
# Any character a terminal could act on: C0 (but the newline ending each line), DEL, C1, bidi controls.
TERMINAL_CONTROLS = {chr(code) for code in range(0x20) if code != 0x0A} | {chr(code) for code in range(0x7F, 0xA0)} | {
    "\u2028", "\u2029", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)),
}


def terminal_controls_in(text: str) -> set[str]:
    return {char for char in text if char in TERMINAL_CONTROLS}


@dataclass
class HostileChild:
    process: subprocess.Popen
    marker: str
    command: str  # what /proc shows as its command line

    @property
    def pid(self) -> int:
        return self.process.pid


def start_named_sleep(argv0: str) -> subprocess.Popen:
    """`sleep 600` whose argv[0] (what ps and the dashboard show) is `argv0`."""
    return subprocess.Popen([argv0, "600"], executable=shutil.which("sleep"), stdin=subprocess.DEVNULL)


def start_hostile_children(tag: str) -> dict[str, HostileChild]:
    """Children named with OSC 52, with control characters, with 100 KB, and a zombie with an escape in its comm."""
    marker = f"pth{tag}{os.getpid()}"
    children = {}
    for kind, argv0 in (
        ("osc52", f"clip2{marker}osc52{OSC52_TAIL}"),
        ("controls", f"{marker}controls{CONTROLS_TAIL}"),
        ("long", f"{marker}long" + "A" * LONG_COMMAND_CHARS),
    ):
        children[kind] = HostileChild(start_named_sleep(argv0), marker + kind, f"{argv0} 600")
    zombie = subprocess.Popen(
        [sys.executable, "-c", f"open('/proc/self/comm', 'wb').write({ZOMBIE_COMM!r})"], stdin=subprocess.DEVNULL,
    )
    # Not reaped until the fixture ends: it stays a zombie.
    deadline_s = time.monotonic() + 30.0
    while process_state(zombie.pid) != "Z":
        assert time.monotonic() < deadline_s, "the child never became a zombie"
        time.sleep(0.02)
    children["zombie"] = HostileChild(zombie, "", "[" + ZOMBIE_COMM.decode() + "]")
    return children


def stop_children(children: dict[str, HostileChild]) -> None:
    for child in children.values():
        if child.process.poll() is None:
            child.process.kill()
        child.process.wait()


def process_state(pid: int) -> str | None:
    """The one-letter state in /proc/PID/stat; None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            raw = stat_file.read()
    except OSError:
        return None
    return raw[raw.rindex(b")") + 2:].split()[0].decode()


def start_term_blocking_child() -> subprocess.Popen:
    """A child that blocks SIGTERM: one sent to it stays pending, visible in /proc (no waiting on timing)."""
    code = (
        "import signal, sys, time; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); "
        "print('ready', flush=True); time.sleep(600)"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert child.stdout.readline() == "ready\n"
    return child


def signals_pending(pid: int) -> set[int]:
    """Signals sent to `pid` and not yet handled (process-wide and per-thread)."""
    pending = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("ShdPnd:", "SigPnd:")):
                pending |= int(line.split()[1], 16)
    return {number for number in range(1, 65) if pending & (1 << (number - 1))}


def was_signalled(pid: int, signal_number: int = signal.SIGTERM) -> bool:
    """True when `signal_number` reached `pid`: pending (blocked), or the process has died of it."""
    if process_state(pid) in (None, "Z", "X"):
        return True
    return signal_number in signals_pending(pid)
