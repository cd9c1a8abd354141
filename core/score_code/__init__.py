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

from mlx26.core.score_code.aggregate import AGGREGATORS, aggregate
from mlx26.core.score_code.prm import MODELS, load_model, score_text
from mlx26.core.score_code.segment import MODES, Step, segment

__all__ = ["AGGREGATORS", "MODELS", "MODES", "Step", "aggregate", "load_model", "score_text", "segment"]
