"""Checking a build against this machine, using hand-built snapshots."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest

from pth_top.configs.answers import Answers
from pth_top.configs.parts import load_catalog
from pth_top.configs.recommend import recommend
from pth_top.doctor.build_check import check_build
from pth_top.sensors.model import FilesystemUsage, GpuSample, MemorySample
from pth_top.units import GIB
from tests.fakes.snapshots import make_snapshot


@pytest.fixture(scope="module")
def build():
    answers = Answers().with_value("workload", "preset", "gpt2-medium")
    return recommend(answers, load_catalog(Path("/none")), today=dt.date(2025, 7, 1))


def statuses(lines):
    return {line.part: line.status for line in lines}


def test_big_machine_meets_everything(build):
    snapshot = make_snapshot(gpu_count=2)
    result = statuses(check_build(build, snapshot))
    assert result == {"CPU": "meets", "RAM": "meets", "GPU count": "meets", "GPU memory": "meets",
                      "Workload": "meets", "Storage": "meets"}


def test_small_machine_misses_with_reasons(build):
    snapshot = make_snapshot(gpu_count=1)
    small_gpu = GpuSample(index=0, name="NVIDIA GeForce GTX 1650", bus_id="0", uuid="GPU-x", memory_total_bytes=4 * GIB)
    snapshot = replace(
        snapshot,
        host=replace(snapshot.host, logical_cpu_count=2),
        memory=MemorySample(8 * GIB, 1 * GIB, 1 * GIB, 6 * GIB, 0, 0),
        gpus=(small_gpu,),
        filesystems=(FilesystemUsage("/", "/dev/sda1", "ext4", 100 * 10**9, 10**9, 99 * 10**9),),
    )
    lines = check_build(build, snapshot)
    result = statuses(lines)
    assert result["CPU"] == result["RAM"] == result["GPU memory"] == result["Workload"] == result["Storage"] == "misses"
    assert any("GTX 1650" in line.detail for line in lines)


def test_no_driver_is_unknown_not_a_crash(build):
    result = statuses(check_build(build, make_snapshot(gpu_count=0)))
    assert result["GPU"] == "unknown"
