"""The transformer PRM's function scope: code before a function cannot move that function's step scores."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mlx26.core.score_code.features import StepFeaturizer  # noqa: E402
from mlx26.core.score_code.segment import segment  # noqa: E402
from mlx26.core.score_code.transformer import TransformerConfig, TransformerPRM, scope_groups  # noqa: E402

HELPERS = "def helper(a):\n    return a + 1\n\n\ndef other(b):\n    c = b * 2\n    return c\n\n\n"
TARGET = ("def handler(request):\n    name = request.args['name']\n    q = \"SELECT * FROM t WHERE n = '%s'\" % name\n"
          "    cursor.execute(q)\n\n    return cursor.fetchall()\n")
SMALL = dict(vocab=256, d_model=16, n_heads=2, n_layers=1, d_ff=32, max_len=64)


def _steps(text: str) -> list[str]:
    return [s.text for s in segment(text, "block")]


def _model(function_scope: int) -> TransformerPRM:
    torch.manual_seed(0)
    return TransformerPRM(TransformerConfig(function_scope=function_scope, **SMALL))


def test_scope_groups_follow_the_linear_featurisers_rule():
    texts = ["import os", "def a():\n    x = 1", "    def inner():\n        pass", "    return x",
             "def b():\n    pass", "class C:\n    pass", "y = 2"]
    groups = scope_groups(texts, True)
    assert groups == [[0, 1, 2, 3], [4], [5, 6]]
    assert scope_groups(texts, False) == [list(range(7))]
    # the linear featuriser (scope="function") starts a fresh context at exactly the same steps
    fz = StepFeaturizer(1 << 10, 256, scope="function")
    fresh = []
    for t in texts:
        fz(t)
        fresh.append(len(fz._recent) == 1)  # only this step in its context window
    assert [i for i, f in enumerate(fresh) if f] == [g[0] for g in groups]


def test_prepended_functions_do_not_move_a_functions_scores():
    target, prefixed = _steps(TARGET), _steps(HELPERS + TARGET)
    n = len(target)
    scoped = _model(1)
    assert scoped.score_steps(prefixed)[0][-n:] == scoped.score_steps(target)[0]
    window = _model(0)  # the window-only model reads the helpers' tokens too
    assert window.score_steps(prefixed)[0][-n:] != window.score_steps(target)[0]


def test_stream_equals_batch_with_function_scope():
    model = _model(1)
    steps = _steps(HELPERS + TARGET + HELPERS)
    batch, _ = model.score_steps(steps)
    stream = model.stream()
    assert [stream.score(s) for s in steps] == pytest.approx(batch, abs=1e-6)


def test_function_scope_round_trips_and_old_files_keep_their_keys():
    scoped, window = _model(1), _model(0)
    assert TransformerPRM.from_arrays(scoped.to_arrays()).config.function_scope == 1
    arrays = window.to_arrays()
    assert "config/function_scope" not in arrays  # files of window-only models are unchanged
    assert TransformerPRM.from_arrays(arrays).config.function_scope == 0
