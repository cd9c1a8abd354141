"""Constant fitting, scoring, Pareto front, candidate sampling, the bit encoding, save/load checks."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

pytest.importorskip("scipy")
torch = pytest.importorskip("torch")

from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.simplify.ops import ARITY  # noqa: E402
from mlx26.core.sr import infer, spec  # noqa: E402
from mlx26.core.sr.model import FlashANSR, ModelConfig, encode_bits  # noqa: E402
from mlx26.core.sr.sampler import vocabulary  # noqa: E402


@pytest.fixture(scope="module")
def tiny_random_model():
    torch.manual_seed(0)
    m = FlashANSR(ModelConfig(d_model=16, n_heads=2, n_isab=1, n_inducing=4, n_seeds=2, n_dec=1,
                              vocab=tuple(vocabulary())))
    return m.eval()


def test_lm_recovers_known_constants():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(30, 1))
    y = 2.5 * np.sin(X[:, 0]) - 0.75  # skeleton + * <c> sin x1 <c>
    c, v = infer.fit_constants("+ * <constant> sin x1 <constant>".split(), X, y)
    assert v < 1e-20
    np.testing.assert_allclose(c, [2.5, -0.75], rtol=1e-8)


def test_fvu_is_one_minus_r2():
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(1)
    y, yhat = rng.normal(size=50), rng.normal(size=50)
    assert infer.fvu(y, yhat) == pytest.approx(1 - r2_score(y, yhat))
    assert infer.fvu(y, np.full(50, np.nan)) == float("inf")


def test_score_floors_at_float32_eps_so_length_decides():
    assert infer.score(0.0, 3, 0.05) == pytest.approx(np.log10(spec.FLOAT32_EPS) + 0.15)
    assert infer.score(1e-30, 3, 0.05) < infer.score(1e-30, 4, 0.05)


def test_pareto_front_is_the_non_dominated_set():
    rng = np.random.default_rng(2)
    cands = [infer.Candidate([], np.zeros(0), float(f), int(n)) for f, n in
             zip(rng.uniform(0, 1, 60), rng.integers(1, 15, 60), strict=True)]
    front = infer.pareto(cands)
    assert all(a.length < b.length and a.fvu > b.fvu for a, b in zip(front, front[1:], strict=False))
    for c in cands:  # every candidate off the front is dominated by one on it
        if c not in front:
            assert any(f.length <= c.length and f.fvu <= c.fvu for f in front)


def test_prior_search_recovers_a_short_formula():
    X = np.linspace(-1, 1, 20)[:, None]
    y = X[:, 0] ** 2 + X[:, 0]
    r = infer.search(X, y, sampler="prior", n_candidates=400, seed=0)
    assert r["best"].fvu <= spec.FLOAT32_EPS
    assert r["n_unique"] < r["n_sampled"]  # simplification + dedupe removed duplicates
    assert r["best"] in r["pareto"]


def test_bad_data_is_refused():
    X = np.ones((3, 1)) * np.arange(3)[:, None]
    with pytest.raises(InputError, match="3 points but candidates may have up to 4 free constants"):
        infer.search(X, X[:, 0], sampler="prior", n_candidates=4)
    X = np.arange(10.0)[:, None]
    y = X[:, 0].copy()
    y[3] = np.inf
    with pytest.raises(InputError, match="non-finite"):
        infer.search(X, y, sampler="prior", n_candidates=4)
    with pytest.raises(InputError, match="at most 3"):
        infer.search(np.ones((10, 4)), np.arange(10.0), sampler="prior")


def test_bits_round_trip_through_ieee754():
    X = np.array([[1.5, -2.0], [0.1, 3e-5]])
    y = np.array([-7.25, 1e10])
    B = encode_bits(X, y, 3).reshape(2, 4, 32)
    for i in range(2):
        for j, v in enumerate([X[i, 0], X[i, 1], None, y[i]]):
            if v is None:
                assert np.all(B[i, j] == 0)  # absent variable
                continue
            word = int("".join("1" if b > 0 else "0" for b in B[i, j]), 2)
            assert struct.unpack(">f", struct.pack(">I", word))[0] == np.float32(v)


def test_encoder_is_permutation_invariant(tiny_random_model):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 2))
    y = rng.normal(size=25)
    b = torch.from_numpy(encode_bits(X, y, 3))[None]
    perm = torch.from_numpy(rng.permutation(25))
    with torch.no_grad():
        a, c = tiny_random_model.encode(b), tiny_random_model.encode(b[:, perm])
    torch.testing.assert_close(a, c, rtol=1e-5, atol=1e-5)


def test_model_samples_are_complete_trees_in_the_allowed_vocabulary(tiny_random_model):
    X = np.random.default_rng(4).uniform(size=(20, 2))
    ops = ("+", "*", "sin")
    cands = infer.model_candidates(tiny_random_model, X, X[:, 0], 64, seed=0, operators=ops)
    assert len(cands) == 64
    for s in cands:
        pending = 1
        for t in s:
            pending += ARITY.get(t, 0) - 1
        assert pending == 0 and len(s) <= tiny_random_model.cfg.max_len - 2
        assert all(t in ops for t in s if t in ARITY)
        assert "x3" not in s


def test_save_load_round_trip_and_version_check(tmp_path, tiny_random_model):
    from mlx26.core.sr import train

    manifest = {"format": spec.MODEL_FORMAT, "config": tiny_random_model.cfg.as_dict()}
    train.save(tiny_random_model, manifest, tmp_path / "m")
    m2, man = train.load(str(tmp_path / "m"))
    for a, b in zip(tiny_random_model.state_dict().values(), m2.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b)
    man["format"] = "mlx26-sr/0"
    (tmp_path / "m" / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(InputError, match="model format 'mlx26-sr/0'"):
        train.load(str(tmp_path / "m"))
    man["format"] = spec.MODEL_FORMAT
    (tmp_path / "m" / "manifest.json").write_text(json.dumps(man))
    (tmp_path / "m" / "model.pt").write_bytes(b"not a model")
    with pytest.raises(InputError, match="does not match its manifest"):
        train.load(str(tmp_path / "m"))
    with pytest.raises(InputError, match="Unknown model"):
        train.load(str(tmp_path / "nothing"))


def test_printed_expression_keeps_the_value_with_readable_signs():
    from mlx26.core.simplify.ops import evaluate
    from mlx26.core.simplify.parse import parse_any, to_infix, tree_to_prefix
    from mlx26.core.sr.infer import Candidate, numeric_prefix, readable_signs

    X = np.random.default_rng(0).uniform(0.5, 2.0, size=(16, 2))
    for sk, c in [("+ * <constant> x1 <constant>", [3.0, -2.0]), ("+ <constant> x1", [-2.5]),
                  ("- x1 <constant>", [-1.25]), ("* <constant> + x1 <constant>", [3.0, -0.5]),
                  ("+ x1 * <constant> x2", [-2.375]), ("+ <constant> <constant>", [-1.0, -2.0])]:
        cand = Candidate(sk.split(), np.array(c), 0.0, len(sk.split()))
        text = cand.expression()
        assert "+ (-" not in text and "- (-" not in text, text
        want = evaluate(numeric_prefix(sk.split(), np.array(c)), X)
        got = evaluate(tree_to_prefix(parse_any(text)), X)
        assert np.allclose(got, want), (sk, text)
        assert cand.record()["constants"] == c
    assert to_infix(readable_signs("+ * 3 x1 -2".split())) == "3*x1 - 2"
