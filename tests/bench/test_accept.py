"""Used-GPU acceptance: verdict rules on known evidence, counters from a scripted NVML, a CPU run with a flipped bit."""

from __future__ import annotations

import json

import psutil
import pytest

from pth_top.benches.client.accept import (
    FAIL,
    MIN_SHARE_OF_FASTEST,
    PASS,
    SUSPECT,
    HealthCounters,
    HealthWatch,
    verdict_page,
    verdicts,
)
from pth_top.benches.client.burn import BurnLog
from pth_top.benches.client.runs import RunRecord
from pth_top.sensors.nvml import NvmlSession
from tests.waiting import wait_for

H100 = "NVIDIA H100 80GB HBM3"
CLEAN = HealthCounters(ecc_uncorrected=0, ecc_corrected=4, remapped_uncorrectable=0, remapped_correctable=1,
                       remap_pending=False, remap_failed=False, retired_pages=None)


def burn_log(tflops: dict[str, float], masks: dict[str, int] | None = None, seconds: int = 5) -> BurnLog:
    log = BurnLog()
    for second in range(1, seconds + 1):
        for device, rate in tflops.items():
            log.add({"device": device, "t_s": second, "tflops": rate, "power_w": 700.0,
                     "clock_event_mask": (masks or {}).get(device, 0x4)})
    return log


def record(devices: list[str], mismatches: dict[str, int] | None = None, errors: list[dict] | None = None):
    rows = [{"kernel": "burn", "device": "host", "variant": f"{len(devices)} devices at once", "status": "ok",
             "value": 1.0, "details": {"devices": {device: {"name": H100, "uuid": f"GPU-{device}"}
                                                   for device in devices}}}]
    for device in devices:
        bad = (mismatches or {}).get(device, 0)
        rows.append({"kernel": "vram_test", "device": "host", "variant": device, "status": "ok", "value": bad,
                     "details": {"name": H100, "uuid": f"GPU-{device}", "bytes": 2**30,
                                 "patterns": {"walking_ones": {"mismatches": bad}, "random": {"mismatches": 0},
                                              "address": {"mismatches": 0}}}})
    return RunRecord(rows=rows, errors=errors or [])


def health(devices: list[str], after: dict[str, HealthCounters] | None = None,
           xid: dict[str, dict[str, int]] | None = None) -> HealthWatch:
    watch = HealthWatch(NvmlSession())
    watch.before = {f"GPU-{device}": CLEAN for device in devices}
    watch.after = {f"GPU-{device}": (after or {}).get(device, CLEAN) for device in devices}
    watch.xid_counts = {f"GPU-{device}": codes for device, codes in (xid or {}).items()}
    watch.xid_watched = set(watch.before)
    return watch


def levels(found) -> dict[str, str]:
    return {verdict.device: verdict.level for verdict in found}


GPUS = ["cuda:0", "cuda:1"]


def test_two_healthy_gpus_pass_and_the_page_prints_the_rules():
    found = verdicts(record(GPUS), burn_log({"cuda:0": 700.0, "cuda:1": 690.0}), health(GPUS))
    assert levels(found) == {"cuda:0": PASS, "cuda:1": PASS}
    page = "\n".join(verdict_page(found, 300))
    assert "cuda:0  NVIDIA H100 80GB HBM3  GPU-cuda:0  PASS" in page
    assert "ECC uncorrected +0, corrected +0" in page and "retired pages NA" in page
    assert "  fail    if a VRAM word read back wrong" in page and "verdict pass: every check passed" in page


def test_a_vram_mismatch_fails_that_gpu_only():
    found = verdicts(record(GPUS, mismatches={"cuda:1": 3}), burn_log({"cuda:0": 700.0, "cuda:1": 700.0}),
                     health(GPUS))
    assert levels(found) == {"cuda:0": PASS, "cuda:1": FAIL}
    assert found[1].reasons == ("VRAM mismatches (3 words)",)


@pytest.mark.parametrize(("after", "reason"), [
    (HealthCounters(**{**CLEAN.__dict__, "ecc_uncorrected": 2}), "2 new uncorrectable ECC errors"),
    (HealthCounters(**{**CLEAN.__dict__, "remapped_uncorrectable": 1}), "1 rows newly remapped for uncorrectable"),
    (HealthCounters(**{**CLEAN.__dict__, "remap_failed": True}), "a row remap failed"),
])
def test_new_uncorrectable_memory_errors_fail(after, reason):
    found = verdicts(record(GPUS), burn_log({"cuda:0": 700.0, "cuda:1": 700.0}), health(GPUS, {"cuda:0": after}))
    assert levels(found) == {"cuda:0": FAIL, "cuda:1": PASS}
    assert any(text.startswith(reason) for text in found[0].reasons)


@pytest.mark.parametrize(("after", "xid", "reason"), [
    (CLEAN, {"cuda:1": {"79": 1}}, "Xid 79 during the test"),
    (HealthCounters(**{**CLEAN.__dict__, "ecc_corrected": 9}), None, "5 new correctable ECC errors"),
    (HealthCounters(**{**CLEAN.__dict__, "remap_pending": True}), None, "a row remap is pending"),
])
def test_soft_memory_signs_and_xids_are_suspect(after, xid, reason):
    found = verdicts(record(GPUS), burn_log({"cuda:0": 700.0, "cuda:1": 700.0}),
                     health(GPUS, {"cuda:1": after}, xid))
    assert levels(found) == {"cuda:0": PASS, "cuda:1": SUSPECT}
    assert any(text.startswith(reason) for text in found[1].reasons)


def test_thermal_clock_events_are_suspect_but_the_power_cap_is_not():
    log = burn_log({"cuda:0": 700.0, "cuda:1": 700.0}, masks={"cuda:0": 0x4, "cuda:1": 0x4 | 0x40})
    found = verdicts(record(GPUS), log, health(GPUS))
    assert levels(found) == {"cuda:0": PASS, "cuda:1": SUSPECT}
    assert found[1].reasons == ("thermal/HW clock events in 5 of 5 s",)


def test_a_gpu_slower_than_the_share_of_its_fastest_twin_is_suspect():
    just_inside = 700.0 * MIN_SHARE_OF_FASTEST + 1
    found = verdicts(record(GPUS), burn_log({"cuda:0": 700.0, "cuda:1": just_inside}), health(GPUS))
    assert levels(found) == {"cuda:0": PASS, "cuda:1": PASS}
    found = verdicts(record(GPUS), burn_log({"cuda:0": 700.0, "cuda:1": 630.0}), health(GPUS))
    assert levels(found) == {"cuda:0": PASS, "cuda:1": SUSPECT}
    assert found[1].reasons == (f"10.0 % slower than the fastest {H100}",)


def test_xids_not_watched_are_said_so_not_shown_as_none():
    watch = health(GPUS)
    watch.xid_watched = set()
    found = verdicts(record(GPUS), burn_log({"cuda:0": 700.0, "cuda:1": 700.0}), watch)
    assert "Xid not watched (NVML gives no Xid events)" in found[0].lines[-1]


def test_without_counters_health_is_not_checked_and_a_device_error_fails():
    errors = [{"kernel": "vram_test", "device": "host", "variant": "cuda:0", "error_type": "OutOfMemoryError",
               "message": "CUDA out of memory"}]
    found = verdicts(record(GPUS, errors=errors), burn_log({"cuda:0": 700.0, "cuda:1": 700.0}), None)
    assert levels(found) == {"cuda:0": FAIL, "cuda:1": PASS}
    assert "error: OutOfMemoryError: CUDA out of memory" in found[0].reasons
    assert "health  not checked (no NVML counters for this device)" in found[1].lines


def test_counters_and_xids_come_from_nvml_before_and_after():
    from tests.fakes.gpu_fixtures import by_argument
    from tests.fleet.fixtures import XidQueue, make_exporter_gpus

    xids = XidQueue()
    fake = make_exporter_gpus(2, xid_queue=xids)
    watch = HealthWatch(NvmlSession(fake))
    watch.start()
    uuids = list(watch.before)
    assert len(uuids) == 2 and watch.before[uuids[1]].ecc_uncorrected == 0
    fake.devices[1].values["nvmlDeviceGetTotalEccErrors"] = by_argument({(1, 0): 3, (0, 0): 10})
    xids.push(0, 79)
    wait_for(lambda: not xids.events, "the Xid watcher to take the event")
    watch.stop()
    assert watch.after[uuids[1]].ecc_uncorrected == 3
    assert watch.xid_counts == {uuids[0]: {"79": 1}} and watch.xid_watched == set(uuids)
    rows = record(GPUS).rows
    for stored in rows:  # the child reports each device's NVML uuid
        if stored["kernel"] == "burn":
            stored["details"]["devices"] = {device: {"name": H100, "uuid": uuid}
                                            for device, uuid in zip(GPUS, uuids, strict=True)}
        else:
            stored["details"]["uuid"] = uuids[GPUS.index(stored["variant"])]
    found = verdicts(RunRecord(rows=rows), burn_log({"cuda:0": 700.0, "cuda:1": 700.0}), watch)
    assert levels(found) == {"cuda:0": SUSPECT, "cuda:1": FAIL}
    assert not fake.initialised, "NVML is shut down after the last reading"


@pytest.mark.usefixtures("torch")
def test_cpu_acceptance_passes_then_fails_on_a_flipped_bit(cli, capsys, monkeypatch):
    argv = ["bench", "--accept", "--burn", "2s", "--device", "cpu", "--cpu-memory-budget-mib", "64"]
    assert cli([*argv, "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    [burn_row] = [row for row in run["rows"] if row["kernel"] == "burn"]
    [verdict] = burn_row["details"]["acceptance"]["verdicts"]
    assert verdict["device"] == "cpu" and verdict["level"] == PASS
    assert burn_row["details"]["burn_log"]["devices"]["cpu"]["curve"], "the logged curve is saved with the run"

    monkeypatch.setenv("PTH_TOP_VRAM_TEST_FLIP_WORD", "4097")  # the child flips word 4097 between write and read
    assert cli(argv) == 1
    out = capsys.readouterr().out
    assert "cpu  " in out and "  FAIL" in out
    assert "walking_ones 1 bad words, random 1 bad words, address 1 bad words" in out
    assert "verdict fail: VRAM mismatches (3 words)" in out
    from pth_top.benches.client.runs import list_runs

    assert cli(["bench", "--open", str(list_runs()[0])]) == 0  # the newest run: the failed acceptance
    reopened = capsys.readouterr().out
    assert "Burn-in: " in reopened and "verdict fail: VRAM mismatches (3 words)" in reopened
    wait_for(lambda: not [child for child in psutil.Process().children(recursive=True)
                          if child.is_running() and child.status() != psutil.STATUS_ZOMBIE], "no bench child left")
