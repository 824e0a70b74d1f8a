"""What a smaller micro-batch changes beyond the gradients (configs.micro_batch.batch_statistics_note), wherever a
way out names it."""

from __future__ import annotations

import datetime as dt

from pth_top.configs.recommend import recommend
from tests.configs.builders import answers

TODAY = dt.date(2026, 11, 1)


def test_a_cnns_micro_batch_taken_down_by_the_quality_free_levers_says_what_batchnorm_sees(catalog):
    # Audit DC66: TResNet-M at batch 512 on an owned RTX 3090, way out 3 "buying other cards ..., full recompute,
    # micro-batch 1" said nothing of BatchNorm's statistics over one image, where way out 1 (accumulation) did.
    job = answers(workload__preset="custom", workload__kind="cnn", workload__parameters=31_390_000,
                  workload__input_size_px=224, workload__forward_gflops_per_sample=11.0, workload__batch_size=512,
                  task__mode="training", task__precision="amp_fp16", task__optimizer="sgd", data__kind="images",
                  budget__currency="EUR", budget__amount=2500.0, budget__owned_gpu="rtx-3090-24gb",
                  budget__owned_gpu_count=1)
    build = recommend(job, catalog, today=TODAY)
    lines = [line for line, _, _ in build.applicable_alternatives if "micro-batch 1" in line]
    assert lines and all("BatchNorm layers that train see 1 sample a GPU, not 512" in line for line in lines), lines

