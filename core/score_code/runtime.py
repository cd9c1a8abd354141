"""Where a step scorer runs: numpy (pure Python over the weights), torch, or onnxruntime.

SecCodePRM (Yu et al., ICML 2026, arXiv 2602.10418) scores each step as it arrives; this module
puts the same scorers behind one interface whatever the runtime, so ``score``, ``detect``,
``rank`` and ``--stream`` give the same scores (to ~1e-12 for the linear PRM, ~1e-6 for the
transformer) in each. The featurisation always runs in Python (:mod:`features`,
:func:`transformer.encode_steps`); only the arithmetic moves. Ours, not the paper's.

Every scorer has ``score_steps(texts) -> (scores, window_exceeded)`` and ``stream()`` →
an object whose ``score(step_text)`` scores the next step of a growing file at a cost that does
not grow with the file: the linear PRM keeps its context sum as a running total (the featuriser
reports which context features entered or left), the transformer keeps the token ids and reruns
only the current window (at most ``max_len`` tokens; positions are window-relative, so a KV
cache would be valid only until the window moves — not implemented).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError

RUNTIMES = ("numpy", "torch", "onnx")
SUPPORTED = {"linear": ("numpy", "torch", "onnx"), "transformer": ("torch", "onnx")}


def _pad(rows: Sequence[Sequence[int]], fill: int):
    import numpy as np

    width = max(1, max((len(r) for r in rows), default=0))
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


class _LinearArithmetic:
    """own/delta index lists → scores; ``run`` returns (scores, context sums) for steps in order."""

    def __init__(self, model, runtime: str, session=None):
        self.model = model
        self.runtime = runtime
        self.session = session
        if runtime == "torch":
            import torch

            self._w = torch.tensor(list(model.weights) + [0.0], dtype=torch.float32).double()

    def run(self, parts: Sequence[tuple[list[int], list[int], list[int]]], ctx0: float):
        import numpy as np

        dim = self.model.dim
        own = _pad([p[0] for p in parts], dim)
        delta = _pad([p[1] + p[2] for p in parts], dim)
        sign = np.zeros(delta.shape, dtype=np.float64)
        for i, (_, entered, left) in enumerate(parts):
            sign[i, :len(entered)] = 1.0
            sign[i, len(entered):len(entered) + len(left)] = -1.0
        if self.runtime == "onnx":
            score, ctx = self.session.run(None, {"own": own, "delta": delta, "sign": sign,
                                                 "ctx0": np.array([ctx0], dtype=np.float64)})
            return score.tolist(), ctx.tolist()
        import torch

        w = self._w
        own_sum = w[torch.from_numpy(own)].sum(1)
        ctx = torch.cumsum((w[torch.from_numpy(delta)] * torch.from_numpy(sign)).sum(1), 0) + ctx0
        return (-torch.tanh((own_sum + ctx) / 2)).tolist(), ctx.tolist()


class _LinearStream:
    def __init__(self, model, arithmetic: _LinearArithmetic | None):
        self.model = model
        self.arith = arithmetic
        self.fz = model.featurizer()
        self.ctx = 0.0

    def score(self, text: str) -> float:
        if self.arith is None:  # numpy: the featuriser's own running dot product
            return -math.tanh(self.fz.dot(text, self.model.weights) / 2)
        scores, ctx = self.arith.run([self.fz.delta(text)], self.ctx)
        self.ctx = ctx[0]
        return scores[0]


class LinearScorer:
    """The linear PRM in torch or onnxruntime (numpy is :class:`linear.LinearPRM` itself)."""

    kind = "linear"

    def __init__(self, model, runtime: str, session=None):
        self.model = model
        self.runtime = runtime
        self._arith = _LinearArithmetic(model, runtime, session)

    def __getattr__(self, name: str) -> Any:  # dim, window, scope, taint, weights, to_arrays …
        return getattr(self.model, name)

    def score_steps(self, texts: Sequence[str]) -> tuple[list[float], bool]:
        if not texts:
            return [], False
        m = self.model
        fz = m.featurizer()
        parts = [fz.delta(t) for t in texts]
        scores, _ = self._arith.run(parts, 0.0)
        return scores, fz.truncated

    def stream(self) -> _LinearStream:
        return _LinearStream(self.model, self._arith)


class _TransformerStream:
    """Token ids of the file so far; each step reruns only the window its SEP is read in."""

    def __init__(self, scorer):
        from mlx26.core.score_code.taint import ScopeTracker

        self.scorer = scorer
        self.ids: list[int] = []
        self.scopes = ScopeTracker()

    def score(self, text: str) -> float:
        from mlx26.core.score_code.transformer import encode_steps, window_start

        if self.scopes.starts_scope(text) and self.scorer.config.function_scope:
            self.ids = []  # a new function scope: the stream restarts, as in score_steps
        new, _ = encode_steps([text], self.scorer.config.vocab)
        self.ids += new
        sep = len(self.ids) - 1
        start = window_start(sep, self.scorer.config.max_len)
        return self.scorer.window_scores(self.ids[start:sep + 1])[-1]


class OnnxTransformerScorer:
    """The transformer PRM in onnxruntime: the exported graph scores one window at a time."""

    kind = "transformer"
    runtime = "onnx"

    def __init__(self, model, session):
        self.model = model
        self.session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def window_scores(self, ids: Sequence[int]) -> list[float]:
        import numpy as np

        return self.session.run(None, {"ids": np.asarray([ids], dtype=np.int64)})[0].tolist()

    def score_steps(self, texts: Sequence[str]) -> tuple[list[float], bool]:
        from mlx26.core.score_code.transformer import scores_by_scope

        if not texts:
            return [], False

        def at(ids: Sequence[int], positions: Sequence[int]) -> list[float]:
            values = self.window_scores(ids)
            return [values[q] for q in positions]

        return scores_by_scope(texts, self.model.config, at)

    def stream(self) -> _TransformerStream:
        return _TransformerStream(self)


def linear_stream(model) -> _LinearStream:
    return _LinearStream(model, None)


def transformer_stream(model) -> _TransformerStream:
    return _TransformerStream(model)


def onnx_session(path: str, model):
    """An onnxruntime session for ``path``, refused unless its manifest matches ``model`` and this featuriser."""
    from mlx26.core.common.errors import BackendMissing

    try:
        import onnx
        import onnxruntime as ort
    except ImportError:
        raise BackendMissing("--runtime onnx needs the optional packages 'onnxruntime' and 'onnx', which are "
                             "not installed.", hint="pip install 'mlx26[onnx]'") from None
    from mlx26.core.score_code.onnx_export import (
        FORMAT,
        feature_hash,
        graph_hash,
        model_hash,
        model_settings,
        read_manifest,
    )

    if Path(path).is_dir():
        raise InputError(f"--onnx {path} is a directory, not an ONNX file.")
    if not Path(path).is_file():
        raise InputError(f"ONNX file not found: {path}.", "write one with `mlx26 score-code export --onnx FILE`")
    try:
        proto = onnx.load(path)
    except Exception as exc:  # onnx raises DecodeError, ValueError … on a corrupt file
        raise InputError(f"{path} is not a readable ONNX file ({type(exc).__name__}).",
                         "re-export it with `mlx26 score-code export`") from None
    info = read_manifest(proto)
    if info.get("format") != FORMAT:
        raise InputError(f"{path} is not an mlx26 score-code ONNX file (no '{FORMAT}' manifest).",
                         "export it with `mlx26 score-code export`")
    if info.get("kind") != model.kind:
        raise InputError(f"{path} holds a {info.get('kind')} PRM, not the {model.kind} one.",
                         f"use --model {info.get('kind')}, or export the {model.kind} model")
    if info.get("graph_hash") != graph_hash(proto):
        raise InputError(f"{path} has been modified since it was exported (its graph does not match the hash in "
                         "its manifest).", "re-export it with `mlx26 score-code export`")
    settings = model_settings(model)
    if info.get("settings") != settings:
        diff = ", ".join(f"{k} {info.get('settings', {}).get(k)!r} vs {v!r}" for k, v in settings.items()
                         if info.get("settings", {}).get(k) != v)
        raise InputError(f"{path} was exported from another {model.kind} model than the one loaded ({diff}).",
                         "pass the --model-dir it was exported from")
    expected = feature_hash(model)
    if info.get("feature_hash") != expected:
        raise InputError(f"{path} was exported for another featuriser (feature hash {info.get('feature_hash')}, "
                         f"this mlx26 computes {expected}).", "re-export it with this mlx26's `score-code export`")
    if info.get("source_model_hash") != model_hash(model):
        raise InputError(f"{path} was exported from other weights than the {model.kind} model loaded "
                         f"(model hash {info.get('source_model_hash')} vs {model_hash(model)}).",
                         "pass the --model-dir it was exported from, or re-export it")
    if model.kind == "linear":  # the graph's own weights against the loaded model's, directly
        import numpy as np
        from onnx import numpy_helper

        init = next((t for t in proto.graph.initializer if t.name == "weights"), None)
        w = numpy_helper.to_array(init) if init is not None else None
        if w is None or w.shape != (model.dim + 1,) or w[-1] != 0 or not np.array_equal(
                w[:-1], np.asarray(model.weights, dtype=np.float32)):
            raise InputError(f"the weights inside {path} differ from the linear model loaded.",
                             "re-export it with `mlx26 score-code export`")
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one step at a time: thread start-up costs more than it saves
    options.inter_op_num_threads = 1
    options.log_severity_level = 4  # no C++ warnings on stderr
    try:
        return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "opset" in first.lower():
            raise InputError(f"{path} uses ONNX opset {opset}, which onnxruntime {ort.__version__} does not "
                             "support.", "re-export with a lower --opset (e.g. 17)") from None
        raise InputError(f"onnxruntime cannot load {path}: {first[:200]}", "re-export it") from None


def default_onnx_path(kind: str, model_dir: str | None) -> Path:
    from mlx26.core.score_code.prm import SHIPPED_DIR

    return (Path(model_dir) if model_dir else SHIPPED_DIR) / f"{kind}.onnx"


def onnx_available() -> bool:
    """Whether onnx and onnxruntime import (installed is not enough: a broken install counts as absent)."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except Exception:
        return False
    return True


def with_runtime(model, runtime: str, *, model_dir: str | None = None, onnx_path: str | None = None):
    """``model`` (from :func:`prm.load_model`) running in ``runtime``."""
    if runtime not in RUNTIMES:
        raise InputError(f"unknown runtime '{runtime}'.", "choose one of: " + ", ".join(RUNTIMES))
    if runtime not in SUPPORTED[model.kind]:
        raise InputError(f"the {model.kind} PRM runs in {' or '.join(SUPPORTED[model.kind])}, not {runtime}.",
                         "use --runtime " + SUPPORTED[model.kind][0])
    if runtime == "onnx":
        path = onnx_path or str(default_onnx_path(model.kind, model_dir))
        session = onnx_session(path, model)
        return LinearScorer(model, "onnx", session) if model.kind == "linear" else OnnxTransformerScorer(model,
                                                                                                         session)
    if runtime == "torch" and model.kind == "linear":
        return LinearScorer(model, "torch")
    return model
