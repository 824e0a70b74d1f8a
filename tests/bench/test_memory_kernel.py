"""The `memory` kernel: measured peak of real training steps on CPU, and the wizard's estimate within 15 %."""

from __future__ import annotations

import pytest

from pth_top.benches.client.memory_check import comparison_note, estimated_bytes
from pth_top.benches.client.rows import ResultRow

TOLERANCE = 0.15


def measured_and_estimated(run_kernels, device: str) -> dict[str, dict]:
    code, events = run_kernels("memory", devices=(device,))
    assert code == 0, [event.fields for event in events if event.kind == "error"]
    return {event.get("variant"): event.fields for event in events if event.kind == "result"}


def test_estimator_within_15_percent_of_the_measured_peak_for_each_model(run_kernels):
    rows = measured_and_estimated(run_kernels, "cpu")
    assert set(rows) == {"cnn", "transformer", "lora"}
    for name, row in rows.items():
        measured = row["value"] * 2**20
        assert row["unit"] == "MiB" and measured > 0
        model = row["details"]["model"]
        estimate = estimated_bytes(model, cuda=False)  # no CUDA context on CPU
        assert abs(estimate / measured - 1) <= TOLERANCE, (name, estimate / 2**20, row["value"], model)
        assert "vs measured" in ResultRow.from_dict(row).note
    assert rows["lora"]["details"]["model"]["method"] == "lora"
    assert rows["lora"]["value"] < rows["transformer"]["value"]  # no gradients or Adam states for the base


def test_comparison_note_for_odd_rows():
    assert comparison_note({"kernel": "memory", "value": None, "details": {}}) == ""
    note = comparison_note({"kernel": "memory", "value": 10.0, "details": {"model": {"kind": "transformer",
                            "precision": "fp4", "parameters": 10}}})
    assert "not one the estimator reads" in note
    good = {"kind": "transformer", "parameters": 1000, "layers": 1, "hidden_size": 8, "attention_heads": 2,
            "sequence_length": 4, "batch": 1}
    assert estimated_bytes(good, cuda=True) == estimated_bytes(good, cuda=False)


@pytest.mark.gpu
def test_estimator_within_15_percent_of_max_memory_allocated_on_cuda(run_kernels):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    rows = measured_and_estimated(run_kernels, "cuda:0")
    assert set(rows) == {"cnn", "transformer", "lora"}
    for name, row in rows.items():
        estimate = estimated_bytes(row["details"]["model"], cuda=True)
        assert abs(estimate / (row["value"] * 2**20) - 1) <= TOLERANCE, (name, estimate / 2**20, row["value"])


def test_frozen_backbone_estimate_within_15_percent_of_the_measured_peak(torch):
    from pth_top.benches.child.kernels import memory
    from pth_top.configs.memory import estimate_training
    from pth_top.configs.memory_terms import ModelShape

    channels, batch, image = (32, 64, 64), 32, 32

    def build():
        model = memory.cnn(channels)
        model.requires_grad_(False)
        model[-1].requires_grad_(True)  # the head
        return model, torch.randn(batch, 3, image, image)

    measured = memory.peak_bytes("cpu", build)
    model, _ = build()
    head = sum(p.numel() for p in model[-1].parameters())
    shape = ModelShape("cnn", sum(p.numel() for p in model.parameters()) - head,
                       largest_activation_elements=max(channels) * image * image, feature_width=channels[-1])
    estimate = estimate_training(shape, precision="fp32", optimizer="adamw", global_batch=batch, method="frozen",
                                 head_parameters=head, cuda_context_bytes=0).total_bytes
    assert abs(estimate / measured - 1) <= TOLERANCE, (estimate / 2**20, measured / 2**20)
