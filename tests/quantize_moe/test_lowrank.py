"""LQER / TileQ factors: exact reductions, closed forms, monotonicity, memory formulas, synthetic gains."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from mlx26.core.quantize_moe import cluster, lowrank, quant, synthetic  # noqa: E402


@pytest.fixture(scope="module")
def layer():
    L = synthetic.layer(E=6, m=48, n=32, T=600, outliers=2, upcycle=1.0, seed=0)
    Wq = quant.rtn(L.W, 3, 16).dequantize()
    s = lowrank.activation_scale(L.stats.abs_sum, L.stats.count)
    return L, Wq, L.W - Wq, s


def test_tileq_with_one_expert_per_group_is_l2qer(layer):
    L, Wq, R, s = layer
    ids = torch.arange(6)
    for r in (1, 3, 8):
        e_lqer = lowrank.weighted_error(L.W, Wq + lowrank.fit_lqer(R, s, r).delta(), s)
        e_tile = lowrank.weighted_error(L.W, Wq + lowrank.fit_tileq(R, L.stats.abs_sum, L.stats.count, ids, ids,
                                                                     r).delta(), s)
        assert abs(e_tile - e_lqer) <= 1e-5 * e_lqer


def test_lqer_error_is_the_eckart_young_tail(layer):
    """Independent closed form: ‖RS − A B S‖² = Σ of the squared singular values beyond r."""
    L, Wq, R, s = layer
    r = 4
    sv = torch.linalg.svdvals(R.double() * s[:, None, :])
    tail = float((sv[:, r:] ** 2).sum())
    total = float(((L.W.double() * s[:, None, :]) ** 2).sum())
    assert lowrank.weighted_error(L.W, Wq + lowrank.fit_lqer(R, s, r).delta(), s) == pytest.approx(
        (tail / total) ** 0.5, rel=1e-5)


@pytest.mark.parametrize(("P", "Q"), [(1, 1), (2, 3), (6, 1)])
def test_error_non_increasing_in_rank(layer, P, Q):
    L, Wq, R, s = layer
    rows, cols = cluster.index_groups(6, P), cluster.index_groups(6, Q)
    lq = [lowrank.weighted_error(L.W, Wq + lowrank.fit_lqer(R, s, r).delta(), s) for r in range(1, 12)]
    tq = [lowrank.weighted_error(L.W, Wq + lowrank.fit_tileq(R, L.stats.abs_sum, L.stats.count, rows, cols,
                                                               r).delta(), s) for r in range(1, 12)]
    assert all(b <= a + 1e-9 for a, b in zip(lq, lq[1:], strict=False))
    assert all(b <= a + 1e-6 for a, b in zip(tq, tq[1:], strict=False))


def test_more_rounds_never_hurt(layer):
    """The alternating fit is monotone in its own objective (the scale pooled over each column group)."""
    L, Wq, R, _ = layer
    rows, cols = cluster.index_groups(6, 2), cluster.index_groups(6, 2)
    sq = lowrank.pooled_scale(L.stats.abs_sum, L.stats.count, cols)
    errs = [lowrank.weighted_error(L.W, Wq + lowrank.fit_tileq(R, L.stats.abs_sum, L.stats.count, rows, cols, 5,
                                                                 rounds=k).delta(), sq) for k in (1, 2, 3)]
    assert errs[1] <= errs[0] + 1e-9 and errs[2] <= errs[1] + 1e-9


def test_memory_formulas_and_matched_rank():
    assert lowrank.lqer_values(8, 384, 128, 8) == 8 * 8 * (384 + 128)
    assert lowrank.tileq_values(2, 3, 8, 384, 128, 5) == 2 * 384 * 5 + 3 * 128 * 5 + 8 * 25
    r = lowrank.match_rank(8, 384, 128, 8, 1, 1)
    budget = lowrank.lqer_values(8, 384, 128, 8)
    assert lowrank.tileq_values(1, 1, 8, 384, 128, r) <= budget < lowrank.tileq_values(1, 1, 8, 384, 128, r + 1)
    assert lowrank.match_rank(8, 384, 128, 3, 8, 8) == 3  # P = Q = E (cores absorbed) is exactly LQER's memory
    with pytest.raises(ValueError, match="no TileQ rank"):  # 7·2 + 7·2 + 8·1 > 8·1·(2 + 2): the cores do not fit
        lowrank.match_rank(8, 2, 2, 1, 7, 7)


def test_factor_count_equals_formula(layer):
    L, _, R, s = layer
    f = lowrank.fit_tileq(R, L.stats.abs_sum, L.stats.count, cluster.index_groups(6, 2),
                          cluster.index_groups(6, 3), 4)
    assert f.values() == lowrank.tileq_values(2, 3, 6, 48, 32, 4)
    assert lowrank.fit_lqer(R, s, 4).values() == lowrank.lqer_values(6, 48, 32, 4)


def test_per_expert_side_absorbs_the_core(layer):
    """P = E or Q = E: the core is multiplied into the per-expert side — same correction, no E·r² values."""
    L, _, R, _ = layer
    ids, two = torch.arange(6), cluster.index_groups(6, 2)
    for rows, cols in ((ids, two), (two, ids), (ids, ids)):
        P, Q = int(rows.max()) + 1, int(cols.max()) + 1
        f = lowrank.fit_tileq(R, L.stats.abs_sum, L.stats.count, rows, cols, 4)
        assert f.core is None and f.values() == lowrank.tileq_values(P, Q, 6, 48, 32, 4) == P * 48 * 4 + Q * 32 * 4
    assert lowrank.tileq_values(6, 6, 6, 48, 32, 4) == lowrank.lqer_values(6, 48, 32, 4)
    assert lowrank.search_grid(6) == [(P, Q) for P in (1, 2, 4, 6) for Q in (1, 2, 4, 6)]


def test_match_memory_search_is_never_worse_than_lqer(layer):
    """--match-memory without --rows/--cols: best (P, Q) at LQER's memory; P = Q = E (= L2QER) is a candidate."""
    from mlx26.core.quantize_moe import pipeline

    L, Wq, R, s = layer
    cfg = pipeline.Config(bits=3, group_size=16, lowrank="tileq", match_lqer_rank=4)
    assert pipeline.searches(cfg) and not pipeline.searches(pipeline.Config(lowrank="tileq", match_lqer_rank=4, rows=1))
    rec = pipeline.quantize_projection(L.W, L.stats, cfg).record
    assert rec["searched"] == 16 and rec["extra_bytes"] <= rec["lqer_bytes"]
    assert rec["err_lowrank"] <= rec["err_lqer"] * (1 + 1e-6)
    assert rec["extra_bytes"] == 2 * lowrank.tileq_values(rec["rows"], rec["cols"], 6, 48, 32, rec["rank"])


def test_subspace_overlap_of_identical_and_random_experts():
    torch.manual_seed(0)
    same = torch.randn(1, 40, 30).repeat(4, 1, 1)
    assert cluster.subspace_overlap(same, 3) == pytest.approx((1.0, 1.0), abs=1e-9)
    left, right = cluster.subspace_overlap(torch.randn(6, 400, 300), 4)
    assert left < 0.05 and right < 0.05  # random subspaces: ≈ r/m, r/n


def test_rank_out_of_range(layer):
    _, _, R, s = layer
    with pytest.raises(ValueError, match="--rank"):
        lowrank.fit_lqer(R, s, 33)


def test_expert_without_tokens_gets_identity_scale():
    s = lowrank.activation_scale(torch.tensor([[2.0, 4.0], [5.0, 5.0]]), torch.tensor([2, 0]))
    assert s.tolist() == [[1.0, 2.0], [1.0, 1.0]]


def _ratio_at_equal_memory(upcycle: float) -> float:
    L = synthetic.layer(E=8, m=128, n=64, T=1024, outliers=4, upcycle=upcycle, seed=1)
    Wq = quant.rtn(L.W, 3, 32).dequantize()
    R = L.W - Wq
    s = lowrank.activation_scale(L.stats.abs_sum, L.stats.count)
    e_lqer = lowrank.weighted_error(L.W, Wq + lowrank.fit_lqer(R, s, 4).delta(), s)
    r = lowrank.match_rank(8, 128, 64, 4, 1, 1)
    one = torch.zeros(8, dtype=torch.long)
    e_tile = lowrank.weighted_error(L.W, Wq + lowrank.fit_tileq(R, L.stats.abs_sum, L.stats.count, one, one,
                                                                  r).delta(), s)
    return e_tile / e_lqer


def test_synthetic_upcycled_outlier_moe_tileq_beats_lqer_at_equal_memory():
    """SYNTHETIC: near-identical (upcycled) experts + outlier input channels — TileQ ≤ 0.9 × LQER."""
    assert _ratio_at_equal_memory(0.0) <= 0.9


def test_synthetic_independent_experts_no_gain():
    """SYNTHETIC: independent experts share no residual subspace — TileQ does not win (honest control)."""
    assert _ratio_at_equal_memory(1.0) > 0.95


def test_activation_clustering_recovers_planted_groups():
    """Experts built from two residual families: activation-aware grouping separates them, index may not."""
    torch.manual_seed(5)
    bases = [torch.linalg.qr(torch.randn(40, 3)).Q for _ in range(2)]
    right = [torch.linalg.qr(torch.randn(30, 3)).Q for _ in range(2)]
    fam = [0, 1, 0, 1, 0, 1]
    M = torch.stack([bases[f] @ torch.randn(3, 3) @ right[f].T + 1e-3 * torch.randn(40, 30) for f in fam])
    rows, cols = cluster.assign("activation", M, 2, 2, 3)
    assert rows.tolist() == cols.tolist() == fam
    assert cluster.assign("index", M, 2, 2, 3)[0].tolist() == [0, 0, 0, 1, 1, 1]
    with pytest.raises(ValueError, match="--rows"):
        cluster.assign("index", M, 7, 1, 3)


def test_kernel_kmeans_groups_are_never_empty():
    K = torch.ones(5, 5)  # all experts identical
    labels = cluster.kernel_kmeans(K, 3)
    assert sorted(set(labels.tolist())) == [0, 1, 2]
