"""Xid errors (the driver's GPU fault reports) counted from NVML events, by GPU and Xid code.

NVML hands Xid events to whoever waits on an event set; one missed wait is one missed error, so the
waiting runs in a thread of its own (`run`), and readers take a copy of the counts (`counts`).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any, Callable, Iterable

from pth_top.sensors.gpu import decode_text
from pth_top.sensors.nvml import GpuLostError, NvmlSession

NVML_EVENT_TYPE_XID_CRITICAL_ERROR = 0x8
WAIT_FUNCTIONS = ("nvmlEventSetWait_v2", "nvmlEventSetWait")
# Longest one wait blocks; `stop()` takes effect within this.
WAIT_TIMEOUT_MS = 1000
# Longest a stop waits for the watcher's thread to leave its NVML wait (a few WAIT_TIMEOUT_MS waits).
XID_THREAD_JOIN_S = 3.0
# Xid codes NVML documents stay well below this; anything above is counted as "other" (bounded labels).
MAX_XID_CODE = 1000


def xid_label(code: int) -> str:
    return str(code) if 0 < code < MAX_XID_CODE else "other"


class XidEventWatcher:
    """Counts Xid events of the GPUs it registered; `counts()` is safe to call from any thread."""

    def __init__(self, session: NvmlSession, clock: Callable[[], float] = time.monotonic) -> None:
        self.session = session
        self._clock = clock
        self._event_set: Any = None
        self._gpu_of_uuid: dict[str, int] = {}
        self._counts: Counter[tuple[int, str]] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.watched_gpus: frozenset[int] = frozenset()

    def register(self, gpus: Iterable[tuple[int, str, Any]]) -> bool:
        """Ask NVML for the Xid events of each (index, uuid, handle); False when no GPU can report them."""
        try:
            event_set = self.session.call("nvmlEventSetCreate", default=None)
            if event_set is None:
                return False
            self._event_set = event_set  # stored at once, so close() frees it whatever happens next
            watched = set()
            for index, uuid, handle in gpus:
                answer = self.session.call(
                    "nvmlDeviceRegisterEvents", handle, NVML_EVENT_TYPE_XID_CRITICAL_ERROR, event_set, default=False
                )
                if answer is not False:
                    watched.add(index)
                    self._gpu_of_uuid[uuid] = index
        except GpuLostError:
            return False
        self.watched_gpus = frozenset(watched)
        return bool(watched)

    def counts(self) -> dict[tuple[int, str], int]:
        """(GPU index, Xid label) -> events seen since `register`."""
        with self._lock:
            return dict(self._counts)

    def wait_once(self, timeout_ms: int = WAIT_TIMEOUT_MS) -> None:
        """Wait up to `timeout_ms` for one event and count it; a wait that fails fast is padded to its timeout."""
        started = self._clock()
        try:
            data = self.session.call_first(WAIT_FUNCTIONS, self._event_set, timeout_ms, default=None)
        except GpuLostError:
            data = None
        if data is not None and getattr(data, "eventType", 0) & NVML_EVENT_TYPE_XID_CRITICAL_ERROR:
            self._count(data)
            return
        self._stop.wait(max(0.0, timeout_ms / 1000 - (self._clock() - started)))

    def _count(self, data: Any) -> None:
        try:
            uuid = self.session.call("nvmlDeviceGetUUID", getattr(data, "device", None), default=None)
        except GpuLostError:
            uuid = None
        index = self._gpu_of_uuid.get(decode_text(uuid)) if uuid is not None else None
        code = getattr(data, "eventData", 0)
        if index is None or not isinstance(code, int):
            return
        with self._lock:
            self._counts[(index, xid_label(code))] += 1

    def run(self, timeout_ms: int = WAIT_TIMEOUT_MS) -> None:
        """Wait for events until `stop()` (the body of the watcher's thread), `timeout_ms` per wait."""
        while not self._stop.is_set():
            self.wait_once(timeout_ms)

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        """Free the event set (after the thread running `run` has ended)."""
        if self._event_set is not None:
            try:
                self.session.call("nvmlEventSetFree", self._event_set, default=None)
            except GpuLostError:
                pass
            self._event_set = None


def stop_and_join(watcher: XidEventWatcher, thread: threading.Thread | None) -> bool:
    """Stop the watcher, wait for its thread, free its event set; False while the thread is still inside NVML.

    On False the caller must not shut NVML down: the thread may be blocked in an NVML wait; the process exit frees it.
    """
    watcher.stop()
    if thread is not None:
        thread.join(XID_THREAD_JOIN_S)
        if thread.is_alive():
            return False
    watcher.close()
    return True
