"""One-table comparison of the mixtures against the analytic Gaussian and the pure-DP optima.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

``gap_closed`` = (AG - mech) / (AG - staircase) for l1 = E|Z| and l2 = E Z^2, with AG the
analytic Gaussian cost and the staircase at its l1-optimal (resp. l2-optimal) gamma.  It is
None when the staircase is not better than AG (the "gap" does not exist there).
"""

from __future__ import annotations

from .calibration import calibrate
from .params import validate_params
from .references import (
    laplace_costs,
    staircase_optimal_costs,
    truncated_laplace_costs,
    truncated_laplace_params,
)


def _gap(ag: float, stair: float, mech: float) -> float | None:
    den = ag - stair
    if not den > 0:
        return None
    return (ag - mech) / den


def compare(eps: float, delta: float, sensitivity: float = 1.0) -> list[dict]:
    """Rows for multi, quasi, gaussian, laplace, truncated-laplace, staircase.

    Keys: mechanism, sigma (noise scale parameter: sigma, Laplace b, or truncation A for the
    truncated Laplace, gamma_l1 for the staircase), K, delta_guarantee (the delta the row
    guarantees: 0 for the pure-DP Laplace and staircase),
    delta_achieved, l1, l2, l1_ratio_to_gaussian, l2_ratio_to_gaussian, gap_closed_l1,
    gap_closed_l2, note.
    """
    validate_params(eps, delta, sensitivity)
    eps, delta, D = float(eps), float(delta), float(sensitivity)
    ag = calibrate("gaussian", eps, delta, D)
    st_l1, st_l2, g1, g2 = staircase_optimal_costs(eps, D)
    rows: list[dict] = []

    def add(name: str, scale: float, K, dl: float, dach: float | None, l1: float, l2: float, note: str = "") -> None:
        rows.append(
            {
                "mechanism": name,
                "sigma": scale,
                "K": K,
                "delta_guarantee": dl,
                "delta_achieved": dach,
                "l1": l1,
                "l2": l2,
                "l1_ratio_to_gaussian": l1 / ag.l1,
                "l2_ratio_to_gaussian": l2 / ag.l2,
                "gap_closed_l1": _gap(ag.l1, st_l1, l1),
                "gap_closed_l2": _gap(ag.l2, st_l2, l2),
                "note": note,
            }
        )

    for name in ("multi", "quasi"):
        m = calibrate(name, eps, delta, D)
        add(name, m.sigma, m.K, delta, m.delta_achieved, m.l1, m.l2, m.method)
    add("gaussian", ag.sigma, None, delta, ag.delta_achieved, ag.l1, ag.l2, ag.method)
    b = D / eps
    lap1, lap2 = laplace_costs(eps, D)
    add("laplace", b, None, 0.0, 0.0, lap1, lap2, "pure eps-DP, scale b = D/eps")
    _, A = truncated_laplace_params(eps, delta, D)
    tl1, tl2 = truncated_laplace_costs(eps, delta, D)
    add("truncated-laplace", A, None, delta, delta, tl1, tl2,
        f"Geng et al. 2020: scale D/eps truncated to [-A, A], A = {A:.6g}")
    add("staircase", g1, None, 0.0, 0.0, st_l1, st_l2,
        f"pure eps-DP optimum; l1 at gamma = {g1:.6g}, l2 at gamma = {g2:.6g}")
    return rows
