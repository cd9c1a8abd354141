"""dp-mix: mixtures of Gaussians for approximate differential privacy.

Independent Python reconstruction of Liu, Selvi & Wiesemann, "Mind the Gap: Mixtures of
Gaussians in Approximate Differential Privacy" (ICML 2026, arXiv 2605.28078): calibration,
certified verification, costs and sampling of the multi-Gaussian and quasi-Gaussian
mechanisms, with the analytic Gaussian (Balle & Wang 2018), Laplace, truncated Laplace and
staircase mechanisms as references.  No CLI imports here.
"""

from mlx26.core.common.lazy import lazy_exports

# {submodule: the names it exports}: each is imported on first use, so importing the package
# (and its stdlib-only .spec, which the CLI reads for --help) loads nothing heavy.
__all__ = lazy_exports(__name__, {
    "spec": ("MECHANISMS",),
    "calibration": ("Mechanism", "Verification", "calibrate", "resolve_K", "verify", "verify_detail"),
    "comparison": ("compare",),
    "crosscheck": ("crosscheck_dp_accounting",),
    "mixture": ("Mixture", "multi_mixture", "quasi_mixture"),
    "params": ("auto_K", "validate_params"),
    "profile": ("certified_max", "hockey_stick", "naive_delta"),
    "sampling": ("sample", "secure_rng"),
})
