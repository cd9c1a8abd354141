"""Acceptance metrics on a hand-made histogram, against the closed-form reference formulas."""

from __future__ import annotations

import pytest
from mlx26.core.common.errors import InputError
from mlx26.core.spec_bench import metrics as M


def test_conditional_and_joint_acceptance_match_the_reference_formulas():
    k = 3
    hist = [4, 3, 2, 1]  # steps that accepted exactly 0, 1, 2, 3 of k = 3 drafts
    steps = [M.Step(k, a) for a, n in enumerate(hist) for _ in range(n)]
    total = sum(hist)
    ref_joint = [sum(hist[i + 1:]) / total for i in range(k)]  # P(a > i)
    ref_cond = [sum(hist[i + 1:]) / sum(hist[i:]) for i in range(k)]  # P(a > i | a >= i)
    got = M.by_position(steps, k)
    assert got["joint"] == pytest.approx(ref_joint)  # 0.6, 0.3, 0.1
    assert got["conditional"] == pytest.approx(ref_cond)  # 6/10, 3/6, 1/3
    assert M.histogram(steps, k) == hist
    new = sum((a + 1) * n for a, n in enumerate(hist))
    summary = M.summarize(steps, new, total, k)
    assert summary["acceptance_length"] == pytest.approx(1 + sum(a * n for a, n in enumerate(hist)) / total)
    assert summary["acceptance_rate"] == pytest.approx(10 / 30)


def test_positions_not_drafted_are_excluded():
    steps = [M.Step(1, 1), M.Step(1, 0), M.Step(3, 3)]
    got = M.by_position(steps, 3)
    assert got["conditional"] == pytest.approx([2 / 3, 1.0, 1.0])


def test_modelled_speedup_closed_form_and_nulls():
    assert M.modelled_speedup(3.0, 4, 0.25) == pytest.approx(1.5)
    assert M.modelled_speedup(None, 4, 0.25) is None
    assert M.acceptance_length(10, 0) is None
    with pytest.raises(InputError):
        M.check_k(0)
