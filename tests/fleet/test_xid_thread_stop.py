"""Stopping the Xid thread: NVML is not shut down under a thread still inside an NVML wait; no event set leaks."""

from __future__ import annotations

import os
import signal
import threading

import pynvml as real_pynvml
import pytest

from pth_top.fleet import server
from pth_top.fleet.collector import ExportOptions
from pth_top.sensors import xid_events
from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.xid_events import XidEventWatcher, stop_and_join
from tests.fakes.fake_pynvml import FakeHandle
from tests.fleet.fixtures import XidQueue, make_exporter_gpus

# Generous: the thread only has to leave a wait that the test has already released.
THREAD_END_TIMEOUT_S = 15.0


class StuckWait:
    """An NVML event wait that blocks until the test releases it (a driver stuck in nvmlEventSetWait)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, _event_set, _timeout_ms):
        self.entered.set()
        self.release.wait()
        raise real_pynvml.NVMLError_Timeout()


def stuck_gpus(wait: StuckWait):
    fake = make_exporter_gpus(1, xid_queue=XidQueue())
    fake.system_values["nvmlEventSetWait_v2"] = wait
    return fake


def test_stop_and_join_leaves_the_event_set_while_the_thread_is_inside_nvml(monkeypatch):
    monkeypatch.setattr(xid_events, "XID_THREAD_JOIN_S", 0.01)
    wait = StuckWait()
    fake = stuck_gpus(wait)
    session = NvmlSession(fake)
    assert session.start()
    watcher = XidEventWatcher(session)
    assert watcher.register([(0, "GPU-x", FakeHandle(0))])
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    assert wait.entered.wait(THREAD_END_TIMEOUT_S)
    assert stop_and_join(watcher, thread) is False
    assert fake.calls["nvmlEventSetFree"] == 0, "not freed under the waiting thread"
    wait.release.set()
    thread.join(THREAD_END_TIMEOUT_S)
    assert stop_and_join(watcher, thread) is True
    assert fake.calls["nvmlEventSetFree"] == 1


def test_serve_does_not_shut_nvml_down_under_a_stuck_xid_thread(monkeypatch):
    monkeypatch.setattr(xid_events, "XID_THREAD_JOIN_S", 0.01)
    wait = StuckWait()
    fake = stuck_gpus(wait)
    monkeypatch.setattr(server, "NvmlSession", lambda: NvmlSession(fake))
    threads_before = set(threading.enumerate())

    def announce(line: str) -> None:
        if "serving" in line:
            assert wait.entered.wait(THREAD_END_TIMEOUT_S), "the Xid thread is waiting"
            os.kill(os.getpid(), signal.SIGTERM)

    try:
        assert server.serve("127.0.0.1:0", ExportOptions(), announce=announce) == 0
        assert fake.calls["nvmlShutdown"] == 0 and fake.calls["nvmlEventSetFree"] == 0
    finally:
        wait.release.set()
        for thread in set(threading.enumerate()) - threads_before:
            thread.join(THREAD_END_TIMEOUT_S)


@pytest.mark.parametrize("lost_gpu", [0, 1])
def test_a_gpu_lost_during_registration_still_frees_the_event_set(lost_gpu):
    fake = make_exporter_gpus(2, xid_queue=XidQueue())
    fake.fail("nvmlDeviceRegisterEvents", real_pynvml.NVMLError_GpuIsLost, device_index=lost_gpu)
    session = NvmlSession(fake)
    assert session.start()
    watcher = XidEventWatcher(session)
    assert not watcher.register([(0, "GPU-a", FakeHandle(0)), (1, "GPU-b", FakeHandle(1))])
    watcher.close()
    assert fake.calls["nvmlEventSetCreate"] == 1 and fake.calls["nvmlEventSetFree"] == 1
