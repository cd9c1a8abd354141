"""A SYNTHETIC 4D fMRI generator for Omni-fMRI experiments (arXiv 2601.23090 trains on 49,497 real
sessions; none is shipped or downloaded here, so the tests, demo and benchmark use this).

Anatomy is nilearn's bundled MNI152 brain and grey-matter masks (offline; never ``fetch_*``), zoomed to a
``size``^3 cube. Each voxel's baseline intensity is ``1000 (0.7 + 0.3 gm)`` times a smooth per-subject
texture; four "networks" (visual, motor, default-mode, fronto-parietal) are Gaussian blobs restricted to
the brain. ``task`` runs alternate rest and one-network blocks, convolved with
``nilearn.glm.first_level.spm_hrf``; ``rest`` runs drive every network with AR(1) signals. Both add a slow
drift and white noise at a chosen temporal SNR (tSNR). Per-frame labels: ``condition`` (rest/task),
``network`` (the active network or "none") and the subject. Every output is SYNTHETIC.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np
from mlx26.core.common.errors import InputError

from .io import Volume
from .spec import NETWORKS, SYNTH_KINDS

# Network centres in the cube's (x, y, z) = (left→right, posterior→anterior, inferior→superior), fractions.
CENTRES = {
    "visual": [(0.5, 0.12, 0.45)],
    "motor": [(0.3, 0.5, 0.8), (0.7, 0.5, 0.8)],
    "default-mode": [(0.5, 0.3, 0.65), (0.5, 0.8, 0.5)],
    "fronto-parietal": [(0.2, 0.7, 0.6), (0.8, 0.35, 0.7)],
}


def brain(size: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(brain mask, grey-matter probability, voxel size in mm) on a size^3 cube from the bundled MNI152."""
    from nilearn.datasets import load_mni152_brain_mask, load_mni152_gm_mask
    from scipy.ndimage import zoom

    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        mask = np.asarray(load_mni152_brain_mask(resolution=2).get_fdata(), dtype=np.float32)
        gm = np.asarray(load_mni152_gm_mask(resolution=2).get_fdata(), dtype=np.float32)
    f = size / max(mask.shape)
    out = []
    for a in (mask, gm):
        z = zoom(a, f, order=1)
        pad = [((size - n) // 2, size - n - (size - n) // 2) for n in z.shape]
        out.append(np.pad(z, pad)[:size, :size, :size])
    return out[0] > 0.5, np.clip(out[1], 0, 1), 2.0 / f


def _smooth(rng, shape, sigma: float) -> np.ndarray:
    from scipy.ndimage import gaussian_filter

    field = gaussian_filter(rng.standard_normal(shape), sigma)
    return field / (field.std() or 1.0)


def blobs(size: int, mask: np.ndarray, gm: np.ndarray, width: float = 0.09) -> np.ndarray:
    grid = np.stack(np.meshgrid(*(np.arange(size) / size,) * 3, indexing="ij"), -1)
    out = np.zeros((len(NETWORKS), size, size, size), np.float32)
    for k, name in enumerate(NETWORKS):
        for c in CENTRES[name]:
            out[k] += np.exp(-((grid - np.array(c)) ** 2).sum(-1) / (2 * width ** 2))
        out[k] *= mask * (0.4 + 0.6 * gm)
    return out


def generate(*, subjects: int = 4, runs: int = 2, frames: int = 96, size: int = 32, tr: float = 2.0,
             kind: str = "task", tsnr: float = 60.0, amplitude: float = 0.03, block: int = 8, texture: float = 0.05,
             seed: int = 0) -> list[Volume]:
    """``subjects x runs`` SYNTHETIC runs of shape (frames, size, size, size)."""
    if kind not in SYNTH_KINDS:
        from mlx26.core.common.errors import unknown_name

        raise unknown_name("kind", kind, SYNTH_KINDS)
    if min(subjects, runs, frames, block) < 1 or size < 8 or tr <= 0 or tsnr <= 0:
        raise InputError("subjects, runs, frames, block >= 1, size >= 8, tr > 0 and tsnr > 0 are required")
    from mlx26.core.common.seeding import numpy_rng
    from nilearn.glm.first_level import spm_hrf

    rng = numpy_rng(seed)
    mask, gm, voxel = brain(size)
    nets = blobs(size, mask, gm)
    hrf = spm_hrf(tr, oversampling=1)
    t = np.arange(frames)
    out = []
    for subj in range(subjects):
        tex = 1 + texture * _smooth(rng, mask.shape, 1.5)
        base = (1000 * (0.7 + 0.3 * gm) * tex * mask).astype(np.float32)
        gain = 1 + 0.3 * rng.standard_normal(len(NETWORKS)).clip(-2, 2) / 2
        for run in range(runs):
            drift = 0.01 * (t / frames) * rng.standard_normal() + 0.005 * np.cos(
                2 * np.pi * t / frames + rng.uniform(0, 2 * np.pi))
            if kind == "task":
                order = rng.permutation(np.repeat(np.arange(len(NETWORKS)), -(-frames // (2 * block * len(NETWORKS)))))
                box = np.zeros((len(NETWORKS), frames))
                active = np.full(frames, -1)
                for b, k in enumerate(order):
                    start = (2 * b + 1) * block
                    box[k, start:start + block] = 1
                    active[start:start + block] = k
                sig = np.stack([np.convolve(bx, hrf)[:frames] for bx in box])
                sig /= max(float(sig.max()), 1e-9)
            else:
                sig = np.zeros((len(NETWORKS), frames))
                for k in range(len(NETWORKS)):
                    e = rng.standard_normal(frames)
                    for i in range(1, frames):
                        sig[k, i] = 0.9 * sig[k, i - 1] + np.sqrt(1 - 0.81) * e[i]
                active = np.full(frames, -1)
            mod = 1 + drift[:, None, None, None] + amplitude * np.einsum("k,kt,kxyz->txyz", gain, sig, nets)
            noise = rng.standard_normal((frames, *mask.shape)).astype(np.float32) * (base / tsnr)
            data = (base[None] * mod + noise * mask).astype(np.float32)
            labels = {"condition": ["task" if a >= 0 else "rest" for a in active],
                      "network": [NETWORKS[a] if a >= 0 else "none" for a in active]}
            affine = np.diag([voxel, voxel, voxel, 1.0])
            affine[:3, 3] = -voxel * size / 2
            out.append(Volume(data, affine, float(tr), f"synthetic:sub-{subj + 1:02d}_run-{run + 1}", [],
                              labels, f"sub-{subj + 1:02d}", synthetic=True))
    return out
