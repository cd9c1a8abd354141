"""Shared fixtures for the fmri tests: the public quickstart volume and a small SYNTHETIC dataset."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("nibabel")
pytest.importorskip("nilearn")

BLOCK = (slice(32, 64), slice(30, 66), slice(28, 70))
RAMP = (slice(46, 52), slice(44, 54), slice(40, 56))


def quickstart_volume() -> np.ndarray:
    """The issue's quickstart: zeros 96^3 x 40, an N(0, 0.1) block (seed 7) and a linear ramp; (T, X, Y, Z)."""
    rng = np.random.default_rng(7)
    v = np.zeros((40, 96, 96, 96), np.float32)
    v[:, BLOCK[0], BLOCK[1], BLOCK[2]] = rng.normal(0, 0.1, (40, 32, 36, 42))
    v[:, RAMP[0], RAMP[1], RAMP[2]] = np.linspace(-1, 1, 16, dtype=np.float32)
    return v


@pytest.fixture(scope="session")
def synth_clips():
    from mlx26.core.fmri import preprocess, synth

    vols = synth.generate(subjects=3, runs=1, frames=32, size=32, seed=0, texture=0.01)
    return preprocess.preprocess(vols, size=32, frames=8)
