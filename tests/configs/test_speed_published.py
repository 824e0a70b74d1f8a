"""The speed prediction against >= 12 published throughput figures (tests/configs/published_speeds.py)."""

from __future__ import annotations

import pytest

from tests.configs.published_speeds import CASES, TOLERANCE, relative_error


def test_the_corpus_has_at_least_12_sourced_cases_most_within_tolerance():
    assert len({case.id for case in CASES}) == len(CASES) >= 12
    assert all(case.source and case.published > 0 for case in CASES)
    assert all(case.gap for case in CASES if case.tolerance > TOLERANCE)  # a wider band says why
    assert sum(case.tolerance == TOLERANCE for case in CASES) >= 12


@pytest.mark.parametrize("case", [pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=case.xfail))
                                  if case.xfail else case for case in CASES], ids=[case.id for case in CASES])
def test_prediction_within_tolerance_of_the_published_figure(case):
    error = relative_error(case)
    assert abs(error) <= case.tolerance, f"{case.id}: predicted {case.predict():.4g} vs published " \
        f"{case.published:.4g} ({error:+.1%}, {case.source}){'; ' + case.gap if case.gap else ''}"
