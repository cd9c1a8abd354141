"""Calibration (smallest sigma with delta(sigma) <= delta) and certified verification.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

Reconstructed here: the search strategy.  delta(sigma) = max_s H_s has a cliff (at eps = 10
it falls from 5e-2 to 7e-6 within 10% of sigma) and its worst shift moves with sigma, so

1. *estimate*: track the worst shift (16-shift scan, then local parabolic refinement around
   the previous worst shift) and run an Illinois-safeguarded secant on log delta vs log sigma
   towards delta * (1 - rho) with a small slack rho;
2. *certify*: run the certified branch-and-bound of :mod:`.profile` at the candidate sigma with
   early exit against delta.  A witness shift above delta sends the search back to step 1 with
   that shift as new hint; an undecided certificate nudges sigma up.  The returned sigma is
   always the safe end: its certified upper bound of delta(sigma) is <= delta.

Everything runs at sensitivity 1 and is scaled by D at the end (sigma is exactly linear in D).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure
from scipy.interpolate import RectBivariateSpline
from scipy.optimize import brentq

from .costs import mechanism_costs
from .gaussian import calibrate_gaussian_sigma, gaussian_delta
from .mixture import Mixture, multi_mixture, quasi_mixture
from .params import AUTO_K_CAP, KSpec, auto_K, resolve_lattice_K, validate_params
from .profile import MixtureEvaluator, ProfileResult, certified_max
from .quasi import calibrate_quasi_closed_form, quasi_sigma_tail
from .spec import MECHANISMS, MIXTURES

#: relative slack aimed for by the estimate phase (certification needs a little room)
SLACK = 2e-3
#: relative bracket width on sigma at which the estimate phase stops (cliff regime)
SIGMA_RTOL = 1e-4
#: most certification rounds of one calibration (a witness or an undecided certificate each
#: start a new round)
MAX_ROUNDS = 40
#: evaluation budget of one certification inside the search (then sigma is nudged up)
CERT_MAX_EVALS = 400
#: the quasi-Gaussian tail root is computed for delta (1 - QUASI_SLACK) so it can be certified
QUASI_SLACK = 1e-4
#: evaluation budget of :func:`verify` (a failing verdict is final as soon as a shift exceeds
#: delta; the budget only limits how precisely a large delta_achieved is then pinned down)
VERIFY_MAX_EVALS = 3000

# Starting point of the search: sigma/D of the multi-Gaussian (K auto) measured by this module on
# a coarse (eps, delta) grid that deliberately avoids the benchmark grid (eps in
# {0.5, 1, 2, 4, 10, 20} x delta in {1e-3, 1e-5, 1e-6}); bicubic in (log eps, log10 delta).
# On the benchmark grid the guess is within 0.35% of the calibrated sigma.
_GUESS_EPS = np.log([0.1, 0.2, 0.3, 0.7, 1.5, 3.0, 6.0, 15.0, 30.0, 60.0, 120.0])
_GUESS_LOGD = np.array([-12.0, -10.0, -8.0, -7.0, -5.5, -4.5, -3.5, -2.5, -1.5])
_GUESS_SIGMA = [
    [0.494959, 0.494849, 0.49477, 0.494582, 0.493284, 0.490099, 0.480106, 0.450337, 0.383117],
    [0.458036, 0.458107, 0.457964, 0.457799, 0.456767, 0.454334, 0.446505, 0.422623, 0.361313],
    [0.435147, 0.435062, 0.435001, 0.434855, 0.43396, 0.431827, 0.424961, 0.403766, 0.351581],
    [0.38289, 0.38289, 0.382837, 0.382696, 0.382051, 0.380293, 0.374704, 0.35826, 0.323918],
    [0.33021, 0.330198, 0.330158, 0.330057, 0.32939, 0.327649, 0.322093, 0.311938, 0.289783],
    [0.277847, 0.277844, 0.277787, 0.277637, 0.27667, 0.27414, 0.269567, 0.265794, 0.250504],
    [0.224326, 0.224304, 0.22412, 0.22368, 0.220728, 0.2204, 0.219771, 0.217012, 0.206055],
    [0.159434, 0.158468, 0.15824, 0.158237, 0.158216, 0.158122, 0.15769, 0.155874, 0.14925],
    [0.118586, 0.118584, 0.118586, 0.118582, 0.118564, 0.118495, 0.118184, 0.116941, 0.112745],
    [0.0869172, 0.0869169, 0.0869166, 0.0869179, 0.0869054, 0.0868537, 0.0866372, 0.0858327, 0.0833253],
    [0.0627834, 0.0627832, 0.0627831, 0.0627839, 0.0627763, 0.0627396, 0.0625959, 0.0621023, 0.0606749],
]
_GUESS_SPLINE: RectBivariateSpline | None = None


def _multi_sigma_guess(eps: float, delta: float) -> float:
    global _GUESS_SPLINE
    if _GUESS_SPLINE is None:
        _GUESS_SPLINE = RectBivariateSpline(_GUESS_EPS, _GUESS_LOGD, np.log(_GUESS_SIGMA), kx=3, ky=3)
    le = min(max(math.log(eps), _GUESS_EPS[0]), _GUESS_EPS[-1])
    ld = min(max(math.log10(delta), _GUESS_LOGD[0]), _GUESS_LOGD[-1])
    guess = float(_GUESS_SPLINE(le, ld)[0, 0])
    if math.log(eps) > _GUESS_EPS[-1]:  # sigma ~ eps^{-1/2} at large eps
        guess -= 0.5 * (math.log(eps) - _GUESS_EPS[-1])
    return math.exp(guess)


@dataclass(frozen=True)
class Mechanism:
    """A calibrated additive-noise mechanism for a scalar query.

    ``delta_achieved`` is the largest hockey-stick divergence found (at ``worst_shift``, in
    units of the query); ``delta_upper`` is a certified upper bound of delta(sigma) (<= delta).
    """

    name: str
    eps: float
    delta: float
    sensitivity: float
    sigma: float
    K: int | None
    l1: float
    l2: float
    delta_achieved: float
    worst_shift: float
    delta_upper: float
    method: str = ""
    #: lattice spacing of the mixture means and log-weight decay per unit of query (multi:
    #: spacing D, decay eps/D; optimised: spacing D/m, a decay <= eps/D); None otherwise
    spacing: float | None = None
    decay: float | None = None

    def to_dict(self) -> dict:
        """Plain dict for JSON/CSV output; the mechanism's name is under "mechanism"."""
        d = asdict(self)
        return {"mechanism": d.pop("name"), **d}


def check_mechanism(mechanism: str, allowed: tuple[str, ...] = MIXTURES) -> str:
    name = str(mechanism).strip().lower()
    if name not in allowed:
        raise InputError(
            f"unknown mechanism {mechanism!r}; expected one of {', '.join(allowed)}."
        )
    return name


def _builder(name: str, eps: float, K: int | None) -> Callable[[float], Mixture]:
    if name == "multi":
        assert K is not None
        return lambda s: multi_mixture(s, eps, K)
    return lambda s: quasi_mixture(s, eps)


# ----- estimate phase -------------------------------------------------------------------------
def _estimate(mix: Mixture, eps: float, hint: float | None, h: float = 1.0 / 64) -> tuple[float, float]:
    """Fast (uncertified) estimate of max_s H_s: (value, worst shift).

    Without a hint: 16-shift scan first (and h = 1/32).  Then H at s* + h {-1, -1/4, 0, 1/4, 1}
    and the vertex of the parabola through the best point and its neighbours.
    """
    ev = MixtureEvaluator(mix, eps, 1.0)
    best, best_s = -1.0, hint
    if hint is None:
        s = np.linspace(1.0 / 16, 1.0, 16)
        H = ev.hockey(s, s)
        i = int(np.argmax(H))
        best, best_s, h = float(H[i]), float(s[i]), 1.0 / 32
    assert best_s is not None
    offsets = np.array([-1.0, -0.25, 0.0, 0.25, 1.0])
    for _ in range(4):  # follow the maximum when it drifted out of the window
        pts = np.unique(np.clip(best_s + h * offsets, 1e-6, 1.0))
        H = ev.hockey(pts, pts)
        i = int(np.argmax(H))
        if H[i] >= best:
            best, best_s = float(H[i]), float(pts[i])
        if 0 < i < pts.size - 1 or pts[i] in (1e-6, 1.0):
            break
    if 0 < i < pts.size - 1:
        x0, x1, x2 = pts[i - 1 : i + 2]
        g0, g1, g2 = H[i - 1 : i + 2]
        d1 = (g1 - g0) / (x1 - x0)
        d2 = (g2 - g1) / (x2 - x1)
        a2 = (d2 - d1) / (x2 - x0)
        if a2 < 0:
            slope = d1 + a2 * (x1 - x0)
            v = x1 - slope / (2.0 * a2)
            if x0 < v < x2:
                best = max(best, float(g1 - slope * slope / (4.0 * a2)))
                best_s = float(v)
    return best, best_s


def _calibrate_mixture(
    build: Callable[[float], Mixture], eps: float, delta: float, sigma0: float, lo: float = 0.0,
    max_rounds: int = MAX_ROUNDS,
) -> tuple[float, ProfileResult, int]:
    """Smallest sigma (sensitivity 1) with certified max_s H_s <= delta.

    Works on u = log sigma with f(u) = log(estimate) - log(delta (1 - SLACK)), decreasing in u.
    """
    log_t = math.log(delta * (1.0 - SLACK))
    state: dict = {"hint": None, "h": 1.0 / 64}
    n_evals = 0
    cache: dict[float, float] = {}
    u_lo = math.log(lo) if lo > 0 else -math.inf

    def f(u: float) -> float:
        if u not in cache:
            val, s_star = _estimate(build(math.exp(u)), eps, state["hint"], state["h"])
            state["hint"] = s_star
            cache[u] = (math.log(val) if val > 0 else -745.0) - log_t
        return cache[u]

    def bracket(u0: float) -> tuple[float, float, float, float]:
        """(ua, fa, ub, fb) with f(ua) > 0 >= f(ub)."""
        step = 0.004
        fu = f(u0)
        if fu > 0:
            ua, fa, u = u0, fu, u0
            while True:
                if step > 1e3:
                    raise RunFailure("calibration failed to bracket sigma (delta(sigma) never fell below delta).")
                u = u + step
                fu = f(u)
                if fu <= 0:
                    return ua, fa, u, fu
                ua, fa, step = u, fu, step * 3
        ub, fb, u = u0, fu, u0
        while True:
            u = max(u - step, u_lo)
            fu = f(u) if u > u_lo or lo <= 0 else 1.0
            if fu > 0 or u <= u_lo:
                return (u if fu > 0 else u - 1e-12), max(fu, 1e-12), ub, fb
            ub, fb, step = u, fu, step * 3

    ua, fa, ub, fb = bracket(math.log(sigma0))
    n_nudge = 0
    search = True
    for _round in range(max_rounds):
        if search:
            ub = _root_search(f, ua, fa, ub, fb, cache)
        search = True
        sig = math.exp(ub)
        hint = state["hint"]
        res = certified_max(
            build(sig), eps, target=delta, early_exit=True, seeds=None if hint is None else [hint],
            max_evals=CERT_MAX_EVALS,
        )
        n_evals += res.n_evals
        if res.upper <= delta:
            return sig, res, n_evals
        if res.delta > delta:  # the estimate missed a worse shift: search again from there
            state["h"] = max(state["h"] / 4, 2.0 * abs(res.worst_shift - (hint if hint is not None else 0.0)), 1e-4)
            state["hint"] = res.worst_shift
            cache.clear()
            ua, fa, ub, fb = bracket(ub)
        else:
            # undecided: just above a cliff the bounds need very fine shift cells; a slightly
            # larger sigma (where the profile is no larger) certifies quickly
            ub += 2.0 * SIGMA_RTOL * 2.0**n_nudge
            n_nudge += 1
            search = False
    raise RunFailure(f"calibration did not converge after {max_rounds} certification rounds.")


class _Accept(Exception):
    pass


def _root_search(f, ua: float, fa: float, ub: float, fb: float, cache: dict) -> float:
    """Brent's method on the bracket, stopped early once a passing point is close enough.

    A point u with f(u) <= 0 is accepted when the estimate is within 2% of the aim
    (f >= -log 1.02) and a secant through the nearest failing point puts the root within
    SIGMA_RTOL of u.  Returns the smallest passing u found.
    """

    def g(u: float) -> float:
        val = f(u)
        if val <= 0 and val >= -math.log(1.02):
            fails = [v for v in cache if cache[v] > 0 and v < u]
            if fails:
                v = max(fails)
                root = u - cache[u] * (u - v) / (cache[u] - cache[v])
                if u - root <= SIGMA_RTOL:
                    raise _Accept
        return val

    if not (fb >= -math.log(1.02) and ub - ua <= SIGMA_RTOL):
        try:
            brentq(g, ua, ub, xtol=0.5 * SIGMA_RTOL, rtol=4 * np.finfo(float).eps, maxiter=200)
        except _Accept:
            pass
    passing = [v for v in cache if cache[v] <= 0]
    return min(passing)


# ----- public API -----------------------------------------------------------------------------
def calibrate(
    mechanism: str,
    eps: float,
    delta: float,
    sensitivity: float = 1.0,
    K: KSpec = "auto",
    objective: str = "l1",
) -> Mechanism:
    """Smallest noise scale sigma making ``mechanism`` (eps, delta)-DP for sensitivity D.

    ``mechanism``: "multi" (multi-Gaussian, lattice half-width ``K``, "auto" from (eps, delta)),
    "quasi" (quasi-Gaussian) or "gaussian" (analytic Gaussian); "optimised" (lattice mixture
    optimised for ``objective``), "laplace", "truncated-laplace", "staircase" and "best" (the
    cheapest of all in ``objective``) are in :mod:`.optimise`.  Raises ``InputError`` for
    invalid parameters.
    """
    name = check_mechanism(mechanism, MECHANISMS)
    if name not in MIXTURES:
        from . import optimise

        validate_params(eps, delta, sensitivity)
        if name == "best":
            return optimise.calibrate_best(eps, delta, sensitivity, objective)
        if name == "optimised":
            return optimise.calibrate_optimised(eps, delta, sensitivity, objective)
        return optimise.reference_mechanism(name, eps, delta, sensitivity, objective)
    validate_params(eps, delta, sensitivity, K if name == "multi" else None)
    eps, delta, D = float(eps), float(delta), float(sensitivity)
    if name == "gaussian":
        s1 = calibrate_gaussian_sigma(eps, delta, 1.0)
        l1, l2 = mechanism_costs("gaussian", s1 * D, eps, D)
        d = gaussian_delta(s1, eps, 1.0)
        return Mechanism("gaussian", eps, delta, D, s1 * D, None, l1, l2, d, D, d, "analytic (Balle & Wang 2018)")
    if name == "quasi":
        s_cf, s_tail, s_ratio = calibrate_quasi_closed_form(eps, delta, 1.0)
        build = _builder("quasi", eps, None)
        if s_tail >= s_ratio:
            # the tail root is exact (delta(sigma_tail) = delta): certify it with a little room
            s1 = max(quasi_sigma_tail(eps, delta * (1.0 - QUASI_SLACK), 1.0), s_ratio)
            method = f"closed form (tail root at delta (1 - {QUASI_SLACK:g})), certified"
        else:
            s1 = s_cf
            method = "closed form (density-ratio root), certified"
        res = certified_max(build(s1), eps, target=delta, early_exit=True, seeds=[1.0], max_evals=CERT_MAX_EVALS)
        if res.upper > delta:  # never observed: fall back to the certified search
            s1, res, _ = _calibrate_mixture(build, eps, delta, s_cf)
            method = "certified search (closed form failed its certificate)"
        elif s_ratio > s_tail:
            # the density-ratio root is sufficient but not necessary: the certified search
            # finds a smaller sigma in [sigma_tail, sigma_ratio]
            s2, res2, _ = _calibrate_mixture(build, eps, delta, s_cf, lo=s_tail)
            if s2 < s1:
                s1, res = s2, res2
                method = f"certified search (closed-form ratio root {s_ratio * D:.6g} is conservative)"
        l1, l2 = mechanism_costs("quasi", s1 * D, eps, D)
        return Mechanism("quasi", eps, delta, D, s1 * D, None, l1, l2, res.delta, res.worst_shift * D, res.upper, method)
    Kr = resolve_lattice_K(K, eps, delta)
    build = _builder("multi", eps, Kr)
    sigma0 = _multi_sigma_guess(eps, delta)
    s1, res, _ = _calibrate_mixture(build, eps, delta, sigma0)
    l1, l2 = mechanism_costs("multi", s1 * D, eps, D, Kr)
    method = "certified search"
    if (K is None or str(K).strip().lower() == "auto") and Kr == AUTO_K_CAP and auto_K(eps, delta, cap=10**9) > Kr:
        method += f" (auto K capped at {AUTO_K_CAP}: the truncated tail, not the mixture, limits sigma)"
    return Mechanism("multi", eps, delta, D, s1 * D, Kr, l1, l2, res.delta, res.worst_shift * D, res.upper, method,
                     spacing=D, decay=eps / D)


def resolve_K(mechanism: str, eps: float, delta: float, K: KSpec = None) -> int | None:
    """The lattice half-width a multi-Gaussian uses for (eps, delta) ("auto"/None -> auto rule);
    None for the other mechanisms."""
    if check_mechanism(mechanism) != "multi":
        return None
    validate_params(eps, delta, 1.0, K)
    return resolve_lattice_K(K, eps, delta)


@dataclass(frozen=True)
class Verification:
    delta: float
    worst_shift: float
    upper: float
    passed: bool
    n_evals: int


def verify_detail(
    mechanism: str, sigma: float, eps: float, delta: float, sensitivity: float = 1.0, K: KSpec = None
) -> Verification:
    """Certified check of the privacy profile at a given sigma (see :func:`verify`)."""
    name = check_mechanism(mechanism)
    validate_params(eps, delta, sensitivity, K if name == "multi" else None)
    try:
        sig = float(sigma)
    except (TypeError, ValueError):
        raise InputError(f"sigma must be a number, got {sigma!r}.") from None
    if not math.isfinite(sig) or sig <= 0:
        raise InputError(f"sigma must be a finite number > 0, got {sigma!r}.")
    eps, delta, D = float(eps), float(delta), float(sensitivity)
    s1 = sig / D
    if not 1e-2 <= s1 <= 1e6:  # the grid grows with Δ/σ (1e-3 takes ~100 s) and spans σ·2^40: keep it usable
        raise InputError(f"sigma / sensitivity = {s1:.3g} is outside [0.01, 1e6], where the certified check runs "
                         "in seconds.",
                         "far below 1 gives no privacy at all, far above gives delta ≈ 0")
    if name == "gaussian":
        d = gaussian_delta(s1, eps, 1.0)
        return Verification(d, D, d, d <= delta, 1)
    mix = multi_mixture(s1, eps, resolve_lattice_K(K, eps, delta)) if name == "multi" else quasi_mixture(s1, eps)
    res = certified_max(mix, eps, target=delta, rtol=1e-3, max_evals=VERIFY_MAX_EVALS)
    return Verification(res.delta, res.worst_shift * D, res.upper, res.upper <= delta, res.n_evals)


def verify(
    mechanism: str, sigma: float, eps: float, delta: float, sensitivity: float = 1.0, K: KSpec = None
) -> tuple[float, float, bool]:
    """(delta_achieved, worst_shift, passed) for noise scale ``sigma``.

    delta_achieved = max over shifts s in [0, D] of int (p(x+s) - e^eps p(x))_+ dx, certified
    to within 1e-3 * delta; ``passed`` means the certified upper bound is <= delta.  For
    "multi", ``K=None`` uses the automatic K for (eps, delta).
    """
    v = verify_detail(mechanism, sigma, eps, delta, sensitivity, K)
    return v.delta, v.worst_shift, v.passed


# public names for the optimiser in :mod:`.optimise` (same functions)
calibrate_mixture = _calibrate_mixture
multi_sigma_guess = _multi_sigma_guess
