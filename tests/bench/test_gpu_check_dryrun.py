"""tests/perf/gpu_check.sh end to end on this CPU (--dry-run), its refusals, and check_gpu_targets.py's verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "perf" / "gpu_check.sh"
CHECKER = REPO / "tests" / "perf" / "check_gpu_targets.py"
TARGET_COUNT = 5
DEADLINE_S = 600  # generous: the dry run takes ~20 s on an idle 2-core machine, more when it is shared


def run_script(tmp_path: Path, *args: str, floor_python: str | None = None) -> subprocess.CompletedProcess:
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    env = dict(os.environ, OUT=str(tmp_path / "out"), PYTHON=sys.executable, TMPDIR=str(scratch))
    env.pop("PTH_TOP_FLOOR_PYTHON", None)
    if floor_python is not None:
        env["PTH_TOP_FLOOR_PYTHON"] = floor_python
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True,
                          timeout=DEADLINE_S, cwd=tmp_path)


def test_the_dry_run_goes_end_to_end_and_leaves_no_temp_files(tmp_path):
    pytest.importorskip("torch")
    missing_floor_python = str(tmp_path / "no-such-python")  # the floor step runs, and its tests fail fast
    done = run_script(tmp_path, "--dry-run", floor_python=missing_floor_python)
    assert done.returncode == 0, done.stderr[-2000:]
    out = tmp_path / "out"
    summary = (out / "SUMMARY.txt").read_text()
    verdicts = [line for line in summary.splitlines() if line.split(" ", 1)[0] in ("PASS", "FAIL", "n/a")]
    assert len(verdicts) == TARGET_COUNT and "targets shown, not enforced" in summary
    targets = json.loads((out / "targets.json").read_text())
    assert targets["device"] == "cpu" and targets["enforced"] is False and len(targets["targets"]) == TARGET_COUNT
    steps = (out / "steps.txt").read_text()
    for step in ("probe", "peak", "anchor", "snapshot", "burn", "standard-rest"):
        assert f"{step} rc=0" in steps, steps
    assert "torch-floor rc=1" in steps, steps
    for scenario in ("gemm", "idle-context", "spin-kernel", "torchrun-allreduce"):  # GPM fixtures
        assert f"gpm-{scenario} rc=0" in steps, steps
        fixture = json.loads((out / "gpm" / f"{scenario}.json").read_text())
        assert fixture["ready"] and fixture["workload_rc"] == 0 and len(fixture["samples"]) == 2, fixture
        assert all(set(sample) == {"timestamp_s", "gpus", "jobs"} for sample in fixture["samples"])
    assert any(job["kind"] == "torchrun" for sample in json.loads(
        (out / "gpm" / "torchrun-allreduce.json").read_text())["samples"] for job in sample["jobs"])
    assert "FAILED tests/bench/test_torch_floor.py::test_the_probe_accepts_the_floor_torch" in \
        (out / "pytest-floor.txt").read_text()  # the floor's tests ran (and failed: no such interpreter)
    assert f"== torch floor ({missing_floor_python})" in summary
    run = json.loads((out / "run-peak.json").read_text())
    assert {row["kernel"] for row in run["rows"]} >= {"gemm", "membw"}
    anchor = json.loads((out / "anchor.json").read_text())
    assert anchor["meta"]["done"] and anchor["errors"] == [], anchor
    assert set(anchor["sections"]["harness_vs_events"]) == {"bf16_gemm", "copy"}
    assert json.loads((out / "probe.json").read_text())["cuda_available"] is False
    assert (out / "nvidia-smi-q.txt").exists() and (out / "telemetry.csv").exists()
    left = list((tmp_path / "tmp").iterdir())
    assert left == [], left  # the disk kernel's file and the user folders live in a scratch folder, then go


def test_without_cuda_torch_it_says_what_is_missing_and_exits_3(tmp_path):
    pytest.importorskip("torch")
    done = run_script(tmp_path)
    assert done.returncode == 3
    assert "CUDA build of torch" in (tmp_path / "out" / "NEEDS.txt").read_text()
    assert "no CUDA torch found" in done.stderr


def test_an_unknown_option_is_one_line_and_exit_2(tmp_path):
    done = run_script(tmp_path, "--fast")
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "--fast" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_folder_given_takes_the_place_of_out(tmp_path):
    pytest.importorskip("torch")
    done = run_script(tmp_path, str(tmp_path / "given"))
    assert done.returncode == 3 and (tmp_path / "given" / "NEEDS.txt").is_file()


def write_results(out: Path, name: str, gemm_percent: float, copy_percent: float, gemm_tflops: float,
                  mamf_tflops: float, harness_over_events: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = [{"kernel": "gemm", "device": "cuda:0", "variant": "bf16", "status": "ok", "value": gemm_tflops,
             "unit": "TFLOP/s", "percent_of_peak": gemm_percent, "peak_note": "peak 989"},
            {"kernel": "membw", "device": "cuda:0", "variant": "copy", "status": "ok", "value": 4100.0,
             "unit": "GB/s", "percent_of_peak": copy_percent, "peak_note": "peak 4800"}]
    (out / "run-peak.json").write_text(json.dumps({"rows": rows, "metadata": {"cuda_devices": {
        "cuda:0": {"name": name}}}}))
    compared = {"harness_over_events": harness_over_events, "harness_per_s": 1.0, "events_per_s": 1.0}
    (out / "anchor.json").write_text(json.dumps({"meta": {"device": "cuda:0", "name": name}, "sections": {
        "mamf_style": {"best": {"tflops_median": mamf_tflops}},
        "harness_vs_events": {"bf16_gemm": compared, "copy": compared}}}))


def run_checker(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECKER), str(out)], capture_output=True, text=True, timeout=60)


def test_the_checker_passes_an_h200_that_meets_every_number(tmp_path):
    write_results(tmp_path, "NVIDIA H200", 79.7, 85.4, 788.0, 800.0, 0.99)
    done = run_checker(tmp_path)
    assert done.returncode == 0, done.stdout
    assert done.stdout.count("PASS") == TARGET_COUNT and "reference: H200 SXM" in done.stdout


@pytest.mark.parametrize("change, failing", [
    ({"gemm_percent": 70.0}, "datasheet dense peak"),
    ({"copy_percent": 80.0}, "HBM peak"),
    ({"gemm_tflops": 700.0}, "mamf-style best"),
    ({"harness_over_events": 0.96}, "plain events: bf16 GEMM"),
])
def test_the_checker_fails_the_target_that_is_missed(tmp_path, change, failing):
    values = dict(gemm_percent=79.7, copy_percent=85.4, gemm_tflops=788.0, mamf_tflops=800.0,
                  harness_over_events=0.99)
    values.update(change)
    write_results(tmp_path, "NVIDIA H200", **values)
    done = run_checker(tmp_path)
    assert done.returncode == 1
    assert [line for line in done.stdout.splitlines() if line.startswith("FAIL")][0].find(failing) > 0


def test_the_h200_nvl_is_not_held_to_the_h200_sxm_reference(tmp_path):
    write_results(tmp_path, "NVIDIA H200 NVL", 79.7, 85.4, 788.0, 800.0, 0.99)
    done = run_checker(tmp_path)
    assert "H200 SXM" not in done.stdout and "device: cuda:0 (NVIDIA H200 NVL)" in done.stdout


def test_the_checker_refuses_a_missing_folder_with_one_line(tmp_path):
    done = run_checker(tmp_path / "nope")
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0


def test_a_raw_child_run_gets_the_datasheet_peak_from_the_catalog_by_exact_name(tmp_path):
    events = [{"v": 2, "event": "started", "metadata": {"cuda_devices": {"cuda:0": {"name": "NVIDIA H200"}}}},
              {"v": 2, "event": "result", "kernel": "gemm", "device": "cuda:0", "variant": "bf16", "status": "ok",
               "value": 788.0, "unit": "TFLOP/s"},
              {"v": 2, "event": "result", "kernel": "membw", "device": "cuda:0", "variant": "copy", "status": "ok",
               "value": 4100.0, "unit": "GB/s"}]
    tmp_path.joinpath("events-peak.jsonl").write_text("\n".join(json.dumps(event) for event in events) + "\nnot json\n")
    done = run_checker(tmp_path)
    datasheet = [line for line in done.stdout.splitlines() if "datasheet" in line or "HBM" in line]
    assert all(line.startswith("PASS") and "catalog id" in line for line in datasheet), done.stdout
