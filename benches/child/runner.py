"""`python -m pth_top.benches run`: run kernels in this interpreter, stream protocol events on stdout.

Runs inside the measured environment, which needs only torch and the standard library.
Exit codes: 0 all ran, 1 some kernel failed, 2 bad usage, 3 torch unavailable, 130/143 cancelled.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import signal
import sys
import threading
import time
import traceback
import warnings
from typing import IO, Callable, NoReturn

from pth_top.benches.catalog import KERNELS_BY_NAME, SUITE_SCALE, SUITE_TIME_CAP_S, SUITES, KernelSpec
from pth_top.benches.child import cleanup
from pth_top.benches.protocol import HEARTBEAT_INTERVAL_S, encode_event
from pth_top.benches.run_request import RequestError, RunRequest

PROGRESS_MIN_INTERVAL_S = 0.25
# Events that say nothing about work done: a heartbeat, and a burn's per-second sample (sent even while its GPU hangs).
NOT_PROGRESS_KINDS = ("heartbeat", "sample")
ORPHAN_GRACE_S = 3.0


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m pth_top.benches run",
                     description="Run torch benchmarks, JSON-lines events on stdout.")
    RunRequest.add_arguments(parser)
    parser.add_argument("--list-devices", action="store_true", help="emit one 'devices' event and exit")
    return parser


class EventWriter:
    """Writes events to a private copy of stdout; library prints on fd 1 go to stderr instead."""

    def __init__(self, stream: IO[str], clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._lock = threading.Lock()  # the heartbeat thread writes too
        self._clock = clock
        self._last_progress_s = clock()  # the main thread's last progress (see mark_progress)

    @classmethod
    def take_over_stdout(cls) -> "EventWriter":
        sys.stdout.flush()
        events_fd = os.dup(1)
        os.dup2(2, 1)
        return cls(os.fdopen(events_fd, "w", buffering=1, encoding="utf-8"))

    def progress_age_s(self) -> float:
        """Seconds since the last progress mark (a hung kernel lets this grow)."""
        return self._clock() - self._last_progress_s

    def mark_progress(self) -> None:
        """Work finished: a batch of repetitions, a sweep's shape, a second of burn GEMMs, any event but these."""
        self._last_progress_s = self._clock()

    def __call__(self, kind: str, **fields: object) -> None:
        line = encode_event(kind, **fields)
        if kind not in NOT_PROGRESS_KINDS:
            self.mark_progress()
        with self._lock:
            self._stream.write(line)
            self._stream.flush()


class Heartbeat(threading.Thread):
    """Emits a heartbeat every `interval_s`; when the parent is gone, ends this run and its process group.

    Each heartbeat carries the main thread's progress age, so the parent stops a hung kernel as well as a
    silent child; the child stops when its parent died (even by SIGKILL): the parent pid changes, or writing
    the heartbeat fails on the broken pipe.
    """

    def __init__(self, emit: Callable[..., None], interval_s: float = HEARTBEAT_INTERVAL_S) -> None:
        super().__init__(name="bench-heartbeat", daemon=True)
        self.emit = emit
        self.progress_age_s: Callable[[], float] | None = getattr(emit, "progress_age_s", None)
        self.interval_s = interval_s
        self.parent_pid = os.getppid()
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval_s):
            if os.getppid() != self.parent_pid:
                break
            try:
                age = {} if self.progress_age_s is None else {"progress_age_s": self.progress_age_s()}
                self.emit("heartbeat", pid=os.getpid(), **age)
            except (OSError, ValueError):  # broken pipe: nobody reads our events any more
                break
        else:
            return
        end_orphaned_run()


def end_orphaned_run(grace_s: float = ORPHAN_GRACE_S) -> None:
    """SIGTERM this process (temp files go) and its group; SIGKILL whatever still runs after `grace_s`."""
    leads_group = os.getpgrp() == os.getpid()
    if leads_group:
        os.killpg(os.getpgrp(), signal.SIGTERM)
    else:
        os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace_s)
    if leads_group:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os._exit(143)


def resolve_devices(text: str) -> list[str]:
    from pth_top.benches.child.kernels._common import list_devices

    available = [device["id"] for device in list_devices()]
    if text == "all":
        return available
    if text == "cuda":
        text = "cuda:0"
    if text not in available:
        raise UsageError(f"device {text!r} not available here (available: {', '.join(available)})")
    return [text]


def plan(specs: list[KernelSpec], devices: list[str]) -> list[tuple[KernelSpec, str]]:
    """Each kernel on each chosen device it supports; 'host' kernels run once."""
    steps = []
    for spec in specs:
        if "host" in spec.devices:
            steps.append((spec, "host"))
            continue
        for device in devices:
            kind = "cuda" if device.startswith("cuda") else "cpu"
            if kind in spec.devices:
                steps.append((spec, device))
    return steps


def run_suite(
    steps: list[tuple[KernelSpec, str]],
    emit: Callable[..., None],
    *,
    scale: float,
    time_cap_s: float,
    options: dict,
    suite: str = "custom",
    devices: list[str] | None = None,
) -> int:
    """Run every step, one error row per failing variant, and return the exit code."""
    from pth_top.benches.child.kernels._common import KernelContext, Skipped, collect_metadata, device_scope

    devices = devices or sorted({device for _, device in steps if device != "host"})
    options = {"devices": devices, **options}  # host kernels that span devices (all-reduce) pick a backend by these
    options.setdefault("emit", emit)  # kernels that stream events of their own (the burn's samples)
    mark_progress: Callable[[], None] = getattr(emit, "mark_progress", lambda: None)
    started = time.monotonic()
    metadata = collect_metadata(devices)
    metadata.update(python_executable=sys.executable, python_version=sys.version.split()[0])
    emit("started", suite=suite, devices=devices, scale=scale, time_cap_s=time_cap_s,
         kernels=[{"kernel": spec.name, "device": device, "unit": spec.unit} for spec, device in steps],
         metadata=metadata)
    results = errors = 0
    for spec, device in steps:
        kernel_started = time.monotonic()
        base = {"kernel": spec.name, "device": device}
        state: dict[str, float] = {"done": 0, "total": 1}

        def progress(fraction: float, message: str, _base=base, _state=state, _started=kernel_started) -> None:
            mark_progress()  # a throttled update still says the main thread moved on
            now = time.monotonic()
            # At most a few updates a second: the parent redraws on each one.
            if fraction < 1 and now - _state.get("last_emit", 0.0) < PROGRESS_MIN_INTERVAL_S:
                return
            _state["last_emit"] = now
            overall = (_state["done"] + max(0.0, min(1.0, fraction))) / _state["total"]
            elapsed = now - _started
            eta = elapsed / overall * (1 - overall) if overall > 0 else None
            emit("progress", **_base, fraction=overall, eta_s=eta, message=message)

        ctx = KernelContext(device=device, scale=scale, time_cap_s=time_cap_s, options=options, progress=progress,
                            mark_progress=mark_progress)
        try:
            module = importlib.import_module(spec.module)
            variants = module.variants(ctx)
        except Exception as error:
            errors += 1
            emit("error", **base, variant=None, error_type=type(error).__name__, message=str(error) or repr(error))
            continue
        state["total"] = max(1, len(variants))
        progress(0.0, "starting")
        for variant in variants:
            failed = False
            try:
                with device_scope(device):  # telemetry comes with each timed window (the row's measurement)
                    fields = variant.run()
                fields.setdefault("unit", spec.unit)
                fields.setdefault("peak_kind", spec.peak_kind)
                emit("result", **base, status="ok", **fields)
                results += 1
            except Skipped as reason:
                emit("result", **base, status="skipped", variant=variant.name, value=None, unit=spec.unit,
                     peak_kind=spec.peak_kind, note=str(reason), details={})
            except Exception as error:  # OOM or any bug: this variant's error row, the suite goes on
                errors += 1
                emit("error", **base, variant=variant.name, error_type=type(error).__name__,
                     message=(str(error) or repr(error)).splitlines()[0][:300],
                     traceback=traceback.format_exc(limit=6))
                failed = True
            if failed:  # outside the except block, so the traceback's frames (and tensors) are gone
                _free_memory(device)
            state["done"] += 1
            state["last_emit"] = 0.0
            progress(0.0, variant.name)
    emit("finished", ok=errors == 0, results=results, errors=errors, wall_s=time.monotonic() - started)
    return 0 if errors == 0 else 1


def _free_memory(device: str) -> None:
    import gc

    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def _torch_too_old() -> str | None:
    import torch

    from pth_top.benches.child.probe import torch_floor_problem

    return torch_floor_problem(str(getattr(torch, "__version__", "")))


def main(argv: list[str] | None = None) -> int:
    emit = EventWriter.take_over_stdout()
    heartbeat = Heartbeat(emit)
    heartbeat.start()
    try:
        return _run(argv, emit)
    finally:
        heartbeat.stopped.set()


def _run(argv: list[str] | None, emit: EventWriter) -> int:
    try:
        args = build_parser().parse_args(argv)
        request = RunRequest.from_namespace(args)
    except (UsageError, RequestError) as error:
        emit("error", kernel=None, device=None, variant=None, error_type="UsageError", message=str(error))
        emit("finished", ok=False, results=0, errors=1, wall_s=0.0)
        return 2
    kernels = list(request.kernels or SUITES[request.suite])
    if importlib.util.find_spec("torch") is None:
        emit("error", kernel=None, device=None, variant=None, error_type="TorchMissing",
             message=f"torch is not installed for {sys.executable}")
        emit("finished", ok=False, results=0, errors=1, wall_s=0.0)
        return 3
    cleanup.install_signal_handlers()
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    too_old = _torch_too_old()
    if too_old:
        emit("error", kernel=None, device=None, variant=None, error_type="TorchTooOld", message=too_old)
        emit("finished", ok=False, results=0, errors=1, wall_s=0.0)
        return 3
    try:
        if args.list_devices:
            from pth_top.benches.child.kernels._common import list_devices

            emit("devices", devices=list_devices())
            return 0
        try:
            devices = resolve_devices(request.device)
        except UsageError as error:
            emit("error", kernel=None, device=None, variant=None, error_type="UsageError", message=str(error))
            emit("finished", ok=False, results=0, errors=1, wall_s=0.0)
            return 2
        scale = request.scale if request.scale is not None else SUITE_SCALE[request.suite]
        options = {
            "disk_dir": request.disk_dir or os.getcwd(),
            "disk_size_mib": request.disk_size_mib or max(1, int(1024 * scale)),
            "cpu_memory_budget_mib": request.cpu_memory_budget_mib or max(16, int(2048 * scale)),
            "burn_s": request.burn_s,
        }
        steps = plan([KERNELS_BY_NAME[name] for name in kernels], devices)
        return run_suite(steps, emit, scale=scale, options=options,
                         suite="custom" if request.kernels else request.suite,
                         time_cap_s=request.time_cap_s or SUITE_TIME_CAP_S[request.suite], devices=devices)
    except (cleanup.Cancelled, KeyboardInterrupt):
        cleanup.remove_all()
        return 143
    finally:
        cleanup.remove_all()
