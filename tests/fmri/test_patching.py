"""Dynamic patching: exact partition, uniform/tau limits, pooled score vs brute force, the quickstart count."""

from __future__ import annotations

import numpy as np
import pytest
from mlx26.core.fmri import patching as P
from mlx26.core.fmri.preprocess import zscore_nonzero

from .conftest import BLOCK, quickstart_volume


def _blob(shape=(6, 21, 18, 27), seed=0):
    rng = np.random.default_rng(seed)
    t, *sp = shape
    grid = np.stack(np.meshgrid(*[np.arange(n) for n in sp], indexing="ij"), -1)
    inside = (((grid - np.array(sp) / 2) / (np.array(sp) / 2.6)) ** 2).sum(-1) < 1
    x = np.where(inside, 1 + 0.05 * grid[..., 0], 0)[None] + 0.2 * rng.standard_normal(shape) * inside
    return x.astype(np.float32)


def _cells(a: int, b: int, p: int) -> int:  # grid cells of edge p meeting [a, b)
    return -(-b // p) - a // p


@pytest.mark.parametrize("tau", [0.0, 0.1, 0.25, 0.5, 10.0])
@pytest.mark.parametrize("patching", ["dynamic", "random"])
def test_tokens_partition_the_foreground_exactly(tau, patching):
    x = _blob()
    tok = P.tokenize(x, P.Settings(tau=tau, patching=patching, seed=3))
    cov = tok.coverage()
    fg = np.abs(x).max(0) > tok.settings.bg
    assert (cov[fg] == 1).all()  # none lost, none twice
    assert cov.max() <= 1
    s = tok.summary()
    assert s["foreground_voxels_covered"] == s["foreground_voxels"] == int(fg.sum()) and s["voxels_covered_twice"] == 0


def test_one_scale_is_uniform_patching_and_tau_zero_is_all_fine():
    x = _blob()
    fg = np.abs(x).max(0) > 1e-3
    brute = sum(fg[i:i + 4, j:j + 4, k:k + 4].any() for i in range(0, 21, 4) for j in range(0, 18, 4)
                for k in range(0, 27, 4))
    assert P.tokenize(x, P.Settings(scales=1)).counts() == [brute]
    assert P.tokenize(x, P.Settings(patching="uniform")).counts() == [brute, 0]
    assert P.tokenize(x, P.Settings(tau=0.0)).counts() == [brute, 0]
    assert P.tokenize(x, P.Settings(tau=1e9)).counts()[1] > 0


@pytest.mark.parametrize("score", ["std", "var"])
@pytest.mark.parametrize("p", [4, 8])
def test_pooled_score_equals_brute_force(score, p):
    x = _blob(seed=1).astype(np.float64) * 3
    pooled = P.patch_scores(x.astype(np.float32), p, score)
    xp = P.pad_to(x.astype(np.float32), p).astype(np.float64)
    brute = np.zeros(pooled.shape)
    for i, j, k in np.ndindex(*pooled.shape):
        block = xp[:, i * p:(i + 1) * p, j * p:(j + 1) * p, k * p:(k + 1) * p].reshape(x.shape[0], -1)
        var = np.mean([np.var(frame) for frame in block])
        brute[i, j, k] = np.sqrt(var + 1e-6) if score == "std" else var
    np.testing.assert_allclose(pooled, brute, atol=1e-5, rtol=0)


def test_quickstart_volume_gives_880_fine_tokens():
    v = quickstart_volume()
    expected = np.prod([_cells(s.start, s.stop, 4) for s in BLOCK])  # 4^3 cells meeting the block: 8*10*11
    assert expected == 880
    z = zscore_nonzero(v)  # the documented settings: z-scored (as preprocess does), 2 scales, std score
    for tau, bg in [(0.25, 1e-3), (0.23, 1e-2)]:
        tok = P.tokenize(z, P.Settings(tau=tau, bg=bg))
        assert tok.counts() == [880, 0]
        assert tok.summary()["foreground_voxels"] == 32 * 36 * 42
    assert P.tokenize(v, P.Settings(tau=0.0)).counts() == [880, 0]
    raw = P.tokenize(v, P.Settings(tau=0.25)).counts()  # without the z-score the 0.1-std noise stays coarse
    assert raw[1] > 0 and raw[0] < 880


def test_all_zero_volume_gives_no_tokens():
    tok = P.tokenize(np.zeros((4, 16, 16, 16), np.float32), P.Settings())
    assert tok.counts() == [0, 0] and tok.summary()["foreground_voxels"] == 0


def test_dynamic_coarsening_beats_random_at_equal_count(synth_clips):
    dyn_sse, rnd_sse, ratios = 0.0, 0.0, []
    for i, x in enumerate(synth_clips.clips[:4]):
        d = P.tokenize(x, P.Settings(tau=0.25))
        r = P.tokenize(x, P.Settings(tau=0.25, patching="random", seed=i))
        assert sum(d.counts()) == sum(r.counts())  # equal token count
        dyn_sse += P.reconstruction_sse(x, d)
        rnd_sse += P.reconstruction_sse(x, r)
        ratios.append(d.summary()["token_ratio"])
    assert dyn_sse < 0.5 * rnd_sse
    assert max(ratios) <= 0.85


def test_reconstruction_is_exact_when_all_fine():
    x = _blob()
    assert P.reconstruction_sse(x, P.tokenize(x, P.Settings(tau=0.0))) == pytest.approx(0.0, abs=1e-8)


def test_patch_arrays_match_the_grid():
    x = _blob()
    tok = P.tokenize(x, P.Settings(tau=0.3))
    fine, coarse = P.patch_arrays(x, tok)
    assert fine.shape == (tok.counts()[0], 6, 4, 4, 4) and coarse.shape == (tok.counts()[1], 6, 8, 8, 8)
    c = tok.coords(0)[0]
    xp = P.pad_to(x, 8)
    np.testing.assert_array_equal(fine[0], xp[:, c[0]:c[0] + 4, c[1]:c[1] + 4, c[2]:c[2] + 4])
