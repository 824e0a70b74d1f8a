"""Speculative decoding (task.speculative_draft_tokens, task.speculative_accept_length) in the decode rate."""

from __future__ import annotations

import pytest

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.speed_speculative import speculative_factor
from tests.configs.builders import answers

# lmsys.org/blog/2025-07-17-mtp: DeepSeek-V3 under SGLang on 16 H200, 2 requests a rank of 64k, 51.0 tokens/s a rank
# without MTP; 81.5 drafting 2 a step (accept length 2.18), 82.0 drafting 3 (2.44).
DEEPSEEK_V3_MTP = ((2, 2.18, 81.5 / 51.0), (3, 2.44, 82.0 / 51.0))


@pytest.mark.parametrize(("drafted", "accepted", "published"), DEEPSEEK_V3_MTP)
def test_the_gain_is_the_accepted_tokens_over_the_step_the_draft_lengthens(drafted, accepted, published):
    assert speculative_factor(drafted, accepted) == pytest.approx(published, rel=0.05)
    assert speculative_factor(drafted, accepted) < accepted  # never the accept length itself: the draft costs time
    assert speculative_factor(0, 0.0) == 1.0


def test_an_accept_length_needs_its_draft_and_fits_it():
    server = {"task__mode": "inference", "workload__preset": "llama3-8b"}
    too_long = answers(**server, task__speculative_draft_tokens=2, task__speculative_accept_length=3.5)
    assert [key for _, key, _ in cross_field_problems(too_long)] == ["speculative_accept_length"]
    alone = answers(**server, task__speculative_accept_length=2.0)
    assert "speculative_draft_tokens" in [key for _, key, _ in cross_field_problems(alone)]
    assert not cross_field_problems(answers(**server, task__speculative_draft_tokens=3,
                                            task__speculative_accept_length=2.4))
