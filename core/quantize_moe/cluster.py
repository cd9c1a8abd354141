"""Assign MoE experts to TileQ row and column groups: by index, or activation-aware kernel k-means.

Paper: Gu, Chen, Hu, Liu, "TileQ" (ICML 2026, arXiv 2605.09281). The grouping rule is OUR
RECONSTRUCTION: ``index`` puts consecutive experts together (``p(e) = ⌊e·P/E⌋``); ``activation``
clusters experts whose activation-scaled residuals ``R_e S_e`` span similar subspaces, by kernel
k-means on the projectors onto their top-r right (column groups) or left (row groups) singular
subspaces — the quantity a shared ``V_q`` / ``U_p`` has to capture. Deterministic for a seed.
"""

from __future__ import annotations

import torch
from mlx26.core.common.errors import InputError
from mlx26.core.quantize_moe.spec import CLUSTERS


def index_groups(E: int, G: int) -> torch.Tensor:
    return torch.tensor([e * G // E for e in range(E)], dtype=torch.long)


def kernel_kmeans(K: torch.Tensor, G: int, seed: int = 0, iters: int = 50) -> torch.Tensor:
    """Kernel k-means on a Gram matrix (E, E); every one of the G clusters ends non-empty."""
    E = K.shape[0]
    if G >= E:
        return torch.arange(E)
    K = K.double()
    diag = torch.diag(K)
    gen = torch.Generator().manual_seed(seed)
    centers = [int(torch.randint(E, (1,), generator=gen))]
    dist = diag + diag[centers[0]] - 2 * K[:, centers[0]]
    while len(centers) < G:  # farthest-point initialisation
        d = dist.clone()
        d[centers] = -1
        c = int(torch.argmax(d))
        centers.append(c)
        dist = torch.minimum(dist, diag + diag[c] - 2 * K[:, c])
    labels = torch.argmin(torch.stack([diag + diag[c] - 2 * K[:, c] for c in centers], 1), 1)
    for _ in range(iters):
        cost = torch.empty(E, G, dtype=torch.float64)
        for g in range(G):
            idx = torch.nonzero(labels == g).flatten()
            if len(idx) == 0:
                cost[:, g] = float("inf")
                continue
            cost[:, g] = diag - 2 * K[:, idx].mean(1) + K[idx][:, idx].mean()
        new = torch.argmin(cost, 1)
        for g in range(G):  # refill an emptied cluster with the worst-fitting expert of a larger cluster
            if not bool((new == g).any()):
                fit = cost.gather(1, new[:, None]).flatten().clone()
                fit[torch.bincount(new, minlength=G)[new] <= 1] = -float("inf")
                new[int(torch.argmax(fit))] = g
        if torch.equal(new, labels):
            break
        labels = new
    # canonical order: cluster ids by first member
    order = {lab: i for i, lab in enumerate(dict.fromkeys(labels.tolist()))}
    return torch.tensor([order[lab] for lab in labels.tolist()], dtype=torch.long)


def subspace_overlap(M: torch.Tensor, r: int) -> tuple[float, float]:
    """Mean over expert pairs a ≠ b of ‖U_aᵀU_b‖²/r (left) and ‖V_aV_bᵀ‖²/r (right) for the top-r singular
    subspaces of M (E, m, n): mean cos² of the principal angles; 1 = same subspace, ≈ r/m (r/n) = random."""
    U, _, Vh = torch.linalg.svd(M.double(), full_matrices=False)
    k = max(1, min(r, U.shape[-1]))
    Ur, Vr = U[..., :k], Vh[:, :k, :]
    off = ~torch.eye(M.shape[0], dtype=torch.bool)
    left = torch.einsum("amk,bml->abkl", Ur, Ur).pow(2).sum((-1, -2))[off].mean() / k
    right = torch.einsum("akn,bln->abkl", Vr, Vr).pow(2).sum((-1, -2))[off].mean() / k
    return float(left), float(right)


def activation_groups(M: torch.Tensor, P: int, Q: int, r: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, cols) from subspace similarity of the activation-scaled residuals M (E, m, n)."""
    U, _, Vh = torch.linalg.svd(M.double(), full_matrices=False)
    k = max(1, min(r, U.shape[-1]))
    Ur, Vr = U[..., :k], Vh[:, :k, :]
    K_rows = torch.einsum("amk,bml->abkl", Ur, Ur).pow(2).sum((-1, -2))  # ⟨P_a, P_b⟩ = ‖U_aᵀU_b‖²
    K_cols = torch.einsum("akn,bln->abkl", Vr, Vr).pow(2).sum((-1, -2))
    return kernel_kmeans(K_rows, P, seed), kernel_kmeans(K_cols, Q, seed)


def assign(method: str, M: torch.Tensor, P: int, Q: int, r: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    E = M.shape[0]
    for name, G in (("--rows", P), ("--cols", Q)):
        if not 1 <= G <= E:
            raise InputError(f"{name} must be in [1, {E}] (the number of experts), got {G}.")
    if method == "index":
        return index_groups(E, P), index_groups(E, Q)
    if method == "activation":
        return activation_groups(M, P, Q, r, seed)
    raise InputError(f"unknown --cluster '{method}'.", "choose one of: " + ", ".join(CLUSTERS))
