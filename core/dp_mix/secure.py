"""Secure release: snapped grid, exact integer sampling from OS randomness (see :mod:`.sampling`).

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078); the
snapping idea follows Mironov (CCS 2012), the construction (grid distribution of the
calibrated noise, quantised to 2^-126, checked, drawn by integer inverse CDF) is ours.  The
pure-DP mechanisms (laplace, staircase) use exact integer samplers instead (:mod:`.exact`:
discrete Laplace after Canonne, Kamath & Steinke 2020, and a discrete staircase): no table, no
check, eps-DP with delta = 0, and a bounded expected number of random draws at every eps.
"""

from __future__ import annotations

import numpy as np
from mlx26.core.common.errors import RunFailure

from .calibration import Mechanism, calibrate
from .exact import ExactSampler, exact_sampler
from .sampling import SnappedTable, draw_snapped, snap_grid, snap_query, snapped_table

#: mechanisms released through an exact integer sampler (pure eps-DP, no table)
EXACT = ("laplace", "staircase")


def secure_mechanism(mechanism: str, eps: float, delta: float, sensitivity: float = 1.0,
                     objective: str = "l1") -> tuple[Mechanism, SnappedTable | ExactSampler, Mechanism]:
    """(mechanism used, its checked grid table or exact sampler, the plain mechanism at D)."""
    plain = calibrate(mechanism, eps, delta, sensitivity, objective=objective)
    grid = snap_grid(max(plain.l1, 1e-300))
    name = plain.name  # "best" resolves once, at D; the snapped one uses the same mechanism
    if name in EXACT:
        return plain, exact_sampler(name, eps, float(sensitivity), grid), plain
    # calibrated for D + 2 Lambda: rounding needs D + Lambda, the rest is room for the tails and
    # the 2^-62 quantisation that the table check adds on top
    mech = calibrate(name, eps, delta, float(sensitivity) + 2.0 * grid, objective=objective)
    table = snapped_table(mech, grid, float(delta))
    if table.delta_table > delta:
        raise RunFailure(f"the snapped table's delta {table.delta_table:.3g} exceeds {delta:g}; "
                         "use a larger delta or the non-secure sampler.")
    return mech, table, plain


def secure_release(values, mechanism: str, eps: float, delta: float, sensitivity: float = 1.0,
                   objective: str = "l1") -> np.ndarray:
    """values snapped to the grid plus exact grid noise: Lambda (round(x / Lambda) + j)."""
    _, table, _ = secure_mechanism(mechanism, eps, delta, sensitivity, objective)
    v = np.asarray(values, float)
    return snap_query(v, table.grid) + draw_snapped(table, v.size)


def secure_noise_kind(table: SnappedTable | ExactSampler) -> str:
    return table.kind if isinstance(table, ExactSampler) else "snapped-table"
