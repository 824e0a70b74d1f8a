"""The wall supply where the machine is plugged in, by the buyer's market: which sockets there are and what a
load may draw from each for days (rules.toml [power.mains])."""

from __future__ import annotations

from dataclasses import dataclass

from pth_top.configs.rules import Mains, Rules


@dataclass(frozen=True, slots=True)
class Outlet:
    """A socket on its own circuit and the watts a training run may draw from it."""

    name: str
    voltage_v: float
    watts: float


def mains_of(rules: Rules, market: str) -> Mains:
    """The market's supply; a market without one in rules.toml gets China's (the guide's home)."""
    return rules.power.mains.get(market) or rules.power.mains["cn"]  # type: ignore[call-overload]


def outlets(mains: Mains) -> list[Outlet]:
    """The market's sockets, ordinary first, each with its continuous watts."""
    return [Outlet(socket.name, socket.voltage_v, socket.voltage_v * socket.current_a * mains.continuous_fraction)
            for socket in mains.sockets]


def sockets_text(mains: Mains) -> str:
    """"sockets (GB 1002): 10 A at 220 V = 2,200 W, 16 A at 220 V = 3,520 W"."""
    listed = ", ".join(f"{outlet.name} at {outlet.voltage_v:g} V = {outlet.watts:,.0f} W" for outlet in outlets(mains))
    return f"sockets ({mains.standard}): {listed}"


def ordinary_socket_w(rules: Rules, market: str) -> float:
    """What one ordinary wall socket carries for days in this market."""
    return outlets(mains_of(rules, market))[0].watts
