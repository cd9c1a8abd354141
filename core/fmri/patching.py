"""Dynamic patching of Omni-fMRI (arXiv 2601.23090, Sec. "Dynamic patching"; public code
``src/models/entropy_utils_3d.py``, read to match its conventions, not copied).

For a clip ``x`` of shape (T, X, Y, Z) ("time as channels") and patch edges ``p * 2**s``:

* score of a patch = time-averaged spatial variance, ``mean_t Var_{v in patch} x[t, v]``, computed by
  block pooling of E[x] and E[x^2]; ``score="std"`` returns ``sqrt(var + 1e-6)`` as the public code does;
* a patch is background when ``max_{t, v in patch} |x| <= bg`` and is dropped at every scale;
* from the largest scale down, a foreground patch whose score is < tau is kept whole and its sub-patches
  removed; everything left is covered by foreground fine (``p^3``) patches.

Thresholds: the paper states tau = 0.25 and a background threshold of 1e-3 (also the default of the public
``visual_3d.py``); ``configs/pretrain.yaml`` uses tau = 0.23 and ``select_patches_by_threshold_3d`` 1e-2.
Both are exposed (``spec.TAU_*``, ``spec.BG_*``). Controls: ``uniform`` (fine patches only) and
``random`` (foreground coarse patches drawn in a seeded random order until they save as many tokens as
the dynamic rule: equal token count). Volumes whose sides are not multiples of the largest patch are
zero-padded (zeros are background, so the padding never makes a token).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from mlx26.core.common.errors import InputError

from .spec import BG_PAPER, FINE, PATCHINGS, SCORES, TAU_PAPER

EPS = 1e-6  # the public code's sqrt(var + 1e-6)


@dataclass
class Settings:
    tau: float = TAU_PAPER
    bg: float = BG_PAPER
    patch: int = FINE
    scales: int = 2
    score: str = "std"
    patching: str = "dynamic"
    seed: int = 0

    def check(self) -> Settings:
        if self.score not in SCORES:
            from mlx26.core.common.errors import unknown_name

            raise unknown_name("score", self.score, SCORES)
        if self.patching not in PATCHINGS:
            from mlx26.core.common.errors import unknown_name

            raise unknown_name("patching", self.patching, PATCHINGS)
        if self.patch < 1 or not 1 <= self.scales <= 4:
            raise InputError(f"patch {self.patch} / scales {self.scales}: need patch >= 1 and 1 <= scales <= 4")
        if not np.isfinite(self.tau) or self.tau < 0 or not np.isfinite(self.bg) or self.bg < 0:
            raise InputError(f"tau {self.tau} / bg {self.bg}: both must be finite and >= 0")
        return self

    def sizes(self) -> list[int]:
        return [self.patch * 2 ** s for s in range(self.scales)]

    def as_dict(self) -> dict:
        return {"tau": self.tau, "bg": self.bg, "patch": self.patch, "scales": self.scales,
                "score": self.score, "patching": self.patching, "seed": self.seed}


@dataclass
class Tokens:
    """Chosen patches: ``grids[s]`` is a boolean (gx, gy, gz) mask over the scale-s grid of edge ``sizes[s]``."""

    grids: list[np.ndarray]
    sizes: list[int]
    shape: tuple[int, int, int]  # spatial shape of the clip (before padding)
    settings: Settings
    foreground: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, bool))  # voxel-level mask

    def counts(self) -> list[int]:
        return [int(g.sum()) for g in self.grids]

    def coords(self, s: int) -> np.ndarray:
        """Corner voxel coordinates (n, 3) of the scale-s tokens."""
        return np.argwhere(self.grids[s]) * self.sizes[s]

    def coverage(self) -> np.ndarray:
        """How many tokens cover each voxel (X, Y, Z); an exact partition has 1 on foreground, 0 elsewhere."""
        padded = padded_shape(self.shape, self.sizes[-1])
        cov = np.zeros(padded, dtype=np.int32)
        for grid, p in zip(self.grids, self.sizes, strict=True):
            cov += _upsample(grid.astype(np.int32), p)
        return cov[: self.shape[0], : self.shape[1], : self.shape[2]]

    def summary(self) -> dict:
        cov = self.coverage()
        counts = self.counts()
        fg = self.foreground
        uniform = uniform_count(fg, self.sizes[0])
        rec: dict = {f"tokens_{p}": n for p, n in zip(self.sizes, counts, strict=True)}
        rec.update({
            "tokens": sum(counts), "uniform_tokens": uniform,
            "token_ratio": (sum(counts) / uniform) if uniform else None,
            "foreground_voxels": int(fg.sum()), "foreground_voxels_covered": int((cov[fg] >= 1).sum()),
            "voxels_covered_twice": int((cov > 1).sum()), "voxels_in_tokens": int(sum(
                n * p ** 3 for p, n in zip(self.sizes, counts, strict=True))),
            **{k: v for k, v in self.settings.as_dict().items()},
        })
        return rec


def padded_shape(shape, multiple: int) -> tuple[int, int, int]:
    return tuple(-(-n // multiple) * multiple for n in shape)  # type: ignore[return-value]


def pad_to(x: np.ndarray, multiple: int) -> np.ndarray:
    target = padded_shape(x.shape[1:], multiple)
    pad = [(0, 0)] + [(0, t - n) for n, t in zip(x.shape[1:], target, strict=True)]
    return np.pad(x, pad) if any(p for _, p in pad) else x


def _blocks(x: np.ndarray, p: int) -> np.ndarray:
    t, a, b, c = x.shape
    return x.reshape(t, a // p, p, b // p, p, c // p, p)


def _upsample(grid: np.ndarray, p: int) -> np.ndarray:
    return grid.repeat(p, 0).repeat(p, 1).repeat(p, 2)


def _check_clip(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 4:
        raise InputError(f"a clip must be (T, X, Y, Z); got shape {tuple(x.shape)}", "pass a 4D run")
    if not np.isfinite(x).all():
        raise InputError("the clip holds NaN/Inf values", "load it through mlx26.core.fmri.io (zeros them)")
    return x


def patch_scores(x: np.ndarray, p: int, score: str = "std") -> np.ndarray:
    """Pooled score per p^3 patch (grid shape): time-averaged spatial variance (or sqrt(var + 1e-6))."""
    x = pad_to(_check_clip(x), p)
    mean = _blocks(x, p).mean(axis=(2, 4, 6), dtype=np.float64)
    mean_sq = _blocks(np.square(x, dtype=np.float64), p).mean(axis=(2, 4, 6))
    var = np.clip(mean_sq - mean * mean, 0, None).mean(axis=0)
    return np.sqrt(var + EPS) if score == "std" else var


def foreground_patches(x: np.ndarray, p: int, bg: float) -> np.ndarray:
    """Grid mask of patches with max |x| over the patch and all frames above ``bg``."""
    peak = np.abs(_check_clip(x)).max(axis=0)
    return _block_max(peak, p) > bg


def _block_max(peak: np.ndarray, p: int) -> np.ndarray:
    a = pad_to(peak[None], p)[0]
    return a.reshape(a.shape[0] // p, p, a.shape[1] // p, p, a.shape[2] // p, p).max(axis=(1, 3, 5))


def uniform_count(foreground_voxels: np.ndarray, p: int) -> int:
    fg = pad_to(foreground_voxels[None].astype(np.float32), p)
    return int((_blocks(fg, p).max(axis=(0, 2, 4, 6)) > 0).sum())


def tokenize(x: np.ndarray, settings: Settings | None = None) -> Tokens:
    s = (settings or Settings()).check()
    x = _check_clip(x)
    sizes = s.sizes()
    shape = x.shape[1:]
    peak = np.abs(x).max(axis=0)
    fg_voxels = peak > s.bg
    x = pad_to(x, sizes[-1])  # every grid below is on the same padded volume
    peak = pad_to(peak[None], sizes[-1])[0]
    fg = [_block_max(peak, p) > s.bg for p in sizes]
    if s.patching == "uniform" or s.scales == 1 or not fg_voxels.any():
        grids = [fg[0]] + [np.zeros_like(g) for g in fg[1:]]
        return Tokens(grids, sizes, shape, s, fg_voxels)
    keep = [np.zeros_like(g) for g in fg]
    for i in range(len(sizes) - 1, 0, -1):
        keep[i] = (patch_scores(x, sizes[i], s.score) < s.tau) & fg[i]
    if s.patching == "random":
        keep = _random_keep(keep, fg, sizes, s.seed)
    grids = [None] * len(sizes)  # type: ignore[list-item]
    covered = np.zeros(fg[0].shape, dtype=bool)  # fine-grid cells already inside a larger kept patch
    for i in range(len(sizes) - 1, 0, -1):
        r = sizes[i] // sizes[0]
        g = keep[i] & ~covered.reshape(keep[i].shape[0], r, keep[i].shape[1], r, keep[i].shape[2], r).any(
            axis=(1, 3, 5))
        grids[i] = g
        covered |= _upsample(g, r)[: covered.shape[0], : covered.shape[1], : covered.shape[2]]  # type: ignore[index,misc]
    grids[0] = fg[0] & ~covered
    return Tokens(grids, sizes, shape, s, fg_voxels)


def _children(fg_fine: np.ndarray, r: int, shape) -> np.ndarray:
    a = fg_fine[: shape[0] * r, : shape[1] * r, : shape[2] * r]
    return a.reshape(shape[0], r, shape[1], r, shape[2], r).sum(axis=(1, 3, 5))


def _random_keep(keep: list[np.ndarray], fg: list[np.ndarray], sizes: list[int], seed: int) -> list[np.ndarray]:
    """Random coarsening with the dynamic rule's token count: foreground coarse patches are taken in a
    seeded random order while they do not overshoot the dynamic rule's token saving (children - 1 each)."""
    from mlx26.core.common.seeding import numpy_rng

    rng = numpy_rng(seed)
    out = [keep[0]]
    for i in range(1, len(sizes)):
        saving = _children(fg[0], sizes[i] // sizes[0], fg[i].shape) - 1
        target = int(saving[keep[i]].sum())
        chosen = np.zeros_like(fg[i])
        total = 0
        for idx in rng.permutation(np.flatnonzero(fg[i])):
            if total == target:
                break
            if total + saving.flat[idx] <= target:
                chosen.flat[idx] = True
                total += int(saving.flat[idx])
        out.append(chosen)
    return out


def reconstruct(x: np.ndarray, tokens: Tokens) -> np.ndarray:
    """What the tokens keep: fine patches exactly, a coarse patch at the fine resolution (2x-pooled per
    scale step, as the model's downsampled path sees it) upsampled back; dropped patches are 0."""
    p_max = tokens.sizes[-1]
    xp = pad_to(x.astype(np.float64), p_max)
    out = np.zeros_like(xp)
    for s, (grid, p) in enumerate(zip(tokens.grids, tokens.sizes, strict=True)):
        if not grid.any():
            continue
        f = 2 ** s
        low = _blocks(xp, f).mean(axis=(2, 4, 6)) if f > 1 else xp
        approx = _upsample_t(low, f)
        m = _upsample(np.pad(grid, [(0, n // p - g) for n, g in zip(xp.shape[1:], grid.shape, strict=True)]), p)
        out[:, m] = approx[:, m]
    n = x.shape[1:]
    return out[:, : n[0], : n[1], : n[2]]


def _upsample_t(a: np.ndarray, f: int) -> np.ndarray:
    return a.repeat(f, 1).repeat(f, 2).repeat(f, 3)


def reconstruction_sse(x: np.ndarray, tokens: Tokens) -> float:
    return float(((reconstruct(x, tokens) - x.astype(np.float64)) ** 2).sum())


def patch_arrays(x: np.ndarray, tokens: Tokens) -> list[np.ndarray]:
    """Per scale, the (n, T, p, p, p) voxel arrays of the chosen patches (full resolution)."""
    out = []
    for grid, p in zip(tokens.grids, tokens.sizes, strict=True):
        xb = _blocks(pad_to(x, tokens.sizes[-1]), p)  # (T, gx, p, gy, p, gz, p)
        xb = xb.transpose(1, 3, 5, 0, 2, 4, 6)
        g = np.zeros(xb.shape[:3], bool)
        g[: grid.shape[0], : grid.shape[1], : grid.shape[2]] = grid
        out.append(np.ascontiguousarray(xb[g], dtype=np.float32))
    return out
