"""`pth-top doctor`: exit codes 0/1/2, the grouped text report and the versioned JSON document."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pth_top.doctor.model import Status
from pth_top.tui import cli
from tests.fakes.doctor_inputs import cuda_probe_report, make_context

STATUS_VALUES = {status.value for status in Status}
FINDING_KEYS = {"check", "title", "group", "subject", "status", "value", "why", "fix"}


@pytest.fixture
def scripted_machine(tmp_path, monkeypatch):
    """Make `pth-top doctor` look at scripted inputs instead of this machine; returns the options used."""
    calls = []

    def set_machine(**machine):
        def fake_live_context(python=None, data_dir=None, with_torch=True, load_seconds=0):
            calls.append({"python": python, "data_dir": data_dir, "with_torch": with_torch,
                          "load_seconds": load_seconds})
            return make_context(tmp_path / f"machine{len(calls)}", **machine)

        monkeypatch.setattr("pth_top.doctor.live.live_context", fake_live_context)
        return calls

    return set_machine


def test_healthy_machine_exits_0_with_a_grouped_report(scripted_machine, capsys):
    scripted_machine(probe=cuda_probe_report())
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    for heading in ("GPU & driver", "Host", "Torch"):
        assert f"\n{heading}\n" in out
    assert "✔ NVIDIA driver" in out and "✘" not in out.split("Legend")[0]


def test_a_failing_check_exits_1_and_explains_the_fix(scripted_machine, capsys):
    scripted_machine(probe=cuda_probe_report(), shm_total_bytes=64 * 1024**2)
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "✘ Shared memory (/dev/shm)" in out
    assert "fix: Containers: docker run --shm-size=8g" in out


def test_json_document_has_a_versioned_schema(scripted_machine, capsys, tmp_path):
    calls = scripted_machine(probe=cuda_probe_report(numpy_present=False))
    assert cli.main(["doctor", "--json", "--data-dir", str(tmp_path), "--python", sys.executable]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "pth-top.doctor" and document["schema_version"] == 1
    assert document["exit_code"] == 0
    assert set(document["summary"]) == STATUS_VALUES
    assert sum(document["summary"].values()) == len(document["findings"])
    for finding in document["findings"]:
        assert set(finding) == FINDING_KEYS and finding["status"] in STATUS_VALUES
    numpy = next(f for f in document["findings"] if f["check"] == "torch.numpy")
    assert numpy["status"] == "warn" and "pip install numpy" in numpy["fix"]
    assert calls[0]["data_dir"] == tmp_path.resolve() and calls[0]["with_torch"]


def test_no_torch_and_load_reach_the_context(scripted_machine, capsys):
    calls = scripted_machine(probe=None)
    assert cli.main(["doctor", "--no-torch"]) == 0
    assert calls[-1]["with_torch"] is False
    scripted_machine(probe=cuda_probe_report())
    assert cli.main(["doctor", "--load", "3"]) == 0
    assert calls[-1]["load_seconds"] == 3.0


@pytest.mark.parametrize(("argv", "message"), [
    (["doctor", "--python", "/no/such/python"], "no Python interpreter at /no/such/python"),
    (["doctor", "--data-dir", "/no/such/dir"], "not a directory: /no/such/dir"),
    (["doctor", "--no-torch", "--load", "2"], "--load needs the torch probe"),
    (["doctor", "--data-dir", "/" + "d" * 300], "--data-dir: File name too long"),
    (["doctor", "--data-dir", "/tmp/" + "/".join(["d" * 200] * 30)], "--data-dir: File name too long"),
    (["doctor", "--python", "/" + "p" * 300], "no Python interpreter at /ppp"),
    (["doctor", "--python", "/tmp/\x1b]0;title\x07"], "no Python interpreter at /tmp/\\x1b]0;title\\x07"),
])
def test_usage_errors_exit_2_with_one_line(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_out_of_range_load_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as raised:
        cli.main(["doctor", "--load", "99"])
    assert raised.value.code == 2
    assert "--load must be between 0 and 60" in capsys.readouterr().err


def test_real_machine_end_to_end_with_the_torch_probe(tmp_path):
    pytest.importorskip("torch")  # the probe runs in this interpreter
    completed = subprocess.run(
        [sys.executable, "-m", "pth_top.tui", "doctor", "--json", "--data-dir", str(tmp_path),
         "--python", sys.executable],
        capture_output=True, text=True, timeout=180,
    )
    assert completed.returncode in (0, 1), completed.stderr
    document = json.loads(completed.stdout)
    assert document["exit_code"] == completed.returncode
    statuses = {f["check"]: f["status"] for f in document["findings"]}
    assert statuses["torch.installed"] == "pass"
    assert "could not run" not in statuses.values()


def test_text_report_folds_a_group_that_is_entirely_not_applicable(tmp_path):
    from pth_top.doctor import gpu_checks, gpu_state_checks
    from pth_top.doctor.registry import checks_in, run_all
    from pth_top.doctor.report import format_text
    from tests.fakes.doctor_inputs import no_driver_nvml

    findings = run_all(make_context(tmp_path, nvml_module=no_driver_nvml(), probe=cuda_probe_report()))
    text = format_text(findings)
    gpu_section = text.split("GPU & driver\n", 1)[1].split("\n\n", 1)[0]
    count = len(checks_in(gpu_checks)) + len(checks_in(gpu_state_checks))
    assert gpu_section == f"  - {count} checks not applicable: no NVIDIA driver (NVML library not found)"
    assert "  - RAM vs GPU memory" in text
