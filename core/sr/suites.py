"""Benchmark equation sets for ``mlx26 sr eval``: Nguyen-1..12 and a FastSRB-style set.

Facts typed in from the published formulas (no file copied): Nguyen-1..12 as listed by
Uy et al. (2011), "Semantically-based crossover in genetic programming", with their sampling
ranges (20 uniform points; 2-variable problems on [0, 1]); the FastSRB-style set is a small
selection of Feynman-lectures equations (the physics formulas used by the SRSD/FastSRB
benchmarks), with variables renamed to x1..x3 and positive sampling ranges like theirs.
Reconstructed: which Feynman equations we picked and their ranges (FastSRB's own ranges per
equation are not reproduced; ours are positive intervals that keep every formula defined).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    name: str
    expression: str  # infix over x1..xk, parsed by mlx26.core.simplify
    n_vars: int
    low: float
    high: float
    n_train: int = 20


_NGUYEN = [
    ("nguyen-1", "x1**3 + x1**2 + x1", 1, -1.0, 1.0),
    ("nguyen-2", "x1**4 + x1**3 + x1**2 + x1", 1, -1.0, 1.0),
    ("nguyen-3", "x1**5 + x1**4 + x1**3 + x1**2 + x1", 1, -1.0, 1.0),
    ("nguyen-4", "x1**6 + x1**5 + x1**4 + x1**3 + x1**2 + x1", 1, -1.0, 1.0),
    ("nguyen-5", "sin(x1**2)*cos(x1) - 1", 1, -1.0, 1.0),
    ("nguyen-6", "sin(x1) + sin(x1 + x1**2)", 1, -1.0, 1.0),
    ("nguyen-7", "log(x1 + 1) + log(x1**2 + 1)", 1, 0.0, 2.0),
    ("nguyen-8", "sqrt(x1)", 1, 0.0, 4.0),
    ("nguyen-9", "sin(x1) + sin(x2**2)", 2, 0.0, 1.0),
    ("nguyen-10", "2*sin(x1)*cos(x2)", 2, 0.0, 1.0),
    ("nguyen-11", "x1**x2", 2, 0.0, 1.0),
    ("nguyen-12", "x1**4 - x1**3 + x2**2/2 - x2", 2, 0.0, 1.0),
]

# Feynman equations (I.6.2a, I.12.1, I.14.4, I.25.13, I.29.4, I.34.27, I.39.1, II.3.24, II.8.31,
# I.12.5, I.14.3, I.18.12-style torque r*F*sin(theta)), written with x1..x3.
_FASTSRB = [
    ("feynman-I.6.2a", "exp(-(x1**2)/2)/sqrt(2*pi)", 1, 1.0, 3.0),
    ("feynman-I.12.1", "x1*x2", 2, 1.0, 5.0),
    ("feynman-I.12.5", "x1*x2", 2, 1.0, 5.0),
    ("feynman-I.14.3", "x1*x2*x3", 3, 1.0, 5.0),
    ("feynman-I.14.4", "x1*x2**2/2", 2, 1.0, 5.0),
    ("feynman-I.18.12", "x1*x2*sin(x3)", 3, 1.0, 5.0),
    ("feynman-I.25.13", "x1/x2", 2, 1.0, 5.0),
    ("feynman-I.29.4", "x1/x2", 2, 1.0, 10.0),
    ("feynman-I.34.27", "x1*x2/(2*pi)", 2, 1.0, 5.0),
    ("feynman-I.39.1", "3*x1*x2/2", 2, 1.0, 5.0),
    ("feynman-II.3.24", "x1/(4*pi*x2**2)", 2, 1.0, 5.0),
    ("feynman-II.8.31", "x1*x2**2/2", 2, 1.0, 5.0),
]


def suite(name: str) -> list[Problem]:
    """The problems of one named suite (``nguyen`` = 1..12, ``nguyen8`` = 1..8, ``fastsrb``)."""
    from mlx26.core.common.errors import unknown_name

    if name == "nguyen":
        return [Problem(*p) for p in _NGUYEN]
    if name == "nguyen8":
        return [Problem(*p) for p in _NGUYEN[:8]]
    if name == "fastsrb":
        return [Problem(*p, n_train=100) for p in _FASTSRB]
    raise unknown_name("suite", name, ("nguyen", "nguyen8", "fastsrb"))


def all_test_expressions() -> list[str]:
    """Every benchmark formula (the decontamination test set, with the synthetic held-out set)."""
    return [p[1] for p in _NGUYEN] + [p[1] for p in _FASTSRB]
