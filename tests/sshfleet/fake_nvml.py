"""A fake libnvidia-ml.so.1, compiled with gcc: NVML's own signatures and struct layouts (NVIDIA's nvml.h), answering
the readings of ssh_lab.py's GpuReading list, so the probe's ctypes path runs for real without a GPU.

Like the A100s these readings come from, the fan answers NVML_ERROR_NOT_SUPPORTED. Calls before nvmlInit_v2
answer UNINITIALIZED, and a selector the probe should not pass (another sensor, clock or ECC counter) gets
another value or INVALID_ARGUMENT, so a probe that asks the wrong thing reads a wrong number. `old_driver`
leaves out the _v2/_v3 process calls and the clocks-event call, as drivers before them did.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.sshfleet.ssh_lab import GpuReading

MIB = 1024 * 1024
LIBRARY_NAME = "libnvidia-ml.so.1"

HEADER = r"""
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
       NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_DRIVER_NOT_LOADED = 9,
       NVML_ERROR_GPU_IS_LOST = 15 };
typedef struct { char busIdLegacy[16]; unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
                 char busId[32]; } nvmlPciInfo_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId, computeInstanceId;
               } nvmlProcessInfo_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;

struct fake_gpu {
    const char *uuid, *name, *bus_id;
    unsigned int domain, bus, device, utilization, memory_utilization;
    unsigned long long used_bytes, total_bytes;
    unsigned int temperature, power_mw, limit_mw, sm_clock, memory_clock, pstate;
    unsigned long long clocks_event_mask, ecc_corrected, ecc_uncorrected;
    unsigned int ecc_enabled, rows[4];
};
struct fake_process { unsigned int gpu, pid; unsigned long long used_bytes; };
typedef struct fake_gpu *nvmlDevice_t;
"""

BODY = r"""
static int started;

#define CHECK_DEVICE(device) \
    if (!started) return NVML_ERROR_UNINITIALIZED; \
    if ((device) < gpus || (device) >= gpus + GPU_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
#define CHECK_OUT(pointer) if (!(pointer)) return NVML_ERROR_INVALID_ARGUMENT;

static nvmlReturn_t copy_text(const char *text, char *buffer, unsigned int length) {
    CHECK_OUT(buffer);
    if (strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(buffer, text);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
    started = INIT_RESULT == NVML_SUCCESS;
    return INIT_RESULT;
}
nvmlReturn_t nvmlShutdown(void) { started = 0; return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!started) return NVML_ERROR_UNINITIALIZED;
    return copy_text(DRIVER_VERSION, version, length);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version) {
    CHECK_OUT(version);
    *version = CUDA_VERSION;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!started) return NVML_ERROR_UNINITIALIZED;
    CHECK_OUT(count);
    *count = GPU_COUNT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!started) return NVML_ERROR_UNINITIALIZED;
    CHECK_OUT(device);
    if (index >= GPU_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
    if ((int)index == LOST_INDEX) return NVML_ERROR_GPU_IS_LOST;  /* fell off the bus */
    *device = &gpus[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    CHECK_DEVICE(device);
    return copy_text(device->name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    CHECK_DEVICE(device);
    return copy_text(device->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    CHECK_DEVICE(device);
    CHECK_OUT(pci);
    memset(pci, 0, sizeof *pci);  /* the device and subsystem ids were not recorded: 0 */
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", device->domain, device->bus,
             device->device);
    strncpy(pci->busId, device->bus_id, sizeof pci->busId - 1);
    pci->domain = device->domain;
    pci->bus = device->bus;
    pci->device = device->device;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *rates) {
    CHECK_DEVICE(device);
    CHECK_OUT(rates);
    rates->gpu = device->utilization;
    rates->memory = device->memory_utilization;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
    CHECK_DEVICE(device);
    CHECK_OUT(memory);
    memory->total = device->total_bytes;
    memory->used = device->used_bytes;
    memory->free = device->total_bytes - device->used_bytes;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temperature) {
    CHECK_DEVICE(device);
    CHECK_OUT(temperature);
    if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;  /* NVML_TEMPERATURE_GPU is the only sensor */
    *temperature = device->temperature;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed) {
    CHECK_DEVICE(device);
    CHECK_OUT(speed);
    return NVML_ERROR_NOT_SUPPORTED;  /* passively cooled SXM boards: "Fan Speed : N/A" */
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *milliwatts) {
    CHECK_DEVICE(device);
    CHECK_OUT(milliwatts);
    *milliwatts = device->power_mw;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *milliwatts) {
    CHECK_DEVICE(device);
    CHECK_OUT(milliwatts);
    *milliwatts = device->limit_mw;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *megahertz) {
    CHECK_DEVICE(device);
    CHECK_OUT(megahertz);
    if (type == 0 || type == 1) *megahertz = device->sm_clock;  /* graphics, SM */
    else if (type == 2) *megahertz = device->memory_clock;
    else return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, int *pstate) {
    CHECK_DEVICE(device);
    CHECK_OUT(pstate);
    *pstate = device->pstate;
    return NVML_SUCCESS;
}

static nvmlReturn_t clocks_event_reasons(nvmlDevice_t device, unsigned long long *reasons) {
    CHECK_DEVICE(device);
    CHECK_OUT(reasons);
    *reasons = device->clocks_event_mask;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *reasons) {
    return clocks_event_reasons(device, reasons);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, int *current, int *pending) {
    CHECK_DEVICE(device);
    CHECK_OUT(current);
    CHECK_OUT(pending);
    *current = *pending = device->ecc_enabled;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int error_type, int counter_type,
                                         unsigned long long *count) {
    CHECK_DEVICE(device);
    CHECK_OUT(count);
    if (counter_type != 0) return NVML_ERROR_NOT_SUPPORTED;  /* only the volatile counts were recorded */
    if (error_type == 0) *count = device->ecc_corrected;
    else if (error_type == 1) *count = device->ecc_uncorrected;
    else return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *correctable, unsigned int *uncorrectable,
                                       unsigned int *pending, unsigned int *failed) {
    CHECK_DEVICE(device);
    CHECK_OUT(correctable && uncorrectable && pending && failed);
    *correctable = device->rows[0];
    *uncorrectable = device->rows[1];
    *pending = device->rows[2];
    *failed = device->rows[3];
    return NVML_SUCCESS;
}

/* Fills `infos` (entries of `size` bytes, the v1 layout or the v2/v3 one) with the device's processes. */
static nvmlReturn_t list_processes(nvmlDevice_t device, unsigned int *count, void *infos, size_t size) {
    unsigned int found = 0, index;
    CHECK_DEVICE(device);
    CHECK_OUT(count);
    for (index = 0; index < PROCESS_COUNT; index++) {
        if (processes[index].gpu != (unsigned int)(device - gpus)) continue;
        if (found < *count && infos) {
            nvmlProcessInfo_t entry;
            memset(&entry, 0, sizeof entry);
            entry.pid = processes[index].pid;
            entry.usedGpuMemory = processes[index].used_bytes;
            entry.gpuInstanceId = entry.computeInstanceId = 0xFFFFFFFFu;  /* no MIG */
            memcpy((char *)infos + found * size, &entry, size);
        }
        found++;
    }
    if (found > *count) {
        *count = found;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = found;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                                  nvmlProcessInfo_v1_t *infos) {
    return list_processes(device, count, infos, sizeof(nvmlProcessInfo_v1_t));
}
"""

NEWER_CALLS = r"""
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons) {
    return clocks_event_reasons(device, reasons);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
    return list_processes(device, count, infos, sizeof(nvmlProcessInfo_t));
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
    return list_processes(device, count, infos, sizeof(nvmlProcessInfo_t));
}
"""


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def gpu_initializer(gpu: GpuReading) -> str:
    domain, bus, device_function = gpu.bus_id.split(":")
    fields = [
        c_string(gpu.uuid), c_string(gpu.name), c_string(gpu.bus_id), f"0x{domain}u", f"0x{bus}u",
        f"0x{device_function.split('.')[0]}u", str(gpu.utilization_percent), str(gpu.memory_utilization_percent),
        f"{gpu.memory_used_mib * MIB}ull", f"{gpu.memory_total_mib * MIB}ull", str(gpu.temperature_c),
        str(round(gpu.power_draw_w * 1000)), str(round(gpu.power_limit_w * 1000)), str(gpu.sm_clock_mhz),
        str(gpu.memory_clock_mhz), str(gpu.pstate), f"0x{gpu.clocks_event_mask:x}ull",
        f"{gpu.ecc_volatile_corrected}ull", f"{gpu.ecc_volatile_uncorrected}ull", str(int(gpu.ecc_enabled)),
        "{" + ", ".join(str(rows) for rows in gpu.remapped_rows) + "}",
    ]
    return "    {" + ", ".join(fields) + "},"


def fake_nvml_source(readings: list[GpuReading], processes: list[tuple[int, int, int]], old_driver: bool,
                     init_result: int, lost_index: int) -> str:
    """C source of the library; `processes` are (gpu index, pid, GPU memory MiB)."""
    table = [f"{gpu}u, {pid}u, {used_mib * MIB}ull" for gpu, pid, used_mib in processes] or ["0u, 0u, 0ull"]
    return "\n".join([
        HEADER,
        f"#define GPU_COUNT {len(readings)}u",
        f"#define PROCESS_COUNT {len(processes)}u",
        f"#define DRIVER_VERSION {c_string(readings[0].driver_version)}",
        f"#define CUDA_VERSION {readings[0].cuda_version}",
        f"#define INIT_RESULT {init_result}",
        f"#define LOST_INDEX {lost_index}",
        "static struct fake_gpu gpus[] = {", *map(gpu_initializer, readings), "};",
        "static const struct fake_process processes[] = {" + ", ".join("{" + row + "}" for row in table) + "};",
        BODY,
        "" if old_driver else NEWER_CALLS,
    ])


def gcc_missing() -> bool:
    return shutil.which("gcc") is None


def build_fake_nvml(folder: Path, readings: list[GpuReading], processes: list[tuple[int, int, int]],
                    old_driver: bool = False, init_result: int = 0, lost_index: int = -1) -> Path:
    """`folder`/libnvidia-ml.so.1 compiled from fake_nvml_source: nvmlInit_v2 answers `init_result`, and the
    GPU at `lost_index` (if any) is lost."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "fake_nvml.c"
    source.write_text(fake_nvml_source(readings, processes, old_driver, init_result, lost_index))
    library = folder / LIBRARY_NAME
    done = subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", str(library), str(source)],
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return library
