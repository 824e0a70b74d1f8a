"""The estimator against >= 20 published figures (tests/configs/published_figures.py), each within 15 %."""

from __future__ import annotations

import pytest

from tests.configs.published_figures import CASES, relative_error

TOLERANCE = 0.15


def test_the_corpus_has_at_least_20_sourced_cases():
    assert len(CASES) >= 20
    assert len({case.id for case in CASES}) == len(CASES)
    assert all(case.source for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_estimate_within_15_percent_of_the_published_figure(case):
    error = relative_error(case)
    assert abs(error) <= TOLERANCE, f"{case.id}: estimate {case.estimate():.4g} vs published {case.published:.4g} " \
        f"({error:+.1%}, {case.source})"


def test_a_gguf_file_whose_mlp_width_is_no_multiple_of_256_is_counted_with_llama_cpps_fallback():
    # The flat 4.8 bit came to 43.9 GB for Qwen2.5-72B's 47.42 GB file (-7.4 %, inside the 15 % above but enough
    # to call 22 GiB a card on two 24 GB cards); Llama 2 13B's 13,824 (54 x 256) has no fallback to count.
    cases = {case.id: case for case in CASES}
    assert abs(relative_error(cases["qwen25-72b-q4_K_M-file"])) <= 0.01
    assert abs(relative_error(cases["llama2-13b-q4_K_M-file"])) <= 0.01
