"""Low-rank compensation of quantization error: per-expert LQER/L2QER and TileQ shared 2D tiles.

Paper: Gu, Chen, Hu, Liu, "TileQ: Efficient Low-Rank Quantization of Mixture-of-Experts with 2D
Tiling" (ICML 2026, arXiv 2605.09281). Only the abstract is known, so the TileQ formulation is OUR
RECONSTRUCTION on top of LQER / L2QER (Zhang et al., 2024: low-rank SVD of the activation-scaled
quantization error) and shared-basis MoE compression:

* residual ``R_e = W_e − Q_e`` (m × n), activation scale ``s`` = mean |x| over the calibration
  tokens routed to the expert, ``S = diag(s)``;
* L2QER baseline: ``R_e S ≈ A_e B_e`` by truncated SVD, applied as ``Q_e + A_e (B_e S⁻¹)``;
  extra values ``E·r·(m+n)``;
* TileQ: expert ``e`` sits in row group ``p(e)`` and column group ``q(e)``; ``R_e S_q ≈ U_p C_e V_q``
  with ``U_p`` (m×r) shared by a row group, ``V_q`` (r×n) shared by a column group and a per-expert
  core ``C_e`` (r×r); fitted without training by alternating SVDs (``V_q`` from its column group's
  stacked ``U_pᵀ R_e S``, ``U_p`` from its row group's stacked ``R_e S V_qᵀ``, ``C_e = U_pᵀ R_e S V_qᵀ``);
  extra values ``P·m·r + Q·n·r + E·r²``. Our addition: when one side is per expert (P = E or Q = E)
  the core is multiplied into that side (``U_e C_e`` or ``C_e V_e`` stored), so the ``E·r²`` term
  drops and P = Q = E costs exactly L2QER's ``E·r·(m+n)``.
* Our choice (not from the paper): TileQ scales by ``S_q``, the activation scale pooled over the
  tokens routed to *all* experts of column group q, so ``S_q⁻¹`` folds into the shared ``V_q`` and
  costs no memory; with P = Q = E this is exactly per-expert L2QER. Errors are always measured with
  each expert's own scale ``S_e``.

Factor values are counted at ``factor_bytes`` bytes each (2 = float16, the stored format).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from mlx26.core.common.errors import InputError


@dataclass
class Factors:
    """Low-rank correction ``ΔW_e = U[p(e)] · C_e · V[q(e)]`` (C_e = identity when ``core`` is None).

    ``V`` already includes the inverse activation scale, so ``ΔW_e`` is in weight space.
    """

    U: torch.Tensor  # (P, m, r)
    V: torch.Tensor  # (Q, r, n)
    core: torch.Tensor | None  # (E, r, r) or None (LQER)
    rows: torch.Tensor  # (E,) long, row group per expert
    cols: torch.Tensor  # (E,) long, column group per expert

    @property
    def rank(self) -> int:
        return int(self.U.shape[-1])

    def delta(self) -> torch.Tensor:
        """Dense (E, m, n) correction, for error measurement and tests."""
        U, V = self.U[self.rows].double(), self.V[self.cols].double()
        if self.core is not None:
            U = U @ self.core.double()
        return (U @ V).float()

    def values(self) -> int:
        return self.U.numel() + self.V.numel() + (self.core.numel() if self.core is not None else 0)

    def rounded(self, dtype: torch.dtype) -> Factors:
        """Factors rounded to the storage dtype (and back to float32)."""
        core = None if self.core is None else self.core.to(dtype).float()
        return Factors(self.U.to(dtype).float(), self.V.to(dtype).float(), core, self.rows, self.cols)


# --------------------------------------------------------------------------- memory

def lqer_values(E: int, m: int, n: int, r: int) -> int:
    return E * r * (m + n)


def tileq_values(P: int, Q: int, E: int, m: int, n: int, r: int) -> int:
    """``P·m·r + Q·n·r + E·r²``; the cores are absorbed (no ``E·r²``) when one side is per expert (P or Q = E)."""
    return P * m * r + Q * n * r + (0 if E in (P, Q) else E * r * r)


def search_grid(E: int) -> list[tuple[int, int]]:
    """The (P, Q) pairs ``--match-memory`` tries when no ``--rows/--cols`` are given: 1, 2, 4, … and E."""
    sizes = sorted({2 ** i for i in range(E.bit_length()) if 2 ** i <= E} | {E})
    return [(P, Q) for P in sizes for Q in sizes]


def match_rank(E: int, m: int, n: int, lqer_rank: int, P: int, Q: int) -> int:
    """Largest TileQ rank whose extra memory does not exceed per-expert LQER at ``lqer_rank``."""
    budget = lqer_values(E, m, n, lqer_rank)
    r = 0
    while r < min(m, n) and tileq_values(P, Q, E, m, n, r + 1) <= budget:
        r += 1
    if r == 0:
        raise InputError(f"no TileQ rank ≥ 1 fits the memory of LQER rank {lqer_rank} for a {m}×{n} projection "
                         f"with P={P}, Q={Q}.", "use fewer row/column groups or a larger lqer rank")
    return r


# --------------------------------------------------------------------------- scales and error

def activation_scale(abs_sum: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """mean |x| per input channel for each expert (E, n); experts without tokens get ones."""
    s = abs_sum.double() / count.double().clamp(min=1)[:, None]
    s = torch.where(count[:, None] > 0, s, torch.ones_like(s))
    return s.clamp(min=1e-6)


def pooled_scale(abs_sum: torch.Tensor, count: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """The activation scale pooled over the experts of each group, per expert (E, n)."""
    G = int(groups.max()) + 1
    sums = torch.zeros(G, abs_sum.shape[1], dtype=torch.float64).index_add_(0, groups, abs_sum.double())
    counts = torch.zeros(G, dtype=torch.float64).index_add_(0, groups, count.double())
    return activation_scale(sums, counts)[groups]


def weighted_error(W: torch.Tensor, W_hat: torch.Tensor, s: torch.Tensor) -> float:
    """Activation-weighted relative error ‖(W − Ŵ)S‖_F / ‖W S‖_F over all experts (S per expert)."""
    s = s.double()[:, None, :]
    num = (((W.double() - W_hat.double()) * s) ** 2).sum()
    den = ((W.double() * s) ** 2).sum()
    return float(torch.sqrt(num / den.clamp(min=1e-300)))


# --------------------------------------------------------------------------- fitting

def _check_rank(r: int, m: int, n: int) -> None:
    if not 1 <= r <= min(m, n):
        raise InputError(f"--rank must be in [1, {min(m, n)}] for a {m}×{n} projection, got {r}.")


def fit_lqer(R: torch.Tensor, s: torch.Tensor, r: int) -> Factors:
    """Per-expert L2QER: rank-r truncated SVD of ``R_e S_e``, with ``S_e⁻¹`` folded into B."""
    E, m, n = R.shape
    _check_rank(r, m, n)
    M = R.double() * s.double()[:, None, :]
    U, sv, Vh = torch.linalg.svd(M, full_matrices=False)
    A = U[..., :r] * sv[:, None, :r]
    B = Vh[:, :r, :] / s.double()[:, None, :]
    ids = torch.arange(E)
    return Factors(A.float(), B.float(), None, ids, ids.clone())


def _top_right(stack: torch.Tensor, r: int) -> torch.Tensor:
    return torch.linalg.svd(stack, full_matrices=False).Vh[:r]


def _top_left(stack: torch.Tensor, r: int) -> torch.Tensor:
    return torch.linalg.svd(stack, full_matrices=False).U[:, :r]


def fit_tileq(R: torch.Tensor, abs_sum: torch.Tensor, count: torch.Tensor, rows: torch.Tensor,
              cols: torch.Tensor, r: int, rounds: int = 3) -> Factors:
    """TileQ shared factors by alternating SVDs (no fine-tuning); see the module docstring."""
    E, m, n = R.shape
    _check_rank(r, m, n)
    P, Q = int(rows.max()) + 1, int(cols.max()) + 1
    sq = pooled_scale(abs_sum, count, cols)  # (E, n), equal within a column group
    M = R.double() * sq[:, None, :]
    members_p = [torch.nonzero(rows == p).flatten().tolist() for p in range(P)]
    members_q = [torch.nonzero(cols == q).flatten().tolist() for q in range(Q)]
    if any(not g for g in members_p + members_q):
        raise InputError("every row and column group needs at least one expert.")
    V = torch.stack([_top_right(torch.cat([M[e] for e in g], 0), r) for g in members_q])  # (Q, r, n)
    U = torch.zeros(P, m, r, dtype=torch.float64)
    best: tuple[float, torch.Tensor, torch.Tensor] | None = None
    total = float((M ** 2).sum())
    for _ in range(max(1, rounds)):
        U = torch.stack([_top_left(torch.cat([M[e] @ V[cols[e]].T for e in g], 1), r) for g in members_p])
        captured = float(sum(((U[rows[e]].T @ M[e] @ V[cols[e]].T) ** 2).sum() for e in range(E)))
        if best is None or total - captured < best[0]:
            best = (total - captured, U.clone(), V.clone())
        V = torch.stack([_top_right(torch.cat([U[rows[e]].T @ M[e] for e in g], 0), r) for g in members_q])
    assert best is not None
    _, U, V = best
    core = torch.stack([U[rows[e]].T @ M[e] @ V[cols[e]].T for e in range(E)])
    Vs = V / torch.stack([sq[g[0]] for g in members_q])[:, None, :]
    if P == E:  # one expert per row group: store U_e C_e instead of U_e and C_e (same product, fewer values)
        U = torch.stack([U[p] @ core[g[0]] for p, g in enumerate(members_p)])
        return Factors(U.float(), Vs.float(), None, rows.clone(), cols.clone())
    if Q == E:  # one expert per column group: store C_e V_e
        Vs = torch.stack([core[g[0]] @ Vs[q] for q, g in enumerate(members_q)])
        return Factors(U.float(), Vs.float(), None, rows.clone(), cols.clone())
    return Factors(U.float(), Vs.float(), core.float(), rows.clone(), cols.clone())
