"""The fast process reward model: logistic regression over hashed step + context features.

SecCodePRM (Yu et al., ICML 2026, arXiv 2602.10418) scores each step with a code LLM's
token-classification head; this linear model is our small stand-in (reconstruction). It gives
s_t = p(safe) − p(vulnerable) = −tanh(z_t / 2), z_t = w · x_t the logit of "vulnerable",
and x_t depends only on the code up to step t (see :mod:`features`), so scores are causal.
Trained with class-balanced, L2-regularised logistic loss by L-BFGS over the features that
occur in the data (deterministic).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mlx26.core.common.errors import InputError
from mlx26.core.score_code.features import (
    DEFAULT_DIM,
    DEFAULT_WINDOW,
    REGIONS,
    StepFeaturizer,
    csr,
    region_ends,
)


@dataclass
class LinearPRM:
    weights: list[float]
    dim: int = DEFAULT_DIM
    window: int = DEFAULT_WINDOW
    kind: str = "linear"
    scope: str = "window"
    taint: bool = False
    layout: str = "mixed"

    def featurizer(self) -> StepFeaturizer:
        """A fresh featuriser with this model's settings (one per file or stream)."""
        return StepFeaturizer(self.dim, self.window, scope=self.scope, taint=self.taint, layout=self.layout)

    def score_steps(self, texts: Sequence[str]) -> tuple[list[float], bool]:
        """Step scores in [−1, 1] and whether the context window was exceeded."""
        fz = self.featurizer()
        out = []
        for text in texts:
            z = fz.dot(text, self.weights)
            out.append(-math.tanh(z / 2))
        return out, fz.truncated

    def stream(self):
        """Scores the steps of a growing file one at a time, at a cost independent of its length."""
        from mlx26.core.score_code.runtime import linear_stream

        return linear_stream(self)

    def to_arrays(self) -> dict:
        import numpy as np

        arrays = {"weights": np.asarray(self.weights, dtype=np.float32), "dim": np.int64(self.dim),
                  "window": np.int64(self.window), "scope": np.str_(self.scope), "taint": np.bool_(self.taint)}
        if self.layout != "mixed":  # absent for the earlier layout, so earlier models keep their hashes
            arrays["layout"] = np.str_(self.layout)
        return arrays

    @classmethod
    def from_arrays(cls, arrays) -> LinearPRM:
        scope = str(arrays["scope"]) if "scope" in arrays else "window"  # models before the real-code pass
        taint = bool(arrays["taint"]) if "taint" in arrays else False
        layout = str(arrays["layout"]) if "layout" in arrays else "mixed"  # models before the second real-code pass
        return cls([float(x) for x in arrays["weights"].astype("float64")], int(arrays["dim"]), int(arrays["window"]),
                   scope=scope, taint=taint, layout=layout)


def feature_rows(step_texts: Sequence[Sequence[str]], dim: int, window: int, scope: str = "window",
                 taint: bool = False, layout: str = "mixed") -> list[list[int]]:
    rows = []
    for texts in step_texts:
        fz = StepFeaturizer(dim, window, scope=scope, taint=taint, layout=layout)
        rows += [fz(t) for t in texts]
    return rows


def _pair_means(pairs: Sequence[tuple[int, int]], lengths: Sequence[int], rows: int):
    """Sparse (pairs × rows) matrices that average the rows of each pair's vulnerable / fixed sequence."""
    import numpy as np
    from scipy import sparse

    starts = np.concatenate([[0], np.cumsum(lengths)])

    def averaging(seqs: list[int]):
        r: list[int] = []
        c: list[int] = []
        v: list[float] = []
        for i, seq in enumerate(seqs):
            if not 0 <= seq < len(lengths):
                raise InputError(f"pair refers to sequence {seq}, but there are {len(lengths)}.")
            n = int(lengths[seq])
            r += [i] * n
            c += range(int(starts[seq]), int(starts[seq]) + n)
            v += [1.0 / n] * n
        return sparse.csr_matrix((v, (r, c)), shape=(len(seqs), rows))

    return averaging([a for a, _ in pairs]), averaging([b for _, b in pairs])


def train_linear(step_texts: Sequence[Sequence[str]], labels: Sequence[Sequence[int]], *, dim: int = DEFAULT_DIM,
                 window: int = DEFAULT_WINDOW, l2: float | dict[str, float] = 1e-4, max_iter: int = 300,
                 scope: str = "window", taint: bool = False, weights: Sequence[float] | None = None,
                 layout: str = "mixed", pairs: Sequence[tuple[int, int]] = (), pair_weight: float = 0.0,
                 pair_scale: float = 5.0) -> tuple[LinearPRM, dict]:
    """Fit on files given as step texts with 0/1 step labels (1 = vulnerable).

    ``pairs``: (vulnerable, fixed) sequence indices of the same function before and after its fix.
    With ``pair_weight`` > 0 the loss gains ``pair_weight · mean log(1 + exp(−pair_scale · (Ā_fixed
    − Ā_vulnerable)))``, Ā the mean step score of a sequence: a pairwise term that asks the fixed
    version to score safer than the vulnerable one as a whole, where the step labels only say
    which lines changed (ours, not the paper's; it raised ranking in cross-validation, see docs).

    ``weights``: one weight per sequence (e.g. to keep a synthetic augmentation a minority).
    ``l2``: one strength, or one per namespace of the ``split`` layout (:data:`features.REGIONS`).
    """
    import numpy as np
    from scipy.optimize import minimize

    if isinstance(l2, dict) and (layout != "split" or set(l2) != set(REGIONS)):
        raise InputError("per-namespace l2 needs the split layout and one value for each of: " + ", ".join(REGIONS))
    rows = feature_rows(step_texts, dim, window, scope, taint, layout)
    y = np.asarray([v for ls in labels for v in ls], dtype=np.float64)
    if len(rows) != len(y):
        raise InputError("labels and steps differ in number.")
    if y.min() == y.max():
        raise InputError("training needs both vulnerable and safe steps.")
    full = csr(rows, dim).astype(np.float64)
    # Optimise over the features that occur only: the others have zero gradient at w = 0 and stay 0
    # (same optimum, and L-BFGS-B on 2^18 coordinates would spend most of its time on zeros).
    active = np.unique(full.indices)
    X = full[:, active]
    if isinstance(l2, dict):
        strength = np.asarray([l2[name] for name in REGIONS], dtype=np.float64)
        penalty = strength[np.searchsorted(region_ends(dim), active, side="right")]
    else:
        penalty = np.full(len(active), float(l2))
    pos = y.sum()
    sw = np.where(y == 1, 0.5 / pos, 0.5 / (len(y) - pos))  # class-balanced, sums to 1
    if weights is not None:
        seq_w = np.repeat(np.asarray(weights, dtype=np.float64), [len(t) for t in step_texts])
        sw = sw * seq_w
        sw = np.where(y == 1, 0.5 * sw / sw[y == 1].sum(), 0.5 * sw / sw[y == 0].sum())

    mean_of = _pair_means(pairs, [len(t) for t in step_texts], len(y)) if pair_weight > 0 and pairs else None

    def loss(w):
        z = X @ w
        # log(1 + exp(-yz')) with y' = ±1, stably
        m = np.where(y == 1, -z, z)
        ll = np.logaddexp(0, m)
        p = 1 / (1 + np.exp(-z))
        grad_z = sw * (p - y)
        value = float(sw @ ll + penalty @ (w * w))
        if mean_of is not None:
            vulnerable, fixed = mean_of
            s = -np.tanh(z / 2)
            margin = fixed @ s - vulnerable @ s
            value += pair_weight * float(np.mean(np.logaddexp(0, -pair_scale * margin)))
            g_margin = -pair_weight * pair_scale / len(margin) / (1 + np.exp(pair_scale * margin))
            grad_z = grad_z + (fixed.T @ g_margin - vulnerable.T @ g_margin) * (-0.5 * (1 - s * s))
        return value, X.T @ grad_z + 2 * penalty * w

    res = minimize(loss, np.zeros(len(active)), jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
    w = np.zeros(dim)
    w[active] = res.x
    acc = float(((full @ w > 0) == (y == 1)).mean())
    info = {"steps": len(y), "vulnerable_steps": int(pos), "iterations": int(res.nit), "final_loss": float(res.fun),
            "train_step_accuracy": acc, "nonzero_weights": int((np.abs(w) > 1e-8).sum()), "active_features": len(active),
            "l2": l2, "scope": scope, "taint": taint, "layout": layout}
    if mean_of is not None:
        info.update({"pairs": len(pairs), "pair_weight": pair_weight, "pair_scale": pair_scale})
    return LinearPRM(w.tolist(), dim, window, scope=scope, taint=taint, layout=layout), info
