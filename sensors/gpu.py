"""Per-GPU readings from NVML, one GpuSample per device; a GPU that stops answering is marked lost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pth_top.sensors.gpm import GpmSampler
from pth_top.sensors.model import GpuSample, MaybeStr, MigInstance
from pth_top.sensors.na import NA, is_na
from pth_top.sensors.nvml import GpuLostError, NvmlSession
from pth_top.sensors.throttle import decode_throttle_reasons
from pth_top.units import KIB

if TYPE_CHECKING:
    from pth_top.sensors.gpu_health import GpuHealthReader
    from pth_top.sensors.xid_events import XidEventWatcher

# Seconds a slow-changing field is reused before NVML is asked again.
SLOW_FIELD_TTL_S = 5.0
THERMAL_FIELD_TTL_S = 2.0
# nvmlDeviceGetPcieThroughput blocks ~20 ms per direction while it measures.
PCIE_THROUGHPUT_TTL_S = 2.0

# pynvml constants, spelled out so a fake module or an older binding need not define them.
NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_PCIE_UTIL_TX_BYTES = 0
NVML_PCIE_UTIL_RX_BYTES = 1
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_PSTATE_UNKNOWN = 32
NVML_NVLINK_MAX_LINKS = 18
NVML_NVLINK_ACTIVE = 1

THROTTLE_REASON_FUNCTIONS = (
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
)
CUDA_DRIVER_VERSION_FUNCTIONS = ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion")
POWER_LIMIT_FUNCTIONS = ("nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit")
# Why NVML gave no temperature, by the error it raised.
TEMPERATURE_MISSING_REASONS = {
    "NVMLError_NotSupported": "no sensor",
    "NVMLError_NoPermission": "no permission",
    "NVMLError_FunctionNotFound": "not in this driver",
}


def decode_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


@dataclass
class GpuSlot:
    """What we know of one GPU between samples: its handle (None while lost) and its identity."""

    index: int
    handle: Any
    name: str = "unknown GPU"
    bus_id: str = ""
    uuid: str = ""

    def read_identity(self, session: NvmlSession) -> None:
        name = session.call("nvmlDeviceGetName", self.handle)
        uuid = session.call("nvmlDeviceGetUUID", self.handle)
        pci = session.call("nvmlDeviceGetPciInfo", self.handle)
        if not is_na(name):
            self.name = decode_text(name)
        if not is_na(uuid):
            self.uuid = decode_text(uuid)
        if not is_na(pci) and getattr(pci, "busId", None):
            self.bus_id = decode_text(pci.busId)


def list_gpu_slots(session: NvmlSession) -> list[GpuSlot]:
    """Every GPU NVML counts, with its identity; one that does not answer keeps handle None."""
    count = session.call("nvmlDeviceGetCount", default=0)
    slots = []
    for index in range(count if isinstance(count, int) else 0):
        slot = GpuSlot(index=index, handle=None)
        try:
            slot.handle = session.call("nvmlDeviceGetHandleByIndex", index, default=None)
            if slot.handle is not None:
                slot.read_identity(session)
        except GpuLostError:
            slot.handle = None
        slots.append(slot)
    return slots


def format_cuda_version(version: Any) -> MaybeStr:
    """NVML's integer 12040 -> "12.4"."""
    if not isinstance(version, int) or version <= 0:
        return NA
    return f"{version // 1000}.{version % 1000 // 10}"


class GpuReader:
    """Reads every NVIDIA GPU through one NvmlSession; `sample()` never raises for NVML errors."""

    def __init__(
        self,
        session: NvmlSession,
        health: GpuHealthReader | None = None,
        xid_watcher: XidEventWatcher | None = None,
    ) -> None:
        self.session = session
        # Memory repair state (remapped rows, retired pages) comes from here when given.
        self.health = health
        # Xid counts come from here once a watcher runs (the sampler starts one).
        self.xid_watcher = xid_watcher
        self._xid_counts: dict[int, int] = {}
        self.slots: list[GpuSlot] | None = None
        # SM and pipe activity (GPM) through the same session; keeps one sample per GPU between reads.
        self.gpm = GpmSampler(session)
        self._driver_version: MaybeStr = NA
        self._cuda_driver_version: MaybeStr = NA

    def driver_versions(self) -> tuple[MaybeStr, MaybeStr]:
        """(NVIDIA driver version, CUDA driver version), NA where unknown."""
        if not self.session.available:
            return NA, NA
        try:
            if is_na(self._driver_version):
                self._driver_version = self._text(self.session.call("nvmlSystemGetDriverVersion"))
            if is_na(self._cuda_driver_version):
                self._cuda_driver_version = format_cuda_version(
                    self.session.call_first(CUDA_DRIVER_VERSION_FUNCTIONS)
                )
        except GpuLostError:
            pass
        return self._driver_version, self._cuda_driver_version

    def sample(self) -> tuple[GpuSample, ...]:
        if not self.session.available:
            return ()
        if self.slots is None:
            try:
                self.slots = list_gpu_slots(self.session)
            except GpuLostError:
                return ()
        self._xid_counts = self._xid_counts_by_gpu()
        samples = []
        for slot in self.slots:
            if slot.handle is None:
                self._reacquire(slot)
            if slot.handle is None:
                samples.append(self._lost_sample(slot))
                continue
            try:
                samples.append(self._read(slot))
            except GpuLostError:
                slot.handle = None
                self.gpm.forget(slot.index)
                samples.append(self._lost_sample(slot))
        return tuple(samples)

    def close(self) -> None:
        """Free what NVML holds for this reader (GPM sample buffers); call before the session shuts down."""
        self.gpm.close()

    def _xid_counts_by_gpu(self) -> dict[int, int]:
        """GPU index -> Xid errors seen, for the GPUs the watcher watches."""
        watcher = self.xid_watcher
        if watcher is None:
            return {}
        counts = dict.fromkeys(watcher.watched_gpus, 0)
        for (index, _code), count in watcher.counts().items():
            counts[index] = counts.get(index, 0) + count
        return counts

    def _health_fields(self, handle: Any, index: int, temperature: Any) -> dict[str, Any]:
        """The GpuSample fields on health: why no temperature, Xid errors, memory repair."""
        fields: dict[str, Any] = {"xid_errors": self._xid_counts.get(index, NA)}
        if is_na(temperature):
            error_name = self.session.last_error_names.get("nvmlDeviceGetTemperature", "")
            if "nvmlDeviceGetTemperature" in self.session.missing_functions:
                error_name = "NVMLError_FunctionNotFound"
            fields["temperature_missing_reason"] = TEMPERATURE_MISSING_REASONS.get(error_name, "no reading")
        if self.health is not None:
            repair = self.health.read_memory_repair(handle)
            fields.update(
                remapped_rows=repair.remapped_rows,
                remapped_rows_pending=repair.row_remap_pending,
                remapped_rows_failed=repair.row_remap_failed,
                retired_pages=repair.retired_pages,
            )
        return fields

    def _reacquire(self, slot: GpuSlot) -> None:
        """After a GPU was lost (or reset), find it again by PCI bus id, else by index."""
        try:
            if slot.bus_id:
                slot.handle = self.session.call(
                    "nvmlDeviceGetHandleByPciBusId", slot.bus_id.encode("ascii"), default=None
                )
            else:
                slot.handle = self.session.call("nvmlDeviceGetHandleByIndex", slot.index, default=None)
            if slot.handle is not None:
                slot.read_identity(self.session)
        except GpuLostError:
            slot.handle = None

    @staticmethod
    def _lost_sample(slot: GpuSlot) -> GpuSample:
        return GpuSample(index=slot.index, name=slot.name, bus_id=slot.bus_id, uuid=slot.uuid, lost=True)

    def _text(self, value: Any) -> MaybeStr:
        return NA if is_na(value) else decode_text(value)

    def _read(self, slot: GpuSlot) -> GpuSample:
        handle = slot.handle
        call = self.session.call
        slow = self.session.cached_call
        utilization = call("nvmlDeviceGetUtilizationRates", handle)
        memory = call("nvmlDeviceGetMemoryInfo", handle)
        power_draw_mw = call("nvmlDeviceGetPowerUsage", handle)
        power_limit_mw = self.session.call_first(POWER_LIMIT_FUNCTIONS, handle, ttl_s=SLOW_FIELD_TTL_S)
        pstate = call("nvmlDeviceGetPerformanceState", handle)
        ecc_mode = slow(SLOW_FIELD_TTL_S, "nvmlDeviceGetEccMode", handle)
        ecc_enabled = bool(ecc_mode[0]) if _is_pair(ecc_mode) else NA
        mig_mode = slow(SLOW_FIELD_TTL_S, "nvmlDeviceGetMigMode", handle)
        mig_enabled = bool(mig_mode[0]) if _is_pair(mig_mode) else NA
        throttle_mask = self.session.call_first(THROTTLE_REASON_FUNCTIONS, handle)
        temperature = _number(slow(THERMAL_FIELD_TTL_S, "nvmlDeviceGetTemperature", handle, NVML_TEMPERATURE_GPU))
        activity = self.gpm.read(slot.index, handle)
        return GpuSample(
            index=slot.index,
            name=slot.name,
            bus_id=slot.bus_id,
            uuid=slot.uuid,
            utilization_percent=_float_attr(utilization, "gpu"),
            memory_utilization_percent=_float_attr(utilization, "memory"),
            memory_used_bytes=_int_attr(memory, "used"),
            memory_total_bytes=_int_attr(memory, "total"),
            temperature_c=temperature,
            fan_speed_percent=_number(slow(THERMAL_FIELD_TTL_S, "nvmlDeviceGetFanSpeed", handle)),
            power_draw_w=_scaled(power_draw_mw, 1e-3),
            power_limit_w=_scaled(power_limit_mw, 1e-3),
            sm_clock_mhz=_number(call("nvmlDeviceGetClockInfo", handle, NVML_CLOCK_SM)),
            memory_clock_mhz=_number(call("nvmlDeviceGetClockInfo", handle, NVML_CLOCK_MEM)),
            pstate=f"P{pstate}" if isinstance(pstate, int) and pstate != NVML_PSTATE_UNKNOWN else NA,
            pcie_generation_current=_integer(call("nvmlDeviceGetCurrPcieLinkGeneration", handle)),
            pcie_generation_max=_integer(slow(SLOW_FIELD_TTL_S, "nvmlDeviceGetMaxPcieLinkGeneration", handle)),
            pcie_width_current=_integer(call("nvmlDeviceGetCurrPcieLinkWidth", handle)),
            pcie_width_max=_integer(slow(SLOW_FIELD_TTL_S, "nvmlDeviceGetMaxPcieLinkWidth", handle)),
            pcie_rx_bytes_per_s=_scaled(
                slow(PCIE_THROUGHPUT_TTL_S, "nvmlDeviceGetPcieThroughput", handle, NVML_PCIE_UTIL_RX_BYTES), KIB
            ),
            pcie_tx_bytes_per_s=_scaled(
                slow(PCIE_THROUGHPUT_TTL_S, "nvmlDeviceGetPcieThroughput", handle, NVML_PCIE_UTIL_TX_BYTES), KIB
            ),
            ecc_enabled=ecc_enabled,
            ecc_volatile_uncorrected_errors=(
                _integer(slow(
                    THERMAL_FIELD_TTL_S, "nvmlDeviceGetTotalEccErrors", handle,
                    NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
                )) if ecc_enabled else NA
            ),
            throttle_reasons=decode_throttle_reasons(throttle_mask) if isinstance(throttle_mask, int) else (),
            nvlink_active_links=self._nvlink_active_links(handle),
            mig_enabled=mig_enabled,
            mig_instances=self._mig_instances(handle) if mig_enabled is True else (),
            **self._health_fields(handle, slot.index, temperature),
            gpm_supported=self.gpm.supported.get(slot.index, NA),
            **activity,
        )

    def _nvlink_active_links(self, handle: Any) -> Any:
        """Active NVLink links (counted at most every SLOW_FIELD_TTL_S: 18 calls a GPU); NA when the GPU has none."""
        return self.session.remember(SLOW_FIELD_TTL_S, ("nvlink_active_links", handle),
                                     lambda: self._count_nvlink_links(handle))

    def _count_nvlink_links(self, handle: Any) -> Any:
        active = 0
        for link in range(NVML_NVLINK_MAX_LINKS):
            state = self.session.call("nvmlDeviceGetNvLinkState", handle, link)
            if is_na(state):
                return NA if link == 0 else active
            active += state == NVML_NVLINK_ACTIVE
        return active

    def _mig_instances(self, handle: Any) -> tuple[MigInstance, ...]:
        call = self.session.call
        slot_count = self.session.cached_call(SLOW_FIELD_TTL_S, "nvmlDeviceGetMaxMigDeviceCount", handle)
        instances = []
        for slot in range(slot_count if isinstance(slot_count, int) else 0):
            mig_handle = self.session.cached_call(
                SLOW_FIELD_TTL_S, "nvmlDeviceGetMigDeviceHandleByIndex", handle, slot, default=None
            )
            if mig_handle is None:
                continue
            memory = call("nvmlDeviceGetMemoryInfo", mig_handle)
            name = self.session.cached_call(SLOW_FIELD_TTL_S, "nvmlDeviceGetName", mig_handle)
            instances.append(MigInstance(
                gpu_instance_id=_integer(
                    self.session.cached_call(SLOW_FIELD_TTL_S, "nvmlDeviceGetGpuInstanceId", mig_handle)
                ),
                name=decode_text(name) if not is_na(name) else f"MIG slot {slot}",
                memory_used_bytes=_int_attr(memory, "used"),
                memory_total_bytes=_int_attr(memory, "total"),
            ))
        return tuple(instances)


def _is_pair(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) >= 1 and isinstance(value[0], int)


def _number(value: Any) -> Any:
    return float(value) if isinstance(value, (int, float)) and not is_na(value) else NA


def _integer(value: Any) -> Any:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else NA


def _scaled(value: Any, factor: float) -> Any:
    return float(value) * factor if isinstance(value, (int, float)) and not is_na(value) else NA


def _float_attr(struct: Any, name: str) -> Any:
    value = getattr(struct, name, None) if not is_na(struct) else None
    return float(value) if isinstance(value, (int, float)) else NA


def _int_attr(struct: Any, name: str) -> Any:
    value = getattr(struct, name, None) if not is_na(struct) else None
    return int(value) if isinstance(value, int) else NA
