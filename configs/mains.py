"""The wall supply where the machine is plugged in, by the buyer's market: which sockets there are and what a
load may draw from each for days (rules.toml [power.mains])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from msgspec import Meta

from pth_top.configs.schema import Schema

Amps = Annotated[float, Meta(ge=0, le=1000)]


class Socket(Schema, frozen=True):
    """One kind of wall socket on its own circuit: its name, volts and rated amps, and the amps it carries for hours
    where that is below the rating (0: the rating x the market's continuous_fraction)."""

    name: str
    voltage_v: Annotated[float, Meta(ge=1, le=1000)]
    current_a: Annotated[float, Meta(gt=0, le=1000)]
    continuous_a: Amps = 0.0


class Mains(Schema, frozen=True):
    """A market's wall supply: its sockets (the ordinary one first) and what feeds a rack beyond them."""

    standard: str
    source: str
    # The share of a circuit's rating a load may draw for hours (US NEC: 80 %); training runs for days.
    continuous_fraction: Annotated[float, Meta(gt=0, le=1)]
    three_phase: str
    sockets: Annotated[list[Socket], Meta(min_length=1)]


class MainsByMarket(Schema, frozen=True):
    """Every market the wizard prices has its own supply: none falls back silently to another's."""

    cn: Mains
    us: Mains
    eu: Mains


@dataclass(frozen=True, slots=True)
class Outlet:
    """A socket on its own circuit and the watts a training run may draw from it for days."""

    name: str
    voltage_v: float
    continuous_w: float


def mains_of(by_market: MainsByMarket, market: str) -> Mains:
    supply: Mains = getattr(by_market, market)
    return supply


def outlets(mains: Mains) -> list[Outlet]:
    """The market's sockets by what they carry for days, the ordinary one first."""
    found = [Outlet(socket.name, socket.voltage_v, socket.voltage_v * (
        socket.continuous_a or socket.current_a * mains.continuous_fraction)) for socket in mains.sockets]
    return [found[0], *sorted(found[1:], key=lambda outlet: outlet.continuous_w)]


def largest(mains: Mains) -> Outlet:
    """The socket on the largest single-phase circuit the market has."""
    return max(outlets(mains), key=lambda outlet: outlet.continuous_w)


def sockets_text(mains: Mains) -> str:
    """"sockets (GB 1002): 10 A at 220 V = 2,200 W, 16 A at 220 V = 3,520 W"."""
    listed = ", ".join(f"{outlet.name} at {outlet.voltage_v:g} V = {outlet.continuous_w:,.0f} W"
                       for outlet in outlets(mains))
    return f"sockets ({mains.standard}): {listed}"
