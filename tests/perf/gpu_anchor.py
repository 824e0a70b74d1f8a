"""Plain-CUDA-events references for gpu_check.sh: the same GEMM and device copy pth-top's bench measured.

Timing as triton's do_bench and mamf-finder (stas00/ml-engineering, compute/accelerator/benchmarks/
mamf-finder.py): a sustained warm-up, one event pair per repetition, no host wait between repetitions,
one synchronize at the end. Sections:
  mamf_style         BF16 shape sweep, 50 warm-up + 100 timed iterations per shape, 256 MB L2 flush before each:
                     the best shape is the "maximum achievable matmul" the harness's GEMM is held to.
  harness_vs_events  the run's best BF16 GEMM shape and its copy array size, timed alternately by pth-top's
                     harness (benches/child/kernels/_common.timed) and by plain events, in this one process.
Writes $OUT/anchor.json as it goes. Env: OUT, ANCHOR_DEVICE (cuda:0; cpu = dry run at tiny sizes),
ANCHOR_BUDGET_S (120), ANCHOR_WARMUP_S (10 on CUDA), REPO. Shapes come from $OUT's peak-kernel run.
`python gpu_anchor.py --print-bootstrap` prints the bench child's bootstrap (read from spawn.py, not copied).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import statistics
import sys
import time
import traceback
import types
from pathlib import Path

REPO = Path(os.environ.get("REPO") or Path(__file__).resolve().parents[2])
ROUNDS = 3  # harness and events alternate this many times on the same tensors
MAMF_WARMUP_ITERS, MAMF_TIMED_ITERS = 50, 100  # mamf-finder's per-shape counts
L2_FLUSH_BYTES = 256 * 10**6  # as do_bench and mamf-finder
CUDA_MAMF_SHAPES = ((4096, 4096, 4096), (6144, 6144, 6144), (8192, 8192, 8192), (12288, 12288, 12288),
                    (16384, 16384, 16384), (8192, 28672, 8192), (16384, 8192, 16384))
CUDA_DEFAULT_GEMM = 8192
CUDA_DEFAULT_COPY_BYTES = 2 * 2**30  # membw's CUDA array at standard scale


def bench_child_bootstrap() -> str:
    """spawn.BOOTSTRAP, read with ast so this file needs no pth-top environment."""
    tree = ast.parse((REPO / "benches" / "client" / "spawn.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "BOOTSTRAP" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit("gpu_anchor.py: no BOOTSTRAP in benches/client/spawn.py")


def load_bench_child() -> types.ModuleType:
    """pth_top.benches loaded by path under a bare pth_top parent, as the child bootstrap does."""
    if "pth_top" not in sys.modules:
        root = types.ModuleType("pth_top")
        root.__path__ = []  # type: ignore[attr-defined]
        sys.modules["pth_top"] = root
        package_dir = REPO / "benches"
        spec = importlib.util.spec_from_file_location("pth_top.benches", package_dir / "__init__.py",
                                                      submodule_search_locations=[str(package_dir)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["pth_top.benches"] = module
        spec.loader.exec_module(module)
    return importlib.import_module("pth_top.benches.child.kernels._common")


class Anchor:
    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.device = torch.device(os.environ.get("ANCHOR_DEVICE", "cuda:0"))
        self.cuda = self.device.type == "cuda"
        self.budget_s = float(os.environ.get("ANCHOR_BUDGET_S", "120"))
        self.warmup_s = float(os.environ.get("ANCHOR_WARMUP_S", "10" if self.cuda else "0.2"))
        self.started = time.monotonic()
        self.out = Path(os.environ["OUT"])
        self.result: dict = {"meta": {"device": str(self.device), "torch": torch.__version__,
                                      "cuda": torch.version.cuda, "dry_run": not self.cuda},
                             "sections": {}, "errors": [], "skipped": []}
        if self.cuda:
            torch.cuda.set_device(self.device)
            self.result["meta"]["name"] = torch.cuda.get_device_name(self.device)
            self.flush_buffer = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=self.device)

    def left_s(self) -> float:
        return self.budget_s - (time.monotonic() - self.started)

    def save(self) -> None:
        self.result["meta"]["elapsed_s"] = round(time.monotonic() - self.started, 2)
        partial = self.out / "anchor.json.tmp"
        partial.write_text(json.dumps(self.result, indent=1, default=str), encoding="utf-8")
        os.replace(partial, self.out / "anchor.json")

    def section(self, name: str, needs_s: float, run) -> None:
        if self.left_s() < (needs_s if self.cuda else 1.0):
            self.result["skipped"].append(f"{name}: {self.left_s():.0f} s left, needs {needs_s:.0f}")
        else:
            try:
                self.result["sections"][name] = run()
            except Exception as error:  # noqa: BLE001 - one section failing must not lose the others
                self.result["errors"].append({"section": name, "error": repr(error)[:500],
                                              "traceback": traceback.format_exc(limit=4)})
                if self.cuda:
                    self.torch.cuda.empty_cache()
        self.save()

    def event_times(self, fn, reps: int, *, flush: bool) -> list[float]:
        """Seconds per repetition: events around each call, no host wait in between (CPU: host clock)."""
        torch = self.torch
        if not self.cuda:
            times = []
            for _ in range(reps):
                started = time.perf_counter()
                fn()
                times.append(time.perf_counter() - started)
            return times
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for start, end in pairs:
            if flush:
                self.flush_buffer.zero_()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize(self.device)
        return [start.elapsed_time(end) / 1000.0 for start, end in pairs]

    def reps_for(self, fn, span_s: float, *, at_most: int = 2000) -> int:
        one = statistics.median(self.event_times(fn, 3, flush=False))
        return int(max(10, min(at_most, span_s / max(one, 1e-7))))

    def matrices(self, m: int, n: int, k: int):
        torch = self.torch
        a = torch.randn(m, k, device=self.device).to(torch.bfloat16)
        b = torch.randn(k, n, device=self.device).to(torch.bfloat16)
        return a, b, torch.empty(m, n, device=self.device, dtype=torch.bfloat16)

    def sustained_warmup(self) -> dict:
        """mamf-finder warms the accelerator before timing ("a cold accelerator scores higher")."""
        size = 8192 if self.cuda else 256
        call = functools.partial(self.torch.mm, *self.matrices(size, size, size)[:2])
        times: list[float] = []
        deadline = time.monotonic() + self.warmup_s
        while time.monotonic() < deadline:
            times += self.event_times(call, 20 if self.cuda else 2, flush=False)
        flop = 2 * size**3
        return {"seconds": self.warmup_s, "shape": [size] * 3,
                "tflops_last_quarter_median": flop / statistics.median(times[-max(1, len(times) // 4):]) / 1e12}

    def mamf_style(self) -> dict:
        shapes = CUDA_MAMF_SHAPES if self.cuda else ((128, 128, 128), (256, 256, 256))
        rows, best = [], None
        for m, n, k in shapes:
            if self.left_s() < (15 if self.cuda else 0.5):
                self.result["skipped"].append(f"mamf_style {m}x{n}x{k}: out of time")
                continue
            a, b, c = self.matrices(m, n, k)
            fn = functools.partial(self.torch.mm, a, b, out=c)
            self.event_times(fn, MAMF_WARMUP_ITERS if self.cuda else 2, flush=True)
            times = self.event_times(fn, MAMF_TIMED_ITERS if self.cuda else 5, flush=True)
            flop = 2 * m * n * k
            row = {"mnk": [m, n, k], "tflops_median": flop / statistics.median(times) / 1e12,
                   "tflops_mean": flop / statistics.fmean(times) / 1e12, "tflops_max": flop / min(times) / 1e12}
            rows.append(row)
            if best is None or row["tflops_median"] > best["tflops_median"]:
                best = row
        return {"shapes": rows, "best": best, "iterations": [MAMF_WARMUP_ITERS, MAMF_TIMED_ITERS],
                "l2_flush_bytes": L2_FLUSH_BYTES}

    def run_row(self, kernel: str, variant_prefix: str) -> dict:
        """The row of the peak-kernel run this anchor mirrors (its shape and array size), or {}."""
        from check_gpu_targets import find_row, load_run  # next to this file

        try:
            rows, _ = load_run(self.out)
        except (OSError, ValueError, AttributeError):
            return {}
        return find_row(rows, kernel, variant_prefix, str(self.device) if self.cuda else "cpu")

    def alternate(self, fn, *, flush: bool, work: float, common) -> dict:
        """pth-top's harness and plain events on the same call, alternating ROUNDS times."""
        context = common.KernelContext(device=str(self.device) if self.cuda else "cpu", scale=1.0,
                                       time_cap_s=1.0 if self.cuda else 0.2)
        harness, events = [], []
        for _ in range(ROUNDS):
            harness.append(common.timed(context, fn, flush=flush).median_s)
            self.event_times(fn, 5, flush=flush)
            events.append(statistics.median(self.event_times(fn, self.reps_for(fn, 0.3), flush=flush)))
        harness_rate, events_rate = work / statistics.median(harness), work / statistics.median(events)
        return {"harness_per_s": harness_rate, "events_per_s": events_rate,
                "harness_over_events": harness_rate / events_rate, "rounds": ROUNDS, "l2_flush": flush}

    def flushed(self, row: dict, default: bool) -> bool:
        """L2 flushed before each repetition as the run's row says it was (GEMM yes, STREAM copy no); never on CPU."""
        said = row.get("l2_flush")
        return self.cuda and (said if isinstance(said, bool) else default)

    def harness_vs_events(self) -> dict:
        common = load_bench_child()
        gemm_row = self.run_row("gemm", "bf16")
        size = ((gemm_row.get("details") or {}).get("best_shape") or [CUDA_DEFAULT_GEMM if self.cuda else 256])[0]
        a, b, c = self.matrices(size, size, size)
        gemm = self.alternate(functools.partial(self.torch.mm, a, b, out=c), flush=self.flushed(gemm_row, True),
                              work=2 * size**3 / 1e12, common=common)
        gemm.update(unit="TFLOP/s", mnk=[size] * 3, run_value=gemm_row.get("value"))
        copy_row = self.run_row("membw", "copy")
        nbytes = (copy_row.get("details") or {}).get("array_bytes") or (
            CUDA_DEFAULT_COPY_BYTES if self.cuda else 16 * 2**20)
        source = self.torch.randn(int(nbytes) // 4, device=self.device)
        target = self.torch.empty_like(source)
        copy = self.alternate(lambda: target.copy_(source), flush=self.flushed(copy_row, False),
                              work=2 * int(nbytes) / 1e9, common=common)
        copy.update(unit="GB/s", array_bytes=int(nbytes), run_value=copy_row.get("value"),
                    words_counted=2)
        return {"bf16_gemm": gemm, "copy": copy}


def main() -> int:
    if sys.argv[1:] == ["--print-bootstrap"]:
        print(bench_child_bootstrap())
        return 0
    anchor = Anchor()
    anchor.save()
    anchor.section("sustained_warmup", 5 + anchor.warmup_s, anchor.sustained_warmup)
    anchor.section("harness_vs_events", 20, anchor.harness_vs_events)
    anchor.section("mamf_style", 15, anchor.mamf_style)
    anchor.result["meta"]["done"] = True
    anchor.save()
    best = (anchor.result["sections"].get("mamf_style") or {}).get("best") or {}
    print(f"anchor: mamf-style best {best.get('tflops_median', 0):.4g} TFLOP/s at {best.get('mnk')}; "
          f"errors {len(anchor.result['errors'])}", flush=True)
    return 1 if anchor.result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
