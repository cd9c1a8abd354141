"""Exact hockey-stick divergence of shifted mixtures and a certified search over shifts.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

For symmetric additive noise with density p and sensitivity D the mechanism is (eps, delta)-DP
iff  delta(sigma) = max_{s in [0, D]} H_s <= delta,  H_s = int (p(x + s) - e^eps p(x))_+ dx.
Every shift matters: for the multi-Gaussian at eps = 4, delta = 1e-5 the worst shift is about
0.93 D and H_D is many orders of magnitude smaller.

Reconstructed here (the paper's Julia code scans a fixed shift grid with adaptive quadrature):

* ``hockey_stick``: H_s exactly, not by quadrature.  The sign changes of
  g(x) = log p(x + s) - eps - log p(x) are bracketed on a grid of spacing sigma/4 over the
  component means, refined around the points where adjacent components exchange dominance
  (log p bends over ~sigma^2 / spacing there), with geometric steps in the tails (where g is
  monotone).  A parabolic test on grid-local maxima of g, followed by a parabolic search,
  catches narrow positive bumps between grid points.  Roots are refined by a safeguarded
  Newton iteration, and each positive interval is integrated in closed form with Phi
  differences in the log domain.
* ``certified_max``: a branch-and-bound (Piyavskii-style) search over shifts.  On a shift cell
  [s1, s2] of width w two valid upper bounds of max_{t in cell} H_t are used:
  (i) the Lipschitz bound (H(s1) + H(s2))/2 + L w/2 with L = total variation of p
      (|H_s - H_t| <= |s - t| int|p'|); valid but useless near delta, because L ~ 1/sigma is
      absolute, not relative to delta (certifying to 1e-3 delta would take ~1/delta cells);
  (ii) the Hoelder bound (see :func:`certified_max`)
      max_{t in cell} H_t <= kappa max(H_{s1}(eps - log kappa), H_{s2}(eps - log kappa)),
      kappa = e^{w^2/(8 sigma^2)}: second order in w and relative to the violation itself.
  The search stops when  upper bound - best <= tol  (or, with a target, when the verdict
  max H <= target is decided).
* ``Mixture.log_envelope`` also provides a flat-topped component envelope of p(x + t) over a
  shift interval; an envelope bound built on it is first order in w and could not certify
  tiny delta at small eps, so the search no longer uses it (kept for experiments).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .mixture import Mixture

#: grid points per sigma used to bracket sign changes (kinks of log p get extra points)
POINTS_PER_SIGMA = 4
#: half-width of the uniform grid beyond the outermost means, in sigmas (geometric beyond)
CORE_SIGMAS = 8.0
#: rows x grid points evaluated at once (memory bound of a batched call)
MAX_GRID_CELLS = 2_000_000
#: log-ratio values below this are treated as 0 (rounding noise of log-sum-exp differences);
#: ignoring a violation with g <= G_ZERO changes H by at most G_ZERO * (its mass)
G_ZERO = 1e-13
#: parabola-vertex threshold (in log-ratio units) that triggers a sub-grid search for bumps
BUMP_MARGIN = -0.1


def _switch_points(mix: Mixture) -> tuple[np.ndarray, np.ndarray]:
    """Where adjacent components of p exchange dominance, and the local kink width.

    log p bends sharply there (over ~sigma^2 / gap), so g = log p(. + s) - log p peaks there;
    the grid is refined around these points.
    """
    order = np.argsort(mix.mu, kind="stable")
    mu, lw = mix.mu[order], mix.logw[order]
    gap = np.diff(mu)
    ok = gap > 0
    gap = np.where(ok, gap, 1.0)
    xs = 0.5 * (mu[1:] + mu[:-1]) + mix.sigma**2 * (lw[:-1] - lw[1:]) / gap
    width = mix.sigma**2 / gap
    return xs[ok], width[ok]


def _x_grid(mix: Mixture, smax: float) -> np.ndarray:
    """Sorted bracketing grid: uniform core, refinements at kinks, geometric tails."""
    sig = mix.sigma
    lo = float(np.min(mix.mu)) - smax - CORE_SIGMAS * sig
    hi = float(np.max(mix.mu)) + CORE_SIGMAS * sig
    n = int(math.ceil((hi - lo) * POINTS_PER_SIGMA / sig)) + 1
    core = np.linspace(lo, hi, n)
    geo = sig * np.exp2(np.arange(0, 41, 1.0))  # up to ~1e12 sigma: (x + s)^2 - x^2 stays exact enough
    parts = [lo - geo[::-1], core, hi + geo]
    xs, width = _switch_points(mix)
    h = sig / POINTS_PER_SIGMA
    keep = (xs > lo) & (xs < hi) & (width < h)
    if np.any(keep):
        # geometric spacing from width/4 at the kink up to the uniform spacing h, both sides
        w = width[keep]
        n_geo = int(math.ceil(math.log(max(4.0 * h / float(np.min(w)), 1.0)) / math.log(1.5))) + 1
        steps = 0.25 * 1.5 ** np.arange(n_geo)
        offs = np.concatenate([-steps[::-1], [0.0], steps])
        pts = xs[keep, None] + w[:, None] * offs
        pts = np.where(np.abs(w[:, None] * offs) <= 2.0 * h, pts, np.nan)
        parts.append(pts[np.isfinite(pts)])
    fin = [np.ravel(b) for b in (mix.lo, mix.hi) if np.any(np.isfinite(b))]
    for b in fin:
        b = b[np.isfinite(b)]
        parts.append(np.concatenate([b, b - smax]))
    return np.unique(np.concatenate(parts))


class MixtureEvaluator:
    """Caches the grid and log p(grid) of one mixture for repeated shift evaluations."""

    def __init__(self, mix: Mixture, eps: float, smax: float):
        self.mix = mix
        self.eps = float(eps)
        self.x = _x_grid(mix, smax)
        self.lp = mix.logpdf(self.x)
        self.n_evals = 0

    def g_points(self, x: np.ndarray, s1: np.ndarray, s2: np.ndarray, eps: np.ndarray | float) -> np.ndarray:
        """g = log M(x) - eps - log p(x) at scattered points (one stacked density call)."""
        x = np.asarray(x, float)
        zero = np.zeros(x.shape)
        both = self.mix.log_envelope(np.stack([x, x]), np.stack([zero + s1, zero]), np.stack([zero + s2, zero]))
        with np.errstate(invalid="ignore"):
            out = both[0] - eps - both[1]
        return np.where(np.isnan(out), -np.inf, out)

    def _local_max(self, x0, x1, x2, g0, g1, g2, s1, s2, eps, iters: int = 6):
        """Vectorised successive parabolic interpolation for a local maximum of g.

        Starts from triples with g1 >= g0, g2; stops per point once g > 0 is found.
        Returns (argmax estimate, value).
        """
        x0, x1, x2, g0, g1, g2 = (np.array(v, float) for v in (x0, x1, x2, g0, g1, g2))
        active = g1 <= G_ZERO
        for _ in range(iters):
            idx = np.nonzero(active)[0]
            if idx.size == 0:
                break
            a, b, c, ga, gb, gc = x0[idx], x1[idx], x2[idx], g0[idx], g1[idx], g2[idx]
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                num = (b - a) ** 2 * (gb - gc) - (b - c) ** 2 * (gb - ga)
                den = (b - a) * (gb - gc) - (b - c) * (gb - ga)
                v = b - 0.5 * num / den
            # safeguard: stay strictly inside, away from b; else bisect the larger side
            big_left = (b - a) > (c - b)
            fallback = np.where(big_left, 0.5 * (a + b), 0.5 * (b + c))
            tiny = 1e-9 * (c - a)
            bad = ~np.isfinite(v) | (v <= a + tiny) | (v >= c - tiny) | (np.abs(v - b) < tiny)
            v = np.where(bad, fallback, v)
            gv = self.g_points(v, s1[idx], s2[idx], eps[idx])
            left = v < b
            better = gv > gb
            # new triple keeps the best point in the middle
            na = np.where(left, np.where(better, a, v), np.where(better, b, a))
            nb = np.where(better, v, b)
            nc = np.where(left, np.where(better, b, c), np.where(better, c, v))
            nga = np.where(left, np.where(better, ga, gv), np.where(better, gb, ga))
            ngb = np.where(better, gv, gb)
            ngc = np.where(left, np.where(better, gb, gc), np.where(better, gc, gv))
            x0[idx], x1[idx], x2[idx], g0[idx], g1[idx], g2[idx] = na, nb, nc, nga, ngb, ngc
            # stop once positive, or once the parabola through the (tight) triple stays negative
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                d1 = (ngb - nga) / (nb - na)
                d2 = (ngc - ngb) / (nc - nb)
                a2 = (d2 - d1) / (nc - na)
                sl = d1 + a2 * (nb - na)
                pred = np.where(a2 < 0, ngb - sl * sl / (4.0 * a2), np.inf)
            active[idx] = (ngb <= G_ZERO) & ((nc - na) > 1e-12 * (1.0 + np.abs(nb))) & (pred > -1e-3)
        return x1, g1

    def _refine(self, xl, xr, gl, gr, s1, s2, eps):
        """Vectorised safeguarded Newton (finite-difference slope) inside sign-change brackets."""
        xl, xr, gl, gr = xl.copy(), xr.copy(), gl.copy(), gr.copy()
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            c = xr - gr * (xr - xl) / (gr - gl)
        c = np.where(np.isfinite(c) & (c > xl) & (c < xr), c, 0.5 * (xl + xr))
        root = c.copy()
        prev = np.full(xl.shape, np.inf)
        active = np.ones(xl.shape, bool)
        tol_x = 1e-13 * (np.abs(xl) + np.abs(xr)) + 1e-12 * self.mix.sigma
        for _ in range(60):
            idx = np.nonzero(active)[0]
            if idx.size == 0:
                break
            ci, a, b = c[idx], xl[idx], xr[idx]
            eta = 1e-7 * (b - a) + 1e-12 * self.mix.sigma
            gg = self.g_points(np.stack([ci, ci + eta]), s1[idx], s2[idx], eps[idx])
            gc, gd = gg[0], gg[1]
            root[idx] = ci
            left = (gc > 0) == (gl[idx] > 0)
            xl[idx] = np.where(left, ci, a)
            gl[idx] = np.where(left, gc, gl[idx])
            xr[idx] = np.where(left, xr[idx], ci)
            gr[idx] = np.where(left, gr[idx], gc)
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                nxt = ci - gc * eta / (gd - gc)
                sec = xr[idx] - gr[idx] * (xr[idx] - xl[idx]) / (gr[idx] - gl[idx])
            # Newton while it converges; bisection when |g| did not halve (e.g. a bump of g
            # inside the bracket sends Newton the wrong way), secant if Newton leaves the bracket
            slow = np.abs(gc) > 0.5 * prev[idx]
            prev[idx] = np.abs(gc)
            ok = np.isfinite(nxt) & (nxt > xl[idx]) & (nxt < xr[idx])
            sec = np.where(np.isfinite(sec) & (sec > xl[idx]) & (sec < xr[idx]), sec, 0.5 * (xl[idx] + xr[idx]))
            c[idx] = np.where(slow, 0.5 * (xl[idx] + xr[idx]), np.where(ok, nxt, sec))
            done = (np.abs(gc) < 1e-9) | ((xr[idx] - xl[idx]) < tol_x[idx])
            active[idx[done]] = False
        return root

    def hockey(self, s1: np.ndarray, s2: np.ndarray, eps: np.ndarray | float | None = None) -> np.ndarray:
        """int (M(x) - e^eps p(x))_+ dx per row, M = envelope of p(. + t) over t in [s1, s2].

        With s1 == s2 == s this is exactly H_s.  ``eps`` (default: the evaluator's) may vary
        per row.
        """
        return self.hockey_and_mass(s1, s2, eps)[0]

    def hockey_and_mass(
        self, s1: np.ndarray, s2: np.ndarray, eps: np.ndarray | float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(int (M - e^eps p)_+, int_V M) per row, V = {M > e^eps p} the violation set."""
        s1 = np.atleast_1d(np.asarray(s1, float))
        s2 = np.atleast_1d(np.asarray(s2, float))
        er = np.broadcast_to(np.asarray(self.eps if eps is None else eps, float), s1.shape).copy()
        chunk = max(1, int(MAX_GRID_CELLS // self.x.size))
        if s1.size > chunk:  # bound the memory of the (rows x grid) arrays
            parts = [self.hockey_and_mass(s1[i:i + chunk], s2[i:i + chunk], er[i:i + chunk])
                     for i in range(0, s1.size, chunk)]
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        return self._hockey_and_mass(s1, s2, er)

    def _hockey_and_mass(self, s1: np.ndarray, s2: np.ndarray, er: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        B = s1.size
        self.n_evals += B
        x = self.x
        with np.errstate(invalid="ignore"):
            g = self.mix.log_envelope(x, s1[:, None], s2[:, None]) - er[:, None] - self.lp
        g = np.where(np.isnan(g), -np.inf, g)
        pos = g > G_ZERO  # |g| below G_ZERO is rounding noise (e.g. the lattice interior at s = D)
        rows, idx = np.nonzero(pos[:, 1:] != pos[:, :-1])
        xl, xr = x[idx], x[idx + 1]
        gl, gr = g[rows, idx], g[rows, idx + 1]
        # narrow positive bumps between grid points: parabola through local maxima of g < 0
        g1 = g[:, 1:-1]
        br, bi = np.nonzero((g1 < -G_ZERO) & (g[:, :-2] < g1) & (g[:, 2:] < g1))
        bi = bi + 1
        x0, x1, x2 = x[bi - 1], x[bi], x[bi + 1]
        v0, v1, v2 = g[br, bi - 1], g[br, bi], g[br, bi + 1]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            b1 = (v1 - v0) / (x1 - x0)
            a2 = ((v2 - v1) / (x2 - x1) - b1) / (x2 - x0)
            slope = b1 + a2 * (x1 - x0)
            vertex = v1 - slope * slope / (4.0 * a2)
        bump = (a2 < 0) & (vertex > BUMP_MARGIN)
        br, bi = br[bump], bi[bump]
        if br.size:
            xm, gmax = self._local_max(
                x[bi - 1], x[bi], x[bi + 1], g[br, bi - 1], g[br, bi], g[br, bi + 1], s1[br], s2[br], er[br]
            )
            hit = gmax > G_ZERO
            if np.any(hit):
                br, bi, xm, gmax = br[hit], bi[hit], xm[hit], gmax[hit]
                rows = np.concatenate([rows, br, br])
                xl = np.concatenate([xl, x[bi - 1], xm])
                xr = np.concatenate([xr, xm, x[bi + 1]])
                gl = np.concatenate([gl, g[br, bi - 1], gmax])
                gr = np.concatenate([gr, gmax, g[br, bi + 1]])
        if rows.size:
            finite = np.isfinite(gl) & np.isfinite(gr)
            roots = np.where(finite, 0.5 * (xl + xr), np.where(np.isfinite(gl), xr, xl))
            if np.any(finite):
                f = np.nonzero(finite)[0]
                roots[f] = self._refine(xl[f], xr[f], gl[f], gr[f], s1[rows[f]], s2[rows[f]], er[rows[f]])
        else:
            roots = np.zeros(0)
        start = np.nonzero(pos[:, 0])[0]
        end = np.nonzero(pos[:, -1])[0]
        ev_x = np.concatenate([roots, np.full(start.size, -np.inf), np.full(end.size, np.inf)])
        ev_r = np.concatenate([rows, start, end])
        order = np.lexsort((ev_x, ev_r))
        ev_x, ev_r = ev_x[order], ev_r[order]
        a, b, r = ev_x[0::2], ev_x[1::2], ev_r[0::2]
        if r.size == 0:
            return np.zeros(B), np.zeros(B)
        lu = self.mix.log_envelope_mass(a, b, s1[r], s2[r])
        lp = self.mix.log_mass(a, b)
        with np.errstate(invalid="ignore", over="ignore"):
            contrib = np.exp(lu) * -np.expm1(er[r] + lp - lu)
        contrib = np.where(np.isfinite(contrib) & (contrib > 0), contrib, 0.0)
        mass = np.where(np.isfinite(lu), np.exp(np.minimum(lu, 0.0)), 0.0)
        return np.bincount(r, weights=contrib, minlength=B), np.bincount(r, weights=mass, minlength=B)


def hockey_stick(mix: Mixture, eps: float, shifts: np.ndarray | float) -> np.ndarray:
    """H_s = int (p(x + s) - e^eps p(x))_+ dx for each shift (exact up to root precision)."""
    s = np.atleast_1d(np.asarray(shifts, float))
    ev = MixtureEvaluator(mix, eps, float(np.max(np.abs(s))) if s.size else 0.0)
    return ev.hockey(s, s)


def naive_delta(mix: Mixture, eps: float, sensitivity: float = 1.0) -> float:
    """Deliberately naive privacy check: H at the single shift s = sensitivity.

    Under-reports delta whenever the worst shift is interior (e.g. multi-Gaussian at
    eps = 4, delta = 1e-5); kept only to demonstrate that every shift in [0, D] matters.
    """
    return float(hockey_stick(mix, eps, sensitivity)[0])


@dataclass(frozen=True)
class ProfileResult:
    """Result of :func:`certified_max`: ``delta`` is the largest H found (at ``worst_shift``);
    ``upper`` is a certified upper bound of max_s H_s (``upper - delta <= tol`` unless the
    search stopped early against ``target``)."""

    delta: float
    worst_shift: float
    upper: float
    n_evals: int
    decided_early: bool = False


#: most children a shift cell is split into in one step
MAX_SPLIT = 8


def certified_max(
    mix: Mixture,
    eps: float,
    smax: float = 1.0,
    *,
    target: float | None = None,
    rtol: float = 1e-3,
    atol: float = 0.0,
    n_init: int = 8,
    seeds: np.ndarray | Sequence[float] | None = None,
    min_width: float = 1e-12,
    early_exit: bool = False,
    max_evals: int = 20000,
) -> ProfileResult:
    """Certified max over s in [0, smax] of H_s by branch and bound.

    The tolerance is ``rtol * max(best, target) + atol``.
    With ``early_exit`` and a ``target`` the search stops as soon as it is decided whether
    max H_s <= target (certified) or > target (witnessed by a shift).  Without early exit but
    with a target, cells are refined until the verdict max H_s <= target is decided as well.
    ``seeds`` are extra initial shifts (e.g. a previous worst shift).

    Each round evaluates, in one batched call, H at the new cell boundaries and the rows of the
    Hoelder bound of every new cell: for t = (1 - l) s1 + l s2 the Gaussian identity
    phi(y + t) = e^{l (1 - l) w^2 / (2 sigma^2)} phi(y + s1)^{1-l} phi(y + s2)^l and Hoelder's
    inequality over the components give p(x + t) <= kappa p(x + s1)^{1-l} p(x + s2)^l with
    kappa = e^{w^2 / (8 sigma^2)}; int (kappa p1^{1-l} p2^l - e^eps p)_+ is convex in l, so
    max_{t in cell} H_t <= kappa max(H_{s1}(eps - log kappa), H_{s2}(eps - log kappa)).
    (For the quasi-Gaussian, phi(|y| - D) = max(phi(y - D), phi(y + D)) keeps this valid.)
    """
    ev = MixtureEvaluator(mix, eps, smax)
    lip = mix.total_variation_bound()
    curv = 1.0 / (8.0 * mix.sigma**2)
    decide = early_exit and target is not None
    cache: dict[tuple[float, float], float] = {}  # (shift, eps reduction) -> H

    def evaluate(shifts: np.ndarray, lo_: np.ndarray, hi_: np.ndarray) -> None:
        """One batched call: H at ``shifts`` and the Hoelder rows of cells [lo_, hi_]."""
        kap = (hi_ - lo_) ** 2 * curv
        keys = [(float(x), 0.0) for x in shifts]
        keys += [(float(x), float(k)) for x, k in zip(np.concatenate([lo_, hi_]), np.concatenate([kap, kap]), strict=True)]
        todo = sorted({k for k in keys if k not in cache})
        if todo:
            ss = np.array([k[0] for k in todo])
            ee = eps - np.array([k[1] for k in todo])
            cache.update(zip(todo, ev.hockey(ss, ss, ee), strict=True))

    def holder(lo_: np.ndarray, hi_: np.ndarray) -> np.ndarray:
        kap = (hi_ - lo_) ** 2 * curv
        a = np.array([cache[(float(x), float(k))] for x, k in zip(lo_, kap, strict=True)])
        b = np.array([cache[(float(x), float(k))] for x, k in zip(hi_, kap, strict=True)])
        with np.errstate(over="ignore"):
            return np.where(kap < 700.0, np.exp(np.minimum(kap, 700.0)) * np.maximum(a, b), np.inf)

    pts = np.linspace(0.0, smax, n_init + 1)
    if seeds is not None and np.size(seeds):
        sd = np.clip(np.asarray(seeds, float).ravel(), 0.0, smax)
        pts = np.unique(np.concatenate([pts, sd]))
    cache[(0.0, 0.0)] = 0.0
    lo, hi = pts[:-1], pts[1:]
    evaluate(pts, lo, hi)
    h = np.array([cache[(float(x), 0.0)] for x in pts])
    best_i = int(np.argmax(h))
    best, best_s = float(h[best_i]), float(pts[best_i])
    hlo, hhi = h[:-1], h[1:]
    done_upper = best

    while lo.size:
        if decide and target is not None and best > target:
            return ProfileResult(best, best_s, max(best, done_upper), ev.n_evals, True)
        tol = rtol * max(best, target if target is not None else 0.0) + atol
        hmax = np.maximum(hlo, hhi)
        w = hi - lo
        u = np.minimum(0.5 * (hlo + hhi) + 0.5 * lip * w, holder(lo, hi))
        u = np.maximum(u, hmax)
        tiny = w <= min_width
        # level the cells must reach (used to choose how finely to split them)
        thr = best + tol
        if target is not None and (decide or best <= target):
            thr = target if decide else min(thr, target)
        if decide:  # only the verdict max H <= target matters
            settled = (u <= target) | tiny
        else:
            settled = (u <= best + tol) | tiny
            if target is not None:  # ... and the verdict too, when a target is given
                settled &= (u <= target) | (best > target) | tiny
        done_upper = max(done_upper, float(np.max(u[settled], initial=0.0)))
        keep = ~settled
        if decide and target is not None and not np.any(keep) and done_upper <= target:
            return ProfileResult(best, best_s, done_upper, ev.n_evals, True)
        if not np.any(keep) or ev.n_evals > max_evals:
            if np.any(keep):
                done_upper = max(done_upper, float(np.max(u[keep])))
            break
        lo, hi, hlo, hhi, uk, hk = lo[keep], hi[keep], hlo[keep], hhi[keep], u[keep], hmax[keep]
        # split into k pieces: the bound's excess over max(H) is ~quadratic in the width, so
        # k = w sqrt((u - hmax) / (thr - hmax)) children are expected to settle
        gap = thr - hk
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.ceil(np.sqrt(np.maximum(uk - hk, 0.0) / gap) * 1.1)
        k = np.where(gap > 0, k, 2.0)
        k = np.clip(np.nan_to_num(k, nan=2.0, posinf=MAX_SPLIT), 2, MAX_SPLIT).astype(int)
        frac = np.concatenate([np.arange(0, kk + 1) / kk for kk in k])
        bounds = [lo[i] + frac_i * (hi[i] - lo[i])
                  for i, frac_i in enumerate(np.split(frac, np.cumsum(k + 1)[:-1]))]
        c_lo = np.concatenate([b[:-1] for b in bounds])
        c_hi = np.concatenate([b[1:] for b in bounds])
        new_s = np.concatenate([b[1:-1] for b in bounds])
        evaluate(new_s, c_lo, c_hi)
        hb = [np.concatenate([[hlo[i]], [cache[(float(x), 0.0)] for x in b[1:-1]], [hhi[i]]])
              for i, b in enumerate(bounds)]
        if new_s.size:
            new_h = np.array([cache[(float(x), 0.0)] for x in new_s])
            j = int(np.argmax(new_h))
            if new_h[j] > best:
                best, best_s = float(new_h[j]), float(new_s[j])
        lo, hi = c_lo, c_hi
        hlo = np.concatenate([v[:-1] for v in hb])
        hhi = np.concatenate([v[1:] for v in hb])
    return ProfileResult(best, best_s, max(best, done_upper), ev.n_evals, False)
