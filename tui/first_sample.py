"""The dashboard's first sample, taken on a thread while Textual loads (no textual import here)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable, Protocol

if TYPE_CHECKING:
    from sensors.model import Snapshot


class SnapshotSource(Protocol):
    def sample(self) -> Snapshot: ...


def default_source() -> SnapshotSource:
    """The machine's sensors, with room for the kept-open /proc files of a big process table."""
    from sensors.procfs import raise_open_file_limit
    from sensors.sampler import Sampler

    raise_open_file_limit()
    return Sampler()


class FirstSample:
    """Opens a snapshot source and takes one sample on a daemon thread that starts at once.

    The sampling worker takes the source over once `wait()` returns true; until then only this
    thread touches it.
    """

    def __init__(self, source_factory: Callable[[], SnapshotSource] = default_source) -> None:
        self.source: SnapshotSource | None = None
        self.snapshot: Snapshot | None = None
        self.error: str | None = None
        self._done = threading.Event()
        threading.Thread(target=self._take, args=(source_factory,), name="first-sample", daemon=True).start()

    def _take(self, source_factory: Callable[[], SnapshotSource]) -> None:
        try:
            self.source = source_factory()
            self.snapshot = self.source.sample()
        except Exception as error:  # shown by the dashboard, which keeps retrying
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self._done.set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once the sample (or its error) is in; False if `timeout_s` passed first."""
        return self._done.wait(timeout_s)
