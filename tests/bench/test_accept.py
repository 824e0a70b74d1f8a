"""Used-GPU acceptance: verdict rules on known evidence, counters from a scripted NVML, a CPU run with a flipped bit."""

from __future__ import annotations

import json

import psutil
import pytest

from pth_top.benches.client.accept import (
    ALONE_SHARE_OF_MAMF,
    FAIL,
    INCOMPLETE,
    MAMF_SHARE_OF_DATASHEET,
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
    assert any("Xid not watched (NVML gives no Xid events)" in line for line in found[0].lines)
    assert found[0].level == INCOMPLETE and found[0].reasons == ("not checked: Xid events (NVML gives none)",)


def test_without_counters_health_is_not_checked_and_a_device_error_fails():
    errors = [{"kernel": "vram_test", "device": "host", "variant": "cuda:0", "error_type": "OutOfMemoryError",
               "message": "CUDA out of memory"}]
    found = verdicts(record(GPUS, errors=errors), burn_log({"cuda:0": 700.0, "cuda:1": 700.0}), None)
    assert levels(found) == {"cuda:0": FAIL, "cuda:1": INCOMPLETE}, "a check not done is never passed"
    assert "error: OutOfMemoryError: CUDA out of memory" in found[0].reasons
    assert "health  not checked (no NVML counters for this device)" in found[1].lines
    assert found[1].reasons == ("not checked: ECC / row-remap / Xid counters (no NVML counters for this device)",)
    assert "every check passed" not in "\n".join(verdict_page(found, 300))


# thamada/gls gls/GH200_smi.py (nvidia-smi -a, Mon Nov 18 2024): a GH200 480GB that arrived with one DRAM row
# remapped for an uncorrectable error and 1 aggregate DRAM uncorrectable ECC error; volatile counters all 0.
GH200_UUID = "GPU-35d58415-1094-5ad1-64d1-b797587d33a7"
GH200 = {"nvmlDeviceGetName": "NVIDIA GH200 480GB", "nvmlDeviceGetUUID": GH200_UUID, "nvmlDeviceGetEccMode": [1, 1],
         "nvmlDeviceGetRemappedRows": (0, 1, 0, 0)}  # (correctable, uncorrectable, pending, failed)
GH200_ECC = {(1, 0): 0, (0, 0): 0, (1, 1): 1, (0, 1): 0}  # (error type, 0 volatile / 1 aggregate) -> count


def test_a_card_that_arrives_damaged_is_suspect_though_nothing_rose_during_the_test():
    from tests.fakes.fake_pynvml import FakeDevice, FakePynvml
    from tests.fakes.gpu_fixtures import by_argument

    fake = FakePynvml(devices=[FakeDevice(values={**GH200, "nvmlDeviceGetTotalEccErrors": by_argument(GH200_ECC)})])
    watch = HealthWatch(NvmlSession(fake))
    watch.start()
    watch.stop()
    assert watch.before[GH200_UUID] == watch.after[GH200_UUID], "nothing changed during the test"
    assert watch.before[GH200_UUID].ecc_uncorrected_lifetime == 1
    rows = record(["cuda:0"]).rows
    rows[0]["details"]["devices"]["cuda:0"] = {"name": "NVIDIA GH200 480GB", "uuid": GH200_UUID}
    rows[1]["details"].update(name="NVIDIA GH200 480GB", uuid=GH200_UUID)
    [verdict] = verdicts(RunRecord(rows=rows), burn_log({"cuda:0": 760.0}), watch)
    assert verdict.level == SUSPECT
    assert "1 rows remapped for uncorrectable errors before the test" in verdict.reasons
    assert "1 uncorrectable ECC errors in the card's life before the test" in verdict.reasons
    assert any(line.startswith("before  lifetime ECC uncorrected 1, corrected 0; remapped rows 1 uncorrectable")
               for line in verdict.lines)


def test_lifetime_ecc_counts_are_read_from_nvml_aggregate_counters():
    from tests.fakes.gpu_fixtures import by_argument
    from tests.fakes.real_gpus import make_real_machine

    fake = make_real_machine("a100_sxm4_x4")
    # thamada/nvidia-smi gls/A100SXMx4_smi.py: GPU 1's "Aggregate DRAM Correctable : 353", uncorrectable 0.
    fake.devices[1].values["nvmlDeviceGetTotalEccErrors"] = by_argument({(1, 0): 0, (0, 0): 353, (1, 1): 0,
                                                                         (0, 1): 353})
    watch = HealthWatch(NvmlSession(fake))
    watch.start()
    watch.stop()
    counters = watch.before["GPU-72d87681-01db-370e-567d-41afcf20fad0"]
    assert (counters.ecc_corrected_lifetime, counters.ecc_uncorrected_lifetime) == (353, 0)
    assert counters.remapped_correctable == 1 and counters.remap_pending is True
    untouched = watch.before["GPU-31515c3d-1414-7c2c-004a-f86a898946ac"]
    assert untouched.ecc_corrected_lifetime is None, "no aggregate reading scripted: NA, not 0"


def test_the_only_gpu_of_its_model_is_held_to_its_datasheet_unless_the_power_cap_holds_it():
    expected = ALONE_SHARE_OF_MAMF * MAMF_SHARE_OF_DATASHEET * 989  # the catalog's H100 SXM BF16 dense peak
    one = ["cuda:0"]
    capped = verdicts(record(one), burn_log({"cuda:0": expected - 50}), health(one))  # power cap every second
    assert levels(capped) == {"cuda:0": PASS}
    shown = f"perf    {100 * (expected - 50) / 989:.0f} % of the datasheet BF16 989 TFLOP/s"  # 59 %
    assert any(line.startswith(shown) for line in capped[0].lines)
    slow = verdicts(record(one), burn_log({"cuda:0": expected - 50}, masks={"cuda:0": 0}), health(one))
    assert levels(slow) == {"cuda:0": SUSPECT} and "with no power cap holding it" in slow[0].reasons[0]
    fast = verdicts(record(one), burn_log({"cuda:0": expected + 1}, masks={"cuda:0": 0}), health(one))
    assert levels(fast) == {"cuda:0": PASS}
    rows = record(one).rows
    rows[0]["details"]["devices"]["cuda:0"]["name"] = "Some GPU no catalog knows"
    unknown = verdicts(RunRecord(rows=rows), burn_log({"cuda:0": 700.0}), health(one))
    assert levels(unknown) == {"cuda:0": INCOMPLETE}
    assert unknown[0].reasons == ("not checked: performance (the only Some GPU no catalog knows, and no catalog "
                                  "peak to compare with)",)


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
    assert verdict["device"] == "cpu" and verdict["level"] == INCOMPLETE, "no NVML counters: not a pass"
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
