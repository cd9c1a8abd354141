"""The figure of ``mlx26 dp-mix compare --plot``: noise densities and cost vs ε of every compared mechanism.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap: Mixtures of
Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078). The densities are exact:
the Gaussian mixtures through their ``Mixture.pdf``, Laplace, truncated Laplace (Geng et al. 2020) and the
l1-optimal staircase (Geng & Viswanath) in closed form, each at the scale ``compare`` calibrated. The costs
are ``compare``'s own l1 = E|Z| and l2 = E Z² rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from mlx26.core.common.errors import RunFailure

from .calibration import calibrate
from .comparison import compare
from .mixture import gaussian_mixture, quasi_mixture
from .references import truncated_laplace_params
from .sampling import mechanism_mixture

#: factors of a single compared ε for the cost curve; values below min(ε, EPS_FLOOR) are dropped
#: (calibrating at tiny ε takes seconds, and the curve is about the trend)
EPS_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
EPS_FLOOR = 0.25
POINTS = 2001


def density(row: dict[str, Any], eps: float, delta: float, sensitivity: float, x: np.ndarray) -> np.ndarray:
    """The noise density of one ``compare`` row at the points ``x``."""
    name, scale, D = row["mechanism"], float(row["sigma"]), float(sensitivity)
    ax = np.abs(x)
    if name == "gaussian":
        return gaussian_mixture(scale).pdf(x)
    if name == "quasi":
        return quasi_mixture(scale, eps, D).pdf(x)
    if name == "multi":
        return mechanism_mixture(calibrate("multi", eps, delta, D)).pdf(x)
    if name == "laplace":
        return np.exp(-ax / scale) / (2.0 * scale)
    if name == "truncated-laplace":
        lam, A = truncated_laplace_params(eps, delta, D)
        B = 1.0 / (2.0 * lam * -math.expm1(-A / lam))
        return np.where(ax <= A, B * np.exp(-ax / lam), 0.0)
    if name == "staircase":  # γ = scale (l1-optimal): a b^n on [n, n + γ), a b^(n+1) on [n + γ, n + 1), in units of D
        b, g = math.exp(-eps), scale
        a = (1.0 - b) / (2.0 * (g + (1.0 - g) * b))
        u = ax / D
        n = np.floor(u)
        return a * b**n * np.where(u - n < g, 1.0, b) / D
    raise RunFailure(f"no density for mechanism {name!r}")  # only compare's own names reach here


def cost_rows(points: Sequence[tuple[float, float]], rows: Sequence[dict[str, Any]],
              sensitivity: float) -> tuple[float, list[dict[str, Any]], bool]:
    """(δ, rows with eps, whether they were computed on a grid) for the cost-vs-ε panels.

    The rows compared at the first point's δ when they hold two ε or more; otherwise ``compare`` again on
    ``EPS_FACTORS`` × ε (not below min(ε, EPS_FLOOR)).
    """
    eps0, delta0 = points[0]
    at_delta = [r for r in rows if r["delta"] == delta0]
    if len({r["eps"] for r in at_delta}) >= 2:
        return delta0, at_delta, False
    grid = [eps0 * f for f in EPS_FACTORS if eps0 * f >= min(eps0, EPS_FLOOR)]
    return delta0, [{"eps": e, "delta": delta0, **r} for e in grid for r in compare(e, delta0, sensitivity)], True


def draw(path: str, points: Sequence[tuple[float, float]], rows: Sequence[dict[str, Any]], sensitivity: float,
         *, force: bool = False) -> dict[str, Any]:
    """Write the PNG: densities at the first (ε, δ), then l1 and l2 vs ε at that δ (log-log)."""
    from mlx26.core.common.plot import Panel, Series, save_lines

    eps0, delta0 = points[0]
    first = [r for r in rows if r["eps"] == eps0 and r["delta"] == delta0]
    reach = 3.5 * max(math.sqrt(r["l2"]) for r in first)
    x = np.linspace(-reach, reach, POINTS)
    dens = Panel(f"noise density at ε = {eps0:g}, δ = {delta0:g}",
                 [Series(r["mechanism"], x, density(r, eps0, delta0, sensitivity, x)) for r in first],
                 xlabel=f"noise z (Δ = {sensitivity:g})", ylabel="density")
    delta, curve, gridded = cost_rows(points, rows, sensitivity)
    names = list(dict.fromkeys(r["mechanism"] for r in curve))
    panels = [dens]
    for cost, label in (("l1", "l1 = E|Z|"), ("l2", "l2 = E Z²")):
        series = []
        for name in names:
            pts = sorted((r["eps"], r[cost]) for r in curve if r["mechanism"] == name and r[cost] > 0)
            series.append(Series(name, [p[0] for p in pts], [p[1] for p in pts], marker="o", size=3))
        panels.append(Panel(f"{label} vs ε at δ = {delta:g}" + (" (ε grid)" if gridded else ""), series,
                            xlabel="ε", ylabel=cost, logx=True, logy=True, vline=eps0 if gridded else None))
    return save_lines(path, panels, title="dp-mix compare", force=force)
