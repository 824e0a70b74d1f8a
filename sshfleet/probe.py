"""The probe `pth-top fleet --ssh` sends to each host (the first line on its python3's stdin): stdlib, Python 3.6+.

For each line read on stdin it reads /proc and the GPUs, through NVML (libnvidia-ml.so.1 over ctypes) when the
library loads and initialises, else through `nvidia-smi` (the snapshot has no field that says which), and
prints one `pth-top snapshot --json` document (schema pth-top.snapshot 1) on one line, then FRAME_END; fields
it cannot fill are null or empty. It stays running between refreshes (no new process or session each time)
and ends with its stdin. It imports nothing of pth-top: the host has none.
"""

import json
import os
import pwd
import socket
import subprocess
import sys
import time

try:
    import ctypes
except ImportError:  # a python3-minimal without libffi: nvidia-smi only
    ctypes = None  # type: ignore[assignment]

SCHEMA = "pth-top.snapshot"
GPU_FIELDS = ("index,uuid,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,"
              "temperature.gpu,fan.speed,power.draw,power.limit,clocks.sm,clocks.mem,pstate,driver_version")
# Fields an older or newer driver may not know: asked for in a second query, so the first always works.
EXTRA_FIELDS = "clocks_throttle_reasons.active,ecc.errors.uncorrected.volatile.total,ecc.mode.current"
APP_FIELDS = "gpu_uuid,pid,used_memory"
# Every GPU field the probe sends; those neither path reads stay null.
NULL_GPU_FIELDS = (
    "utilization_percent", "memory_utilization_percent", "memory_used_bytes", "memory_total_bytes", "temperature_c",
    "fan_speed_percent", "power_draw_w", "power_limit_w", "sm_clock_mhz", "memory_clock_mhz", "pstate",
    "pcie_generation_current", "pcie_generation_max", "pcie_width_current", "pcie_width_max", "pcie_rx_bytes_per_s",
    "pcie_tx_bytes_per_s", "ecc_enabled", "ecc_volatile_uncorrected_errors", "nvlink_active_links", "mig_enabled",
    "temperature_missing_reason", "xid_errors", "remapped_rows", "remapped_rows_pending", "remapped_rows_failed",
    "retired_pages",
)
REMAP_FIELDS = ("gpu_uuid,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,"
                "remapped_rows.failure")
NVIDIA_SMI_TIMEOUT_S = 8
MIB = 1024 * 1024
CPU_INTERVAL_S = 0.1
FRAME_END = "\n\x1e\n"  # sshfleet/transport.py reads up to it
# sensors/throttle.py's words for NVML's clock-event bits (a test keeps the two equal).
THROTTLE_REASON_WORDS = (
    (0x4, "power cap"), (0x20, "thermal (SW)"), (0x40, "thermal (HW)"), (0x8, "HW slowdown"),
    (0x80, "power brake (HW)"), (0x10, "sync boost"), (0x2, "applications clocks"), (0x100, "display clocks"),
    (0x200, "board limit"), (0x400, "reliability"), (0x1, "idle"),
)


def read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""


def number(text):
    """nvidia-smi's nounits value as a float; None for N/A, [N/A], [Not Supported] and the like."""
    try:
        return float(text.strip())
    except ValueError:
        return None


def integer(text, scale=1):
    value = number(text)
    return None if value is None else int(value * scale)


def nvidia_smi(query, fields):
    """Rows of `nvidia-smi --query-X=fields` split on commas, or an error line."""
    try:
        done = subprocess.run(["nvidia-smi", "--" + query + "=" + fields, "--format=csv,noheader,nounits"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=NVIDIA_SMI_TIMEOUT_S)
    except FileNotFoundError:
        return None, "no nvidia-smi on the host's PATH"
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, "nvidia-smi: " + str(error)
    text = done.stdout.decode("utf-8", "replace")
    if done.returncode != 0:
        lines = (done.stderr.decode("utf-8", "replace") + text).strip().splitlines()
        return None, "nvidia-smi: " + (lines[0] if lines else "exit status %d" % done.returncode)
    return [[cell.strip() for cell in line.split(",")] for line in text.splitlines() if line.strip()], None


def throttle_words(mask):
    return [word for bit, word in THROTTLE_REASON_WORDS if mask & bit]


def hex_mask(text):
    try:
        return int(text, 16)
    except ValueError:
        return 0


def gpu_record(index, uuid, name, bus_id, readings):
    """One GPU in the snapshot's field names: `readings` holds what the path read, every other field is null."""
    record = dict.fromkeys(NULL_GPU_FIELDS)
    record.update({"index": index, "uuid": uuid, "name": name, "bus_id": bus_id, "lost": False,
                   "throttle_reasons": [], "mig_instances": []})
    record.update(readings)
    record["temperature_missing_reason"] = None if record["temperature_c"] is not None else "no reading"
    return record


def smi_gpus():
    """(gpu dicts, driver version, the reason there are none or None, uuid -> index) from nvidia-smi."""
    rows, error = nvidia_smi("query-gpu", GPU_FIELDS)
    if rows is None:
        return [], None, error, {}
    extra = {}
    extra_rows, _ = nvidia_smi("query-gpu", "uuid," + EXTRA_FIELDS)
    for row in extra_rows or ():
        extra[row[0]] = row[1:]
    remaps = {}
    remap_rows, _ = nvidia_smi("query-remapped-rows", REMAP_FIELDS)
    for row in remap_rows or ():
        remaps[row[0]] = row[1:]
    result, driver, by_uuid = [], None, {}
    for row in rows:
        if len(row) < 16 or integer(row[0]) is None:
            continue
        mask, ecc, ecc_mode = (extra.get(row[1]) or ["", "", ""])[:3]
        remap = (remaps.get(row[1]) or ["", "", "", ""])[:4]
        driver = row[15] or driver
        by_uuid[row[1]] = integer(row[0])
        result.append(gpu_record(integer(row[0]), row[1], row[2], row[3], {
            "utilization_percent": number(row[4]), "memory_utilization_percent": number(row[5]),
            "memory_used_bytes": integer(row[6], MIB), "memory_total_bytes": integer(row[7], MIB),
            "temperature_c": number(row[8]), "fan_speed_percent": number(row[9]), "power_draw_w": number(row[10]),
            "power_limit_w": number(row[11]), "sm_clock_mhz": number(row[12]), "memory_clock_mhz": number(row[13]),
            "pstate": row[14] if row[14].startswith("P") else None,
            "ecc_enabled": {"Enabled": True, "Disabled": False}.get(ecc_mode),
            "ecc_volatile_uncorrected_errors": integer(ecc), "throttle_reasons": throttle_words(hex_mask(mask)),
            "remapped_rows": _sum(integer(remap[0]), integer(remap[1])),
            "remapped_rows_pending": _flag(remap[2]), "remapped_rows_failed": _flag(remap[3]),
        }))
    return result, driver, None, by_uuid


def _sum(first, second):
    return None if first is None or second is None else first + second


def _flag(text):
    value = number(text)
    if value is None:
        return {"yes": True, "no": False}.get(text.strip().lower())
    return value > 0


def smi_gpu_uses(by_uuid):
    """(gpu index, pid, GPU memory bytes or None) of each compute process nvidia-smi lists."""
    rows, _ = nvidia_smi("query-compute-apps", APP_FIELDS)
    return [(by_uuid[row[0]], integer(row[1]), integer(row[2], MIB)) for row in rows or ()
            if len(row) >= 3 and integer(row[1]) is not None and row[0] in by_uuid]


def gpu_processes(gpu_uses, total_memory):
    uses = {}  # type: dict[int, list[dict]]
    for gpu_index, pid, used_bytes in gpu_uses:
        uses.setdefault(pid, []).append({"gpu_index": gpu_index, "kind": "compute",
                                         "gpu_memory_used_bytes": used_bytes, "sm_util_percent": None})
    return [process(pid, uses_of_pid, total_memory) for pid, uses_of_pid in sorted(uses.items())]


def process(pid, gpu_uses, total_memory):
    status = dict(line.split(":", 1) for line in read("/proc/%d/status" % pid).splitlines() if ":" in line)
    try:
        user = pwd.getpwuid(int(status.get("Uid", "").split()[0])).pw_name
    except (IndexError, KeyError, ValueError):
        user = status.get("Uid", "").split()[0] if status.get("Uid", "").split() else ""
    rss = integer(status.get("VmRSS", "").replace("kB", ""), 1024) or 0
    command = read("/proc/%d/cmdline" % pid).replace("\0", " ").strip()
    return {
        "pid": pid, "ppid": integer(status.get("PPid", "")) or 0, "user": user, "cpu_percent": None,
        "memory_percent": 100.0 * rss / total_memory if total_memory else None, "rss_bytes": rss,
        "state": status.get("State", "").strip(), "start_time_s": None, "running_time_s": None,
        "cpu_time_s": None, "command": command, "gpu_uses": gpu_uses, "is_kernel_thread": False,
        "container": "", "name": status.get("Name", "").strip(),
    }


# Which NVML library to load; the tests point it at a compiled fake (a host never sets it).
NVML_LIBRARY_VARIABLE = "PTH_TOP_PROBE_NVML_LIBRARY"
NVML_LIBRARY = "libnvidia-ml.so.1"
NVML_SUCCESS, NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_FUNCTION_NOT_FOUND, NVML_ERROR_GPU_IS_LOST = 0, 7, 13, 15
NVML_VALUE_NOT_AVAILABLE = (1 << 64) - 1
NVML_TEMPERATURE_GPU, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2
NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC = 1, 0
TEXT_BUFFER_BYTES = 96  # NVML_DEVICE_NAME_V2_BUFFER_SIZE, the largest of name, UUID and driver version
PROCESS_SLOTS = 64


def c_struct(name, fields):
    """A ctypes Structure of (field, ctypes type name[, array length]) fields; None without ctypes."""
    if ctypes is None:
        return None
    return type(name, (ctypes.Structure,), {"_fields_": [
        (field[0], getattr(ctypes, field[1]) * field[2] if len(field) > 2 else getattr(ctypes, field[1]))
        for field in fields]})


# nvml.h's layouts: nvmlPciInfo_t (as nvmlDeviceGetPciInfo_v3 fills it), nvmlMemory_t version 1, nvmlUtilization_t,
# nvmlProcessInfo_t (the _v3 and _v2 process calls) and nvmlProcessInfo_v1_t (the unversioned call of older drivers).
PciInfo = c_struct("PciInfo", [("bus_id_legacy", "c_char", 16), ("domain", "c_uint"), ("bus", "c_uint"),
                               ("device", "c_uint"), ("pci_device_id", "c_uint"), ("pci_subsystem_id", "c_uint"),
                               ("bus_id", "c_char", 32)])
MemoryInfo = c_struct("MemoryInfo", [("total", "c_ulonglong"), ("free", "c_ulonglong"), ("used", "c_ulonglong")])
Utilization = c_struct("Utilization", [("gpu", "c_uint"), ("memory", "c_uint")])
ProcessInfo = c_struct("ProcessInfo", [("pid", "c_uint"), ("used_gpu_memory", "c_ulonglong"),
                                       ("gpu_instance_id", "c_uint"), ("compute_instance_id", "c_uint")])
ProcessInfoV1 = c_struct("ProcessInfoV1", [("pid", "c_uint"), ("used_gpu_memory", "c_ulonglong")])
PROCESS_CALLS = (("nvmlDeviceGetComputeRunningProcesses_v3", ProcessInfo),
                 ("nvmlDeviceGetComputeRunningProcesses_v2", ProcessInfo),
                 ("nvmlDeviceGetComputeRunningProcesses", ProcessInfoV1))


class Nvml(object):
    """libnvidia-ml.so.1 over ctypes, loaded and initialised once and kept for the probe's life."""

    def __init__(self):
        self.library = None
        self.failure = None  # why the library loaded but NVML would not start, or None
        self.lost = False  # whether the device being read answered GPU_IS_LOST

    def start(self):
        """Whether NVML is ready; a library that does not load or initialise is tried again next time."""
        if self.library is None and ctypes is not None:
            try:
                self.library = ctypes.CDLL(os.environ.get(NVML_LIBRARY_VARIABLE) or NVML_LIBRARY)
            except OSError:
                return False
            result = self.call("nvmlInit_v2")
            self.failure = None if result == NVML_SUCCESS else "NVML: " + self.error_text(result)
            self.library = self.library if result == NVML_SUCCESS else None
        return self.library is not None

    def call(self, name, *arguments):
        """`name`'s return code; FUNCTION_NOT_FOUND where the driver's library lacks it."""
        function = getattr(self.library, name, None)
        result = NVML_ERROR_FUNCTION_NOT_FOUND if function is None else function(*arguments)
        self.lost = self.lost or result == NVML_ERROR_GPU_IS_LOST
        return result

    def error_text(self, result):
        describe = getattr(self.library, "nvmlErrorString", None)
        if describe is not None:
            describe.restype = ctypes.c_char_p
        return ((describe and describe(result)) or b"error %d" % result).decode("utf-8", "replace")

    def holder(self, name, kind, *arguments):
        """The `kind` that `name`(*arguments, &it) fills, or None where it answers an error."""
        filled = kind()
        return filled if self.call(name, *(arguments + (ctypes.byref(filled),))) == NVML_SUCCESS else None

    def value(self, name, kind, *arguments):
        filled = self.holder(name, kind, *arguments)
        return None if filled is None else filled.value

    def text(self, name, *arguments):
        buffer = ctypes.create_string_buffer(TEXT_BUFFER_BYTES)
        if self.call(name, *(arguments + (buffer, TEXT_BUFFER_BYTES))) != NVML_SUCCESS:
            return None
        return buffer.value.decode("utf-8", "replace")

    def gpus(self):
        """(gpu dicts, driver version, CUDA version, gpu uses), or None where NVML cannot count the GPUs."""
        count = ctypes.c_uint()
        result = self.call("nvmlDeviceGetCount_v2", ctypes.byref(count))
        if result != NVML_SUCCESS:
            self.failure = "NVML: " + self.error_text(result)
            return None
        records, uses = [], []
        for index in range(count.value):
            self.lost, device = False, ctypes.c_void_p()
            if self.call("nvmlDeviceGetHandleByIndex_v2", index, ctypes.byref(device)) == NVML_SUCCESS:
                records.append(self.gpu(index, device))
                uses += self.compute_uses(index, device)
            elif self.lost:
                records.append(gpu_record(index, "", "", "", {"lost": True}))
        cuda = self.value("nvmlSystemGetCudaDriverVersion_v2", ctypes.c_int)
        return (records, self.text("nvmlSystemGetDriverVersion"),
                "%d.%d" % (cuda // 1000, cuda % 1000 // 10) if cuda else None, uses)

    def gpu(self, index, device):
        use = self.holder("nvmlDeviceGetUtilizationRates", Utilization, device)
        memory_info = self.holder("nvmlDeviceGetMemoryInfo", MemoryInfo, device)
        pci = self.holder("nvmlDeviceGetPciInfo_v3", PciInfo, device)
        mask = self.value("nvmlDeviceGetCurrentClocksEventReasons", ctypes.c_ulonglong, device)
        if mask is None:  # the name older drivers have
            mask = self.value("nvmlDeviceGetCurrentClocksThrottleReasons", ctypes.c_ulonglong, device)
        ecc = [ctypes.c_uint() for _ in range(2)]  # current, pending
        ecc_known = self.call("nvmlDeviceGetEccMode", device, *map(ctypes.byref, ecc)) == NVML_SUCCESS
        rows = [ctypes.c_uint() for _ in range(4)]  # correctable, uncorrectable, pending, failed
        rows_known = self.call("nvmlDeviceGetRemappedRows", device, *map(ctypes.byref, rows)) == NVML_SUCCESS
        uint = ctypes.c_uint
        pstate = self.value("nvmlDeviceGetPerformanceState", uint, device)
        readings = {
            "utilization_percent": _float(use and use.gpu), "memory_utilization_percent": _float(use and use.memory),
            "memory_used_bytes": memory_info and memory_info.used,
            "memory_total_bytes": memory_info and memory_info.total,
            "temperature_c": _float(self.value("nvmlDeviceGetTemperature", uint, device, NVML_TEMPERATURE_GPU)),
            "fan_speed_percent": _float(self.value("nvmlDeviceGetFanSpeed", uint, device)),
            "power_draw_w": _watts(self.value("nvmlDeviceGetPowerUsage", uint, device)),
            "power_limit_w": _watts(self.value("nvmlDeviceGetEnforcedPowerLimit", uint, device)),
            "sm_clock_mhz": _float(self.value("nvmlDeviceGetClockInfo", uint, device, NVML_CLOCK_SM)),
            "memory_clock_mhz": _float(self.value("nvmlDeviceGetClockInfo", uint, device, NVML_CLOCK_MEM)),
            "pstate": "P%d" % pstate if pstate is not None and pstate <= 15 else None,
            "ecc_enabled": bool(ecc[0].value) if ecc_known else None,
            "ecc_volatile_uncorrected_errors": self.value("nvmlDeviceGetTotalEccErrors", ctypes.c_ulonglong, device,
                                                          NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC),
            "throttle_reasons": throttle_words(mask or 0),
            "remapped_rows": rows[0].value + rows[1].value if rows_known else None,
            "remapped_rows_pending": bool(rows[2].value) if rows_known else None,
            "remapped_rows_failed": bool(rows[3].value) if rows_known else None,
        }
        name, uuid = self.text("nvmlDeviceGetName", device), self.text("nvmlDeviceGetUUID", device)
        readings["lost"] = self.lost
        return gpu_record(index, uuid or "", name or "", pci.bus_id.decode("ascii", "replace") if pci else "", readings)

    def compute_uses(self, index, device):
        """(gpu index, pid, GPU memory bytes or None) of each compute process: the newest call the driver has."""
        for name, kind in PROCESS_CALLS:
            slots = PROCESS_SLOTS
            for _ in range(3):  # processes may start between being counted and being read
                count, infos = ctypes.c_uint(slots), (kind * slots)()
                result = self.call(name, device, ctypes.byref(count), infos)
                if result != NVML_ERROR_INSUFFICIENT_SIZE:
                    break
                slots = count.value + PROCESS_SLOTS
            if result == NVML_SUCCESS:
                return [(index, info.pid, None if info.used_gpu_memory == NVML_VALUE_NOT_AVAILABLE
                         else info.used_gpu_memory) for info in infos[:count.value]]
            if result != NVML_ERROR_FUNCTION_NOT_FOUND:
                return []
        return []


def _float(value):
    return None if value is None else float(value)


def _watts(milliwatts):
    return None if milliwatts is None else milliwatts / 1000.0


NVML = Nvml()


def gpus():
    """(gpu dicts, driver version, CUDA version, the reason there are none or None, gpu uses): NVML, else nvidia-smi."""
    if NVML.start():
        found = NVML.gpus()
        if found is not None:
            records, driver, cuda, uses = found
            return records, driver, cuda, None, uses
    records, driver, reason, by_uuid = smi_gpus()
    if reason is not None and NVML.failure:
        reason = NVML.failure + "; " + reason
    return records, driver, None, reason, smi_gpu_uses(by_uuid) if reason is None else []


def cpu_busy():
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    fields = (read("/proc/stat").splitlines() or ["cpu"])[0].split()[1:]
    values = [int(value) for value in fields if value.isdigit()]
    idle = sum(values[3:5])
    return sum(values) - idle, sum(values)


def memory():
    info = {}
    for line in read("/proc/meminfo").splitlines():
        name, _, rest = line.partition(":")
        info[name] = (integer(rest.replace("kB", ""), 1024) or 0)
    total, available = info.get("MemTotal", 0), info.get("MemAvailable", info.get("MemFree", 0))
    return {
        "total_bytes": total, "used_bytes": max(0, total - available),
        "buffers_cache_bytes": info.get("Buffers", 0) + info.get("Cached", 0) + info.get("SReclaimable", 0),
        "available_bytes": available, "swap_total_bytes": info.get("SwapTotal", 0),
        "swap_used_bytes": max(0, info.get("SwapTotal", 0) - info.get("SwapFree", 0)),
    }


def snapshot():
    busy_before, total_before = cpu_busy()
    started = time.time()
    gpu_list, driver, cuda, nvml_reason, gpu_uses = gpus()
    time.sleep(max(0.0, CPU_INTERVAL_S - (time.time() - started)))  # reading the GPUs counts to the interval
    busy_after, total_after = cpu_busy()
    memory_now = memory()
    load = (read("/proc/loadavg").split() + [None, None, None])[:3]
    model = [line.partition(":")[2].strip() for line in read("/proc/cpuinfo").splitlines()
             if line.startswith("model name")]
    elapsed = total_after - total_before
    return {
        "schema": SCHEMA, "schema_version": 1, "timestamp_s": time.time(),
        "host": {
            "hostname": socket.gethostname(), "uptime_s": number((read("/proc/uptime").split() or ["0"])[0]) or 0.0,
            "load_average_1m": number(load[0] or ""), "load_average_5m": number(load[1] or ""),
            "load_average_15m": number(load[2] or ""), "logical_cpu_count": os.cpu_count() or 0,
            "physical_cpu_count": None, "cpu_model_name": model[0] if model else "", "kernel": os.uname().release,
            "nvidia_driver_version": driver, "cuda_driver_version": cuda, "nvml_unavailable_reason": nvml_reason,
        },
        "cpu": {"cores": [], "total_percent": 100.0 * (busy_after - busy_before) / elapsed if elapsed > 0 else None,
                "frequency_mhz": None, "package_temperature_c": None},
        "memory": memory_now, "disks": [], "filesystems": [], "networks": [], "gpus": gpu_list,
        "processes": gpu_processes(gpu_uses, memory_now["total_bytes"]),
    }


def serve():
    while sys.stdin.readline():
        sys.stdout.write(json.dumps(snapshot()) + FRAME_END)
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
