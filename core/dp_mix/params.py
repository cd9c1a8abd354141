"""Parameter validation and the automatic truncation rule for the multi-Gaussian mechanism.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

Reconstructed here (not taken from the paper's code): the "auto" rule for the number K of
lattice components on each side.  The paper's Julia code takes K as a user input (1-20);
a fixed K lets the truncated boundary mass (about e^{-K eps}/Z) dominate delta, so we
choose K from (eps, delta) such that e^{-K eps} <= eta * delta with eta = 1e-3, plus one.
"""

from __future__ import annotations

import math
import numbers

from mlx26.core.common.errors import InputError

#: Share of delta that the truncated boundary mass of the multi-Gaussian lattice may use.
AUTO_K_ETA = 1e-3
#: Upper cap of the automatic K (keeps the mixture at most 2*cap+1 components).
AUTO_K_CAP = 400

KSpec = int | str | None  # an int >= 1, "auto" or None (= auto)


def validate_params(eps: float, delta: float, sensitivity: float = 1.0, K: KSpec = None) -> None:
    """Raise ``ValueError`` (one-line message plus a hint) for invalid (eps, delta, sensitivity, K)."""
    try:
        eps_f = float(eps)
    except (TypeError, ValueError):
        raise InputError(f"epsilon must be a number, got {eps!r}.") from None
    if not math.isfinite(eps_f) or eps_f <= 0:
        raise InputError(f"epsilon must be a finite number > 0, got {eps!r}. Hint: typical values are 0.1 to 10.")
    try:
        delta_f = float(delta)
    except (TypeError, ValueError):
        raise InputError(f"delta must be a number, got {delta!r}.") from None
    if delta_f == 0:
        raise InputError(
            "delta must be > 0: a mixture of Gaussians (or a Gaussian) cannot give pure "
            "epsilon-DP (delta = 0). Hint: use the Laplace or staircase mechanism for pure DP."
        )
    if not math.isfinite(delta_f) or not 0 < delta_f < 1:
        raise InputError(
            f"delta must lie in the open interval (0, 1), got {delta!r}. Hint: typical values are 1e-3 to 1e-9."
        )
    try:
        sens_f = float(sensitivity)
    except (TypeError, ValueError):
        raise InputError(f"sensitivity must be a number, got {sensitivity!r}.") from None
    if not math.isfinite(sens_f) or sens_f <= 0:
        raise InputError(f"sensitivity must be a finite number > 0, got {sensitivity!r}.")
    if not 1e-100 <= sens_f <= 1e100:  # σ², (x + Δ)² and the costs must stay finite floats
        raise InputError(f"sensitivity must lie in [1e-100, 1e100], got {sensitivity!r}; rescale the data.")
    if K is None or (isinstance(K, str) and K.strip().lower() == "auto"):
        return
    K = _as_int_K(K)
    if K < 1:
        raise InputError(
            f"K must be >= 1 (number of lattice components per side), got {K}. "
            "Hint: use 'auto' to choose K from (eps, delta)."
        )


def _as_int_K(K: object) -> int:
    if isinstance(K, str):
        try:
            return int(K.strip())
        except ValueError:
            raise InputError(f"K must be a positive integer or 'auto', got {K!r}.") from None
    if isinstance(K, float) and K.is_integer():
        return int(K)
    if isinstance(K, bool) or not isinstance(K, numbers.Integral):
        raise InputError(f"K must be a positive integer or 'auto', got {K!r}.")
    return int(K)


def auto_K(eps: float, delta: float, eta: float = AUTO_K_ETA, cap: int = AUTO_K_CAP) -> int:
    """Number of lattice components per side for the multi-Gaussian mechanism.

    K = ceil(ln(1/(eta*delta)) / eps) + 1, capped at ``cap``: the discarded discrete-Laplace
    tail beyond K has mass below eta*delta, so truncation costs at most ~eta of the budget.
    """
    k = math.ceil(math.log(1.0 / (eta * delta)) / eps) + 1
    return int(max(1, min(cap, k)))


def resolve_lattice_K(K: KSpec, eps: float, delta: float) -> int:
    """Turn ``"auto"``/``None`` into :func:`auto_K`, validate an explicit integer."""
    if K is None or (isinstance(K, str) and K.strip().lower() == "auto"):
        return auto_K(eps, delta)
    validate_params(eps, delta, 1.0, K)
    return _as_int_K(K)
