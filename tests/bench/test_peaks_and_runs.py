"""Peaks and % of peak; saved runs are versioned, never overwritten, and compare by kernel/device/variant."""

from __future__ import annotations

import datetime as dt
import json
import platform
import sys

import pytest

from pth_top.benches.child.cpuinfo import parse_cpuinfo, read_cpu_info
from pth_top.benches.child.pcie_link import read_pcie_link
from pth_top.benches.client.cpu_model import cpu_flop_per_cycle, fp32_flop_per_cycle
from pth_top.benches.client.peaks import _peaks_of, cpu_peak, percent_of_peak
from pth_top.benches.client.runs import RunFileError, RunRecord, compare, list_runs, load_run, save_run
from pth_top.benches.protocol import Event
from pth_top.configs.parts import Part


def test_cpu_peak_uses_cores_clock_and_isa():
    cpu = {"max_ghz": 2.0, "physical_cores": 4, "isa_flags": ["avx2", "fma"]}
    assert cpu_peak(cpu, "fp32", None).value == pytest.approx(4 * 2.0 * 32 / 1000)
    assert cpu_peak(cpu, "fp32", 1).value == pytest.approx(2.0 * 32 / 1000)
    avx512 = dict(cpu, isa_flags=["avx2", "fma", "avx512f", "amx_bf16"])
    assert cpu_peak(avx512, "fp32", None).value == pytest.approx(4 * 2.0 * 64 / 1000)
    assert cpu_peak(avx512, "bf16_tensor", None).value == pytest.approx(4 * 2.0 * 1024 / 1000)
    assert cpu_peak(cpu, "memory_bandwidth", None) is None


def test_above_100_percent_is_kept_with_a_note():
    metadata = {"cuda_devices": {"cuda:0": {"name": "NVIDIA GeForce RTX 3060 Ti"}}}
    percent, note = percent_of_peak({"device": "cuda:0", "peak_kind": "tf32", "value": 18.2}, metadata)
    assert percent == pytest.approx(100 * 18.2 / 16.2)
    assert "above 100 %" in note


def _record(value: float) -> RunRecord:
    record = RunRecord(python="/usr/bin/python3")
    record.apply(Event("started", {"suite": "quick", "devices": ["cpu"], "metadata": {
        "cpu": {"max_ghz": 2.0, "physical_cores": 2, "isa_flags": ["avx2", "fma"]}}, "kernels": []}))
    record.apply(Event("result", {"kernel": "gemm", "device": "cpu", "variant": "fp32 1 thread", "value": value,
                                  "unit": "TFLOP/s", "peak_kind": "fp32", "details": {"threads": 1}, "status": "ok"}))
    record.apply(Event("finished", {"ok": True}))
    return record


def test_result_rows_get_percent_of_peak_on_the_parent_side():
    (row,) = _record(0.032).rows
    assert row["percent_of_peak"] == pytest.approx(50.0)


def test_runs_are_saved_under_unique_names_and_load_back(tmp_path):
    first = save_run(_record(0.03), tmp_path)
    second = save_run(_record(0.03), tmp_path)
    assert first != second and len(list_runs(tmp_path)) == 2
    data = json.loads(first.read_text())
    assert data["format"] == "pth-top-bench-run" and data["version"] == 1
    assert load_run(first).rows == _record(0.03).rows


def test_a_foreign_file_is_not_a_run(tmp_path):
    path = tmp_path / "bench-x.json"
    path.write_text('{"format": "something"}')
    with pytest.raises(RunFileError):
        load_run(path)


def test_compare_gives_percent_change_per_row():
    deltas = compare(_record(0.033).rows, _record(0.030).rows)
    assert deltas[("gemm", "cpu", "fp32 1 thread")] == pytest.approx(10.0)
    assert compare(_record(0.03).rows, []) == {("gemm", "cpu", "fp32 1 thread"): None}


ZEN4 = {"vendor": "AuthenticAMD", "cpu_family": 0x19, "cpu_model": 0x11, "model": "AMD EPYC 9654",
        "isa_flags": ["avx2", "fma", "avx512f", "avx512_bf16"], "physical_cores": 2}


@pytest.mark.parametrize("cpu, flop", [
    (ZEN4, 32),  # AVX-512 double-pumped on 256-bit pipes
    (dict(ZEN4, cpu_family=0x1A, model="AMD Ryzen 9 9950X"), 64),
    (dict(ZEN4, cpu_family=0x1A, model="AMD Ryzen AI 9 HX 370"), 32),
    (dict(ZEN4, cpu_family=0x17, cpu_model=0x01, isa_flags=["avx2", "fma"]), 16),  # Zen 1
    (dict(ZEN4, cpu_family=0x17, cpu_model=0x31, isa_flags=["avx2", "fma"]), 32),  # Zen 2
    ({"vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 0x55, "model": "Intel(R) Xeon(R) Silver 4114 CPU",
      "isa_flags": ["avx2", "fma", "avx512f"]}, 32),
    ({"vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 0x55, "model": "Intel(R) Xeon(R) Gold 5218 CPU",
      "isa_flags": ["avx2", "fma", "avx512f"]}, 32),
    ({"vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 0x55, "model": "Intel(R) Xeon(R) Gold 5122 CPU",
      "isa_flags": ["avx2", "fma", "avx512f"]}, 64),
    ({"vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 0x55, "model": "Intel(R) Xeon(R) Platinum 8280",
      "isa_flags": ["avx2", "fma", "avx512f"]}, 64),
    ({"vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 0x8C, "model": "11th Gen Intel(R) Core(TM) i7-1185G7",
      "isa_flags": ["avx2", "fma", "avx512f"]}, 32),
])
def test_fp32_flop_per_cycle_follows_the_core_not_just_the_flags(cpu, flop):
    assert fp32_flop_per_cycle(cpu)[0] == flop


def test_bf16_and_fp16_rates_come_from_amx_or_the_avx512_dot_products():
    assert cpu_flop_per_cycle(ZEN4, "bf16_tensor")[0] == 64  # VDPBF16PS on Zen 4's 32 FP32 FLOP/cycle
    spr = {"vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 0x8F,
           "isa_flags": ["avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16"]}
    assert cpu_flop_per_cycle(spr, "bf16_tensor")[0] == 1024
    assert cpu_flop_per_cycle(spr, "fp16_tensor")[0] == 128


def test_a_vm_without_cpufreq_uses_the_measured_clock_so_one_thread_gemm_stays_under_100_percent():
    # The case: nominal 2.1 GHz from /proc/cpuinfo, the core really at 3.0 GHz, 144 GFLOP/s on 1 thread.
    vm = {"vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 0x8F, "physical_cores": 2,
          "isa_flags": ["avx2", "fma", "avx512f"], "max_ghz": 2.1, "max_ghz_source": "/proc/cpuinfo MHz"}
    assert 100 * 0.144 / cpu_peak(vm, "fp32", 1).value > 100  # what the nominal clock gives
    measured = dict(vm, measured_ghz_1_thread=3.0, measured_ghz_all_threads=2.8, measured_threads=2)
    one = cpu_peak(measured, "fp32", 1)
    assert 100 * 0.144 / one.value == pytest.approx(75.0) and "measured, 1 thread" in one.source
    both = cpu_peak(measured, "fp32", None)
    assert both.value == pytest.approx(2 * 2.8 * 64 / 1000) and "all threads busy" in both.source


def test_without_a_measured_clock_the_peak_says_which_clock_it_used():
    cpu = {"physical_cores": 4, "isa_flags": ["avx2", "fma"], "max_ghz": 3.5,
           "max_ghz_source": "cpufreq max (single-core turbo)"}
    peak = cpu_peak(cpu, "fp32", None)
    assert "cpufreq max (single-core turbo); the all-core clock is lower" in peak.source
    assert cpu_peak({"physical_cores": 4, "isa_flags": ["avx2"]}, "fp32", None) is None


def test_parse_cpuinfo_reads_vendor_family_and_model():
    text = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
            "model name\t: AMD EPYC 9654\nphysical id\t: 0\ncore id\t\t: 0\ncpu MHz\t\t: 2400.000\n"
            "flags\t\t: fpu avx2 fma avx512f\n\n"
            "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\n\n")
    identity = parse_cpuinfo(text)
    assert (identity.vendor, identity.family, identity.model_number) == ("AuthenticAMD", 25, 17)
    assert identity.physical_cores == 2 and identity.flags == ("avx2", "fma", "avx512f")
    assert identity.mhz_ghz == pytest.approx(2.4)


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64", reason="the add chain is x86-64")
def test_the_child_measures_the_clock_with_one_and_all_threads():
    info = read_cpu_info(measure_clock_threads=2).as_dict()
    assert 0.2 < info["measured_ghz_1_thread"] < 8 and info["measured_threads"] == 2
    assert 0.2 < info["measured_ghz_all_threads"] <= info["measured_ghz_1_thread"]


def test_the_pcie_peak_is_the_negotiated_link_not_the_catalog_generation():
    # A Gen5 H100 PCIe in a Gen4 x8 slot, idle (the link dropped to Gen1) when the child read it.
    link = {"generation": 1, "width": 8, "max_generation": 4, "max_width": 8, "source": "NVML"}
    metadata = {"cuda_devices": {"cuda:0": {"name": "NVIDIA H100 PCIe", "pcie_link": link}}}
    percent, note = percent_of_peak({"device": "cuda:0", "peak_kind": "pcie", "value": 12.6}, metadata)
    assert percent == pytest.approx(100 * 12.6 / (8 * 31.5 / 16))
    assert "negotiated PCIe Gen4 x8 (read from NVML); link now Gen1 x8" in note
    percent, note = percent_of_peak({"device": "cuda:0", "peak_kind": "pcie", "value": 12.6},
                                    {"cuda_devices": {"cuda:0": {"name": "NVIDIA H100 PCIe"}}})
    assert percent == pytest.approx(100 * 12.6 / 63.0) and "catalog PCIe Gen5 x16" in note


@pytest.mark.parametrize("idle, under_load, state", [
    ({"generation": 1, "width": 16}, None, "link now Gen1 x16 (GPUs drop the link speed when idle)"),
    ({"generation": 1, "width": 16}, {"generation": 4, "width": 16}, None),
    ({"generation": 1, "width": 8}, None, "link DEGRADED: Gen1 x8 now of Gen4 x16"),
    ({"generation": 1, "width": 16}, {"generation": 3, "width": 16}, "link DEGRADED: Gen3 x16 under load of Gen4 x16"),
])
def test_a_degraded_pcie_link_is_told_from_an_idle_one(idle, under_load, state):
    link = {**idle, "max_generation": 4, "max_width": 16, "source": "NVML"}
    metadata = {"cuda_devices": {"cuda:0": {"name": "NVIDIA H100 PCIe", "pcie_link": link}}}
    row = {"device": "cuda:0", "peak_kind": "pcie", "value": 20.0, "details": {"pcie_link_under_load": under_load}}
    percent, note = percent_of_peak(row, metadata)
    assert percent == pytest.approx(100 * 20.0 / (16 * 31.5 / 16))  # the slot's peak: a degraded link reads low
    if state is None:
        assert "DEGRADED" not in note and "link now" not in note
    else:
        assert state in note and ("DEGRADED" in state) != ("idle" in note)


def test_sysfs_link_takes_the_lower_of_the_gpu_and_its_slot(tmp_path):
    port = tmp_path / "devices" / "pci0000:00" / "0000:00:01.0"
    gpu = port / "0000:17:00.0"
    gpu.mkdir(parents=True)
    for folder, speed, width in ((port, "16.0 GT/s PCIe", "8"), (gpu, "32.0 GT/s PCIe", "16")):
        (folder / "max_link_speed").write_text(speed + "\n")
        (folder / "max_link_width").write_text(width + "\n")
    (gpu / "current_link_speed").write_text("2.5 GT/s PCIe\n")
    (gpu / "current_link_width").write_text("8\n")
    listing = tmp_path / "bus" / "pci" / "devices"
    listing.mkdir(parents=True)
    (listing / "0000:17:00.0").symlink_to(gpu)
    link = read_pcie_link("00000000:17:00.0", sysfs_devices=listing, use_nvml=False)
    assert link == {"generation": 1, "width": 8, "max_generation": 4, "max_width": 8, "source": "sysfs"}
    assert read_pcie_link("00000000:18:00.0", sysfs_devices=listing, use_nvml=False) is None


def test_a_part_several_torch_devices_share_gets_per_device_peaks():
    spec = {"fp32_tflops": 47.9, "tf32_dense_tflops": 0, "fp16_dense_tflops": 383, "bf16_dense_tflops": 383,
            "bandwidth_gb_per_s": 3277, "pcie_generation": 4, "devices_per_package": 2}
    part = Part("gpu", "mi250x", "AMD Instinct MI250X", 0, dt.date(2025, 1, 1), "", spec, origin="x.toml:1")
    peaks = _peaks_of(part)
    assert peaks.bf16_tflops == pytest.approx(191.5) and peaks.memory_gb_per_s == pytest.approx(1638.5)


@pytest.mark.gpu
def test_on_a_gpu_the_child_reads_the_negotiated_link_and_the_peak_uses_it():
    torch = pytest.importorskip("torch")
    from pth_top.benches.child.pcie_link import pci_bus_id

    link = read_pcie_link(pci_bus_id(torch.cuda.get_device_properties(0)))
    assert link is not None and link["source"] in ("NVML", "sysfs")
    assert 1 <= link["generation"] <= link["max_generation"] <= 6 and 1 <= link["width"] <= 32
    peak = percent_of_peak({"device": "cuda:0", "peak_kind": "pcie", "value": 1.0}, {"cuda_devices": {
        "cuda:0": {"name": torch.cuda.get_device_name(0), "pcie_link": link}}})[1]
    assert "negotiated PCIe" in peak or "no peak" in peak


def test_where_no_code_may_run_from_memory_the_clock_falls_back_and_says_so(monkeypatch):
    from pth_top.benches.child import cpuinfo

    monkeypatch.setattr(cpuinfo, "_add_chain", lambda: None)  # SELinux execmem, not x86-64
    info = read_cpu_info(measure_clock_threads=2).as_dict()
    assert info["measured_ghz_1_thread"] is None and info["measured_threads"] is None
    info.update(max_ghz=3.0, max_ghz_source=cpuinfo.CLOCK_FROM_PROC_CPUINFO)
    assert "(/proc/cpuinfo MHz (nominal in VMs))" in cpu_peak(info, "fp32", 1).source
