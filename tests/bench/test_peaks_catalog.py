"""GPU peaks come from the hardware catalog: device names map to entries, the user catalog overrides them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pth_top.benches.client.peaks import PCIE_X16_GBPS, gpu_peak, gpu_peaks, normalized_device_name, percent_of_peak
from pth_top.configs.parts import load_catalog

NO_USER_DIR = Path("/nonexistent-user-catalog")


def user_catalog(text: str) -> Path:
    directory = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / "catalog"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "mine.toml"
    path.write_text(text, encoding="utf-8")
    return path


def cuda_row(kind: str, value: float) -> dict:
    return {"device": "cuda:0", "peak_kind": kind, "value": value}


def on(name: str) -> dict:
    return {"cuda_devices": {"cuda:0": {"name": name}}}


@pytest.mark.parametrize("device_name, part_id", [
    ("NVIDIA H200", "h200-141gb-sxm"), ("NVIDIA H200 NVL", "h200-141gb-nvl"),
    ("NVIDIA H100 80GB HBM3", "h100-80gb-sxm"), ("NVIDIA H100 PCIe", "h100-80gb-pcie"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"), ("NVIDIA A100-SXM4-40GB", "a100-40gb-sxm"),
    ("NVIDIA A100-PCIE-40GB", "a100-40gb-pcie"), ("NVIDIA A100 80GB PCIe", "a100-80gb-pcie"),
    ("NVIDIA L40S", "l40s-48gb"), ("NVIDIA GeForce RTX 4090", "rtx-4090-24gb"),
    ("NVIDIA GeForce RTX 3060", "rtx-3060-12gb"), ("NVIDIA GeForce RTX 3060 Ti", "rtx-3060-ti-8gb"),
    ("GeForce RTX 3090", "rtx-3090-24gb"), ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada-48gb"),
    ("AMD Instinct MI300X", "mi300x-192gb"),
    # Issue 12/13: China-market cards and the cards the bench meets in servers and clouds, by the names
    # torch/nvidia-smi print (seen in public logs: e.g. "NVIDIA GH200 480GB", "Tesla V100-SXM2-32GB").
    ("NVIDIA GeForce RTX 4090 D", "rtx-4090-d-24gb"), ("NVIDIA GeForce RTX 5090 D", "rtx-5090-d-32gb"),
    ("NVIDIA GeForce RTX 5090 D v2", "rtx-5090-d-v2-24gb"), ("NVIDIA GeForce RTX 5060 Ti", "rtx-5060-ti-16gb"),
    ("NVIDIA H20", "h20-96gb"), ("NVIDIA L20", "l20-48gb"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-blackwell-96gb"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-blackwell-server-96gb"),
    ("NVIDIA A10", "a10-24gb"), ("NVIDIA L4", "l4-24gb"), ("Tesla T4", "t4-16gb"),
    ("Tesla V100-PCIE-16GB", "v100-16gb-pcie"), ("Tesla V100-PCIE-32GB", "v100-32gb-pcie"),
    ("Tesla V100-SXM2-16GB", "v100-16gb-sxm2"), ("Tesla V100-SXM2-32GB", "v100-32gb-sxm2"),
    ("NVIDIA H100 NVL", "h100-94gb-nvl"), ("NVIDIA GH200 480GB", "gh200-96gb"),
    ("NVIDIA GH200 144G HBM3e", "gh200-144gb"), ("NVIDIA B200", "b200-180gb-sxm"),
    ("AMD Instinct MI250X/MI250", "mi250x-128gb"),
])
def test_names_real_devices_report_find_their_catalog_entry(device_name, part_id):
    assert gpu_peaks(device_name).part_id == part_id


@pytest.mark.parametrize("device_name", [
    "NVIDIA GeForce RTX 4070 Ti", "NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA H200 MIG 2g.35gb", "Tesla P40",
    "NVIDIA A10G", "Orin", "",
])
def test_near_misses_and_unknown_devices_have_no_peak(device_name):
    assert gpu_peaks(device_name) is None


def test_unknown_gpu_is_shown_without_percent_and_says_why():
    percent, note = percent_of_peak(cuda_row("fp32", 10.0), on("Tesla P40"))
    assert percent is None and "'Tesla P40'" in note and "device_names" in note
    assert percent_of_peak(cuda_row("fp32", 10.0), {})[0] is None


# The hand-checked figures the benchmark used before the catalog became their single source:
# (device name, FP32, TF32, FP16, BF16 dense TFLOPS, memory GB/s, PCIe generation).
CHECKED_PEAKS = [
    ("NVIDIA H200 NVL", 60, 418, 836, 836, 4800, 5), ("NVIDIA H200", 67, 495, 989, 989, 4800, 5),
    ("NVIDIA H100 PCIe", 51, 378, 756, 756, 2000, 5), ("NVIDIA H100 80GB HBM3", 67, 495, 989, 989, 3350, 5),
    ("NVIDIA A100-PCIE-40GB", 19.5, 156, 312, 312, 1555, 4), ("NVIDIA A100 80GB PCIe", 19.5, 156, 312, 312, 1935, 4),
    ("NVIDIA A100-SXM4-40GB", 19.5, 156, 312, 312, 1555, 4), ("NVIDIA A100-SXM4-80GB", 19.5, 156, 312, 312, 2039, 4),
    ("NVIDIA L40S", 91.6, 183, 362, 362, 864, 4), ("NVIDIA GeForce RTX 5090", 104.8, 104.8, 209.5, 209.5, 1792, 5),
    ("NVIDIA GeForce RTX 4090", 82.6, 82.6, 165.2, 165.2, 1008, 4),
    ("NVIDIA GeForce RTX 4070", 29.1, 29.1, 58.3, 58.3, 504, 4),
    ("NVIDIA GeForce RTX 3060 Ti", 16.2, 16.2, 32.4, 32.4, 448, 4),
    ("NVIDIA GeForce RTX 3060", 12.7, 12.7, 25.4, 25.4, 360, 4),
    # Datasheets: H100 NVL (www.nvidia.com/en-us/data-center/h100/, sparse figures halved), L4
    # (www.nvidia.com/en-us/data-center/l4/), A10 (www.nvidia.com/en-us/data-center/products/a10-gpu/).
    ("NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5, 3900, 5), ("NVIDIA L4", 30.3, 60, 121, 121, 300, 4),
    ("NVIDIA A10", 31.2, 62.5, 125, 125, 600, 4),
]


@pytest.mark.parametrize("device_name, fp32, tf32, fp16, bf16, memory_gb_per_s, pcie_generation", CHECKED_PEAKS)
def test_catalog_keeps_the_checked_datasheet_peaks(device_name, fp32, tf32, fp16, bf16, memory_gb_per_s,
                                                   pcie_generation):
    peaks = {kind: gpu_peak(device_name, kind).value for kind in (
        "fp32", "tf32", "fp16_tensor", "bf16_tensor", "memory_bandwidth", "pcie")}
    assert peaks == {"fp32": fp32, "tf32": tf32, "fp16_tensor": fp16, "bf16_tensor": bf16,
                     "memory_bandwidth": memory_gb_per_s, "pcie": PCIE_X16_GBPS[pcie_generation]}


def test_peaks_are_the_catalog_numbers():
    catalog = load_catalog(NO_USER_DIR)
    for part in catalog.of_kind("gpu"):
        devices = part.get("devices_per_package", 1)
        for device_name in part["device_names"]:
            assert gpu_peaks(device_name).part_id == part.id, device_name
            bf16 = gpu_peak(device_name, "bf16_tensor")
            assert (bf16.value if bf16 else 0) == pytest.approx(part["bf16_dense_tflops"] / devices), device_name
            assert gpu_peak(device_name, "memory_bandwidth").value == pytest.approx(
                part["bandwidth_gb_per_s"] / devices)


def test_volta_and_turing_have_fp16_tensor_peaks_but_no_tf32_or_bf16():
    # V100 datasheet (volta-v100-datasheet-update-us-1165301-r5): 15.7 / 125 SXM2, 14 / 112 PCIe; T4: 8.1 / 65.
    for device_name, fp32, fp16 in (("Tesla V100-SXM2-32GB", 15.7, 125), ("Tesla V100-SXM2-16GB", 15.7, 125),
                                     ("Tesla V100-PCIE-16GB", 14, 112), ("Tesla V100-PCIE-32GB", 14, 112),
                                     ("Tesla T4", 8.1, 65)):
        assert (gpu_peak(device_name, "fp32").value, gpu_peak(device_name, "fp16_tensor").value) == (fp32, fp16)
        assert gpu_peak(device_name, "tf32") is None and gpu_peak(device_name, "bf16_tensor") is None
        assert gpu_peak(device_name, "memory_bandwidth").value == (320 if "T4" in device_name else 900)


def test_h200_and_h200_nvl_and_gh200_are_told_apart_by_name():
    assert gpu_peak("NVIDIA H200", "bf16_tensor").value == 989
    assert gpu_peak("NVIDIA H200 NVL", "bf16_tensor").value == 836
    assert gpu_peaks("NVIDIA GH200 480GB").part_id == "gh200-96gb"


def test_no_two_shipped_gpus_claim_the_same_device_name():
    claimed: dict[str, str] = {}
    for part in load_catalog(NO_USER_DIR).of_kind("gpu"):
        for device_name in part["device_names"]:
            key = normalized_device_name(device_name)
            assert key not in claimed, f"{device_name!r}: {part.id} and {claimed[key]}"
            claimed[key] = part.id


def test_a_missing_unit_gives_no_percent_rather_than_a_wrong_one():
    assert gpu_peak("AMD Instinct MI250X", "tf32") is None
    assert percent_of_peak(cuda_row("tf32", 40.0), on("AMD Instinct MI250X"))[0] is None
    # Per GCD: torch sees each half of the MI250X (383 TFLOPS BF16, 3277 GB/s per package) as a device.
    assert gpu_peak("AMD Instinct MI250X/MI250", "bf16_tensor").value == pytest.approx(191.5)
    assert gpu_peak("AMD Instinct MI250X/MI250", "memory_bandwidth").value == pytest.approx(1638.5)


def test_user_catalog_override_changes_the_peak():
    assert percent_of_peak(cuda_row("bf16_tensor", 791.2), on("NVIDIA H200"))[0] == pytest.approx(80.0)
    user_catalog('[[gpu]]\nid = "h200-141gb-sxm"\nbf16_dense_tflops = 791.2\n')
    percent, note = percent_of_peak(cuda_row("bf16_tensor", 791.2), on("NVIDIA H200"))
    assert percent == pytest.approx(100.0)
    assert "your catalog id h200-141gb-sxm" in note


def test_user_catalog_can_teach_a_new_device_name():
    assert gpu_peaks("NVIDIA GeForce RTX 4070 Ti") is None
    user_catalog('[[gpu]]\nid = "rtx-4090-24gb"\n'
                 'device_names = ["NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4070 Ti"]\n')
    assert gpu_peaks("NVIDIA GeForce RTX 4070 Ti").part_id == "rtx-4090-24gb"


def test_a_user_entry_claiming_a_shipped_device_name_wins():
    user_catalog('[[gpu]]\nid = "rtx-3060-12gb"\ndevice_names = ["NVIDIA GeForce RTX 4090"]\nfp32_tflops = 12.5\n')
    assert gpu_peaks("NVIDIA GeForce RTX 4090").part_id == "rtx-3060-12gb"
    assert gpu_peak("NVIDIA GeForce RTX 4090", "fp32").value == 12.5
    assert gpu_peaks("NVIDIA GeForce RTX 3060") is None


def test_a_broken_user_catalog_falls_back_to_the_shipped_one_and_says_so():
    path = user_catalog('[[gpu]]\nid = "h200-141gb-sxm"\nbf16_dense_tflops = "fast"\n')
    percent, note = percent_of_peak(cuda_row("bf16_tensor", 791.2), on("NVIDIA H200"))
    assert percent == pytest.approx(80.0)
    assert "user catalog left out" in note and str(path) in note and "bf16_dense_tflops" in note


def test_the_child_side_imports_only_the_protocol_run_request_and_catalog_of_pth_top():
    code = (
        "import sys, pth_top.benches.__main__, pth_top.benches.child.entry, pth_top.benches.child.runner, "
        "pth_top.benches.child.probe, pth_top.benches.child.harness, pth_top.benches.child.cpuinfo, "
        "pth_top.benches.child.cleanup\n"
        "print(sorted(m for m in sys.modules if m.startswith('pth_top.') or m.split('.')[0] in "
        "('platformdirs', 'tomli', 'tomllib', 'psutil', 'textual')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    loaded = set(ast.literal_eval(out.stdout.strip()))
    shared = {"pth_top.benches", "pth_top.benches.__main__", "pth_top.benches.protocol", "pth_top.benches.run_request",
              "pth_top.benches.catalog"}
    child_side = {name for name in loaded if name.startswith("pth_top.benches.child")}
    assert child_side and loaded - child_side <= shared, loaded
