"""Setup checks for a PyTorch machine: GPU and driver (NVML), host (/proc, /sys), torch (probe JSON).

UI-free: the CLI (`pth-top doctor`) and the Doctor screen both call `registry.run_all(context)`.
"""
