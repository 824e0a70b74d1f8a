"""Typed messages the Bench screen's workers post: child events, the end of a run, devices, saved-run files."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from textual.message import Message

from pth_top.benches.client.runs import RunRecord, SavedRun
from pth_top.benches.protocol import Event


class RunPurpose(Enum):
    """Why a saved run is listed and loaded: shown instead of the current run, or compared with it."""

    OPEN = "open"
    COMPARE = "compare"


@dataclass
class BenchEvent(Message):
    """One checked event from the running child."""

    event: Event


@dataclass
class BenchEnded(Message):
    """The child is gone; `reason` says why when it did not finish (empty on success)."""

    exit_code: int | None
    reason: str


@dataclass
class DevicesFound(Message):
    """The chosen interpreter's devices, or the one-line reason it could not list them."""

    devices: list[dict]
    error: str = ""


@dataclass
class RunSaved(Message):
    path: Path


@dataclass
class RunNotSaved(Message):
    reason: str


@dataclass
class RunsListed(Message):
    purpose: RunPurpose
    runs: list[SavedRun]


@dataclass
class RunLoaded(Message):
    purpose: RunPurpose
    record: RunRecord


@dataclass
class RunNotLoaded(Message):
    purpose: RunPurpose
    reason: str
