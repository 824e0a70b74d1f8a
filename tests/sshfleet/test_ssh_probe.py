"""The probe sent to each host: stdlib only, Python 3.6 syntax, the snapshot JSON's own field names, sensors' words."""

from __future__ import annotations

import ast
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pth_top.sensors.snapshot_json import SCHEMA_PATH
from pth_top.sensors.throttle import THROTTLE_REASON_WORDS
from pth_top.sshfleet import probe
from pth_top.sshfleet.answer import decode
from pth_top.sshfleet.transport import FRAME_END, bootstrap_line, probe_source
from tests.sshfleet.fake_nvml import build_fake_nvml, gcc_missing
from tests.sshfleet.ssh_lab import FAKE_NVIDIA_SMI, a100_csv, a100_readings

NO_NVML = {"PTH_TOP_PROBE_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}


def test_the_probe_parses_as_python_3_6_and_imports_only_the_stdlib():
    tree = ast.parse(probe_source(), feature_version=(3, 6))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)
    assert not any(isinstance(node, ast.JoinedStr) for node in ast.walk(tree)), "% formatting only"


def test_the_probes_words_for_clock_events_are_sensors_words_and_its_frame_the_transports():
    assert probe.THROTTLE_REASON_WORDS == THROTTLE_REASON_WORDS
    assert probe.FRAME_END.encode() == FRAME_END


def run_probe(tmp_path, path: str, env: dict | None = None, python: str = sys.executable, before: str = "") -> dict:
    """The probe's first answer, run as the transport runs it on a host with this PATH (and `env`)."""
    done = subprocess.run([python, "-I", "-S", "-c", f"import sys; {before}exec(sys.stdin.readline())"],
                          input=bootstrap_line() + b"\n\n", capture_output=True, timeout=60,
                          env={"PATH": path, **(env or NO_NVML)}, check=True)
    first, second, rest = done.stdout.split(FRAME_END)
    assert rest == b"", "one answer a request line, then the end of stdin ends it"
    assert json.loads(second)["schema"] == "pth-top.snapshot"
    return json.loads(first)


def nullable(definitions: dict, field: dict) -> bool:
    """Whether a reader may take a missing `field` as null (or, for a list, as empty)."""
    if "$ref" in field:
        return nullable(definitions, definitions[field["$ref"].rsplit("/", 1)[1]])
    kinds = field.get("type")
    return kinds == "array" or (isinstance(kinds, list) and "null" in kinds)


def fake_nvidia_smi(folder: Path, processes: list[tuple[int, int, int]]) -> str:
    """A PATH whose nvidia-smi answers a100_readings; `processes` are (gpu index, pid, GPU memory MiB)."""
    folder.mkdir(exist_ok=True)
    gpus, extra, remaps, _ = a100_csv()
    uuids = [gpu.uuid for gpu in a100_readings()]
    apps = "".join(f"{uuids[gpu]}, {pid}, {used_mib}\n" for gpu, pid, used_mib in processes)
    for name, text in (("gpus.csv", gpus), ("extra.csv", extra), ("remaps.csv", remaps), ("apps.csv", apps),
                       ("nvidia-smi", FAKE_NVIDIA_SMI)):
        (folder / name).write_text(text)
    (folder / "nvidia-smi").chmod(0o755)
    return f"{folder}:/usr/bin:/bin"


def test_the_probe_answers_in_the_snapshot_schemas_field_names(tmp_path):
    answer = run_probe(tmp_path, fake_nvidia_smi(tmp_path, [(1, 1, 512)]))
    schema = json.loads(SCHEMA_PATH.read_text())
    definitions = schema["$defs"]
    for part, definition in ((answer, schema), (answer["host"], definitions["host"]),
                             (answer["memory"], definitions["memory"]), (answer["gpus"][0], definitions["gpu"]),
                             (answer["processes"][0], definitions["process"]),
                             (answer["processes"][0]["gpu_uses"][0], definitions["gpu_use"])):
        assert set(part) <= set(definition["properties"]), "the schema's names, none made up"
        for name in set(definition["required"]) - set(part):
            assert nullable(definitions, definition["properties"][name]), f"{name}: left out, so it must be null"
    assert answer["gpus"][1]["remapped_rows_pending"] is True and answer["gpus"][1]["memory_total_bytes"] == 81920 << 20
    assert answer["gpus"][0]["throttle_reasons"] == ["idle"] and answer["gpus"][0]["fan_speed_percent"] is None
    host = decode(json.dumps(answer).encode(), "lab")
    assert [cell.gpu for cell in host.cells] == ["0", "1", "2", "3"] and host.processes[0].pid == "1"


def test_without_nvidia_smi_the_probe_says_so_and_still_reads_the_host(tmp_path):
    answer = run_probe(tmp_path, str(tmp_path))
    assert answer["gpus"] == [] and answer["host"]["nvml_unavailable_reason"] == "no nvidia-smi on the host's PATH"
    assert answer["memory"]["total_bytes"] > 0 and answer["host"]["uptime_s"] > 0


# The training job on GPU 1, and more processes on GPU 0 than the probe's first buffer holds (64 slots).
PROCESSES = [(1, 1, 512)] + [(0, pid, 1) for pid in range(100_000, 100_070)]


def process_view(answer: dict) -> list[tuple]:
    """What of each process comes from the GPU path (the rest is /proc's, read at another moment)."""
    return [(entry["pid"], entry["gpu_uses"]) for entry in answer["processes"]]


@pytest.mark.skipif(gcc_missing(), reason="no gcc to compile the fake libnvidia-ml.so.1")
@pytest.mark.parametrize("old_driver", [False, True], ids=["v3-calls", "unversioned-calls"])
def test_the_probe_reads_nvml_through_ctypes_as_it_reads_nvidia_smi(tmp_path, old_driver):
    library = build_fake_nvml(tmp_path / "lib", a100_readings(), PROCESSES, old_driver=old_driver)
    by_nvidia_smi = run_probe(tmp_path, fake_nvidia_smi(tmp_path / "smi", PROCESSES))
    by_nvml = run_probe(tmp_path, "/usr/bin:/bin", {"LD_LIBRARY_PATH": str(library.parent)})
    assert len(by_nvml["gpus"]) == 4, "no nvidia-smi on its PATH: the GPUs came through NVML"
    assert json.dumps(by_nvml["gpus"], sort_keys=True) == json.dumps(by_nvidia_smi["gpus"], sort_keys=True)
    assert process_view(by_nvml) == process_view(by_nvidia_smi) and len(by_nvml["processes"]) == 71
    assert by_nvml["gpus"][0]["fan_speed_percent"] is None, "the fan answers NVML_ERROR_NOT_SUPPORTED"
    assert by_nvml["gpus"][1]["remapped_rows_pending"] is True and by_nvml["gpus"][1]["throttle_reasons"] == ["idle"]
    for field in ("nvidia_driver_version", "nvml_unavailable_reason"):
        assert by_nvml["host"][field] == by_nvidia_smi["host"][field]
    assert (by_nvml["host"]["cuda_driver_version"], by_nvidia_smi["host"]["cuda_driver_version"]) == ("12.5", None)


def test_without_the_nvml_library_the_probe_reads_nvidia_smi(tmp_path):
    answer = run_probe(tmp_path, fake_nvidia_smi(tmp_path, PROCESSES),
                       {"LD_LIBRARY_PATH": str(tmp_path / "empty"), **NO_NVML})
    assert [gpu["uuid"] for gpu in answer["gpus"]] == [gpu.uuid for gpu in a100_readings()]
    assert answer["host"]["nvml_unavailable_reason"] is None and answer["host"]["cuda_driver_version"] is None


@pytest.mark.skipif(gcc_missing(), reason="no gcc to compile the fake libnvidia-ml.so.1")
def test_a_gpu_nvml_has_lost_is_listed_lost_and_the_others_read(tmp_path):
    library = build_fake_nvml(tmp_path / "lib", a100_readings(), PROCESSES, lost_index=2)
    answer = run_probe(tmp_path, "/usr/bin:/bin", {"LD_LIBRARY_PATH": str(library.parent)})
    assert [(gpu["index"], gpu["lost"]) for gpu in answer["gpus"]] == [(0, False), (1, False), (2, True), (3, False)]
    assert [detail.name for detail in decode(json.dumps(answer).encode(), "lab").gpus][2] == " (lost)"


@pytest.mark.skipif(gcc_missing(), reason="no gcc to compile the fake libnvidia-ml.so.1")
def test_a_python_without_ctypes_reads_nvidia_smi(tmp_path):
    library = build_fake_nvml(tmp_path / "lib", a100_readings(), PROCESSES)
    answer = run_probe(tmp_path, fake_nvidia_smi(tmp_path / "smi", PROCESSES), {"LD_LIBRARY_PATH": str(library.parent)},
                       before="sys.modules['ctypes'] = None; ")  # import ctypes fails, as on a python3-minimal
    assert len(answer["gpus"]) == 4 and answer["host"]["cuda_driver_version"] is None, "nvidia-smi's answer"


@pytest.mark.skipif(gcc_missing(), reason="no gcc to compile the fake libnvidia-ml.so.1")
def test_an_nvml_that_will_not_start_falls_back_to_nvidia_smi_and_is_named_when_that_fails_too(tmp_path):
    library = build_fake_nvml(tmp_path / "lib", a100_readings(), PROCESSES, init_result=9)  # DRIVER_NOT_LOADED
    env = {"PTH_TOP_PROBE_NVML_LIBRARY": str(library)}
    assert len(run_probe(tmp_path, fake_nvidia_smi(tmp_path / "smi", PROCESSES), env)["gpus"]) == 4
    answer = run_probe(tmp_path, str(tmp_path), env)
    assert answer["gpus"] == [] and answer["host"]["nvml_unavailable_reason"] == \
        "NVML: Driver Not Loaded; no nvidia-smi on the host's PATH"


def python_3_6() -> str | None:
    """A CPython 3.6 here: python3.6 on the PATH, else pyenv's (the machine image carries one)."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for candidate in [shutil.which("python3.6"), *sorted(glob.glob(f"{root}/versions/3.6*/bin/python3.6"))]:
        if candidate and subprocess.run([candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 6)"],
                                        capture_output=True, timeout=30).returncode == 0:
            return candidate
    return None


PYTHON_3_6 = python_3_6()


@pytest.mark.skipif(PYTHON_3_6 is None, reason="no CPython 3.6 here (python3.6 on the PATH or ~/.pyenv/versions/3.6*): "
                    "no registry this project reaches has one, so only the syntax check above runs")
@pytest.mark.skipif(gcc_missing(), reason="no gcc to compile the fake libnvidia-ml.so.1")
def test_the_probe_runs_under_python_3_6_through_nvml_and_through_nvidia_smi(tmp_path):
    assert PYTHON_3_6 is not None
    library = build_fake_nvml(tmp_path / "lib", a100_readings(), PROCESSES)
    smi_path = fake_nvidia_smi(tmp_path / "smi", PROCESSES)
    by_nvml = run_probe(tmp_path, "/usr/bin:/bin", {"LD_LIBRARY_PATH": str(library.parent)}, python=PYTHON_3_6)
    by_nvidia_smi = run_probe(tmp_path, smi_path, python=PYTHON_3_6)
    expected = run_probe(tmp_path, smi_path)
    for answer in (by_nvml, by_nvidia_smi):
        assert json.dumps(answer["gpus"], sort_keys=True) == json.dumps(expected["gpus"], sort_keys=True)
        assert process_view(answer) == process_view(expected)
        assert answer["memory"]["total_bytes"] == expected["memory"]["total_bytes"]
        assert [cell.gpu for cell in decode(json.dumps(answer).encode(), "lab").cells] == ["0", "1", "2", "3"]
