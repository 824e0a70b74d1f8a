"""Torch checks interpreting the probe's JSON; the registry's isolation; the real probe subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pth_top.doctor import torch_checks
from pth_top.doctor.context import DoctorContext
from pth_top.doctor.model import Group, Status, Verdict, passed
from pth_top.doctor.probe_runner import ProbeError, parse_probe_output, probe_command, run_torch_probe
from pth_top.doctor.registry import all_checks, doctor_check, run_all
from tests.fakes.doctor_inputs import (
    cuda_probe_report,
    gone_soon,
    make_context,
    no_driver_nvml,
    slow_interpreter,
    wait_for_pid,
)

VENV_PYTHON = sys.executable


def only(check, context):
    findings = check.run(context)
    assert len(findings) == 1, findings
    return findings[0]


def test_cuda_torch_on_a_healthy_machine_passes_every_torch_check(tmp_path):
    context = make_context(tmp_path, probe=cuda_probe_report())
    for check in [torch_checks.check_torch_installed, torch_checks.check_torch_cuda, torch_checks.check_cudnn,
                  torch_checks.check_nccl, torch_checks.check_numpy, torch_checks.check_threads]:
        assert only(check, context).status is Status.PASS, check.check_id
    assert only(torch_checks.check_cudnn, context).value == "cuDNN 90100"


def test_cpu_only_torch_with_nvidia_gpus_fails(tmp_path):
    cpu_build = cuda_probe_report(torch_cuda_version=None, cuda_available=False, torch_version="2.5.1+cpu")
    context = make_context(tmp_path, probe=cpu_build)
    finding = only(torch_checks.check_torch_cuda, context)
    assert finding.status is Status.FAIL and "CPU-only build" in finding.value


def test_cpu_only_torch_without_gpus_passes(tmp_path):
    cpu_build = cuda_probe_report(torch_cuda_version=None, cuda_available=False)
    context = make_context(tmp_path, nvml_module=no_driver_nvml(), probe=cpu_build)
    assert only(torch_checks.check_torch_cuda, context).status is Status.PASS


def test_cuda_build_that_cannot_reach_the_gpu_fails(tmp_path):
    context = make_context(tmp_path, probe=cuda_probe_report(cuda_available=False, device_count=0))
    assert only(torch_checks.check_torch_cuda, context).status is Status.FAIL


def test_missing_numpy_warns(tmp_path):
    finding = only(torch_checks.check_numpy, make_context(tmp_path, probe=cuda_probe_report(numpy_present=False)))
    assert finding.status is Status.WARN and "pip install numpy" in finding.fix


@pytest.mark.parametrize(
    ("threads", "omp", "status"), [(8, None, Status.PASS), (32, None, Status.WARN), (1, "1", Status.WARN)]
)
def test_thread_settings_against_physical_cores(tmp_path, threads, omp, status):
    env = {"OMP_NUM_THREADS": omp} if omp else {}
    context = make_context(tmp_path, probe=cuda_probe_report(num_threads=threads, env=env), physical_cores=16)
    finding = only(torch_checks.check_threads, context)
    assert finding.status is status
    if omp:
        assert "OMP_NUM_THREADS=1" in finding.value


def test_torch_missing_fails_for_a_chosen_interpreter_and_warns_for_the_default(tmp_path):
    report = {"schema": "pth-top.torch-probe", "schema_version": 1, "error": "torch not installed in /x/python"}
    context = make_context(tmp_path, probe=report)
    assert only(torch_checks.check_torch_installed, context).status is Status.FAIL
    assert only(torch_checks.check_numpy, context).status is Status.NOT_APPLICABLE
    context.python_chosen = False
    context.memo.clear()
    finding = only(torch_checks.check_torch_installed, context)
    assert finding.status is Status.WARN and "--python" in finding.fix


def test_torch_older_than_the_bench_floor_warns_with_the_probes_line(tmp_path):
    from pth_top.benches.child.probe import torch_floor_problem

    report = {**cuda_probe_report(), "torch_version": "2.3.1+cu121",
              "bench_torch_problem": torch_floor_problem("2.3.1+cu121")}
    finding = only(torch_checks.check_torch_installed, make_context(tmp_path, probe=report))
    assert finding.status is Status.WARN and "needs torch >= 2.4" in finding.value and "torch>=2.4" in finding.fix


def test_probe_that_could_not_run_says_why(tmp_path):
    context = make_context(tmp_path)

    def broken_probe():
        raise ProbeError("torch probe in /x/python took longer than 120 s")

    context.probe_source = broken_probe
    finding = only(torch_checks.check_torch_installed, context)
    assert finding.status is Status.COULD_NOT_RUN
    assert finding.value == "could not run: torch probe in /x/python took longer than 120 s"


def test_no_torch_makes_torch_checks_not_applicable(tmp_path):
    context = make_context(tmp_path, probe=None)
    torch_only = [c for c in all_checks()
                  if c.group is Group.TORCH or c.check_id in ("gpu.cuda_compat", "gpu.torch_sees_gpus")]
    findings = run_all(context, torch_only)
    assert {f.status for f in findings} == {Status.NOT_APPLICABLE}
    assert "--no-torch" in findings[-1].value


def test_a_crashing_check_becomes_could_not_run_and_the_rest_still_run(tmp_path):
    @doctor_check("test.crash", "Crashes", Group.HOST, "a test")
    def crashing(context: DoctorContext) -> Verdict:
        raise PermissionError("[Errno 13] Permission denied: '/sys/x'")

    @doctor_check("test.fine", "Fine", Group.HOST, "a test")
    def fine(context: DoctorContext) -> Verdict:
        return passed("ok")

    findings = run_all(make_context(tmp_path), [crashing, fine])
    assert [(f.check_id, f.status) for f in findings] == [
        ("test.crash", Status.COULD_NOT_RUN), ("test.fine", Status.PASS)]
    assert "Permission denied" in findings[0].value and findings[0].why == "a test"


def test_checks_needing_torch_run_last_but_are_reported_in_order(tmp_path):
    order = []

    @doctor_check("a", "A", Group.TORCH, "w", needs_torch=True)
    def first(context):
        order.append("a")
        return passed("a")

    @doctor_check("b", "B", Group.HOST, "w")
    def second(context):
        order.append("b")
        return passed("b")

    findings = run_all(make_context(tmp_path), [first, second])
    assert order == ["b", "a"] and [f.check_id for f in findings] == ["a", "b"]


def test_check_ids_are_unique():
    ids = [check.check_id for check in all_checks()]
    assert len(ids) == len(set(ids))


def test_probe_output_parsing_reports_the_last_stderr_line():
    with pytest.raises(ProbeError, match="ModuleNotFoundError: No module named 'benches'"):
        parse_probe_output("/x/python", "", "Traceback\nModuleNotFoundError: No module named 'benches'\n", 1)


def test_real_probe_on_the_cpu_torch_build():
    pytest.importorskip("torch")  # the probe runs in this interpreter
    report = run_torch_probe(VENV_PYTHON, timeout_s=120)
    assert report["schema"] == "pth-top.torch-probe" and report["schema_version"] == 1
    assert report["error"] is None
    assert report["torch_version"].startswith("2.")
    assert report["num_threads"] >= 1
    assert isinstance(report["cuda_available"], bool)
    assert report["float32_matmul_precision"] in ("highest", "high", "medium")


def test_probe_without_torch_prints_an_error_object_and_exits_nonzero(tmp_path):
    # -S drops site-packages, so torch cannot be found; the probe itself needs only the standard library.
    command = probe_command(VENV_PYTHON)
    completed = subprocess.run([command[0], "-S", *command[1:]], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1
    report = json.loads(completed.stdout)
    assert report["error"].startswith("torch not installed in ")


@pytest.mark.parametrize("stdout", ["[" * 100_000 + "]" * 100_000, '{"schema": "x", "a": ' + "[" * 100_000 + "}"])
def test_hostile_probe_output_is_a_probe_error_not_a_recursion_error(stdout):
    with pytest.raises(ProbeError, match="torch probe in /x/python failed"):
        parse_probe_output("/x/python", stdout + "\n", "", 0)


def test_probe_of_a_missing_interpreter_raises_probe_error():
    with pytest.raises(ProbeError, match="no Python interpreter at /no/such/python"):
        run_torch_probe("/no/such/python", timeout_s=5)


def test_probe_module_imports_no_torch_at_import_time():
    code = "import sys, pth_top.benches.child.probe; print(sys.modules.get('torch') is not None)"
    completed = subprocess.run([VENV_PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.stdout.strip() == "False"


@pytest.mark.gpu
def test_real_probe_loads_the_gpus_and_reads_pcie_links():
    report = run_torch_probe(VENV_PYTHON, timeout_s=120, load_seconds=2)
    assert report["cuda_available"] and report["load"]["links"]


def test_doctor_package_imports_no_ui_and_no_torch():
    modules = ("model context registry gpus storage host_checks gpu_checks gpu_state_checks torch_checks probe_runner "
               "live report")
    code = (
        "import importlib, sys\n"
        f"for name in {modules.split()!r}: importlib.import_module('pth_top.doctor.' + name)\n"
        "print(sorted(m for m in ('textual', 'rich', 'torch') if sys.modules.get(m) is not None))"
    )
    completed = subprocess.run([VENV_PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.stdout.strip() == "[]", completed.stderr


def test_probe_load_keeps_gpus_busy_and_reads_links_once_midway(monkeypatch):
    from types import SimpleNamespace

    from pth_top.benches.child import probe

    class FakeMatrix:
        multiplications = 0

        def __matmul__(self, other):
            FakeMatrix.multiplications += 1
            return self

    synchronized = []
    fake_torch = SimpleNamespace(
        float16="float16",
        device=lambda kind, index: (kind, index),
        randn=lambda *shape, device, dtype: FakeMatrix(),
        cuda=SimpleNamespace(synchronize=synchronized.append),
    )
    reads = []

    def fake_links(bus_ids):
        reads.append(list(bus_ids))
        return [{"pci_bus_id": bus_id, "generation": 4, "width": 16} for bus_id in bus_ids]

    monkeypatch.setattr(probe, "_read_pcie_links", fake_links)
    devices = [{"index": 0, "pci_bus_id": "00000000:17:00.0"}, {"index": 1, "pci_bus_id": "00000000:18:00.0"}]
    load = probe._load_and_read_links(fake_torch, devices, load_seconds=0.2)
    assert reads == [["00000000:17:00.0", "00000000:18:00.0"]]
    assert [link["pci_bus_id"] for link in load["links"]] == ["00000000:17:00.0", "00000000:18:00.0"]
    assert FakeMatrix.multiplications > 0 and set(synchronized) == {0, 1}


def test_cancelling_a_hung_probe_kills_it_and_says_so(tmp_path):
    import threading

    from pth_top.doctor.probe_runner import PendingProbe

    python, pid_file = slow_interpreter(tmp_path)
    pending = PendingProbe(python, timeout_s=120)
    pid = wait_for_pid(pid_file)
    threading.Timer(0.1, pending.cancel).start()
    with pytest.raises(ProbeError, match="torch probe cancelled"):
        pending.result()
    assert gone_soon(pid)


@pytest.mark.parametrize("probe_changes, expected", [
    # The guide (§8.2) says set_float32_matmul_precision('high') "enables AVX2": the doctor says what it does.
    ({"cuda_available": False, "devices": [], "float32_matmul_precision": "high"},
     "on the CPU it does not enable AVX2"),
    ({"float32_matmul_precision": "highest"}, "'high' would use TF32 tensor cores (not AVX2)"),
    ({"float32_matmul_precision": "high"}, "may use TF32/bfloat16 tensor cores (a GPU setting, not AVX2)"),
    ({"float32_matmul_precision": "high", "devices": [{"index": 0, "name": "Tesla V100-SXM2-32GB",
                                                        "capability": [7, 0]}]}, "no TF32 on these GPUs"),
])
def test_matmul_precision_check_says_it_is_not_avx2(tmp_path, probe_changes, expected):
    context = make_context(tmp_path, probe=cuda_probe_report(**probe_changes))
    finding = only(torch_checks.check_matmul_precision, context)
    assert finding.status is Status.PASS and expected in finding.value
    assert "does not enable AVX2" in finding.why


def test_matmul_precision_from_an_older_probe_is_not_applicable(tmp_path):
    finding = only(torch_checks.check_matmul_precision, make_context(tmp_path, probe=cuda_probe_report()))
    assert finding.status is Status.NOT_APPLICABLE
