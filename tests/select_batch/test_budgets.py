"""Per-domain budgets: exact totals, largest-remainder rounding, capping and redistribution, errors."""

from __future__ import annotations

import json
import math
import random

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
