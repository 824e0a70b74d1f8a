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
