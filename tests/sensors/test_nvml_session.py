"""NvmlSession.call_first, the one "newest working variant" helper, and its error handling."""

from __future__ import annotations

from types import SimpleNamespace

import pynvml
import pytest

from pth_top.sensors.na import NA
from pth_top.sensors.nvml import NvmlSession
from tests.fakes.fake_pynvml import FakeDevice, FakeHandle, FakePynvml
from tests.sensors.helpers import FakeClock

NEW, OLD = "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"


def started(fake: FakePynvml, clock: FakeClock | None = None) -> NvmlSession:
    session = NvmlSession(fake, clock=clock or FakeClock())
    assert session.start()
    return session


def one_gpu(**values: object) -> FakePynvml:
    return FakePynvml(devices=[FakeDevice(values=dict(values))])


def test_the_newest_variant_answers_and_a_removed_one_falls_back_once():
    fake = one_gpu(**{NEW: 300_000, OLD: 250_000})
    session = started(fake)
    assert session.call_first((NEW, OLD), FakeHandle(0)) == 300_000
    fake.remove(NEW)
    assert session.call_first((NEW, OLD), FakeHandle(0)) == 250_000
    assert session.call_first((NEW, OLD), FakeHandle(0)) == 250_000
    assert NEW in session.missing_functions and fake.calls[OLD] == 2


def test_an_unsupported_newest_variant_is_na_without_trying_older_ones():
    fake = one_gpu(**{OLD: 250_000})
    session = started(fake)
    assert session.call_first((NEW, OLD), FakeHandle(0)) is NA
    assert session.call_first((NEW, OLD), FakeHandle(0), default=None) is None
    assert fake.calls[OLD] == 0 and NEW not in session.missing_functions


def test_every_variant_missing_gives_the_default():
    fake = one_gpu()
    fake.remove(NEW)
    fake.fail(OLD, pynvml.NVMLError_FunctionNotFound)
    session = started(fake)
    assert session.call_first((NEW, OLD), FakeHandle(0), default=-1) == -1
    assert {NEW, OLD} <= session.missing_functions


def test_ttl_reuses_the_answer_until_it_expires():
    fake, clock = one_gpu(**{NEW: 300_000}), FakeClock()
    session = started(fake, clock)
    for _ in range(3):
        assert session.call_first((NEW, OLD), FakeHandle(0), ttl_s=5.0) == 300_000
    assert fake.calls[NEW] == 1
    clock.advance(5.0)
    session.call_first((NEW, OLD), FakeHandle(0), ttl_s=5.0)
    assert fake.calls[NEW] == 2


def test_a_cached_unsupported_answer_gives_each_caller_its_own_default():
    session = started(one_gpu())
    assert session.call_first((NEW,), FakeHandle(0), ttl_s=5.0) is NA
    assert session.cached_call(5.0, NEW, FakeHandle(0), default="unknown") == "unknown"
    assert session.cached_call(5.0, NEW, FakeHandle(0)) is NA


def test_a_variant_whose_answer_is_rejected_is_dropped_for_good():
    fake = one_gpu(**{NEW: [-1], OLD: [42]})
    session = started(fake)
    accept = lambda answer: all(value > 0 for value in answer)  # noqa: E731
    assert session.call_first((NEW, OLD), FakeHandle(0), accept=accept) == [42]
    assert session.call_first((NEW, OLD), FakeHandle(0), accept=accept) == [42]
    assert fake.calls[NEW] == 1 and NEW in session.missing_functions


def test_the_last_variant_is_kept_even_when_its_answer_is_rejected():
    session = started(one_gpu(**{NEW: [-2], OLD: [-1]}))
    assert session.call_first((NEW, OLD), FakeHandle(0), accept=lambda answer: False) == [-1]
    assert NEW in session.missing_functions and OLD not in session.missing_functions


@pytest.mark.parametrize("lost", [pynvml.NVMLError_GpuIsLost, pynvml.NVMLError_Unknown])
def test_a_lost_gpu_is_not_mistaken_for_a_missing_variant(lost):
    from pth_top.sensors.nvml import GpuLostError

    fake = one_gpu(**{NEW: 1, OLD: 2})
    fake.fail(NEW, lost)
    session = started(fake)
    with pytest.raises(GpuLostError):
        session.call_first((NEW, OLD), FakeHandle(0))
    assert NEW not in session.missing_functions


def test_a_binding_without_the_function_not_found_class_still_answers_na():
    class NVMLError(Exception):
        pass

    def failing() -> int:
        raise NVMLError("not supported")

    binding = SimpleNamespace(NVMLError=NVMLError, nvmlInit=lambda: None, nvmlDeviceGetCount=failing)
    session = NvmlSession(binding)
    assert session.start()
    assert session.call("nvmlDeviceGetCount") is NA
    assert session.call_first(("nvmlDeviceGetCount",), default=0) == 0


def test_a_remembered_reading_is_computed_once_per_ttl_and_per_handle():
    clock = FakeClock()
    session = started(one_gpu(), clock)
    computed: list[int] = []

    def count(handle: FakeHandle) -> int:
        computed.append(handle.index)
        return len(computed)

    first, second = FakeHandle(0), FakeHandle(1)
    assert session.remember(30.0, ("links", first), lambda: count(first)) == 1
    assert session.remember(30.0, ("links", first), lambda: count(first)) == 1
    assert session.remember(30.0, ("links", second), lambda: count(second)) == 2
    clock.advance(30.0)
    assert session.remember(30.0, ("links", first), lambda: count(first)) == 3
    assert computed == [0, 1, 0]
