"""SecCodePRM (Yu et al., ICML 2026, arXiv 2602.10418): step-level security scores along code.

Reconstruction at toy scale: the paper's PRM is a code LLM fine-tuned with the PURE-PRM recipe
on analyzer-labelled steps; ours are a hashed-n-gram linear model and a small causal
transformer, trained here on a synthetic corpus and shipped in ``models/``. Segmentation,
the analyzer labelling scheme, the risk-sensitive aggregation and the applications
(full/partial-code detection, ranking of generations) follow the paper's description.

Modules: ``segment`` (steps), ``source`` (robust reading), ``labels`` (step labels),
``analyzers`` (bandit/semgrep), ``corpus`` (synthetic data), ``features`` + ``linear`` and
``transformer`` (the PRMs), ``prm`` (load/save/score), ``aggregate``, ``detect``, ``stream``,
``train``, ``evaluate``.
"""

from mlx26.core.common.lazy import lazy_exports

# {submodule: the names it exports}: each is imported on first use, so importing the package
# (and its stdlib-only .spec, which the CLI reads for --help) loads nothing heavy.
__all__ = lazy_exports(__name__, {
    "aggregate": ("aggregate",),
    "prm": ("load_model", "score_text"),
    "segment": ("MODES", "Step", "segment"),
    "spec": ("AGGREGATORS", "MODELS"),
})
