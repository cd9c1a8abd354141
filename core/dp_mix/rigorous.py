"""Rigorous upper bound on delta(sigma) = max_{s in [0, D]} H_s by interval arithmetic (mpmath ``iv``).

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078); the
paper certifies nothing rigorously, this construction is ours.

For a shift cell T = [t1, t2] and an x cell I, every t in T satisfies

    int_I (p(x + t) - e^eps p(x))_+ dx <= |I| (sup_{x in I, t in T} p(x + t) - e^eps inf_{x in I} p(x))_+,

and the two extrema are enclosed by evaluating the mixture density in interval arithmetic
(outward rounding, so the enclosure holds for every real point of the box).  Outside the
x range [L, R] the violation is at most the mass of p(. + t) there, bounded per component by
the Chernoff bound Q(z) <= e^{-z^2/2} / 2 (z >= 0), also in interval arithmetic.  Components
farther than ~40 sigma from a cell are not summed one by one: their total is enclosed by
[0, e^{-d^2/(2 sigma^2)}] with d their smallest distance.  Hence

    delta(sigma) <= max over shift cells of [sum over x cells + tails],

a proof up to mpmath's interval library.  The cells are refined adaptively (largest bound
first, x cells within a shift cell, shift cells around the worst one) within an evaluation
budget.  The bound is first order in the cell widths, so it is loose where the loss is close to
eps over a large mass (the multi-Gaussian's lattice interior at s ~ D): there it can exceed
delta although the float certificate passes; the result says so (``upper`` vs ``target``).
Untruncated mixtures only (multi, optimised, gaussian); the quasi-Gaussian's half-line
components are not handled.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np
from mlx26.core.common.errors import InputError

from .mixture import Mixture, gaussian_mixture, multi_mixture

#: components beyond this many sigmas from a cell are enclosed together
FAR_SIGMAS = 40.0
#: x range beyond the outermost means, in sigmas
RANGE_SIGMAS = 14.0


@dataclass(frozen=True)
class RigorousResult:
    upper: float
    cells: int
    seconds: float
    shift_cells: int


class _IvMixture:
    def __init__(self, mix: Mixture, prec: int = 80):
        from mpmath import iv

        if mix.truncated:
            raise InputError("the rigorous bound handles untruncated mixtures only (multi, optimised, gaussian).")
        self.iv = iv
        iv.prec = prec
        self.mu = np.asarray(mix.mu, float)
        self.w = [iv.exp(iv.mpf(float(v))) for v in mix.logw]  # enclosure of the float weight
        wsum = iv.mpf(0)
        for w in self.w:
            wsum += w
        self.w = [w / wsum for w in self.w]  # the mixture the float code means, normalised rigorously
        self.sig = iv.mpf(float(mix.sigma))
        self.inv2s2 = 1 / (2 * self.sig * self.sig)
        self.norm = 1 / (self.sig * iv.sqrt(2 * iv.pi))
        self.sigma = float(mix.sigma)

    def density(self, a: float, b: float):
        """Interval enclosure of p over [a, b] (a <= b)."""
        iv = self.iv
        X = iv.mpf([a, b])
        c = 0.5 * (a + b)
        near = np.abs(self.mu - c) <= FAR_SIGMAS * self.sigma + 0.5 * (b - a)
        acc = iv.mpf(0)
        for k in np.nonzero(near)[0]:
            d = X - float(self.mu[k])
            acc += self.w[k] * iv.exp(-(d**2) * self.inv2s2)
        if not np.all(near):
            dmin = float(np.min(np.abs(self.mu[~near] - c))) - 0.5 * (b - a)
            far = iv.exp(-(iv.mpf(dmin) ** 2) * self.inv2s2)
            acc += iv.mpf([0, far.b])
        return acc * self.norm

    def tail_left(self, x: float):
        """Upper bound of P(Z < x) (x left of every mean): sum_k w_k e^{-z_k^2/2} / 2."""
        iv = self.iv
        acc = iv.mpf(0)
        for k, m in enumerate(self.mu):
            z = (float(m) - x) / self.sig
            acc += self.w[k] * iv.exp(-(z**2) / 2) / 2
        return acc.b

    def tail_right(self, x: float):
        iv = self.iv
        acc = iv.mpf(0)
        for k, m in enumerate(self.mu):
            z = (x - float(m)) / self.sig
            acc += self.w[k] * iv.exp(-(z**2) / 2) / 2
        return acc.b


def _shift_bound(ivm: _IvMixture, eps_e, t1: float, t2: float, L: float, R: float, n_x: int, budget: int,
                 target: float) -> tuple[float, int]:
    """Rigorous upper bound of max_{t in [t1, t2]} H_t; (bound, cells evaluated)."""
    tails = float((ivm.tail_left(L + t2) + ivm.tail_right(R + t1)).b) * (1 + 1e-12)

    def cell(a: float, b: float) -> float:
        up = ivm.density(a + t1, b + t2).b
        lo = ivm.density(a, b).a
        v = float(((up - eps_e.a * lo) * (b - a)).b)  # the interval's upper end (a point)
        # float() of a point rounds to nearest: the relative 1e-12 (and 1e-300) absorb it
        return v * (1 + 1e-12) + 1e-300 if v > 0 else 0.0

    edges = np.linspace(L, R, n_x + 1)
    heap = []
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        c = cell(float(a), float(b))
        total += c
        if c > 0:
            heapq.heappush(heap, (-c, float(a), float(b)))
    n = n_x
    goal = 0.9 * target
    while heap and n < budget and total + float(tails) > goal:
        c, a, b = heapq.heappop(heap)
        total += c  # remove the parent (c is negative)
        m = 0.5 * (a + b)
        for lo_, hi_ in ((a, m), (m, b)):
            cc = cell(lo_, hi_)
            total += cc
            if cc > 0:
                heapq.heappush(heap, (-cc, lo_, hi_))
        n += 2
    return float(total + float(tails)) * (1 + 1e-9), n  # running float sums: 1e-9 covers their rounding


def rigorous_bound(mix: Mixture, eps: float, smax: float = 1.0, *, target: float | None = None,
                   n_shift: int = 8, n_x: int = 64, budget: int = 6000, prec: int = 80) -> RigorousResult:
    """Rigorous upper bound of max_{s in [0, smax]} H_s (see the module docstring)."""
    t0 = time.perf_counter()
    ivm = _IvMixture(mix, prec)
    eps_e = ivm.iv.exp(ivm.iv.mpf(float(eps)))
    sig = mix.sigma
    L = float(np.min(mix.mu)) - smax - RANGE_SIGMAS * sig
    R = float(np.max(mix.mu)) + RANGE_SIGMAS * sig
    tgt = 0.0 if target is None else float(target)
    per = max(n_x * 4, budget // (2 * n_shift))
    cells = []
    used = 0
    for i in range(n_shift):
        t1, t2 = smax * i / n_shift, smax * (i + 1) / n_shift
        bnd, n = _shift_bound(ivm, eps_e, t1, t2, L, R, n_x, per, tgt)
        used += n
        cells.append((bnd, t1, t2))
    # split the worst shift cells while they are above the target and budget is left
    n_cells = len(cells)
    while used < budget:
        cells.sort(reverse=True)
        bnd, t1, t2 = cells[0]
        if target is not None and bnd <= target:
            break
        if t2 - t1 < 1e-6 * smax:
            break
        cells.pop(0)
        m = 0.5 * (t1 + t2)
        for a, b in ((t1, m), (m, t2)):
            bb, n = _shift_bound(ivm, eps_e, a, b, L, R, n_x, per, tgt)
            used += n
            cells.append((min(bb, bnd), a, b))
        n_cells += 1
    upper = max(c[0] for c in cells)
    return RigorousResult(min(upper, 1.0), used, time.perf_counter() - t0, n_cells)


def rigorous_delta(mechanism: str, sigma: float, eps: float, sensitivity: float = 1.0, K: int | None = None,
                   target: float | None = None, budget: int = 6000) -> RigorousResult:
    """:func:`rigorous_bound` for a named mechanism at noise scale ``sigma`` (sensitivity scaled to 1)."""
    s1 = float(sigma) / float(sensitivity)
    if mechanism == "gaussian":
        mix = gaussian_mixture(s1)
    elif mechanism == "multi":
        if K is None:
            raise InputError("the rigorous multi-Gaussian bound needs K.")
        mix = multi_mixture(s1, float(eps), int(K))
    else:
        raise InputError(f"--rigorous supports multi and gaussian, not {mechanism}.")
    return rigorous_bound(mix, eps, 1.0, target=target, budget=budget)
