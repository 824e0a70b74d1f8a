"""Check a CUDA benchmark run (JSON from `pth-top bench --json`) against the issue's H200 targets.

BF16 GEMM >= 90 % of the ~788 TFLOP/s a plain torch loop reaches on an H200; device copy >= 85 % of 4.8 TB/s.
Usage: python tests/perf/check_gpu_targets.py RUN.json
"""

from __future__ import annotations

import json
import sys

H200_BF16_LOOP_TFLOPS = 788.0
H200_MEMORY_GBPS = 4800.0


def main(path: str) -> int:
    run = json.load(open(path, encoding="utf-8"))
    rows = {(row["kernel"], row["device"], row["variant"]): row for row in run["rows"]}
    name = (run["metadata"].get("cuda_devices") or {}).get("cuda:0", {}).get("name", "?")
    gemm = rows.get(("gemm", "cuda:0", "bf16"), {}).get("value")
    copy = rows.get(("membw", "cuda:0", "copy"), {}).get("value")
    print(f"device: {name}")
    print(f"bf16 GEMM: {gemm} TFLOP/s (target >= {0.9 * H200_BF16_LOOP_TFLOPS:.0f} on an H200)")
    print(f"device copy: {copy} GB/s (target >= {0.85 * H200_MEMORY_GBPS:.0f} on an H200)")
    if "H200" not in name:
        print("not an H200: targets not applied")
        return 0
    gemm_ok = gemm is not None and gemm >= 0.9 * H200_BF16_LOOP_TFLOPS
    copy_ok = copy is not None and copy >= 0.85 * H200_MEMORY_GBPS
    ok = gemm_ok and copy_ok
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
