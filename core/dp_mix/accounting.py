"""Privacy accounting: privacy-loss PMFs, dp-accounting export, composition, budget files, vectors.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078); the
paper does not treat composition, so everything here is ours.

* ``loss_pmf``: the privacy loss L(x) = log p(x + s) - log p(x) of the pair (p(. + s), p) as a
  PMF on a grid of ``interval`` (pessimistic: each cell of sigma/64 in x carries its exact mass
  under p(. + s) at the largest loss seen on the cell, rounded up; the far left tail, where L
  grows without bound, is infinite loss).  delta(eps) = E[(1 - e^{eps - L})_+] + P(L = inf) is
  increasing in L, so rounding up only adds delta.  Pure-DP mechanisms (Laplace, staircase) use
  their closed-form two-point worst case {+eps, -eps}-style PMF from dp-accounting; the
  analytic Gaussian uses dp-accounting's exact ``GaussianPrivacyLoss``.
* ``to_dp_accounting``: the same PMF as a ``dp_accounting.pld.PrivacyLossDistribution``
  (``create_from_rounded_probability``) to compose with other mechanisms or subsampling there.
* ``compose_fft``: our own k-fold composition by FFT convolution of the loss PMF (independent of
  dp-accounting's implementation), and eps(delta) by bisection on the composed delta(eps).
* Shifts: the loss distribution depends on the shift s in [0, D]; a mixture has no single
  dominating shift, so composition is reported as the max over a shift set (the worst shift
  at the calibrated eps, s = D and a uniform grid).  This assumes every use sees the same
  shift (the usual "fixed worst pair" accounting); it is not a dominating-pair proof.
* Vector queries: calibration of a d-dimensional query for the l1 / l2 / linf sensitivity the
  user names: a joint Gaussian on the l2 sensitivity, Laplace on the l1 sensitivity, otherwise
  per-coordinate composition (see :func:`calibrate_vector`).
* Budget files: a JSON ledger of (eps, delta) spent, updated atomically.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure

from .calibration import Mechanism, calibrate

#: mechanisms exported through dp-accounting's own classes rather than our loss PMF
CLOSED_FORM_PLD = ("laplace", "staircase", "truncated-laplace", "gaussian")
#: loss-grid interval of the exported PMF
LOSS_INTERVAL = 1e-3
#: x cells per sigma of the loss PMF
CELLS_PER_SIGMA = 64
#: x range beyond the outermost means, in sigmas (left of it: infinite loss)
RANGE_SIGMAS = 12.0


@dataclass(frozen=True)
class LossPMF:
    """PMF of the privacy loss on the grid interval * index; ``inf_mass`` = P(L = inf)."""

    index: np.ndarray  # int64, sorted, unique
    prob: np.ndarray
    inf_mass: float
    interval: float

    def delta(self, eps: float) -> float:
        loss = self.index * self.interval
        with np.errstate(over="ignore"):
            v = np.where(loss > eps, -np.expm1(eps - loss), 0.0)
        return float(np.sum(self.prob * v) + self.inf_mass)


def privacy_parameters_pmf(eps: float, delta: float, interval: float = LOSS_INTERVAL) -> LossPMF:
    """Loss PMF of the worst (eps, delta)-DP pair (Kairouz, Oh & Viswanath): L = +-eps or inf.

    P(L = inf) = delta, P(L = eps) = (1 - delta) e^eps / (1 + e^eps), P(L = -eps) the rest; the
    loss is rounded up to the grid (pessimistic)."""
    hi = int(math.ceil(eps / interval))
    lo = int(math.ceil(-eps / interval))
    p_hi = (1.0 - delta) / (1.0 + math.exp(-eps))
    return LossPMF(np.array([lo, hi], dtype=np.int64), np.array([1.0 - delta - p_hi, p_hi]), float(delta), interval)


def loss_pmf(mech: Mechanism, shift: float | None = None, interval: float = LOSS_INTERVAL,
             allow_closed_form: bool = False) -> LossPMF:
    """Pessimistic privacy-loss PMF of ``mech`` at ``shift`` (default: its worst shift)."""
    from .sampling import mechanism_mixture

    if mech.name in CLOSED_FORM_PLD and not (allow_closed_form and mech.name == "gaussian"):
        raise InputError(f"loss_pmf is for the mixture mechanisms; {mech.name} has a closed-form PLD.")
    mix = mechanism_mixture(mech)
    s = float(mech.worst_shift if shift is None else shift)
    sig = mix.sigma
    lo = float(np.min(mix.mu)) - s - RANGE_SIGMAS * sig
    hi = float(np.max(mix.mu)) + RANGE_SIGMAS * sig
    n = int(math.ceil((hi - lo) * CELLS_PER_SIGMA / sig))
    edges = np.linspace(lo, hi, n + 1)
    mids = 0.5 * (edges[:-1] + edges[1:])
    pts = np.concatenate([edges, mids])
    with np.errstate(invalid="ignore"):
        lp = mix.logpdf(pts + s) - mix.logpdf(pts)
    le, lm = lp[: n + 1], lp[n + 1:]
    cell_loss = np.maximum(np.maximum(le[:-1], le[1:]), lm)
    mass = np.exp(mix.log_mass(edges[:-1], edges[1:], s))
    right = float(np.exp(mix.log_mass(np.array([hi]), np.array([np.inf]), s))[0])
    left = float(np.exp(mix.log_mass(np.array([-np.inf]), np.array([lo]), s))[0])
    finite = np.isfinite(cell_loss)
    idx = np.ceil(cell_loss[finite] / interval).astype(np.int64)
    m = mass[finite]
    inf_mass = left + float(np.sum(mass[~finite]))
    # the right tail has very negative loss: put it at the smallest loss seen (rounding up)
    idx = np.append(idx, idx.min() if idx.size else 0)
    m = np.append(m, right)
    u, inv = np.unique(idx, return_inverse=True)
    prob = np.bincount(inv, weights=m)
    return LossPMF(u, prob, inf_mass, interval)


def _import_pld():
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("PLD export needs the optional package dp-accounting; install it with: "
                          "pip install 'mlx26[dp]'") from exc
    return pld


def to_dp_accounting(mech: Mechanism, shift: float | None = None, interval: float = LOSS_INTERVAL):
    """``mech`` as a dp-accounting ``PrivacyLossDistribution`` (exact classes where they exist)."""
    pld = _import_pld()
    D = mech.sensitivity
    if mech.name == "gaussian":
        return pld.from_gaussian_mechanism(mech.sigma, sensitivity=D, value_discretization_interval=interval)
    if mech.name in ("laplace", "staircase", "truncated-laplace"):
        if mech.name == "laplace":
            return pld.from_laplace_mechanism(mech.sigma, sensitivity=D, value_discretization_interval=interval)
        from dp_accounting.pld.common import DifferentialPrivacyParameters

        return pld.from_privacy_parameters(DifferentialPrivacyParameters(mech.eps, mech.delta_upper),
                                           value_discretization_interval=interval)
    lp = loss_pmf(mech, shift, interval)
    return pld.PrivacyLossDistribution.create_from_rounded_probability(
        {int(i): float(p) for i, p in zip(lp.index, lp.prob, strict=True) if p > 0},
        lp.inf_mass, interval, pessimistic_estimate=True)


def compose_fft(lp: LossPMF, k: int, tail: float = 1e-15) -> LossPMF:
    """k-fold composition of a loss PMF by FFT convolution (losses add, infinite masses combine)."""
    k = _check_k(k)
    base = np.zeros(int(lp.index[-1] - lp.index[0]) + 1)
    base[lp.index - lp.index[0]] = lp.prob
    size = k * (base.size - 1) + 1
    nfft = 1 << int(math.ceil(math.log2(size)))
    spec = np.fft.rfft(base, nfft) ** k
    out = np.fft.irfft(spec, nfft)[:size]
    out = np.where(out > tail * 1e-3, out, 0.0)  # FFT round-off is ~1e-17 absolute
    idx = np.arange(size, dtype=np.int64) + k * int(lp.index[0])
    keep = out > 0
    inf_mass = 1.0 - (1.0 - lp.inf_mass) ** k
    return LossPMF(idx[keep], out[keep], inf_mass, lp.interval)


def epsilon_for_delta(lp: LossPMF, delta: float) -> float:
    """Smallest eps >= 0 with delta(eps) <= delta (bisection; delta(eps) is decreasing)."""
    if lp.delta(0.0) <= delta:
        return 0.0
    if lp.inf_mass > delta:
        return math.inf
    lo, hi = 0.0, float(lp.index[-1] * lp.interval) + 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if lp.delta(mid) > delta else (lo, mid)
    return hi


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or int(k) < 1:
        raise InputError(f"the number of compositions must be an integer >= 1, got {k!r}.")
    if int(k) > 100_000:
        raise InputError(f"at most 100000 compositions, got {k}.")
    return int(k)


def composition_shifts(mech: Mechanism, n: int = 4) -> list[float]:
    D = mech.sensitivity
    return sorted({float(mech.worst_shift), D, *[D * (i + 1) / n for i in range(n)]})


def compose(mech: Mechanism, k: int, delta: float, backend: str = "both") -> dict:
    """(eps, delta) after k uses: ours (FFT) and dp-accounting's, max over the shift set."""
    k = _check_k(k)
    if not 0 < float(delta) < 1:
        raise InputError(f"delta for the composed guarantee must lie in (0, 1), got {delta!r}.")
    out: dict = {"mechanism": mech.name, "k": k, "delta": float(delta), "eps_single": mech.eps}
    if mech.name in CLOSED_FORM_PLD:
        out["eps_dp_accounting"] = None
        if backend in ("both", "dp-accounting"):
            pld = to_dp_accounting(mech)
            out["eps_dp_accounting"] = float(pld.self_compose(k).get_epsilon_for_delta(delta))
        # ours: the Gaussian's own loss PMF (one shift, D, dominates); for the pure-DP / exact-delta
        # mechanisms the generic (eps, delta) worst-case pair (valid for any such mechanism)
        lp = (loss_pmf(mech, mech.sensitivity, allow_closed_form=True) if mech.name == "gaussian"
              else privacy_parameters_pmf(mech.eps, mech.delta_upper if mech.name == "truncated-laplace" else 0.0))
        out["eps_ours"] = epsilon_for_delta(compose_fft(lp, k), delta) if backend in ("both", "native") else None
        out["shifts"] = [mech.sensitivity]
        out["eps_basic"] = k * mech.eps
        return out
    ours, theirs = [], []
    shifts = composition_shifts(mech)
    for s in shifts:
        lp = loss_pmf(mech, s)
        if backend in ("both", "native"):
            ours.append(epsilon_for_delta(compose_fft(lp, k), delta))
        if backend in ("both", "dp-accounting"):
            pld = to_dp_accounting(mech, s)
            theirs.append(float(pld.self_compose(k).get_epsilon_for_delta(delta)))
    out["eps_ours"] = max(ours) if ours else None
    out["eps_dp_accounting"] = max(theirs) if theirs else None
    out["shifts"] = shifts
    out["eps_basic"] = k * mech.eps  # basic composition, for reference: k eps at k delta_single
    return out


# ----- vector queries -------------------------------------------------------------------------------
NORMS = ("l1", "l2", "linf")


def _check_vector(norm: str, dim: int) -> None:
    if norm not in NORMS:
        raise InputError(f"norm must be one of {', '.join(NORMS)}, got {norm!r}.")
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise InputError(f"dimension must be an integer >= 1, got {dim!r}.")


def per_coordinate_sensitivity(norm: str, sensitivity: float, dim: int) -> float:
    """Largest per-coordinate change of a d-vector query whose change has norm <= sensitivity.

    Each coordinate moves by at most the norm bound for l1, l2 and linf alike (|v_i| <= ||v||_p).
    """
    _check_vector(norm, dim)
    return float(sensitivity)


def l2_sensitivity(norm: str, sensitivity: float, dim: int) -> float:
    """Largest l2 norm of a change whose ``norm`` is <= sensitivity (l1, l2: D; linf: sqrt(d) D)."""
    _check_vector(norm, dim)
    return float(sensitivity) * (math.sqrt(dim) if norm == "linf" else 1.0)


def l1_sensitivity(norm: str, sensitivity: float, dim: int) -> float:
    """Largest l1 norm of a change whose ``norm`` is <= sensitivity (l1: D; l2: sqrt(d) D; linf: d D)."""
    _check_vector(norm, dim)
    return float(sensitivity) * {"l1": 1.0, "l2": math.sqrt(dim), "linf": float(dim)}[norm]


def _joint(mech: Mechanism, dim: int, norm: str, scheme: str, used: float, note: str) -> dict:
    return {"dim": dim, "norm": norm, "scheme": scheme, "sensitivity_used": used, "eps_coordinate": None,
            "delta_coordinate": None, "mechanism": mech.to_dict(), "eps_composed": mech.eps,
            "delta_composed": mech.delta_upper if mech.name != "laplace" else 0.0, "note": note}


def calibrate_vector(mechanism: str, eps: float, delta: float, sensitivity: float, dim: int, norm: str = "linf",
                     objective: str = "l1") -> dict:
    """Noise for a d-dimensional query whose change between neighbours has ``norm`` <= sensitivity.

    The calibration uses the norm the user names:

    * ``gaussian``: one isotropic Gaussian N(0, sigma^2 I), whose privacy loss depends only on
      ||v||_2: sigma is the analytic Gaussian's for the l2 sensitivity (D for l1 and l2 bounds,
      sqrt(d) D for linf; tight, the worst change attains it) at (eps, delta).
    * ``laplace``: i.i.d. Laplace with b = D_1 / eps on the l1 sensitivity D_1 (D, sqrt(d) D,
      d D): pure eps-DP, since the loss is at most ||v||_1 / b.  For l2 and linf the d-fold
      composition below is also tried (it spends delta) and the cheaper one is returned.
    * ``best``: the cheapest (in ``objective``) of the Gaussian, Laplace, staircase and truncated
      Laplace answers.
    * any other mechanism (multi, quasi, optimised, staircase, truncated Laplace):
      per-coordinate noise with per-coordinate sensitivity D (|v_i| <= ||v||_p for every p),
      calibrated to (eps_c, delta / (2 d)) with the d-fold composition (our FFT accounting, max
      over shifts, or dp-accounting's classes for the closed-form mechanisms) at most (eps,
      delta): eps_c by bisection.  Valid for every norm but it does not exploit l1 / l2 bounds
      (their loss is not a function of the norm of the change); the result says so, and
      ``joint_gaussian_l1`` gives the per-coordinate l1 of the Gaussian alternative.
    """
    _check_vector(norm, dim)
    delta = float(delta)
    if mechanism == "best":  # the cheap, exactly accounted candidates (a live best per coordinate is too slow)
        cands = [calibrate_vector(m, eps, delta, sensitivity, dim, norm, objective)
                 for m in ("gaussian", "laplace", "staircase", "truncated-laplace")]
        pick = min(cands, key=lambda r: r["mechanism"][objective])
        pick["note"] += "; best of gaussian (joint), laplace, staircase and truncated-laplace"
        return pick
    if mechanism == "gaussian":
        d2 = l2_sensitivity(norm, sensitivity, dim)
        m = calibrate("gaussian", eps, delta, d2)
        return _joint(m, dim, norm, "joint-gaussian-l2", d2,
                      f"one isotropic Gaussian on the l2 sensitivity {d2:g} (the privacy loss depends on ||v||_2 "
                      "only); exact")
    if mechanism == "laplace":
        d1 = l1_sensitivity(norm, sensitivity, dim)
        m = calibrate("laplace", eps, delta, d1)
        joint = _joint(m, dim, norm, "laplace-l1", d1,
                       f"i.i.d. Laplace on the l1 sensitivity {d1:g}: pure eps-DP (loss <= ||v||_1 / b)")
        if norm == "l1" or dim == 1:
            return joint
        comp = _vector_composition(mechanism, eps, delta, sensitivity, dim, norm, objective)
        return joint if joint["mechanism"][objective] <= comp["mechanism"][objective] else comp
    res = _vector_composition(mechanism, eps, delta, sensitivity, dim, norm, objective)
    if norm != "linf" and dim > 1:
        res["joint_gaussian_l1"] = calibrate("gaussian", eps, delta, l2_sensitivity(norm, sensitivity, dim)).l1
        res["note"] += (f"; the {norm} bound is not exploited by per-coordinate composition: -m gaussian "
                        f"(joint, l2 sensitivity) gives l1 {res['joint_gaussian_l1']:.4g} per coordinate")
    return res


def _vector_composition(mechanism: str, eps: float, delta: float, sensitivity: float, dim: int, norm: str,
                        objective: str) -> dict:
    """Per-coordinate calibration under d-fold composition (see :func:`calibrate_vector`)."""
    d_c_sens = per_coordinate_sensitivity(norm, sensitivity, dim)
    if dim == 1:
        m = calibrate(mechanism, eps, delta, d_c_sens, objective=objective)
        return {"dim": 1, "norm": norm, "scheme": "scalar", "sensitivity_used": d_c_sens,
                "eps_coordinate": float(eps), "delta_coordinate": delta, "mechanism": m.to_dict(),
                "eps_composed": float(eps), "delta_composed": delta, "note": "d = 1: the scalar calibration"}
    delta_c = delta / (2.0 * dim)
    target_delta = delta - dim * delta_c  # the composition's own delta at the final eps

    def composed(eps_c: float) -> tuple[float, Mechanism]:
        m = calibrate(mechanism, eps_c, delta_c, d_c_sens, objective=objective)
        if m.name in CLOSED_FORM_PLD:  # dp-accounting's exact (or closed-form) loss classes
            return compose(m, dim, target_delta)["eps_dp_accounting"], m
        return compose(m, dim, target_delta, backend="native")["eps_ours"], m

    lo, hi = float(eps) / dim, float(eps)
    e_hi, m_hi = composed(hi)
    if e_hi <= eps:
        best = (hi, m_hi, e_hi)
    else:
        best = None
        for _ in range(14):
            mid = math.sqrt(lo * hi)
            e_mid, m_mid = composed(mid)
            if e_mid <= eps:
                lo, best = mid, (mid, m_mid, e_mid)
            else:
                hi = mid
        if best is None:
            e_lo, m_lo = composed(lo)
            if e_lo > eps:
                raise RunFailure("vector calibration found no per-coordinate eps (try a larger delta).")
            best = (lo, m_lo, e_lo)
    eps_c, m, e_comp = best
    return {"dim": dim, "norm": norm, "scheme": "per-coordinate-composition", "sensitivity_used": d_c_sens,
            "eps_coordinate": eps_c, "delta_coordinate": delta_c, "mechanism": m.to_dict(),
            "eps_composed": e_comp, "delta_composed": delta,
            "note": "per-coordinate noise with sensitivity D per coordinate; composed over d uses "
                    "(FFT of the loss PMF, max over shifts) + d * delta_coordinate"}


# ----- budget files ---------------------------------------------------------------------------------
class BudgetExhausted(InputError):
    """Raised when a release would exceed the budget (an input problem: exit 2)."""


def read_budget(path: str | Path) -> dict:
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise InputError(f"budget file {p} does not exist.", "create one with: mlx26 dp-mix budget FILE -e E -d D") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"budget file {p} is not readable JSON ({exc.__class__.__name__}).") from None
    ok = isinstance(data, dict) and all(isinstance(data.get(k), int | float) and not isinstance(data.get(k), bool)
                                        for k in ("eps_total", "delta_total", "eps_spent", "delta_spent"))
    import math

    # A hand-edited file must never widen the budget: NaN compares false with everything, so every
    # field is checked finite, the spent amounts within [0, total], and equal to the ledger's sum.
    if not ok or not all(math.isfinite(data[k]) for k in ("eps_total", "delta_total", "eps_spent", "delta_spent")) \
            or not (data["eps_total"] > 0 and 0 < data["delta_total"] < 1) \
            or not (0 <= data["eps_spent"] and 0 <= data["delta_spent"]):
        raise InputError(f"budget file {p} needs finite numbers eps_total > 0, 0 < delta_total < 1, "
                         "eps_spent >= 0, delta_spent >= 0.")
    releases = data.setdefault("releases", [])
    try:
        eps_sum = sum(float(r["eps"]) for r in releases)
        delta_sum = sum(float(r["delta"]) for r in releases)
    except (TypeError, KeyError, ValueError):
        raise InputError(f"budget file {p}: every entry of 'releases' needs numbers eps and delta.") from None
    if not (math.isclose(eps_sum, data["eps_spent"], rel_tol=1e-9, abs_tol=1e-12)
            and math.isclose(delta_sum, data["delta_spent"], rel_tol=1e-9, abs_tol=1e-15)):
        raise InputError(f"budget file {p} is inconsistent: its releases sum to ε {eps_sum:g}, δ {delta_sum:g} but it "
                         f"records ε {data['eps_spent']:g}, δ {data['delta_spent']:g} spent.",
                         "restore the file; a budget is never widened by editing it")
    return data


def init_budget(path: str | Path, eps: float, delta: float, force: bool = False) -> dict:
    from mlx26.core.common.files import atomic_write

    p = Path(path)
    if p.exists() and not force:
        raise InputError(f"budget file {p} exists; pass --force to reset it.")
    if not (math.isfinite(eps) and eps > 0 and 0 < delta < 1):
        raise InputError(f"a budget needs eps > 0 and 0 < delta < 1, got eps={eps!r}, delta={delta!r}.")
    data = {"eps_total": float(eps), "delta_total": float(delta), "eps_spent": 0.0, "delta_spent": 0.0,
            "releases": [], "composition": "basic (sums of eps and delta)"}
    atomic_write(p, json.dumps(data, indent=1) + "\n")
    return data


def check_budget(path: str | Path, eps: float, delta: float, count: int = 1) -> dict:
    """Raise :class:`BudgetExhausted` unless ``count`` releases at (eps, delta) fit (nothing written)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InputError(f"the number of released values must be an integer >= 0, got {count!r}.")
    data = read_budget(path)
    rem_e = data["eps_total"] - data["eps_spent"]
    rem_d = data["delta_total"] - data["delta_spent"]
    need_e, need_d = count * float(eps), count * float(delta)
    if need_e > rem_e * (1 + 1e-12) or need_d > rem_d * (1 + 1e-12):
        each = f" ({count} values at eps={eps:g}, delta={delta:g} each)" if count != 1 else ""
        raise BudgetExhausted(f"privacy budget exhausted: this release needs eps={need_e:g}, delta={need_d:g}{each} but "
                              f"only eps={max(rem_e, 0):g}, delta={max(rem_d, 0):g} remain in {path}.",
                              "release fewer values, or --charge once if a neighbouring dataset changes at most "
                              "one of them" if count > 1 else None)
    return data


def spend_budget(path: str | Path, eps: float, delta: float, note: str = "", count: int = 1) -> dict:
    """Charge ``count`` releases at (eps, delta) each (basic composition), atomically.

    Basic composition (eps and delta add up): valid for any sequence of releases, conservative.
    A release of n values, each (eps, delta)-DP for a change of that value by <= D, is n
    releases when a neighbouring dataset may change all of them (count = n); count = 1 is right
    only when it changes at most one of them (disjoint groups under add/remove of one person).
    Raises :class:`BudgetExhausted` naming the remaining budget when it does not fit, spending
    nothing.
    """
    from mlx26.core.common.files import atomic_write

    data = check_budget(path, eps, delta, count)
    if count == 0:
        return data
    data["eps_spent"] += count * float(eps)
    data["delta_spent"] += count * float(delta)
    data["releases"].append({"eps": count * float(eps), "delta": count * float(delta), "values": count,
                             "note": note})
    atomic_write(Path(path), json.dumps(data, indent=1) + "\n")
    return data
