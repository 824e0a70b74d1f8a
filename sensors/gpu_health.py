"""GPU counters and health readings beyond the dashboard's GpuSample: energy, throttle time, memory repair.

Read for the Prometheus exporter through the same NvmlSession as GpuReader. Every reading the GPU or
driver does not support stays NA, so the exporter can leave it out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pth_top.sensors.gpu import SLOW_FIELD_TTL_S, THERMAL_FIELD_TTL_S, THROTTLE_REASON_FUNCTIONS, decode_text
from pth_top.sensors.model import MaybeFloat, MaybeInt, MaybeStr
from pth_top.sensors.na import NA, NotApplicable, is_na
from pth_top.sensors.nvml import NvmlSession

# pynvml constants, spelled out so a fake module or an older binding need not define them.
NVML_CLOCK_SM = 1
NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_AGGREGATE_ECC = 1  # over the GPU's life, kept in its InfoROM across driver loads and resets
NVML_PAGE_RETIREMENT_CAUSE_SINGLE_BIT = 0
NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT = 1
NVML_SUCCESS = 0
NVML_FI_DEV_MEMORY_TEMP = 82
NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138
NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139
# NVML perf policy -> the `reason` the exporter shows (nvmlDeviceGetViolationStatus, time in ns).
VIOLATION_POLICIES: tuple[tuple[int, str], ...] = (
    (0, "power"), (1, "thermal"), (2, "sync_boost"), (3, "board_limit"), (4, "low_utilization"), (5, "reliability"),
)
# NVLink error counter field (total over all links) -> the `error` the exporter shows.
NVLINK_ERROR_FIELDS: tuple[tuple[int, str], ...] = (
    (38, "crc_flit"), (45, "crc_data"), (52, "replay"), (59, "recovery"),
)
# nvmlValueType_t -> the member of the value union that holds it.
VALUE_UNION_MEMBERS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}


@dataclass(frozen=True, slots=True)
class MemoryRepair:
    """Row remapping (Ampere and newer) and page retirement (older GPUs) of one GPU; NA where unsupported."""

    remapped_rows_correctable: MaybeInt = NA
    remapped_rows_uncorrectable: MaybeInt = NA
    row_remap_pending: bool | NotApplicable = NA
    row_remap_failed: bool | NotApplicable = NA
    retired_pages_single_bit: MaybeInt = NA
    retired_pages_double_bit: MaybeInt = NA

    @property
    def remapped_rows(self) -> MaybeInt:
        """Rows remapped so far, for correctable and uncorrectable errors together; NA without row remapping."""
        counts = (self.remapped_rows_correctable, self.remapped_rows_uncorrectable)
        return NA if any(is_na(count) for count in counts) else sum(counts)

    @property
    def retired_pages(self) -> MaybeInt:
        """Single- plus double-bit retired pages, NA when the GPU retires no pages."""
        known = [count for count in (self.retired_pages_single_bit, self.retired_pages_double_bit) if not is_na(count)]
        return sum(known) if known else NA


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuHealth(MemoryRepair):
    """Counters and repair state of one GPU; NA where unsupported. Counters count since driver load."""

    index: int
    vbios_version: MaybeStr = NA
    energy_joules: MaybeFloat = NA
    clocks_event_mask: MaybeInt = NA
    violation_seconds: tuple[tuple[str, float], ...] = ()
    sm_clock_max_mhz: MaybeFloat = NA
    memory_temperature_c: MaybeFloat = NA
    pcie_replays: MaybeInt = NA
    ecc_corrected_errors: MaybeInt = NA
    ecc_uncorrected_errors: MaybeInt = NA
    nvlink_transmit_bytes: MaybeInt = NA
    nvlink_receive_bytes: MaybeInt = NA
    nvlink_errors: tuple[tuple[str, int], ...] = ()


class GpuHealthReader:
    """Reads GpuHealth for one GPU handle; raises GpuLostError (from the session) when the GPU is gone."""

    def __init__(self, session: NvmlSession) -> None:
        self.session = session

    def read(self, index: int, handle: Any, ecc_enabled: Any, nvlink_links: Any) -> GpuHealth:
        call = self.session.call
        slow = self.session.cached_call
        repair = self.read_memory_repair(handle)
        fields = self._field_values(handle, with_nvlink=isinstance(nvlink_links, int) and nvlink_links > 0)
        nvlink_tx = fields.get(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, NA)
        nvlink_rx = fields.get(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, NA)
        vbios = slow(SLOW_FIELD_TTL_S, "nvmlDeviceGetVbiosVersion", handle)
        return GpuHealth(
            index=index,
            vbios_version=NA if vbios is NA else decode_text(vbios),
            energy_joules=_scaled(call("nvmlDeviceGetTotalEnergyConsumption", handle), 1e-3),
            clocks_event_mask=_integer(self.session.call_first(THROTTLE_REASON_FUNCTIONS, handle)),
            violation_seconds=self._violation_seconds(handle),
            sm_clock_max_mhz=_scaled(slow(SLOW_FIELD_TTL_S, "nvmlDeviceGetMaxClockInfo", handle, NVML_CLOCK_SM), 1.0),
            memory_temperature_c=_scaled(fields.get(NVML_FI_DEV_MEMORY_TEMP, NA), 1.0),
            pcie_replays=_integer(call("nvmlDeviceGetPcieReplayCounter", handle)),
            ecc_corrected_errors=self._ecc_errors(handle, ecc_enabled, NVML_MEMORY_ERROR_TYPE_CORRECTED),
            ecc_uncorrected_errors=self._ecc_errors(handle, ecc_enabled, NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
            **asdict(repair),
            nvlink_transmit_bytes=nvlink_tx * 1024 if isinstance(nvlink_tx, int) else NA,
            nvlink_receive_bytes=nvlink_rx * 1024 if isinstance(nvlink_rx, int) else NA,
            nvlink_errors=tuple(
                (error, fields[field_id]) for field_id, error in NVLINK_ERROR_FIELDS
                if isinstance(fields.get(field_id), int)
            ),
        )

    def read_memory_repair(self, handle: Any) -> MemoryRepair:
        """Remapped rows and retired pages, each NVML answer reused for SLOW_FIELD_TTL_S (cheap per sample)."""
        remapped = self.session.cached_call(SLOW_FIELD_TTL_S, "nvmlDeviceGetRemappedRows", handle)
        remap_known = isinstance(remapped, (tuple, list)) and len(remapped) >= 4
        return MemoryRepair(
            remapped_rows_correctable=_integer(remapped[0]) if remap_known else NA,
            remapped_rows_uncorrectable=_integer(remapped[1]) if remap_known else NA,
            row_remap_pending=bool(remapped[2]) if remap_known else NA,
            row_remap_failed=bool(remapped[3]) if remap_known else NA,
            retired_pages_single_bit=self._retired_pages(handle, NVML_PAGE_RETIREMENT_CAUSE_SINGLE_BIT),
            retired_pages_double_bit=self._retired_pages(handle, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT),
        )

    def _violation_seconds(self, handle: Any) -> tuple[tuple[str, float], ...]:
        found = []
        for policy, reason in VIOLATION_POLICIES:
            status = self.session.cached_call(THERMAL_FIELD_TTL_S, "nvmlDeviceGetViolationStatus", handle, policy)
            nanoseconds = getattr(status, "violationTime", None) if status is not NA else None
            if isinstance(nanoseconds, int):
                found.append((reason, nanoseconds / 1e9))
        return tuple(found)

    def _ecc_errors(self, handle: Any, ecc_enabled: Any, error_type: int) -> MaybeInt:
        if ecc_enabled is not True:
            return NA
        return _integer(self.session.cached_call(
            THERMAL_FIELD_TTL_S, "nvmlDeviceGetTotalEccErrors", handle, error_type, NVML_VOLATILE_ECC
        ))

    def lifetime_ecc_errors(self, handle: Any, ecc_enabled: Any, error_type: int) -> MaybeInt:
        """ECC errors of `error_type` over the GPU's life (NVML's aggregate counter); NA with ECC off."""
        if ecc_enabled is not True:
            return NA
        return _integer(self.session.call("nvmlDeviceGetTotalEccErrors", handle, error_type, NVML_AGGREGATE_ECC))

    def _retired_pages(self, handle: Any, cause: int) -> MaybeInt:
        pages = self.session.cached_call(SLOW_FIELD_TTL_S, "nvmlDeviceGetRetiredPages", handle, cause)
        return len(pages) if isinstance(pages, (list, tuple)) else NA

    def _field_values(self, handle: Any, with_nvlink: bool) -> dict[int, Any]:
        """Field id -> value for the fields this GPU answers (one NVML call)."""
        field_ids = [NVML_FI_DEV_MEMORY_TEMP]
        if with_nvlink:
            field_ids += [NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX]
            field_ids += [field_id for field_id, _ in NVLINK_ERROR_FIELDS]
        entries = self.session.call("nvmlDeviceGetFieldValues", handle, field_ids, default=None)
        values: dict[int, Any] = {}
        for entry in entries or ():
            if getattr(entry, "nvmlReturn", None) != NVML_SUCCESS:
                continue
            member = VALUE_UNION_MEMBERS.get(getattr(entry, "valueType", -1))
            value = getattr(getattr(entry, "value", None), member, None) if member else None
            field_id = getattr(entry, "fieldId", None)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(field_id, int):
                values[field_id] = value
        return values


def _integer(value: Any) -> MaybeInt:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else NA


def _scaled(value: Any, factor: float) -> MaybeFloat:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value is NA:
        return NA
    return float(value) * factor
