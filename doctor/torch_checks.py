"""Torch checks: interpret the JSON the torch probe (`python -m benches probe`) printed."""

from __future__ import annotations

from typing import Any

from pth_top.doctor.context import DoctorContext
from pth_top.doctor.gpus import list_gpus
from pth_top.doctor.model import Group, Verdict, failed, not_applicable, passed, warned
from pth_top.doctor.needs import probe_missing
from pth_top.doctor.registry import doctor_check
from pth_top.text import printable


def _gpu_count(context: DoctorContext) -> int:
    gpus = list_gpus(context)
    return len(gpus) if gpus else 0


@doctor_check(
    "torch.installed", "torch", Group.TORCH,
    "Every other torch finding is about this interpreter's torch; the dashboard itself never imports it.",
    needs_torch=True,
)
def check_torch_installed(context: DoctorContext) -> Verdict:
    probe = context.torch_probe()
    missing = probe_missing(probe)
    if missing is not None:
        return missing
    if probe.error:
        fix = f"{context.python} -m pip install torch"
        if not context.python_chosen:
            return warned(probe.error, fix + ", or pass --python PATH to check the environment you train in.")
        return failed(probe.error, fix)
    data = probe.data or {}  # probe_missing: an answer has data
    if data.get("bench_torch_problem"):  # the probe's one line: older than the bench child's floor
        return warned(str(data["bench_torch_problem"]), f"{context.python} -m pip install -U 'torch>=2.4'")
    return passed(f"torch {data.get('torch_version')} in {data.get('python')} (Python {data.get('python_version')})")


@doctor_check(
    "torch.cuda", "torch CUDA", Group.TORCH,
    "A CPU-only torch wheel, or one whose CUDA runtime cannot start, runs everything on the CPU even "
    "with a GPU in the machine.",
    needs=("probe",),
)
def check_torch_cuda(context: DoctorContext, probe: dict[str, Any]) -> Verdict:
    gpus = _gpu_count(context)
    build = probe.get("torch_cuda_version")
    if not build:
        hip = probe.get("torch_hip_version")
        if hip:
            return not_applicable(f"ROCm build (HIP {hip})")
        if gpus:
            return failed(
                f"CPU-only build ({probe.get('torch_version')}) on a machine with {gpus} NVIDIA GPU(s)",
                "pip install torch --index-url https://download.pytorch.org/whl/cu124 "
                "(pick the CUDA your driver supports).",
            )
        return passed(f"CPU-only build ({probe.get('torch_version')}); no NVIDIA GPU here")
    if not probe.get("cuda_available"):
        return failed(
            f"built for CUDA {build}, but torch.cuda.is_available() is False",
            "Check the driver (nvidia-smi), CUDA_VISIBLE_DEVICES and the container's --gpus option.",
        )
    return passed(f"CUDA {build}, {probe.get('device_count')} device(s) available")


@doctor_check(
    "torch.cudnn", "cuDNN", Group.TORCH,
    "Convolutions, RNNs and fused attention use cuDNN; without it they fall back to much slower kernels.",
    needs=("probe",),
)
def check_cudnn(context: DoctorContext, probe: dict[str, Any]) -> Verdict:
    if not probe.get("cuda_available"):
        return not_applicable("no CUDA in this torch")
    if probe.get("cudnn_available"):
        return passed(f"cuDNN {probe.get('cudnn_version')}")
    return warned(
        "cuDNN not available", "Install the official CUDA torch wheel, which bundles cuDNN (nvidia-cudnn-cu12).",
    )


@doctor_check(
    "torch.nccl", "NCCL", Group.TORCH,
    "Multi-GPU training (DistributedDataParallel, FSDP) uses NCCL to exchange gradients between GPUs.",
    needs=("probe",),
)
def check_nccl(context: DoctorContext, probe: dict[str, Any]) -> Verdict:
    if not probe.get("cuda_available"):
        return not_applicable("no CUDA in this torch")
    if probe.get("nccl_available"):
        version = probe.get("nccl_version")
        return passed(f"NCCL {version}" if version else "NCCL available")
    if int(probe.get("device_count") or 0) > 1:
        return warned(
            "NCCL not available with several GPUs", "Install the official Linux CUDA torch wheel (it bundles NCCL).",
        )
    return passed("NCCL not available (one GPU: not needed)")


@doctor_check(
    "torch.numpy", "numpy", Group.TORCH,
    "torch.from_numpy, most datasets and DataLoader collation of numpy arrays need numpy in the same "
    "environment; torch warns 'Failed to initialize NumPy' without it.",
    needs=("probe",),
)
def check_numpy(context: DoctorContext, probe: dict[str, Any]) -> Verdict:
    if probe.get("numpy_present"):
        return passed("numpy installed")
    return warned("numpy not installed", f"{probe.get('python')} -m pip install numpy")


@doctor_check(
    "torch.threads", "CPU threads", Group.TORCH,
    "torch runs CPU ops on torch.get_num_threads() threads (OMP_NUM_THREADS); more threads than physical "
    "cores oversubscribe the CPU, and 1 thread (torchrun's default per rank) leaves cores idle on CPU work.",
    needs=("probe",),
)
def check_threads(context: DoctorContext, probe: dict[str, Any]) -> Verdict:
    threads = int(probe.get("num_threads") or 0)
    omp = probe.get("env", {}).get("OMP_NUM_THREADS")
    cores = context.physical_core_count()
    value = f"{threads} torch threads" + (f" (OMP_NUM_THREADS={omp})" if omp else "")
    if cores:
        value += f", {cores} physical cores"
    if cores and threads > cores:
        return warned(
            value, f"Set OMP_NUM_THREADS to at most {cores} (divided by the number of processes per machine).",
        )
    if cores and threads == 1 and cores >= 4:
        return warned(value, "Set OMP_NUM_THREADS to physical cores / processes per machine if CPU-side ops matter.")
    return passed(value)


# Ampere (compute capability 8.0) and newer run TF32 on their tensor cores.
TF32_MIN_CAPABILITY = (8, 0)


@doctor_check(
    "torch.matmul_precision", "float32 matmul precision", Group.TORCH,
    "torch.set_float32_matmul_precision('high') lets float32 matmuls use TF32 (or bfloat16 for 'medium') on "
    "tensor-core GPUs. It does not enable AVX2, as the guide's §8.2 says: AVX2 is an x86 instruction set that "
    "torch's CPU kernels use by themselves whenever the CPU has it.",
    needs=("probe",),
)
def check_matmul_precision(context: DoctorContext, probe: dict[str, Any]) -> Verdict:
    precision = probe.get("float32_matmul_precision")
    if not precision:
        return not_applicable("this torch or probe does not report it")
    shown = f"'{printable(str(precision))}'"
    capabilities = [tuple(device.get("capability") or (0, 0)) for device in probe.get("devices") or []]
    if not probe.get("cuda_available") or not capabilities:
        return passed(f"{shown}; on the CPU it does not enable AVX2 (CPU kernels use AVX2/AVX-512 on their own)")
    if max(capabilities) < TF32_MIN_CAPABILITY:
        return passed(f"{shown}; no TF32 on these GPUs, so it changes nothing here (and it never enables AVX2)")
    if precision == "highest":
        return passed(f"{shown}: float32 matmuls run in full FP32; 'high' would use TF32 tensor cores (not AVX2)")
    return passed(f"{shown}: float32 matmuls may use TF32/bfloat16 tensor cores (a GPU setting, not AVX2)")
