"""Benchmark (not a test): what GPM activity adds to one GPU reading, side by side with today's read.

    .venv/bin/python tests/perf/gpm_cost.py [--gpus 8] [--repeats 400] [--real]

Scripted NVML (tests/fakes): the GpuReader over N H100s without GPM (today's read), the same with GPM,
and the GPM part alone (sample + metrics of one GPU). This measures our Python and ctypes work, not the
driver. With --real and an NVIDIA driver, it also times the real NVML calls (nvmlGpmSampleGet,
nvmlGpmMetricsGet) and a whole real reading per GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pth_top.sensors.gpu import GpuReader  # noqa: E402
from pth_top.sensors.nvml import NvmlSession  # noqa: E402
from tests.fakes.gpm_profiles import TRAINING, enable_gpm  # noqa: E402
from tests.fakes.gpu_fixtures import make_fake_gpus  # noqa: E402


def per_call_us(function, repeats: int) -> float:
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return 1e6 * statistics.median(times)


class Clock:
    """Moves 1 s per reading, so cached slow fields are re-read at their usual rate."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def scripted(gpus: int, repeats: int) -> None:
    plain = GpuReader(NvmlSession(make_fake_gpus(gpus), clock=Clock()))
    fake = make_fake_gpus(gpus)
    for index in range(gpus):
        enable_gpm(fake, index, TRAINING)
    with_gpm = GpuReader(NvmlSession(fake, clock=Clock()))
    handles = [slot.handle for slot in (with_gpm.sample() and with_gpm.slots or ())]
    today = per_call_us(plain.sample, repeats) / gpus
    both = per_call_us(with_gpm.sample, repeats) / gpus
    alone = per_call_us(lambda: with_gpm.gpm.read(0, handles[0]), repeats)
    print(f"scripted NVML, {gpus} GPUs, medians of {repeats}: today's read {today:.0f} us per GPU per sample; "
          f"with GPM {both:.0f} us (+{both - today:.0f} us); the GPM part alone {alone:.0f} us")
    with_gpm.close()


def real(repeats: int) -> None:
    session = NvmlSession()
    if not session.available:
        print(f"real NVML: {session.unavailable_reason}")
        return
    reader = GpuReader(session)
    reader.sample()
    slots = [slot for slot in reader.slots or () if slot.handle is not None]
    for slot in slots:
        supported = reader.gpm.is_supported(slot.index, slot.handle)
        whole = per_call_us(reader.sample, repeats) / max(1, len(slots))
        line = f"real NVML, GPU {slot.index} {slot.name}: a whole reading {whole:.0f} us per GPU"
        if supported:
            gpm = per_call_us(lambda slot=slot: reader.gpm.read(slot.index, slot.handle), repeats)
            line += f"; GPM sample + metrics {gpm:.0f} us"
        else:
            line += "; no GPM on this GPU"
        print(line)
    reader.close()
    session.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=400)
    parser.add_argument("--real", action="store_true", help="also time the real driver's GPM calls")
    args = parser.parse_args()
    scripted(args.gpus, args.repeats)
    if args.real:
        real(max(20, args.repeats // 10))


if __name__ == "__main__":
    main()
