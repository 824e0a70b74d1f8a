"""A check declares what it needs (GPUs, the torch probe) and receives it; missing, the need's verdict stands."""

from __future__ import annotations

import pytest

from pth_top.doctor.model import Group, Status, passed
from pth_top.doctor.registry import all_checks, doctor_check, run_all
from tests.fakes.doctor_inputs import cuda_probe_report, fake_nvml, healthy_gpu_values, make_context, no_driver_nvml


def test_a_check_receives_the_gpus_and_the_probe_it_declares(tmp_path):
    seen = {}

    @doctor_check("test.needs", "Needs", Group.GPU, "w", needs=("gpus", "probe"))
    def judge(context, gpus, probe):
        seen.update(gpus=[gpu.index for gpu in gpus], torch=probe["torch_cuda_version"])
        return passed("ok")

    context = make_context(tmp_path, fake_nvml(healthy_gpu_values(0), healthy_gpu_values(1)), cuda_probe_report())
    assert [finding.status for finding in run_all(context, [judge])] == [Status.PASS]
    assert seen == {"gpus": [0, 1], "torch": cuda_probe_report()["torch_cuda_version"]}
    assert judge.needs_torch, "a check that needs the probe runs after the others"


def test_a_missing_need_gives_its_verdict_without_calling_the_check(tmp_path):
    called = []

    @doctor_check("test.gpus", "GPUs", Group.GPU, "w", needs=("gpus",))
    def on_gpus(context, gpus):
        called.append("gpus")
        return passed("ok")

    @doctor_check("test.probe", "Probe", Group.TORCH, "w", needs=("probe",))
    def on_probe(context, probe):
        called.append("probe")
        return passed("ok")

    findings = run_all(make_context(tmp_path, no_driver_nvml(), probe=None), [on_gpus, on_probe])
    assert called == [] and [finding.status for finding in findings] == [Status.NOT_APPLICABLE] * 2
    assert "--no-torch" in findings[1].value


def test_an_unknown_need_is_refused_at_registration():
    with pytest.raises(ValueError, match="unknown doctor check needs \\['no_such_need'\\]"):
        doctor_check("test.bad", "Bad", Group.GPU, "w", needs=("no_such_need",))


def test_no_check_repeats_a_need_preamble():
    """The GPU and probe guards live in the needs, not in the checks (a new check is only its rule)."""
    import inspect

    for check in all_checks():
        source = inspect.getsource(check.function) if inspect.isfunction(check.function) else ""
        assert "isinstance(data, Verdict)" not in source, check.check_id
        assert "return not_applicable(nvml_unavailable_reason" not in source, check.check_id
