"""The all-reduce bench's link peak (NVLink, else the negotiated PCIe link): stdlib, run without torch."""

from __future__ import annotations

import pytest

from pth_top.benches.child.link_peak import link_peak


class FakeNvml:
    """pynvml with GPUs known by PCI bus id: NVLink counts per GPU, nothing else."""

    NVML_FEATURE_ENABLED = 1
    NVML_NVLINK_MAX_LINKS = 18

    def __init__(self, nvlinks: dict[str, int]) -> None:
        self.nvlinks = nvlinks

    def nvmlInit(self) -> None:
        pass

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, index):
        raise AssertionError("GPUs are found by PCI bus id, not by NVML index")

    def nvmlDeviceGetHandleByPciBusId(self, bus_id):
        return bus_id

    def nvmlDeviceGetNvLinkState(self, handle, link):
        return int(link < self.nvlinks[handle])

    def nvmlDeviceGetNvLinkVersion(self, handle, link):
        return 4


def test_the_link_peak_is_the_slowest_gpus_negotiated_link_found_by_bus_id():
    links = {"0:17": {"generation": 1, "width": 16, "max_generation": 4, "max_width": 16},  # idle: gen dropped
             "0:18": {"generation": 4, "width": 8, "max_generation": 4, "max_width": 16}}  # a x8 riser
    peak, source = link_peak(["0:17", "0:18"], FakeNvml({"0:17": 0, "0:18": 0}), links.get)
    assert peak == pytest.approx(1.969 * 8)
    assert source.startswith("cuda:1 PCIe gen 4 x8, below its x16")
    peak, source = link_peak(["0:17", "0:18"], FakeNvml({"0:17": 18, "0:18": 18}), links.get)
    assert peak == pytest.approx(18 * 25.0) and "NVLink 4: 18 links" in source
