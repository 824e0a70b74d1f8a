"""`pth-top snapshot`: JSON against its schema (also as a subprocess), the schema against the model,
and the plain-text tables."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pynvml

from pth_top.sensors import model
from pth_top.sensors.na import NA
from pth_top.sensors.snapshot_json import SCHEMA_PATH, snapshot_to_dict
from pth_top.sensors.snapshot_table import format_snapshot_table
from tests.fakes.gpu_fixtures import enable_mig, make_fake_gpus
from tests.sensors.helpers import FakeClock, sampler_with
from tests.sensors.schema_check import unused_keywords, validate

SCHEMA = json.loads(SCHEMA_PATH.read_text())
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA_DEF_OF = {
    model.HostInfo: "host", model.CpuSample: "cpu", model.CoreUsage: "core", model.MemorySample: "memory",
    model.DiskIoRate: "disk", model.FilesystemUsage: "filesystem", model.NetworkRate: "network",
    model.GpuSample: "gpu", model.MigInstance: "mig_instance", model.GpuProcessUse: "gpu_use",
    model.ProcessSample: "process", model.JobSample: "job",
}


def gpu_snapshot():
    """8 H100s: GPU 1 in MIG mode, GPU 2 lost, this process computing on GPU 0."""
    fake = enable_mig(make_fake_gpus(8, process_pids={0: [os.getpid()]}), 1)
    fake.fail("nvmlDeviceGetUtilizationRates", pynvml.NVMLError_GpuIsLost, device_index=2)
    clock = FakeClock()
    sampler = sampler_with(fake, clock)
    sampler.sample()
    clock.advance(0.5)
    return sampler.sample()


def test_schema_uses_only_checked_keywords():
    assert unused_keywords(SCHEMA) == set()


# Fields the JSON adds to a model's own: a process's running time is derived from its start time.
DERIVED_FIELDS = {model.ProcessSample: {"running_time_s"}, model.JobSample: {"running_time_s"}}


def test_schema_lists_every_model_field_and_nothing_else():
    for dataclass_type, definition in SCHEMA_DEF_OF.items():
        declared = {field.name for field in dataclasses.fields(dataclass_type)}
        fields = declared | DERIVED_FIELDS.get(dataclass_type, set())
        schema_def = SCHEMA["$defs"][definition]
        assert set(schema_def["required"]) == fields, dataclass_type.__name__
        assert set(schema_def["properties"]) == fields, dataclass_type.__name__
    top = {field.name for field in dataclasses.fields(model.Snapshot)} | {"schema", "schema_version"}
    assert set(SCHEMA["required"]) == set(SCHEMA["properties"]) == top


def test_snapshot_with_gpus_validates_and_na_is_null():
    snapshot = gpu_snapshot()
    document = snapshot_to_dict(snapshot)
    assert validate(document, SCHEMA) == []
    json.dumps(document, allow_nan=False)
    assert document["schema"] == "pth-top.snapshot" and document["schema_version"] == 1
    gpus = document["gpus"]
    assert len(gpus) == 8 and gpus[2]["lost"] is True and gpus[2]["utilization_percent"] is None
    assert gpus[0]["fan_speed_percent"] is None and gpus[0]["throttle_reasons"] == ["power cap"]
    assert [instance["gpu_instance_id"] for instance in gpus[1]["mig_instances"]] == [1, 2]
    own = next(process for process in document["processes"] if process["pid"] == os.getpid())
    assert own["gpu_uses"][0]["gpu_index"] == 0 and own["gpu_uses"][0]["kind"] == "compute"


def test_validator_catches_a_broken_document():
    document = snapshot_to_dict(gpu_snapshot())
    del document["host"]["hostname"]
    document["gpus"][0]["memory_used_bytes"] = "lots"
    document["schema_version"] = 2
    problems = validate(document, SCHEMA)
    assert any("hostname" in problem for problem in problems)
    assert any("memory_used_bytes" in problem for problem in problems)
    assert any("schema_version" in problem for problem in problems)


def test_top_processes_keeps_the_busiest():
    snapshot = gpu_snapshot()
    document = snapshot_to_dict(snapshot, top_processes=3)
    cpu = [process["cpu_percent"] for process in document["processes"]]
    assert len(cpu) == 3 and cpu == sorted(cpu, reverse=True)
    for process in document["processes"]:
        assert process["running_time_s"] == max(0.0, snapshot.timestamp_s - process["start_time_s"])
    assert cpu[0] == max(process.cpu_percent for process in snapshot.processes)


def test_table_shows_every_section():
    text = format_snapshot_table(gpu_snapshot(), top_processes=5, width=200)
    for heading in ("Host", "CPU use", "Memory", "Swap", "GPUs", "Processes (top 5 of"):
        assert heading in text
    assert "NVIDIA  driver 550.54.15  CUDA 12.4" in text
    assert "LOST" in text and "clocks held by: power cap" in text and "MIG 1:" in text
    assert "(below max)" in text
    assert max(len(line) for line in text.splitlines()) <= 202


def test_table_without_gpus_says_why():
    fake = make_fake_gpus(1)
    fake.init_error = pynvml.NVMLError_LibraryNotFound
    text = format_snapshot_table(sampler_with(fake).sample())
    assert "no NVIDIA driver (NVML library not found)" in text and "GPUs" not in text


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pth_top.tui", "snapshot", *args], cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=60, stdin=subprocess.DEVNULL,
    )


def test_cli_json_validates_without_a_terminal():
    result = run_cli("--json", "--interval", "0.1")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert validate(document, SCHEMA) == []
    assert document["processes"] and document["cpu"]["cores"]


def test_cli_table_and_bad_input():
    result = run_cli("--top", "3", "--interval", "0.1")
    assert result.returncode == 0, result.stderr
    assert "Processes (top 3 of" in result.stdout and "Memory" in result.stdout
    bad = run_cli("--top", "many")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_sensors_import_no_ui_or_torch():
    code = (
        "import sys, pth_top.sensors.sampler, pth_top.sensors.snapshot_json, pth_top.sensors.snapshot_table; "
        "pth_top.sensors.sampler.Sampler().sample(); "
        "bad = sorted(m for m in ('textual', 'rich', 'torch') if m in sys.modules); print(bad); "
        "sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_na_never_leaks_into_json():
    gpu = model.GpuSample(index=0, name="x", bus_id="b", uuid="u", lost=True)
    document = snapshot_to_dict(dataclasses.replace(gpu_snapshot(), gpus=(gpu,)))
    assert all(value is not NA for value in document["gpus"][0].values())
    assert validate(document, SCHEMA) == []
