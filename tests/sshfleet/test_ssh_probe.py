"""The probe sent to each host: stdlib only, Python 3.6 syntax, the snapshot JSON's own field names, sensors' words."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from pth_top.sensors.snapshot_json import SCHEMA_PATH
from pth_top.sensors.throttle import THROTTLE_REASON_WORDS
from pth_top.sshfleet import probe
from pth_top.sshfleet.answer import decode
from pth_top.sshfleet.transport import FRAME_END, bootstrap_line, probe_source
from tests.sshfleet.ssh_lab import FAKE_NVIDIA_SMI, a100_csv


def test_the_probe_parses_as_python_3_6_and_imports_only_the_stdlib():
    tree = ast.parse(probe_source(), feature_version=(3, 6))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)
    assert not any(isinstance(node, ast.JoinedStr) for node in ast.walk(tree)), "% formatting only"


def test_the_probes_words_for_clock_events_are_sensors_words_and_its_frame_the_transports():
    assert probe.THROTTLE_REASON_WORDS == THROTTLE_REASON_WORDS
    assert probe.FRAME_END.encode() == FRAME_END


def run_probe(tmp_path, path: str) -> dict:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; exec(sys.stdin.readline())"],
                          input=bootstrap_line() + b"\n\n", capture_output=True, timeout=60, env={"PATH": path},
                          check=True)
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


def test_the_probe_answers_in_the_snapshot_schemas_field_names(tmp_path):
    gpus, extra, remaps, uuid = a100_csv()
    for name, text in (("gpus.csv", gpus), ("extra.csv", extra), ("remaps.csv", remaps),
                       ("apps.csv", f"{uuid}, 1, 512\n"), ("nvidia-smi", FAKE_NVIDIA_SMI)):
        (tmp_path / name).write_text(text)
    (tmp_path / "nvidia-smi").chmod(0o755)
    answer = run_probe(tmp_path, f"{tmp_path}:/usr/bin:/bin")
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
