"""Per-domain budgets: exact totals, largest-remainder rounding, capping and redistribution, errors."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from mlx26.core.select_batch.budgets import allocate_budgets, parse_budget_mode


def _hamilton(weights: dict[str, float], total: int) -> dict[str, int]:
    """Textbook largest-remainder apportionment (no caps), ties to the larger weight then the name."""
    s = sum(weights.values())
    quotas = {d: total * w / s for d, w in weights.items()}
    seats = {d: math.floor(q) for d, q in quotas.items()}
    left = total - sum(seats.values())
    for d in sorted(weights, key=lambda d: (-(quotas[d] - seats[d]), -weights[d], d))[:left]:
        seats[d] += 1
    return seats


def test_proportional_textbook_example():
    assert allocate_budgets({"a": 50, "b": 30, "c": 20}, 10) == {"a": 5, "b": 3, "c": 2}
    # quotas 3.5, 3.5, 3.0: one leftover seat, tie broken by name
    assert allocate_budgets({"a": 7, "b": 7, "c": 6}, 10) == {"a": 4, "b": 3, "c": 3}


def test_equal_redistributes_a_short_domain():
    # equal quotas 3, 3, 3; 'a' has 1 item -> capped, its 2 go to b and c
    assert allocate_budgets({"a": 1, "b": 10, "c": 10}, 9, "equal") == {"a": 1, "b": 4, "c": 4}
    # a cascade: 'a' and then 'b' become short
    assert allocate_budgets({"a": 1, "b": 3, "c": 20}, 12, "equal") == {"a": 1, "b": 3, "c": 8}


def test_budget_equal_to_pool_takes_everything():
    counts = {"x": 3, "y": 9, "z": 1}
    for mode in ("proportional", "equal"):
        assert allocate_budgets(counts, 13, mode) == counts


@pytest.mark.parametrize("seed", range(60))
def test_random_invariants_and_hamilton_reference(seed):
    rng = random.Random(seed)
    counts = {f"d{i}": rng.randint(0 if i else 1, 40) for i in range(rng.randint(1, 5))}
    total = sum(counts.values())
    budget = rng.randint(1, total)
    for mode in ("proportional", "equal"):
        got = allocate_budgets(counts, budget, mode)
        assert sum(got.values()) == budget
        assert all(0 <= got[d] <= counts[d] for d in counts)
        if mode == "equal":  # domains that were not capped differ by at most one
            free = [got[d] for d in counts if got[d] < counts[d]]
            assert not free or max(free) - min(free) <= 1
            assert all(got[d] == counts[d] or got[d] >= min(free) for d in counts)
    prop = allocate_budgets(counts, budget, "proportional")
    expected = {d: 0 for d in counts} | _hamilton({d: float(n) for d, n in counts.items() if n > 0}, budget)
    assert prop == expected


def test_given_budgets_and_errors(tmp_path):
    counts = {"code": 5, "prose": 3}
    assert allocate_budgets(counts, 4, {"code": 4}) == {"code": 4, "prose": 0}
    with pytest.raises(ValueError, match="not in the pool"):
        allocate_budgets(counts, 4, {"math": 4})
    with pytest.raises(ValueError, match="exceeds its 3"):
        allocate_budgets(counts, 5, {"code": 1, "prose": 4})
    with pytest.raises(ValueError, match="sum to 3"):
        allocate_budgets(counts, 4, {"code": 2, "prose": 1})
    with pytest.raises(ValueError, match="exceeds the pool"):
        allocate_budgets(counts, 9)
    with pytest.raises(ValueError, match="Unknown budget mode"):
        allocate_budgets(counts, 2, "fair")
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"code": 2, "prose": 2}))
    assert parse_budget_mode(str(path)) == {"code": 2, "prose": 2}
    assert parse_budget_mode("equal") == "equal"
    with pytest.raises(ValueError, match="JSON file"):
        parse_budget_mode(str(tmp_path / "missing.json"))
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        parse_budget_mode(str(path))


def test_curriculum_weights_follow_the_formula_and_favour_lagging_domains():
    """b_c = B/C − (B/λ)·z_c (z standardised, population sd), negative targets clipped to 0."""
    from mlx26.core.select_batch.budgets import curriculum_weights, water_fill

    counts = {"a": 10, "b": 10, "c": 10}
    gains = {"a": 0.3, "b": 0.1, "c": 0.2}
    w = curriculum_weights(counts, gains, 8, 4.0)
    g = np.array([0.3, 0.1, 0.2])
    z = (g - g.mean()) / g.std()
    ref = np.maximum(8 / 3 - 8 / 4.0 * z, 0.0)
    assert np.allclose([w["a"], w["b"], w["c"]], ref, atol=1e-8)
    budgets = water_fill(dict(counts), 8, w)
    assert sum(budgets.values()) == 8 and budgets["b"] > budgets["c"] > budgets["a"]
    # equal gains (sd 0): equal shares; a domain without a gain counts as average
    assert len(set(round(v, 6) for v in curriculum_weights(counts, {"a": 1.0, "b": 1.0, "c": 1.0}, 6, 1.0).values())) == 1
    assert curriculum_weights(counts, {"a": 1.0, "b": 1.0}, 6, 1.0)["c"] == pytest.approx(2.0, abs=1e-6)
    # a capped domain's share goes to the others, even those whose target was clipped to 0
    capped = water_fill({"a": 1, "b": 1, "c": 10}, 8, curriculum_weights({"a": 1, "b": 1, "c": 10},
                                                                      {"a": 0.0, "b": 0.0, "c": 9.0}, 8, 0.5))
    assert capped == {"a": 1, "b": 1, "c": 6}


def test_curriculum_is_a_training_mode():
    from mlx26.core.select_batch.budgets import parse_budget_mode

    assert parse_budget_mode("curriculum", train=True) == "curriculum"
    with pytest.raises(ValueError, match="during training"):
        parse_budget_mode("curriculum")


def test_training_budgets_follow_the_last_selection_gains():
    pytest.importorskip("transformers")
    from mlx26.core.select_batch.data import demo_rows, parse_rows
    from mlx26.core.select_batch.train import SelectTrainer, TrainConfig

    pool = parse_rows(enumerate(demo_rows("train", 200, 0), 1), "pool")
    val = parse_rows(enumerate(demo_rows("val", 6, 0), 1), "val")
    cfg = TrainConfig(method="partitionsel", steps=5, batch=6, buffer=4, seq_len=16, proj_dim=64,
                      budget_mode="curriculum", curriculum_lambda=2.0, eval_every=5)
    records = [r for r in SelectTrainer(pool, val, cfg).run() if r["step"] > 0]
    for prev, cur in zip(records, records[1:]):
        gains, budgets = prev["domain_gains"], cur["budgets"]
        assert sum(budgets.values()) == 6 and cur["counts"] == {d: k for d, k in budgets.items() if k}
        low, high = min(gains, key=gains.get), max(gains, key=gains.get)
        if gains[low] < gains[high]:
            assert budgets.get(low, 0) >= budgets.get(high, 0)
    with pytest.raises(ValueError, match="computes none"):
        TrainConfig(method="random", budget_mode="curriculum").validate(100)
