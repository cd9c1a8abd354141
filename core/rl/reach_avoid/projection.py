"""Symmetric projection of conflicting gradients (RAPC, Pan et al., ICML 2026 — reconstruction;
the same projection as PCGrad, Yu et al. 2020, applied symmetrically to the cost and the
reach-avoid policy gradients).

If ⟨g_c, g_ra⟩ < 0 each is projected onto the normal plane of the *other original* gradient:

    g_c'  = g_c  − ⟨g_c, g_ra⟩ / ‖g_ra‖² · g_ra
    g_ra' = g_ra − ⟨g_ra, g_c⟩ / ‖g_c‖²  · g_c

so ⟨g_c', g_ra⟩ = ⟨g_ra', g_c⟩ = 0; otherwise both are returned unchanged.
"""

from __future__ import annotations

import torch


def project_conflicting(g_c: torch.Tensor, g_ra: torch.Tensor, eps: float = 1e-20) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """``(g_c', g_ra', conflicted)`` for two flat gradient vectors."""
    dot = torch.dot(g_c, g_ra)
    if dot >= 0:
        return g_c, g_ra, False
    g_c_new = g_c - dot / (g_ra.dot(g_ra) + eps) * g_ra
    g_ra_new = g_ra - dot / (g_c.dot(g_c) + eps) * g_c
    return g_c_new, g_ra_new, True
