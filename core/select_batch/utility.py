"""The PartitionSel utility and its refit on a support (Agrawal et al., ICML 2026).

With gradient features g_i (rows of G), validation anchors a_m and a learning rate η:

    s_i = mean_m ⟨g_i, a_m⟩,   K = G Gᵀ,
    U(w) = Σ_i w_i (η s_i + ½ η² K_ii) − ½ η² wᵀ K w,   w ≥ 0,

a second-order estimate of the validation-loss decrease (gradient matching). We keep the
general form U(w) = cᵀw − ½ wᵀQw (c = η s + ½ η² diag K, Q = η² K), so the same greedy
code runs textbook least squares (c = Aᵀb, Q = AᵀA) in the tests.

F(S) = max over w ≥ 0 supported on S. The refit is our reconstruction: NNLS (scipy's
Lawson–Hanson, after a Cholesky factorisation Q_SS + εI = LLᵀ, which turns the concave
quadratic into ½‖Lᵀw − L⁻¹c‖²) for supports up to ``NNLS_MAX`` items, accelerated
projected gradient (FISTA with restarts, warm-started) above that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure

NNLS_MAX = 64
JITTER = 1e-10


@dataclass
class QuadraticUtility:
    """U(w) = cᵀw − ½ wᵀQw over w ≥ 0; ``Q`` symmetric PSD, ``K`` the raw Gram for diagnostics."""

    c: np.ndarray
    Q: np.ndarray
    K: np.ndarray | None = None

    @classmethod
    def from_features(cls, G: np.ndarray, anchors: np.ndarray, eta: float = 0.1) -> QuadraticUtility:
        """The PartitionSel utility of features G (n × d) against anchors (m × d)."""
        G = np.asarray(G, dtype=np.float64)
        A = np.atleast_2d(np.asarray(anchors, dtype=np.float64))
        if G.ndim != 2 or G.shape[1] != A.shape[1]:
            raise InputError(f"pool features have dimension {G.shape[-1]} but the validation features have "
                             f"{A.shape[1]}.", "compute both with the same model, parameters and --proj-dim")
        if not (np.isfinite(eta) and eta > 0):
            raise InputError(f"the utility learning rate η must be a positive number, got {eta}.")
        K = G @ G.T
        s = (G @ A.T).mean(axis=1)
        return cls(c=eta * s + 0.5 * eta**2 * np.diag(K), Q=eta**2 * K, K=K)

    @property
    def n(self) -> int:
        return int(self.c.shape[0])

    def value(self, w: np.ndarray, support: np.ndarray | None = None) -> float:
        """U(w); with ``support``, ``w`` holds the weights of those indices only."""
        if support is None:
            return float(self.c @ w - 0.5 * w @ self.Q @ w)
        Qs = self.Q[np.ix_(support, support)]
        return float(self.c[support] @ w - 0.5 * w @ Qs @ w)

    def residual(self, w: np.ndarray, support: np.ndarray) -> np.ndarray:
        """∇U at w (given on ``support``): r = c − Q w, for every item."""
        if len(support) == 0:
            return self.c.copy()
        return self.c - self.Q[:, support] @ w

    def refit(self, support: np.ndarray, w0: np.ndarray | None = None, method: str = "auto") -> np.ndarray:
        """argmax_{w ≥ 0} U(w) on ``support`` (NNLS for small supports, FISTA otherwise)."""
        support = np.asarray(support, dtype=int)
        if len(support) == 0:
            return np.zeros(0)
        c = self.c[support]
        Q = self.Q[np.ix_(support, support)]
        if method == "nnls" or (method == "auto" and len(support) <= NNLS_MAX):
            return _nnls_quadratic(c, Q)
        return _fista(c, Q, w0)


def _nnls_quadratic(c: np.ndarray, Q: np.ndarray) -> np.ndarray:
    from scipy.linalg import cho_factor, solve_triangular
    from scipy.optimize import nnls

    scale = max(float(np.trace(Q)) / len(c), 1e-300)
    eye = np.eye(len(c))
    for jitter in (JITTER, 1e-8, 1e-6, 1e-4):
        try:
            L, lower = cho_factor(Q + jitter * scale * eye, lower=True)
            break
        except np.linalg.LinAlgError:
            continue
    else:  # pragma: no cover - Q is PSD by construction
        raise RunFailure("the utility's Gram matrix is not positive semi-definite.")
    L = np.tril(L)
    b = solve_triangular(L, c, lower=True)
    w, _ = nnls(L.T, b, maxiter=50 * len(c))
    return np.asarray(w)


def _fista(c: np.ndarray, Q: np.ndarray, w0: np.ndarray | None, iters: int = 3000, tol: float = 1e-10
           ) -> np.ndarray:
    lipschitz = float(np.linalg.eigvalsh(Q)[-1]) if len(c) <= 512 else float(np.abs(Q).sum(axis=1).max())
    if lipschitz <= 0:
        return np.zeros(len(c))
    step = 1.0 / lipschitz
    w = np.zeros(len(c)) if w0 is None else np.maximum(np.asarray(w0, dtype=np.float64), 0.0)
    y, t = w.copy(), 1.0
    for _ in range(iters):
        w_next = np.maximum(y + step * (c - Q @ y), 0.0)
        if (c - 0.5 * Q @ w_next) @ w_next < (c - 0.5 * Q @ w) @ w:  # restart when U went down
            y, t = w.copy(), 1.0
            continue
        t_next = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        y = w_next + ((t - 1) / t_next) * (w_next - w)
        done = np.max(np.abs(w_next - w)) <= tol * max(1.0, float(np.max(np.abs(w_next))))
        w, t = w_next, t_next
        if done:
            break
    return w
