"""Optional cross-check of our privacy profiles against Google's dp-accounting library.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

* gaussian: ``GaussianPrivacyLoss(sigma, sensitivity).get_delta_for_epsilon(eps)`` (exact).
* multi / quasi: dp-accounting has no privacy-loss class for "a mixture versus its own shift"
  (its ``MixtureGaussianPrivacyLoss`` compares N(0, sigma^2) with a mixture of shifted
  Gaussians, a different pair), so we discretise: the noise density p and its shift
  p(. + s) are binned on a grid of ``bins_per_sigma`` bins per sigma (plus two tail bins), both
  probability mass functions are handed to
  ``privacy_loss_distribution.from_two_probability_mass_functions`` (pessimistic rounding of
  the loss, and optimistic rounding as a lower companion), and its
  ``get_delta_for_epsilon(eps)`` is compared with our exact H_s at the worst shift and at
  s = D.  Binning is post-processing, so it can only lower delta; loss rounding moves delta by
  about the interval times the mass whose loss is within the interval of eps, which for the
  multi-Gaussian (a loss of almost exactly eps on a large mass) is why we round at 1e-6.
  dp-accounting turns more than 1000 distinct losses into a dense array over the whole loss
  range, so at most 900 bins are used: the multi-Gaussian's wide lattice is then binned at
  ~sigma/8 and the binned delta sits a few per cent below the exact one (a consistency check,
  not a precision reference); the quasi-Gaussian agrees to ~1e-4.
"""

from __future__ import annotations

import math

import numpy as np
from mlx26.core.common.errors import InputError

from .calibration import check_mechanism
from .gaussian import gaussian_delta
from .mixture import multi_mixture, quasi_mixture
from .params import KSpec, resolve_lattice_K, validate_params
from .profile import certified_max, hockey_stick

#: privacy-loss rounding interval handed to dp-accounting (its default 1e-4 moves delta by
#: ~1e-4 * (mass where the loss is near eps), which is large for the lattice mixtures)
LOSS_INTERVAL = 1e-6
#: dp-accounting keeps a sparse loss distribution only up to 1000 distinct losses (beyond that
#: it allocates a dense array over the whole loss range / LOSS_INTERVAL), so we cap the bins
MAX_BINS = 900


def _import_dp_accounting():
    try:
        from dp_accounting.pld import privacy_loss_distribution, privacy_loss_mechanism
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the dp-accounting cross-check needs the optional package dp-accounting; "
            "install it with: pip install 'mlx26[dp]'  (or pip install dp-accounting)"
        ) from exc
    return privacy_loss_distribution, privacy_loss_mechanism


def crosscheck_dp_accounting(
    mechanism: str,
    sigma: float,
    eps: float,
    sensitivity: float = 1.0,
    K: KSpec = None,
    *,
    delta: float | None = None,
    bins_per_sigma: int = 40,
    detail: bool = False,
) -> float | dict:
    """dp-accounting's delta(eps) for noise scale ``sigma`` (a cross-check of :func:`verify`).

    Returns dp-accounting's delta at the worst shift (for "gaussian" at s = D, exact); with
    ``detail=True`` a dict ``{"mechanism", "backend", "rows": [{"shift", "delta_ours",
    "delta_dp_accounting", "delta_dp_accounting_optimistic", "rel_diff"}], "note"}``.  For
    "multi", ``K=None`` means the automatic K and then needs ``delta``.  Raises ``ImportError``
    (with an install hint) when dp-accounting is absent.
    """
    name = check_mechanism(mechanism)
    if name == "multi" and (K is None or (isinstance(K, str) and K.strip().lower() == "auto")) and delta is None:
        raise InputError("the multi-Gaussian cross-check needs K or delta (K auto depends on delta).")
    validate_params(eps, 0.5 if delta is None else delta, sensitivity, K if name == "multi" else None)
    sig = float(sigma)
    if not math.isfinite(sig) or sig <= 0:
        raise InputError(f"sigma must be a finite number > 0, got {sigma!r}.")
    pld_mod, plm = _import_dp_accounting()
    eps, D = float(eps), float(sensitivity)
    rows = []
    if name == "gaussian":
        theirs = float(plm.GaussianPrivacyLoss(sig, sensitivity=D).get_delta_for_epsilon(eps))
        rows.append(_row(D, gaussian_delta(sig / D, eps, 1.0), theirs))
        out = {"mechanism": name, "backend": "dp-accounting GaussianPrivacyLoss", "rows": rows,
               "note": "exact on both sides"}
        return out if detail else theirs
    s1 = sig / D
    mix = multi_mixture(s1, eps, resolve_lattice_K(K, eps, delta if delta is not None else 0.5)) \
        if name == "multi" else quasi_mixture(s1, eps)
    worst = certified_max(mix, eps).worst_shift
    for s in sorted({worst, 1.0}):
        ours = float(hockey_stick(mix, eps, s)[0])
        low = _binned_delta(pld_mod, mix, eps, s, bins_per_sigma, pessimistic=False)
        high = _binned_delta(pld_mod, mix, eps, s, bins_per_sigma, pessimistic=True)
        row = _row(s * D, ours, high)
        row["delta_dp_accounting_optimistic"] = low
        rows.append(row)
    out = {
        "mechanism": name,
        "backend": "dp-accounting from_two_probability_mass_functions (binned)",
        "rows": rows,
        "note": f"{bins_per_sigma} bins per sigma (at most {MAX_BINS}); binning can only lower delta",
    }
    return out if detail else max(r["delta_dp_accounting"] for r in rows)


def _row(shift: float, ours: float, theirs: float) -> dict:
    rel = abs(theirs - ours) / ours if ours > 0 else float("nan")
    return {"shift": shift, "delta_ours": ours, "delta_dp_accounting": theirs, "rel_diff": rel}


def _binned_delta(pld_mod, mix, eps: float, s: float, bins_per_sigma: int, pessimistic: bool) -> float:
    sig = mix.sigma
    lo = float(np.min(mix.mu)) - s - 12.0 * sig
    hi = float(np.max(mix.mu)) + 12.0 * sig
    n = min(int(math.ceil((hi - lo) * bins_per_sigma / sig)), MAX_BINS)
    edges = np.concatenate([[-np.inf], np.linspace(lo, hi, n + 1), [np.inf]])
    a, b = edges[:-1], edges[1:]
    lower = mix.log_mass(a, b)  # p
    upper = mix.log_mass(a, b, s)  # p(. + s)
    lower_d = {i: float(v) for i, v in enumerate(lower) if np.isfinite(v)}
    upper_d = {i: float(v) for i, v in enumerate(upper) if np.isfinite(v)}
    pld = pld_mod.from_two_probability_mass_functions(
        lower_d, upper_d, pessimistic_estimate=pessimistic, value_discretization_interval=LOSS_INTERVAL
    )
    return float(pld.get_delta_for_epsilon(eps))
