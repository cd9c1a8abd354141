"""Every row of a corpus written from SimpliPy's documented grammar parses, simplifies soundly."""

from pathlib import Path

import numpy as np
from mlx26.core.simplify import ExpressionError, evaluate, simplify
from mlx26.core.simplify.corpus import load_corpus, parse_row

CORPUS = Path(__file__).with_name("data") / "simplipy_grammar_corpus.json"


def test_all_400_rows_parse():
    rows = load_corpus(CORPUS)
    assert len(rows) == 400
    bad = [(r, p) for r, p in rows if isinstance(p, Exception)]
    assert bad == []


def test_corpus_rows_simplify_to_equal_values():
    rng = np.random.default_rng(5)
    X = rng.uniform(-3, 3, size=(128, 3))
    consts = 0.8137
    mismatches, refused = [], 0
    for _, p in load_corpus(CORPUS):
        try:
            out = simplify(p)
        except ExpressionError:
            refused += 1  # a literal-only part is undefined: nowhere finite
            assert not np.isfinite(evaluate(p, X, constants=consts)).any()
            continue
        assert len(out) <= len(p)
        y, z = evaluate(p, X, constants=consts), evaluate(out, X, constants=consts)
        fy = np.isfinite(y)
        if not (np.all(np.isfinite(z[fy])) and np.allclose(y[fy], z[fy], rtol=1e-6, atol=1e-9)):
            mismatches.append((p, out))
    assert mismatches == []


def test_row_shapes(tmp_path):
    assert parse_row(["+", "x1", "float('inf')"]) == ["+", "x1", "inf"]
    assert parse_row("+ x1 x2") == ["+", "x1", "x2"]
    assert parse_row("x1 + x2**(1/3)") == ["+", "x1", "pow1_3", "x2"]
    assert parse_row({"skeleton": ["asinh", "x1"]}) == ["asinh", "x1"]
    f = tmp_path / "c.jsonl"
    f.write_text('["sin", "x1"]\n"cos(x2)"\n["foo"]\n')
    rows = load_corpus(f)
    assert rows[0][1] == ["sin", "x1"] and rows[1][1] == ["cos", "x2"] and isinstance(rows[2][1], ExpressionError)
