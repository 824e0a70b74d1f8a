"""The probe `pth-top fleet --ssh` sends to each host (the first line on its python3's stdin): stdlib, Python 3.6+.

For each line read on stdin it reads /proc and `nvidia-smi` and prints one `pth-top snapshot --json` document
(schema pth-top.snapshot 1) on one line, then FRAME_END; fields it cannot fill are null or empty. It stays
running between refreshes (no new process or session each time) and ends with its stdin. It imports nothing
of pth-top: the host has none.
"""

import json
import os
import pwd
import socket
import subprocess
import sys
import time

SCHEMA = "pth-top.snapshot"
GPU_FIELDS = ("index,uuid,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,"
              "temperature.gpu,fan.speed,power.draw,power.limit,clocks.sm,clocks.mem,pstate,driver_version")
# Fields an older or newer driver may not know: asked for in a second query, so the first always works.
EXTRA_FIELDS = "clocks_throttle_reasons.active,ecc.errors.uncorrected.volatile.total,ecc.mode.current"
APP_FIELDS = "gpu_uuid,pid,used_memory"
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


def throttle_words(mask_text):
    try:
        mask = int(mask_text, 16)
    except ValueError:
        return []
    return [word for bit, word in THROTTLE_REASON_WORDS if mask & bit]


def gpus():
    """(gpu dicts, driver version, the reason there are none or None, uuid -> index)."""
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
        result.append({
            "index": integer(row[0]), "uuid": row[1], "name": row[2], "bus_id": row[3], "lost": False,
            "utilization_percent": number(row[4]), "memory_utilization_percent": number(row[5]),
            "memory_used_bytes": integer(row[6], MIB), "memory_total_bytes": integer(row[7], MIB),
            "temperature_c": number(row[8]), "fan_speed_percent": number(row[9]), "power_draw_w": number(row[10]),
            "power_limit_w": number(row[11]), "sm_clock_mhz": number(row[12]), "memory_clock_mhz": number(row[13]),
            "pstate": row[14] if row[14].startswith("P") else None,
            "pcie_generation_current": None, "pcie_generation_max": None, "pcie_width_current": None,
            "pcie_width_max": None, "pcie_rx_bytes_per_s": None, "pcie_tx_bytes_per_s": None,
            "ecc_enabled": {"Enabled": True, "Disabled": False}.get(ecc_mode),
            "ecc_volatile_uncorrected_errors": integer(ecc), "throttle_reasons": throttle_words(mask),
            "nvlink_active_links": None, "mig_enabled": None, "mig_instances": [],
            "temperature_missing_reason": None if number(row[8]) is not None else "no reading",
            "xid_errors": None, "remapped_rows": _sum(integer(remap[0]), integer(remap[1])),
            "remapped_rows_pending": _flag(remap[2]), "remapped_rows_failed": _flag(remap[3]),
            "retired_pages": None,
        })
    return result, driver, None, by_uuid


def _sum(first, second):
    return None if first is None or second is None else first + second


def _flag(text):
    value = number(text)
    if value is None:
        return {"yes": True, "no": False}.get(text.strip().lower())
    return value > 0


def gpu_processes(by_uuid, total_memory):
    rows, _ = nvidia_smi("query-compute-apps", APP_FIELDS)
    uses = {}  # type: dict[int, list[dict]]
    for row in rows or ():
        pid = integer(row[1]) if len(row) >= 3 else None
        if pid is not None and row[0] in by_uuid:
            uses.setdefault(pid, []).append({"gpu_index": by_uuid[row[0]], "kind": "compute",
                                             "gpu_memory_used_bytes": integer(row[2], MIB), "sm_util_percent": None})
    return [process(pid, gpu_uses, total_memory) for pid, gpu_uses in sorted(uses.items())]


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
    gpu_list, driver, nvml_reason, by_uuid = gpus()
    time.sleep(max(0.0, CPU_INTERVAL_S - (time.time() - started)))  # nvidia-smi's time counts to the interval
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
            "nvidia_driver_version": driver, "cuda_driver_version": None, "nvml_unavailable_reason": nvml_reason,
        },
        "cpu": {"cores": [], "total_percent": 100.0 * (busy_after - busy_before) / elapsed if elapsed > 0 else None,
                "frequency_mhz": None, "package_temperature_c": None},
        "memory": memory_now, "disks": [], "filesystems": [], "networks": [], "gpus": gpu_list,
        "processes": gpu_processes(by_uuid, memory_now["total_bytes"]),
    }


def serve():
    while sys.stdin.readline():
        sys.stdout.write(json.dumps(snapshot()) + FRAME_END)
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
