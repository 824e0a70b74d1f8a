"""Receive / transmit rates per network interface (loopback hidden unless asked for)."""

from __future__ import annotations

import time
from typing import Callable

import psutil

from pth_top.sensors.model import NetworkRate
from pth_top.sensors.rates import CounterRates

LOOPBACK_INTERFACES = frozenset({"lo", "lo0"})


class NetworkReader:
    def __init__(self, clock: Callable[[], float] = time.monotonic, include_loopback: bool = False) -> None:
        self._rates: CounterRates[str] = CounterRates(clock)
        self.include_loopback = include_loopback

    def sample(self) -> tuple[NetworkRate, ...]:
        try:
            counters = psutil.net_io_counters(pernic=True) or {}
        except (OSError, RuntimeError):
            counters = {}
        wanted = {
            name: (float(c.bytes_recv), float(c.bytes_sent))
            for name, c in counters.items()
            if self.include_loopback or name not in LOOPBACK_INTERFACES
        }
        return tuple(
            NetworkRate(interface=name, rx_bytes_per_s=rates[0], tx_bytes_per_s=rates[1])
            for name, rates in sorted(self._rates.rates(wanted).items())
        )
