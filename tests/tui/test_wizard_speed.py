"""The wizard's speed figures use this machine's last saved bench run when it measured the build's GPU model."""

from __future__ import annotations

from pathlib import Path

import pytest

from pth_top.benches.client.runs import RunRecord, load_run, save_run
from pth_top.configs.build_file import load_build
from pth_top.configs.parts import load_catalog
from pth_top.tui import cli
from pth_top.tui.wizard.measured import ceilings_of, last_run_ceilings

GOOD = Path(__file__).parent.parent / "configs" / "good_answers.toml"


@pytest.fixture(autouse=True)
def only_our_commands(monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("pth_top.tui.commands.wizard", "pth_top.tui.commands.build"))


def row(kernel: str, variant: str, value: float, device: str = "cuda:0") -> dict:
    return {"kernel": kernel, "device": device, "variant": variant, "status": "ok", "value": value}


def bench_run(device_name: str) -> RunRecord:
    return RunRecord(suite="standard", devices=["cuda:0"], metadata={"cuda_devices": {"cuda:0": {"name": device_name}}},
                     rows=[row("gemm", "bf16", 12.5), row("gemm", "fp16", 13.0), row("membw", "copy", 321.0),
                           row("membw", "triad", 999.0), row("allreduce", "best busbw x2 nccl", 7.5, "host")],
                     finished={})


def test_ceilings_are_read_from_the_run_rows():
    ceilings = ceilings_of(bench_run("NVIDIA GeForce RTX 4090").metadata, bench_run("x").rows, "run")
    assert ceilings is not None and ceilings.part_id == "rtx-4090-24gb"
    assert ceilings.tflops == {"bf16_dense_tflops": 12.5, "fp16_dense_tflops": 13.0}
    assert (ceilings.bandwidth_gb_per_s, ceilings.busbw_gb_per_s, ceilings.busbw_gpus) == (321.0, 7.5, 2)
    assert ceilings_of({"cuda_devices": {"cuda:0": {"name": "Some Unknown GPU"}}}, [], "run") is None
    assert last_run_ceilings() is None  # no saved run here


def test_a_real_h200_runs_ceilings_are_its_measured_rates():
    """The H200 run recorded by tests/perf/gpu_check.sh (tests/fakes/recorded/h200) as the wizard reads it."""
    run = load_run(Path(__file__).parents[1] / "fakes" / "recorded" / "h200" / "run-peak.json")
    ceilings = ceilings_of(run.metadata, run.rows, "h200")
    assert ceilings is not None and ceilings.part_id == "h200-141gb-sxm"
    assert {rate: round(value, 1) for rate, value in ceilings.tflops.items()} == {
        "fp32_tflops": 51.4, "tf32_dense_tflops": 356.3, "fp16_dense_tflops": 686.3, "bf16_dense_tflops": 713.7}
    assert round(ceilings.bandwidth_gb_per_s) == 4267 and ceilings.busbw_gb_per_s == 0.0  # copy, not triad


def test_headless_wizard_uses_the_last_run_for_the_same_gpu_model(tmp_path, capsys):
    first = tmp_path / "datasheet.toml"
    assert cli.main(["wizard", "--answers", str(GOOD), "--out", str(first)]) == 0
    built = load_build(first)[0]
    assert built.speed.ceilings == "datasheet" and "datasheet ceilings" in capsys.readouterr().out
    gpu = load_catalog(Path("/nonexistent-user-catalog")).get(built.component("gpu").part_id)
    saved = save_run(bench_run(gpu["device_names"][0]))
    second = tmp_path / "measured.toml"
    assert cli.main(["wizard", "--answers", str(GOOD), "--out", str(second)]) == 0
    printed = capsys.readouterr().out
    measured = load_build(second)[0]
    assert measured.speed.ceilings.startswith("measured by the bench run") and saved.name in measured.speed.ceilings
    assert "measured by the bench run" in printed and measured.speed.inputs["tflops"] == 12.5
    assert measured.speed.inputs["bandwidth_gb_per_s"] == 321.0
    assert cli.main(["build", "show", str(second)]) == 0
    assert "measured by the bench run" in capsys.readouterr().out
