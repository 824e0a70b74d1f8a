"""Used-GPU acceptance on pth-top's side: health counters before and after, Xid events during, one verdict per GPU.

The verdict rules are declared once (RULES) and printed with the page. Counters come from the sensors'
NVML readers, keyed by GPU uuid (the bench child reports each device's uuid); NA where NVML gives none.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from pth_top.benches.catalog import PEAK_BF16
from pth_top.benches.client.burn import POWER_CAP_MASK, BurnLog, DeviceBurn
from pth_top.benches.client.peaks import Peak, gpu_peak
from pth_top.sensors.gpu import decode_text
from pth_top.sensors.gpu_health import (
    NVML_MEMORY_ERROR_TYPE_CORRECTED,
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
    GpuHealthReader,
)
from pth_top.sensors.na import is_na
from pth_top.sensors.nvml import GpuLostError, NvmlSession
from pth_top.sensors.xid_events import XidEventWatcher, stop_and_join
from pth_top.text import printable

ACCEPT_BURN_S = 300.0  # --accept without --burn
PASS, INCOMPLETE, SUSPECT, FAIL = "pass", "incomplete", "suspect", "fail"
# Sustained TFLOP/s under this share of the fastest GPU of the same model is suspect: DCGM's targeted_stress
# wants 0.95 of its target (target_perf_min_ratio, nvvs/plugin_src/targeted_stress/TargetedStress_wrapper.cpp,
# https://github.com/NVIDIA/DCGM).
MIN_SHARE_OF_FASTEST = 0.95
# With no twin to compare with, a GPU is held to its datasheet BF16 peak times the lowest share a maximum-achievable
# matmul (mamf-finder) reached on NVIDIA datacenter GPUs: 80.3 % (H100 SXM, 794.5 of 989 TFLOP/s), ml-engineering's
# MAMF table (https://github.com/stas00/ml-engineering/tree/master/compute/accelerator).
MAMF_SHARE_OF_DATASHEET = 0.803
# The burn runs one GEMM shape, not the sweep's best, and a healthy card may sit below the MAMF best: only a card
# 20 % under that share is suspect (our margin, not a published figure), so no healthy card is failed on speed alone.
ALONE_SHARE_OF_MAMF = 0.80
RULES: tuple[tuple[str, str], ...] = (
    (FAIL, "a VRAM word read back wrong"),
    (FAIL, "new uncorrectable ECC errors, rows remapped for them, or a failed row remap"),
    (FAIL, "the burn or the VRAM test failed on the device"),
    (SUSPECT, "an Xid error during the test"),
    (SUSPECT, "new correctable ECC errors or retired pages, or a row remap pending"),
    (SUSPECT, "damage from before the test: rows remapped for uncorrectable errors, retired pages, or "
              "uncorrectable ECC errors in the card's life (NVML aggregate counter)"),
    (SUSPECT, "thermal, HW-slowdown or power-brake clock events during the burn (the power cap is expected)"),
    (SUSPECT, f"median TFLOP/s under {MIN_SHARE_OF_FASTEST:.0%} of the fastest GPU of the same model"),
    (SUSPECT, f"the only GPU of its model: median TFLOP/s under {ALONE_SHARE_OF_MAMF:.0%} of "
              f"{MAMF_SHARE_OF_DATASHEET:.1%} of its datasheet BF16 peak, in a burn its power cap did not hold"),
    (INCOMPLETE, "a check could not be done (no NVML counters, no Xid events, no peak to compare with)"),
)


@dataclass(frozen=True)
class HealthCounters:
    """One GPU's memory-health counters at one moment; None where NVML gives no reading."""

    ecc_uncorrected: int | None = None  # volatile: since the driver loaded
    ecc_corrected: int | None = None
    ecc_uncorrected_lifetime: int | None = None  # aggregate: over the card's life
    ecc_corrected_lifetime: int | None = None
    remapped_uncorrectable: int | None = None
    remapped_correctable: int | None = None
    remap_pending: bool | None = None
    remap_failed: bool | None = None
    retired_pages: int | None = None


def _known(value: Any) -> Any:
    return None if is_na(value) else value


def read_health(session: NvmlSession) -> dict[str, tuple[int, Any, HealthCounters]]:
    """uuid -> (NVML index, handle, counters) of every GPU NVML lists; {} without NVML."""
    if not session.start():
        return {}
    found = {}
    reader = GpuHealthReader(session)
    count = session.call("nvmlDeviceGetCount", default=0)
    for index in range(count if isinstance(count, int) else 0):
        try:
            handle = session.call("nvmlDeviceGetHandleByIndex", index, default=None)
            uuid = session.call("nvmlDeviceGetUUID", handle, default=None) if handle is not None else None
            if uuid is None:
                continue
            ecc_mode = session.call("nvmlDeviceGetEccMode", handle, default=None)
            ecc_enabled = bool(ecc_mode[0]) if isinstance(ecc_mode, (tuple, list)) and ecc_mode else None
            health = reader.read(index, handle, ecc_enabled, 0)
        except GpuLostError:
            continue
        lifetime = {error_type: _known(reader.lifetime_ecc_errors(handle, ecc_enabled, error_type))
                    for error_type in (NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_MEMORY_ERROR_TYPE_CORRECTED)}
        found[decode_text(uuid)] = (index, handle, HealthCounters(
            ecc_uncorrected=_known(health.ecc_uncorrected_errors), ecc_corrected=_known(health.ecc_corrected_errors),
            ecc_uncorrected_lifetime=lifetime[NVML_MEMORY_ERROR_TYPE_UNCORRECTED],
            ecc_corrected_lifetime=lifetime[NVML_MEMORY_ERROR_TYPE_CORRECTED],
            remapped_uncorrectable=_known(health.remapped_rows_uncorrectable),
            remapped_correctable=_known(health.remapped_rows_correctable),
            remap_pending=_known(health.row_remap_pending), remap_failed=_known(health.row_remap_failed),
            retired_pages=_known(health.retired_pages)))
    return found


@dataclass
class HealthWatch:
    """Counters before (`start`) and after (`stop`) the test, and the Xid events in between, by uuid."""

    session: NvmlSession = field(default_factory=NvmlSession)
    before: dict[str, HealthCounters] = field(default_factory=dict)
    after: dict[str, HealthCounters] = field(default_factory=dict)
    xid_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    xid_watched: set[str] = field(default_factory=set)  # uuids whose Xid events NVML reports to us
    _watcher: XidEventWatcher | None = None
    _thread: threading.Thread | None = None
    _uuid_of_index: dict[int, str] = field(default_factory=dict)

    def start(self) -> None:
        gpus = read_health(self.session)
        self.before = {uuid: counters for uuid, (_, _, counters) in gpus.items()}
        self._uuid_of_index = {index: uuid for uuid, (index, _, _) in gpus.items()}
        if not gpus:
            return
        watcher = XidEventWatcher(self.session)
        if watcher.register((index, uuid, handle) for uuid, (index, handle, _) in gpus.items()):
            self.xid_watched = {self._uuid_of_index[index] for index in watcher.watched_gpus}
            self._watcher = watcher
            self._thread = threading.Thread(target=watcher.run, name="accept-xid", daemon=True)
            self._thread.start()
        else:
            watcher.close()

    def stop(self) -> None:
        """Stop watching, read the counters again (a fresh session: no cached answer from before)."""
        if self._watcher is not None:
            joined = stop_and_join(self._watcher, self._thread)
            for (index, label), count in self._watcher.counts().items():
                uuid = self._uuid_of_index.get(index)
                if uuid is not None:
                    self.xid_counts.setdefault(uuid, {})[label] = count
            self._watcher = None
            if not joined:
                return  # its thread is still inside NVML: leave NVML up, read no "after"
        self.session.shutdown()
        self.after = {uuid: counters for uuid, (_, _, counters) in read_health(self.session).items()}
        self.session.shutdown()

    def to_json(self) -> dict[str, Any]:
        return {"before": {uuid: asdict(value) for uuid, value in self.before.items()},
                "after": {uuid: asdict(value) for uuid, value in self.after.items()}, "xid": self.xid_counts,
                "xid_watched": sorted(self.xid_watched)}


def _rise(before: HealthCounters | None, after: HealthCounters | None, name: str) -> int | None:
    old, new = getattr(before, name, None), getattr(after, name, None)
    return new - old if isinstance(old, int) and isinstance(new, int) else None


@dataclass(frozen=True)
class Verdict:
    device: str
    name: str
    uuid: str | None
    level: str
    reasons: tuple[str, ...]
    lines: tuple[str, ...]  # the page's evidence lines for this device

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge(device: str, *, name: str, uuid: str | None, burn: DeviceBurn | None, fastest_same_model: float | None,
          vram: dict | None, errors: list[str], health: HealthWatch | None, datasheet: Peak | None = None) -> Verdict:
    """Apply RULES to one device's evidence; NA evidence is named as not checked, never as passed.

    `fastest_same_model` is None for the only GPU of its model: then `datasheet` (its BF16 peak) is the yardstick.
    """
    fails: list[str] = []
    suspects: list[str] = []
    not_checked: list[str] = []
    lines: list[str] = []
    if burn is not None and burn.samples:
        lines.append(f"burn    {burn.report_line()}")
        hardware = burn.summary()["hardware_throttle_seconds"]
        if hardware:
            suspects.append(f"thermal/HW clock events in {hardware} of {len(burn.samples)} s")
        median = burn.median("tflops")
        if median is not None and fastest_same_model and median < MIN_SHARE_OF_FASTEST * fastest_same_model:
            suspects.append(f"{100 * (1 - median / fastest_same_model):.1f} % slower than the fastest {name}")
        elif median is not None and fastest_same_model is None:
            _judge_alone(burn, median, name, datasheet, lines, suspects, not_checked)
    else:
        lines.append("burn    no samples")
        fails.append("the burn gave no samples")
    if vram is not None:
        details = vram.get("details") or {}
        patterns = details.get("patterns") or {}
        bad = {pattern: result.get("mismatches") for pattern, result in patterns.items() if result.get("mismatches")}
        lines.append(f"vram    {(details.get('bytes') or 0) / 2**30:.2f} GiB, {len(patterns)} patterns: "
                     + (", ".join(f"{pattern} {count} bad words" for pattern, count in bad.items()) or "no mismatches"))
        if bad:
            fails.append(f"VRAM mismatches ({sum(bad.values())} words)")
    else:
        lines.append("vram    not run")
        fails.append("the VRAM test gave no result")
    fails.extend(f"error: {error}" for error in errors)
    _judge_health(uuid, health, lines, fails, suspects, not_checked)
    level = FAIL if fails else SUSPECT if suspects else INCOMPLETE if not_checked else PASS
    reasons = tuple(fails + suspects + ([f"not checked: {'; '.join(not_checked)}"] if not_checked else []))
    return Verdict(device, name, uuid, level, reasons or ("every check passed",),
                   tuple(printable(line, 300) for line in lines))


def _judge_alone(burn: DeviceBurn, median: float, name: str, datasheet: Peak | None, lines: list[str],
                 suspects: list[str], not_checked: list[str]) -> None:
    """The only GPU of its model: its median rate against the datasheet expectation, unless its power cap held it."""
    if datasheet is None:
        not_checked.append(f"performance (the only {name}, and no catalog peak to compare with)")
        return
    expected = ALONE_SHARE_OF_MAMF * MAMF_SHARE_OF_DATASHEET * datasheet.value
    capped_s = sum(burn.reason_seconds(POWER_CAP_MASK).values())
    lines.append(f"perf    {100 * median / datasheet.value:.0f} % of the datasheet BF16 {datasheet.value:g} TFLOP/s "
                 f"({datasheet.source}); power cap in {capped_s} of {len(burn.samples)} s")
    if median < expected and 2 * capped_s < len(burn.samples):
        suspects.append(f"{median:.1f} TFLOP/s is under {expected:.1f} ({ALONE_SHARE_OF_MAMF:.0%} of "
                        f"{MAMF_SHARE_OF_DATASHEET:.1%} of the datasheet) with no power cap holding it")


def _judge_health(uuid: str | None, health: HealthWatch | None, lines: list[str], fails: list[str],
                  suspects: list[str], not_checked: list[str]) -> None:
    before = health.before.get(uuid) if health and uuid else None
    after = health.after.get(uuid) if health and uuid else None
    if health is None or uuid is None or before is None or after is None:
        lines.append("health  not checked (no NVML counters for this device)")
        not_checked.append("ECC / row-remap / Xid counters (no NVML counters for this device)")
        return
    rises = {name: _rise(before, after, name) for name in
             ("ecc_uncorrected", "ecc_corrected", "remapped_uncorrectable", "remapped_correctable", "retired_pages")}
    xids = health.xid_counts.get(uuid) or {}
    xid_text = ", ".join(f"{code} x{count}" for code, count in xids.items()) or "none"

    def shown(name: str) -> str:
        return "NA" if rises[name] is None else f"+{rises[name]}"

    lines.append(f"health  ECC uncorrected {shown('ecc_uncorrected')}, corrected {shown('ecc_corrected')}; "
                 f"remapped rows {shown('remapped_uncorrectable')} uncorrectable, {shown('remapped_correctable')} "
                 f"correctable, pending {_yes_no(after.remap_pending)}, failed {_yes_no(after.remap_failed)}; "
                 f"retired pages {shown('retired_pages')}; Xid "
                 + (xid_text if uuid in health.xid_watched else "not watched (NVML gives no Xid events)"))
    lines.append(f"before  lifetime ECC uncorrected {_count(before.ecc_uncorrected_lifetime)}, corrected "
                 f"{_count(before.ecc_corrected_lifetime)}; remapped rows {_count(before.remapped_uncorrectable)} "
                 f"uncorrectable, {_count(before.remapped_correctable)} correctable; retired pages "
                 f"{_count(before.retired_pages)}")
    _judge_damage_before(before, suspects)
    if uuid not in health.xid_watched:
        not_checked.append("Xid events (NVML gives none)")
    if rises["ecc_uncorrected"] is None and rises["ecc_corrected"] is None:
        not_checked.append("ECC counters (ECC off or not reported)")
    if rises["remapped_uncorrectable"] is None and rises["retired_pages"] is None:
        not_checked.append("row remapping and page retirement (neither reported)")
    if rises["ecc_uncorrected"]:
        fails.append(f"{rises['ecc_uncorrected']} new uncorrectable ECC errors")
    if rises["remapped_uncorrectable"]:
        fails.append(f"{rises['remapped_uncorrectable']} rows newly remapped for uncorrectable errors")
    if after.remap_failed:
        fails.append("a row remap failed")
    if xids:
        suspects.append(f"Xid {', '.join(xids)} during the test")
    if rises["ecc_corrected"]:
        suspects.append(f"{rises['ecc_corrected']} new correctable ECC errors")
    if rises["retired_pages"]:
        suspects.append(f"{rises['retired_pages']} newly retired pages")
    if after.remap_pending:
        suspects.append("a row remap is pending (it applies at the next GPU reset)")


def _judge_damage_before(before: HealthCounters, suspects: list[str]) -> None:
    """What the card carried in: the absolute counters at the start, whatever the test then added."""
    if before.remapped_uncorrectable:
        suspects.append(f"{before.remapped_uncorrectable} rows remapped for uncorrectable errors before the test")
    if before.retired_pages:
        suspects.append(f"{before.retired_pages} pages retired before the test")
    if before.ecc_uncorrected_lifetime:
        suspects.append(f"{before.ecc_uncorrected_lifetime} uncorrectable ECC errors in the card's life "
                        "before the test")


def _count(value: int | None) -> str:
    return "NA" if value is None else str(value)


def _yes_no(value: bool | None) -> str:
    return "NA" if value is None else "yes" if value else "no"


def verdicts(record: Any, log: BurnLog, health: HealthWatch | None) -> list[Verdict]:
    """One verdict per device the burn or the VRAM test covered, from a finished run's rows and errors."""
    burn_devices: dict[str, dict] = {}
    vram_rows: dict[str, dict] = {}
    for stored in record.rows:
        details = stored.get("details") or {}
        if stored.get("kernel") == "burn":
            burn_devices.update(details.get("devices") or {})
        elif stored.get("kernel") == "vram_test":
            vram_rows[str(stored.get("variant"))] = stored
    devices = list(dict.fromkeys([*burn_devices, *log.devices, *vram_rows]))
    identity = {device: {**(vram_rows.get(device, {}).get("details") or {}), **burn_devices.get(device, {})}
                for device in devices}
    cpu_model = (record.metadata.get("cpu") or {}).get("model") or "CPU"
    names = {device: str(cpu_model if device == "cpu" else identity[device].get("name") or device)
             for device in devices}
    fastest: dict[str, float] = {}
    models = Counter(names.values())
    for device in devices:
        median = log.devices[device].median("tflops") if device in log.devices else None
        if median is not None:
            fastest[names[device]] = max(fastest.get(names[device], 0.0), median)
    errors: dict[str, list[str]] = {}
    for error in record.errors:
        device = error.get("device") if error.get("device") in devices else error.get("variant")
        if device in devices:
            errors.setdefault(device, []).append(f"{error.get('error_type')}: {error.get('message')}")
    return [judge(device, name=names[device], uuid=identity[device].get("uuid"), burn=log.devices.get(device),
                  fastest_same_model=fastest.get(names[device]) if models[names[device]] > 1 else None,
                  vram=vram_rows.get(device), errors=errors.get(device, []), health=health,
                  datasheet=None if device == "cpu" else gpu_peak(names[device], PEAK_BF16))
            for device in devices]


def verdict_page(found: list[Verdict], burn_s: float) -> list[str]:
    """The one-page acceptance report: one block per device, then the rules it was judged by."""
    lines = [f"Acceptance: {burn_s:.0f} s burn, VRAM patterns, ECC / row-remap / Xid counters"]
    for verdict in found:
        uuid = f"  {verdict.uuid}" if verdict.uuid else ""
        lines.append(printable(f"{verdict.device}  {verdict.name}{uuid}  {verdict.level.upper()}", 300))
        lines.extend(f"  {line}" for line in verdict.lines)
        lines.append(printable(f"  verdict {verdict.level}: {'; '.join(verdict.reasons)}", 600))
    lines.append("Rules, in the order applied:")
    lines.extend(f"  {level:<7} if {what}" for level, what in RULES)
    return lines
