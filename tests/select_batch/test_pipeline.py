"""Selection from precomputed features: records, dropped rows, and never a silently partial selection."""

from __future__ import annotations

import numpy as np
import pytest
from mlx26.core.select_batch.data import parse_rows
from mlx26.core.select_batch.pipeline import select_from_features
from mlx26.core.select_batch.synthetic import make_pool


def _pool(seed=0):
    p = make_pool(seed, sizes=(12, 9, 6), dim=16)
    return p.G.copy(), p.domains, [f"r{i}" for i in range(len(p.domains))], p.anchors


def test_records_and_summary():
    G, domains, ids, V = _pool()
    records, summary, sel = select_from_features(G, domains, ids, V, 9)
    assert [r["rank"] for r in records] == list(range(9))
    assert {r["id"] for r in records} <= set(ids) and len({r["id"] for r in records}) == 9
    assert all(domains[ids.index(r["id"])] == r["domain"] and r["weight"] >= 0 for r in records)
    assert summary["counts"] == {"d0": 4, "d1": 3, "d2": 2} and summary["dropped_rows"] == 0
    assert summary["utility"] == pytest.approx(sel.trace[-1], rel=1e-9)


def test_bad_rows_are_dropped_with_a_count_and_never_selected():
    G, domains, ids, V = _pool()
    G[0] = np.nan
    G[1] = 0.0
    G[2, 3] = np.inf
    records, summary, _ = select_from_features(G, domains, ids, V, 9, method="gradmatch")
    assert summary["dropped_rows"] == 3
    assert not {"r0", "r1", "r2"} & {r["id"] for r in records}


def test_user_budget_that_no_longer_fits_after_dropping_is_an_error():
    G, domains, ids, V = _pool()
    G[[i for i, d in enumerate(domains) if d == "d2"][:2]] = np.nan  # d2 keeps 4 usable rows
    with pytest.raises(ValueError, match="'d2' \\(5\\) exceeds its 4 usable"):
        select_from_features(G, domains, ids, V, 9, {"d0": 2, "d1": 2, "d2": 5})


@pytest.mark.parametrize(("change", "needle"), [
    ("dup", "duplicate id 'r0'"),
    ("dim", "dimension 16 but validation gradients have 15"),
    ("missing", "'math' is not in the pool"),
    ("over", "exceeds the pool"),
    ("labels", "27 gradient rows but 26 domain labels"),
    ("allval", "every validation gradient row"),
])
def test_errors(change, needle):
    G, domains, ids, V = _pool()
    budget, mode = 9, "proportional"
    if change == "dup":
        ids[5] = "r0"
    elif change == "dim":
        V = V[:, :15]
    elif change == "missing":
        mode = {"math": 9}
    elif change == "over":
        budget = 28
    elif change == "labels":
        domains = domains[:-1]
    elif change == "allval":
        V = V * np.nan
    with pytest.raises(ValueError, match=needle):
        select_from_features(G, domains, ids, V, budget, mode)


def test_parse_rows_checks():
    ok = parse_rows(enumerate([{"id": 1, "domain": "a", "text": "hi there"}], 1), "p")
    assert ok[0].id == "1"
    with pytest.raises(ValueError, match="p line 2: duplicate id 'x' \\(first on line 1\\)"):
        parse_rows(enumerate([{"id": "x", "domain": "a", "text": "t"}, {"id": "x", "domain": "b", "text": "u"}], 1),
                   "p")
    with pytest.raises(ValueError, match="line 1: needs a non-empty string 'text'"):
        parse_rows(enumerate([{"id": "x", "domain": "a", "text": "  "}], 1), "p")
    with pytest.raises(ValueError, match="line 1: needs a string 'domain'"):
        parse_rows(enumerate([{"id": "x", "text": "t"}], 1), "p")
    assert parse_rows(enumerate([{"text": "t"}], 1), "v", need_domain=False)[0].domain == "all"


def test_candidate_stream_is_seeded_and_never_repeats_within_a_window():
    from itertools import islice

    from mlx26.core.select_batch.train import candidate_stream

    a = list(islice(candidate_stream(50, 16, seed=3), 10))
    assert a == list(islice(candidate_stream(50, 16, seed=3), 10))
    assert a != list(islice(candidate_stream(50, 16, seed=4), 10))
    assert all(len(set(w)) == 16 and all(0 <= i < 50 for i in w) for w in a)
    assert len(set(a[0] + a[1] + a[2])) == 48  # one epoch: three disjoint windows, tail of 2 skipped
    with pytest.raises(ValueError, match="cannot draw 51"):
        next(candidate_stream(50, 51, seed=0))
