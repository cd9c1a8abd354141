"""Equal-variance Gaussian mixtures: log-density, exact interval masses and shift envelopes.

Part of the independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap:
Mixtures of Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078).

Both mechanisms of the paper are (possibly half-line truncated) Gaussian mixtures with one
common sigma:

* multi-Gaussian  p(x) = sum_{k=-K..K} w_k N(x; k D, sigma^2),  w_k ~ exp(-eps |k|);
* quasi-Gaussian  q(x) = [e^eps phi_s(x) + phi_s(|x| - D)] / (e^eps + 2 Phi(D/sigma)), where
  phi_s(|x| - D) is N(D, sigma^2) kept on [0, inf) plus N(-D, sigma^2) kept on (-inf, 0].

A :class:`Mixture` stores log-coefficients ``logw`` of phi_sigma(x - mu) on a support
[lo, hi]; everything is in the log domain so that weights like e^{-700} or e^{+700} never
overflow.  Interval masses are sums of Phi differences evaluated with ``log_ndtr`` on the
tail side (no cancellation).  Reconstructed here (our own device, not from the paper): the
*shift envelope* M(x) = max_{t in [s1, s2]} p(x + t), bounded component-wise by a Gaussian
with a flat top on [mu - s2, mu - s1]; its exact integrals give the certified bound used by
the shift search in :mod:`.profile`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: below this many (point x component) terms a 2-D evaluation beats a loop over components
SMALL_BATCH = 4_000


def log_ndtr_diff(za: np.ndarray, zb: np.ndarray) -> np.ndarray:
    """log(Phi(zb) - Phi(za)) elementwise, -inf where za >= zb; accurate in both tails."""
    za, zb = np.broadcast_arrays(np.asarray(za, float), np.asarray(zb, float))
    flip = za > 0
    lo = np.where(flip, -zb, za)
    hi = np.where(flip, -za, zb)
    out = np.full(lo.shape, -np.inf)
    ok = lo < hi
    tail = ok & (hi <= 0)
    mid = ok & ~tail
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if np.any(tail):
            lh = log_ndtr(hi[tail])
            ll = log_ndtr(lo[tail])
            out[tail] = lh + np.log1p(-np.exp(ll - lh))
        if np.any(mid):
            out[mid] = np.log(ndtr(hi[mid]) - ndtr(lo[mid]))
    return out


def _logsumexp_last(t: np.ndarray) -> np.ndarray:
    m = np.max(t, axis=-1)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.sum(np.exp(t - safe[..., None]), axis=-1))


@dataclass(frozen=True)
class Mixture:
    """sum_k exp(logw_k) phi_sigma(x - mu_k) 1{lo_k <= x < hi_k}; total mass 1."""

    sigma: float
    logw: np.ndarray
    mu: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    #: lattice spacing when mu = (k0 + arange(m)) * spacing (untruncated); enables banding
    spacing: float | None = None
    #: log-weight ratio bound between lattice neighbours (eps for the multi-Gaussian)
    neighbour_log_ratio: float = 0.0

    @property
    def truncated(self) -> bool:
        return bool(np.any(np.isfinite(self.lo)) or np.any(np.isfinite(self.hi)))

    @property
    def log_norm(self) -> float:
        """log of phi_sigma's normalising constant 1/(sigma sqrt(2 pi))."""
        return -math.log(self.sigma) - LOG_SQRT_2PI

    # ----- densities -------------------------------------------------------------------------
    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """log p(x) for any array shape."""
        return self.log_envelope(np.asarray(x, float), 0.0, 0.0)

    def pdf(self, x: np.ndarray) -> np.ndarray:
        return np.exp(self.logpdf(x))

    def band(self, width: float = 0.0) -> int | None:
        """Half-width J of the lattice band that carries all but e^-38 of the density.

        At a point y with nearest lattice index j (|y - j D| <= D/2), component j + n lies at
        distance >= |n| D - D/2 - width/2 from the envelope's flat top, so its log-term is at most
        r |n| - [(|n| D - (D + width)/2)^2 - D^2/4] / (2 sigma^2) above component j
        (r = neighbour_log_ratio); we keep |n| <= J where this is <= -38 for all |n| > J.
        """
        if self.spacing is None:
            return None
        cache = self.__dict__.setdefault("_band_cache", {})
        key = round(width, 12)
        if key not in cache:
            cache[key] = self._band(width)
        return cache[key]

    def _band(self, width: float) -> int | None:
        D, sig, r = self.spacing, self.sigma, self.neighbour_log_ratio
        assert D is not None  # only called from band(), which requires a lattice spacing
        m = self.mu.size

        def bound(n: int) -> float:
            d = max(n * D - 0.5 * (D + width), 0.0)
            return r * n - (d * d - 0.25 * D * D) / (2.0 * sig * sig)

        n = 1
        # bound(n) is concave in n: stop once it is <= -38 and decreasing
        while n <= m and not (bound(n) <= -38.0 and bound(n + 1) <= bound(n)):
            n += 1
        J = n - 1
        return J if 2 * J + 1 < m else None

    def log_envelope(self, x: np.ndarray, s1: np.ndarray | float, s2: np.ndarray | float) -> np.ndarray:
        """Upper envelope of log p(x + t) over t in [s1, s2] (exact when s1 == s2).

        ``x`` broadcasts against ``s1``/``s2`` (e.g. x of shape (G,) with s of shape (B, 1)).
        Component k contributes phi_sigma(dist(x, [mu_k - s2, mu_k - s1])) on
        [lo_k - s2, hi_k - s1], which dominates max_t phi_sigma(x + t - mu_k) 1{support}.
        The sum over components is a log-sum-exp accumulated one component (or one lattice
        offset) at a time, which keeps every temporary at the shape of the output.
        """
        x = np.asarray(x, float)
        s1 = np.asarray(s1, float)
        s2 = np.asarray(s2, float)
        width = float(np.max(s2 - s1, initial=0.0))
        J = self.band(width)
        centre = x + 0.5 * (s1 + s2)  # the envelope of component k is centred at mu_k
        half = 0.5 * (s2 - s1)
        flat = width > 0
        inv = -0.5 / self.sigma**2
        terms = []
        if J is not None:
            m = self.mu.size
            h = self.spacing
            assert h is not None  # band() returns a J only for a lattice mixture
            mu0 = float(self.mu[0])
            jf = np.clip(np.rint((centre - mu0) / h), 0, m - 1)  # beyond the ends: end component
            ji = jf.astype(np.intp) + J
            lwp = self._padded_logw(J)
            c = centre - (mu0 + jf * h)
            if c.size * (2 * J + 1) <= SMALL_BATCH:
                # few points: one 2-D pass over (points, offsets) has far fewer numpy calls
                off = np.arange(-J, J + 1)
                d = np.abs(c[..., None] - off * h)
                if flat:
                    d = np.maximum(d - np.asarray(half)[..., None], 0.0)
                t = lwp[ji[..., None] + off] + inv * d * d
                return _logsumexp_last(t) + self.log_norm
            for o in range(-J, J + 1):
                d = np.abs(c - o * h)
                if flat:
                    d = np.maximum(d - half, 0.0)
                terms.append(lwp[ji + o] + inv * d * d)
        else:
            trunc = self.truncated
            for k in range(self.mu.size):
                d = np.abs(centre - self.mu[k])
                if flat:
                    d = np.maximum(d - half, 0.0)
                t = self.logw[k] + inv * d * d
                if trunc and (np.isfinite(self.lo[k]) or np.isfinite(self.hi[k])):
                    inside = (x >= self.lo[k] - s2) & (x < self.hi[k] - s1)  # half-open: no double count
                    t = np.where(inside, t, -np.inf)
                terms.append(t)
        mx = terms[0]
        for t in terms[1:]:
            mx = np.maximum(mx, t)
        safe = np.where(np.isfinite(mx), mx, 0.0)
        acc = np.zeros(np.shape(safe))
        for t in terms:
            acc += np.exp(t - safe)
        with np.errstate(divide="ignore"):
            return safe + np.log(acc) + self.log_norm

    def _padded_logw(self, J: int) -> np.ndarray:
        cache = self.__dict__.setdefault("_lwp_cache", {})
        if J not in cache:
            cache[J] = np.concatenate([np.full(J, -np.inf), self.logw, np.full(J, -np.inf)])
        return cache[J]

    # ----- masses ----------------------------------------------------------------------------
    def log_envelope_mass(
        self, a: np.ndarray, b: np.ndarray, s1: np.ndarray | float, s2: np.ndarray | float
    ) -> np.ndarray:
        """log of the integral over [a, b] of the envelope of :meth:`log_envelope` (exact).

        1-D arrays ``a``, ``b`` (broadcast with ``s1``, ``s2``).  Short finite intervals of a
        lattice mixture only sum the band of components around them.
        """
        a, b, s1, s2 = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, float)) for v in (a, b, s1, s2)))
        if self.spacing is None or a.size == 0:
            return self._mass_terms(a, b, s1, s2, self.mu, self.logw, None)
        short = np.isfinite(a) & np.isfinite(b) & (b - a <= 4.0 * self.spacing)
        out = np.empty(a.shape)
        if np.any(~short):
            i = ~short
            out[i] = self._mass_terms(a[i], b[i], s1[i], s2[i], self.mu, self.logw, None)
        if np.any(short):
            i = short
            wmax = float(np.max(b[i] - a[i] + s2[i] - s1[i]))
            J = self.band(wmax)
            if J is None:
                out[i] = self._mass_terms(a[i], b[i], s1[i], s2[i], self.mu, self.logw, None)
            else:
                m = self.mu.size
                mu0 = float(self.mu[0])
                mid = 0.5 * (a[i] + b[i] + s1[i] + s2[i])
                j = np.clip(np.rint((mid - mu0) / self.spacing), 0, m - 1)
                k = j[:, None] + np.arange(-J, J + 1, dtype=float)
                valid = (k >= 0) & (k <= m - 1)
                ki = np.clip(k, 0, m - 1).astype(np.intp)
                out[i] = self._mass_terms(a[i], b[i], s1[i], s2[i], mu0 + k * self.spacing, self.logw[ki], valid)
        return out

    def _mass_terms(self, a, b, s1, s2, mu, logw, valid) -> np.ndarray:
        a = a[:, None]
        b = b[:, None]
        s1 = s1[:, None]
        s2 = s2[:, None]
        sig = self.sigma
        c1 = mu - s2
        c2 = mu - s1
        if self.truncated:
            a = np.maximum(a, self.lo - s2)
            b = np.minimum(b, self.hi - s1)
        if not np.any(s2 > s1):
            t = log_ndtr_diff((a - c1) / sig, (b - c1) / sig)
        else:
            # rising Gaussian half (centre c1) on [a, min(b, c1)], falling half (centre c2) on
            # [max(a, c2), b], flat top phi(0) on [c1, c2]
            left = log_ndtr_diff((a - c1) / sig, (np.minimum(b, c1) - c1) / sig)
            right = log_ndtr_diff((np.maximum(a, c2) - c2) / sig, (b - c2) / sig)
            plateau = np.minimum(b, c2) - np.maximum(a, c1)
            with np.errstate(divide="ignore"):
                lp = np.where(plateau > 0, np.log(np.maximum(plateau, 1e-300)), -np.inf) + self.log_norm
            t = np.logaddexp(np.logaddexp(left, right), lp)
        t = logw + t
        if valid is not None:
            t = np.where(valid, t, -np.inf)
        return _logsumexp_last(t)

    def log_mass(self, a: np.ndarray, b: np.ndarray, shift: np.ndarray | float = 0.0) -> np.ndarray:
        """log P(a <= X - shift <= b) = log of the integral of p(x + shift) over [a, b]."""
        return self.log_envelope_mass(a, b, shift, shift)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return np.exp(self.log_mass(np.full(np.shape(x), -np.inf), x))

    def total_variation_bound(self) -> float:
        """Upper bound on the total variation integral |p'| (the Lipschitz constant of x -> p(x+s))."""
        w = np.exp(self.logw)
        jumps = np.isfinite(self.lo).astype(float) + np.isfinite(self.hi).astype(float)
        return float(np.sum(w * (2.0 + jumps)) / (self.sigma * math.sqrt(2.0 * math.pi)))


# ----- the paper's mixtures ----------------------------------------------------------------------
def multi_log_weights(eps: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices k = -K..K and normalised log-weights of the truncated discrete Laplace."""
    k = np.arange(-K, K + 1, dtype=float)
    lw = -eps * np.abs(k)
    # log Z = log(sum_k e^{-eps|k|}) = log((1 + e^-eps - 2 e^{-(K+1) eps}) / (1 - e^-eps))
    lw = lw - (np.logaddexp.reduce(lw))
    return k, lw


def multi_mixture(sigma: float, eps: float, K: int, sensitivity: float = 1.0) -> Mixture:
    """Multi-Gaussian noise density sum_{|k|<=K} w_k N(k D, sigma^2), w_k ~ e^{-eps |k|}."""
    k, lw = multi_log_weights(eps, K)
    inf = np.full(k.shape, np.inf)
    return Mixture(float(sigma), lw, k * sensitivity, -inf, inf, float(sensitivity), float(eps))


def quasi_log_norm(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """log(e^eps + 2 Phi(D/sigma)) without overflow."""
    return float(np.logaddexp(eps, math.log(2.0) + float(log_ndtr(sensitivity / sigma))))


def quasi_mixture(sigma: float, eps: float, sensitivity: float = 1.0) -> Mixture:
    """Quasi-Gaussian density [e^eps phi(x) + phi(|x| - D)] / (e^eps + 2 Phi(D/sigma))."""
    lz = quasi_log_norm(sigma, eps, sensitivity)
    lw = np.array([eps - lz, -lz, -lz])
    mu = np.array([0.0, sensitivity, -sensitivity])
    lo = np.array([-np.inf, 0.0, -np.inf])
    hi = np.array([np.inf, np.inf, 0.0])
    return Mixture(float(sigma), lw, mu, lo, hi)


def gaussian_mixture(sigma: float) -> Mixture:
    """A single N(0, sigma^2) as a one-component mixture (used to test the generic checker)."""
    return Mixture(float(sigma), np.zeros(1), np.zeros(1), np.full(1, -np.inf), np.full(1, np.inf))
