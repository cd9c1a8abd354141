"""dp-mix: mixtures of Gaussians for approximate differential privacy.

Independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap: Mixtures of
Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078): calibration,
certified verification, costs and sampling of the multi-Gaussian and quasi-Gaussian
mechanisms, with the analytic Gaussian (Balle & Wang 2018), Laplace, truncated Laplace and
staircase mechanisms as references.  No CLI imports here.
"""

from .calibration import MECHANISMS, Mechanism, Verification, calibrate, resolve_K, verify, verify_detail
from .comparison import compare
from .crosscheck import crosscheck_dp_accounting
from .mixture import Mixture, multi_mixture, quasi_mixture
from .params import auto_K, validate_params
from .profile import certified_max, hockey_stick, naive_delta
from .sampling import sample, secure_rng

__all__ = [
    "MECHANISMS",
    "Mechanism",
    "Mixture",
    "Verification",
    "auto_K",
    "calibrate",
    "certified_max",
    "compare",
    "crosscheck_dp_accounting",
    "hockey_stick",
    "multi_mixture",
    "naive_delta",
    "quasi_mixture",
    "resolve_K",
    "sample",
    "secure_rng",
    "validate_params",
    "verify",
    "verify_detail",
]
