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


def _rows(*pairs):
    return [{"new_tokens": n, "target_calls": c} for n, c in pairs]


def test_al_ratio_is_the_ratio_of_pooled_acceptance_lengths():
    random_rows, real_rows = _rows((30, 10), (20, 10)), _rows((12, 10), (18, 10), (30, 20))
    out = M.al_ratio_interval(random_rows, real_rows, resamples=500, seed=3)
    # Pooled, not a mean of per-prompt ALs: (50 / 20) / (60 / 40) = 2.5 / 1.5.
    assert out["ratio"] == pytest.approx(2.5 / 1.5)
    assert out["low"] <= out["ratio"] <= out["high"]
    # Every resample is a ratio of two pooled ALs drawn from these prompts, so it lies between the extremes.
    assert out["low"] >= (20 / 10) / (30 / 10) - 1e-12 and out["high"] <= (30 / 10) / (12 / 10) + 1e-12
    assert out == M.al_ratio_interval(random_rows, real_rows, resamples=500, seed=3)


def test_al_ratio_interval_of_identical_single_prompts_is_one():
    out = M.al_ratio_interval(_rows((18, 10)), _rows((36, 20)), resamples=50)
    assert out["ratio"] == out["low"] == out["high"] == pytest.approx(1.0)
    assert out["share_at_most_one"] == 1.0


def test_al_ratio_interval_refuses_empty_groups_and_bad_levels():
    with pytest.raises(InputError, match="both groups"):
        M.al_ratio_interval([], _rows((1, 1)))
    with pytest.raises(InputError, match="level"):
        M.al_ratio_interval(_rows((1, 1)), _rows((1, 1)), level=1.0)


def test_each_category_gets_its_own_modelled_and_wall_speedup():
    from mlx26.core.spec_bench.report import rows as report_rows
    from mlx26.core.spec_bench.run import by_category

    prompts = [{"category": "code", "new_tokens": 30, "target_calls": 10, "spec_seconds": 1.0, "plain_seconds": 3.0},
               {"category": "code", "new_tokens": 10, "target_calls": 10, "spec_seconds": 1.0, "plain_seconds": 1.0},
               {"category": "chat", "new_tokens": 10, "target_calls": 10, "spec_seconds": 2.0, "plain_seconds": 1.0}]
    cats = {c["category"]: c for c in by_category(prompts, k=4, cost_ratio=0.25)}
    assert cats["code"]["acceptance_length"] == 2.0 and cats["code"]["modelled_speedup"] == pytest.approx(2.0 / 2.0)
    assert cats["chat"]["modelled_speedup"] == pytest.approx(1.0 / 2.0)
    assert cats["code"]["wall_speedup_cpu"] == pytest.approx(4.0 / 2.0) and cats["chat"]["wall_speedup_cpu"] == 0.5
    report = {"summary": {"engine": "ours", "k": 4, "modelled_speedup": 0.9, "wall_speedup_cpu": 1.5},
              "by_category": list(cats.values())}
    table = {r["key"]: r for r in report_rows([("run.json", [report])])}
    # the table shows each category's own figures, not the run's overall ones
    assert table["chat"]["modelled_speedup"] == pytest.approx(0.5) and table["chat"]["wall_speedup_cpu"] == 0.5


def test_report_rows_carry_the_target_and_plots_keep_runs_apart(tmp_path):
    pytest.importorskip("matplotlib")
    from mlx26.core.spec_bench.report import plots
    from mlx26.core.spec_bench.report import rows as report_rows

    cat = [{"category": "qa", "acceptance_length": 1.5, "greedy_match": True}]
    old = {"summary": {"engine": "ours", "k": 4}, "by_category": cat}  # written before reports named the target
    new = {"summary": {"engine": "ours", "k": 4, "target": "tiny-llama-1k"}, "by_category": cat}
    sweep = [{"concurrency": c, "k": 2, "throughput_tokens_per_s": 10.0 * c} for c in (1, 2)]
    table = report_rows([("a.json", [old]), ("b.json", [new]), ("s1.jsonl", sweep), ("s2.jsonl", sweep)])
    assert [r["target"] for r in table if r["kind"] == "category"] == [None, "tiny-llama-1k"]
    written = plots(table, str(tmp_path))
    assert {p.rsplit("/", 1)[-1] for p in written} == {"al_by_category.png", "throughput_vs_concurrency.png"}
