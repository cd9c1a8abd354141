"""Synthetic gradient pools with domain structure, for tests and benchmarks of PartitionSel.

Our own generator (no paper data is reconstructed). Every domain c has its own direction v_c;
one direction u is shared by all domains. Item i of domain c has the feature
a_i u + b_i v_c + noise, with (a_i, b_i) drawn so that some items are mostly "shared" and
others mostly "domain-specific"; the validation anchors point at u + Σ_c v_c / √C plus noise.
Selecting each domain on its own over-counts u (every domain picks its u-heavy items);
the joint utility sees that redundancy. Rows are L2-normalised, like real features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SyntheticPool:
    G: np.ndarray          # n × d pool features
    domains: list[str]     # n labels
    anchors: np.ndarray    # m × d validation features


def normalise_rows(X: np.ndarray) -> np.ndarray:
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def make_pool(seed: int = 0, sizes: tuple[int, ...] = (60, 45, 30), dim: int = 32, anchors: int = 4,
              noise: float = 0.35) -> SyntheticPool:
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((dim, len(sizes) + 1)))
    shared, own = basis[:, 0], basis[:, 1:].T
    rows, labels = [], []
    for c, size in enumerate(sizes):
        mix = rng.uniform(0, 1, size)  # 1 = all shared, 0 = all domain-specific
        amp = rng.uniform(0.5, 1.5, size)
        rows.append(amp[:, None] * (mix[:, None] * shared + (1 - mix)[:, None] * own[c])
                    + noise * rng.standard_normal((size, dim)) / np.sqrt(dim))
        labels += [f"d{c}"] * size
    target = shared + own.sum(axis=0) / np.sqrt(len(sizes))
    A = target + noise * rng.standard_normal((anchors, dim)) / np.sqrt(dim)
    return SyntheticPool(G=normalise_rows(np.vstack(rows)), domains=labels, anchors=normalise_rows(A))
