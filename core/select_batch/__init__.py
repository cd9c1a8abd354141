"""PartitionSel: cross-domain minibatch selection under a partition matroid.

Paper: Agrawal et al., "PartitionSel" (ICML 2026, arXiv 2606.07954); public code
efficiency-learning/PartitionSEL (a JAX fork of Tunix, ``tunix/sft/subsel/``). This package
is a PyTorch/numpy implementation written from the issue's description of the method, not a
port of the upstream code (read afterwards only to compare how features and selection time
are computed). Reconstructed choices are marked in each module; the main ones:

* features: per-example gradients of one parameter subset (``last-layer``: the LM head,
  ``last-block``: the last decoder layer, ``lora``: peft LoRA adapters on the last block),
  computed with ``torch.func.vmap(grad(...))`` or, for the LM head, in closed form from one
  no-grad forward (:mod:`.ghost`), and compressed with a seeded TensorSketch/CountSketch
  (not a dense Gaussian projection: a dense matrix for ~0.5 M parameters × 512 dims would
  not fit the 2-core CPU budget);
* utility U(w) = Σ w_i (η s_i + ½ η² K_ii) − ½ η² wᵀKw, w ≥ 0, with the refit by NNLS on
  small supports and accelerated projected gradient (FISTA) on large ones, and a safeguard
  that makes the greedy utility trace non-decreasing;
* randomized greedy: one item drawn uniformly from the union of the per-domain shortlists
  (each domain's top items by residual, as many as its remaining capacity).

Modules: :mod:`.budgets` (per-domain budgets), :mod:`.utility` (the quadratic utility and
its refit), :mod:`.greedy` (PartitionSel and the baselines in one code path),
:mod:`.features` (gradient features, validation of feature rows), :mod:`.ghost` (closed-form
head gradients and their TensorSketch), :mod:`.data` (pool rows
and the three-domain demo mix), :mod:`.synthetic` (synthetic gradient pools),
:mod:`.pipeline` (one selection from features or texts, with the input checks),
:mod:`.train` (the fine-tuning loop that selects every minibatch, optionally amortised),
:mod:`.hf` (the same selection as a ``transformers.Trainer`` batch sampler).
"""

from mlx26.core.common.lazy import lazy_exports

# {submodule: the names it exports}: each is imported on first use, so importing the package
# (and its stdlib-only .spec, which the CLI reads for --help) loads nothing heavy.
__all__ = lazy_exports(__name__, {
    "budgets": ("allocate_budgets",),
    "greedy": ("Selection", "select"),
    "spec": ("BUDGET_MODES", "METHODS"),
    "utility": ("QuadraticUtility",),
})
