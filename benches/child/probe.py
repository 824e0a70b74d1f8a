"""`python -m pth_top.benches probe [--load-seconds N]`: describe this environment's torch as one JSON object.

Runs inside the interpreter being checked. Imports only torch and the standard library (pynvml and
numpy are looked up, guarded). Without torch it prints a JSON object with "error" and exits 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import sys
import time
from typing import Any

from pth_top.benches.child.pcie_link import pci_bus_id

PROBE_SCHEMA = "pth-top.torch-probe"
PROBE_SCHEMA_VERSION = 1
REPORTED_ENV_VARS = (
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "OMP_NUM_THREADS",
    "MKL_NUM_THREADS", "PYTORCH_CUDA_ALLOC_CONF",
)
LOAD_MATRIX_SIZE = 4096
# The bench child needs torch.amp.GradScaler(device) (2.3) and torch.OutOfMemoryError (2.4, pytorch/pytorch#121702).
BENCH_TORCH_FLOOR = (2, 4)


def torch_floor_problem(version: str) -> str | None:
    """One line saying why this torch is too old for the benchmarks, or None when it is new enough (or unparsable:
    a source build's odd version string should not block a run)."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None or (int(match.group(1)), int(match.group(2))) >= BENCH_TORCH_FLOOR:
        return None
    floor = ".".join(str(part) for part in BENCH_TORCH_FLOOR)
    return (f"torch {version} is too old for pth-top bench: it needs torch >= {floor} "
            "(torch.amp.GradScaler, torch.OutOfMemoryError); upgrade torch in this environment")


def _base_report() -> dict[str, Any]:
    return {
        "schema": PROBE_SCHEMA,
        "schema_version": PROBE_SCHEMA_VERSION,
        "python": sys.executable,
        "python_version": platform.python_version(),
        "env": {name: os.environ[name] for name in REPORTED_ENV_VARS if name in os.environ},
        "error": None,
    }


def _describe_devices(torch: Any) -> list[dict[str, Any]]:
    devices = []
    for index in range(torch.cuda.device_count()):
        properties = torch.cuda.get_device_properties(index)
        devices.append({
            "index": index,
            "name": properties.name,
            "total_memory_bytes": int(properties.total_memory),
            "capability": [properties.major, properties.minor],
            "pci_bus_id": pci_bus_id(properties),
        })
    return devices


def _nccl_report(torch: Any) -> tuple[bool, str | None]:
    try:
        available = bool(torch.distributed.is_available() and torch.distributed.is_nccl_available())
    except (AttributeError, RuntimeError):
        return False, None
    if not available:
        return False, None
    try:
        version = torch.cuda.nccl.version()
        return True, ".".join(str(part) for part in version) if isinstance(version, tuple) else str(version)
    except (AttributeError, RuntimeError):
        return True, None


def _read_pcie_links(bus_ids: list[str | None]) -> list[dict[str, Any] | None]:
    """Current and maximum PCIe link of each GPU through pynvml, when it is importable."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return [None for _ in bus_ids]
    links: list[dict[str, Any] | None] = []
    try:
        for bus_id in bus_ids:
            if bus_id is None:
                links.append(None)
                continue
            try:
                handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
                links.append({
                    "pci_bus_id": bus_id,
                    "generation": pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle),
                    "width": pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle),
                    "utilization_percent": pynvml.nvmlDeviceGetUtilizationRates(handle).gpu,
                })
            except Exception:
                links.append(None)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    return links


def _load_and_read_links(torch: Any, devices: list[dict[str, Any]], load_seconds: float) -> dict[str, Any]:
    """Keep every GPU busy with matmuls for `load_seconds`, reading PCIe links near the end."""
    matrices = []
    for device in devices:
        on = torch.device("cuda", device["index"])
        matrices.append(torch.randn(LOAD_MATRIX_SIZE, LOAD_MATRIX_SIZE, device=on, dtype=torch.float16))
    deadline = time.monotonic() + load_seconds
    links: list[dict[str, Any] | None] | None = None
    while time.monotonic() < deadline:
        for matrix in matrices:
            for _ in range(8):
                matrix @ matrix
        if links is None and deadline - time.monotonic() < load_seconds / 2:
            links = _read_pcie_links([device["pci_bus_id"] for device in devices])
        for index in range(len(devices)):
            torch.cuda.synchronize(index)
    return {"seconds": load_seconds, "links": links or []}


def describe_torch(load_seconds: float) -> tuple[dict[str, Any], int]:
    report = _base_report()
    try:
        import torch
    except ImportError as error:
        report["error"] = f"torch not installed in {sys.executable} ({error})"
        return report, 1
    report["torch_version"] = str(torch.__version__)
    report["bench_torch_floor"] = ".".join(str(part) for part in BENCH_TORCH_FLOOR)
    report["bench_torch_problem"] = torch_floor_problem(report["torch_version"])
    report["torch_cuda_version"] = torch.version.cuda
    report["torch_hip_version"] = getattr(torch.version, "hip", None)
    report["cuda_available"] = bool(torch.cuda.is_available())
    report["device_count"] = torch.cuda.device_count() if report["cuda_available"] else 0
    report["devices"] = _describe_devices(torch) if report["cuda_available"] else []
    cudnn_available = bool(torch.backends.cudnn.is_available())
    report["cudnn_available"] = cudnn_available
    report["cudnn_version"] = torch.backends.cudnn.version() if cudnn_available else None
    report["nccl_available"], report["nccl_version"] = _nccl_report(torch)
    report["numpy_present"] = importlib.util.find_spec("numpy") is not None
    report["num_threads"] = torch.get_num_threads()
    report["num_interop_threads"] = torch.get_num_interop_threads()
    report["float32_matmul_precision"] = torch.get_float32_matmul_precision()  # "highest" | "high" | "medium"
    report["load"] = None
    if load_seconds > 0 and report["devices"]:
        try:
            report["load"] = _load_and_read_links(torch, report["devices"], load_seconds)
        except RuntimeError as error:
            report["load"] = {"seconds": load_seconds, "links": [], "error": str(error).splitlines()[0]}
    return report, 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pth_top.benches probe", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--load-seconds", type=float, default=0.0, metavar="N",
        help="run matmuls on every GPU for N seconds and read the PCIe links under that load",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.load_seconds <= 60:
        parser.error("--load-seconds must be between 0 and 60")
    report, exit_code = describe_torch(args.load_seconds)
    print(json.dumps(report), flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
