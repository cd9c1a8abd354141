"""SmartThinker: progressive chain-of-thought length calibration for GRPO (ICML 2026, arXiv 2603.08000).

Paper: Hu, Xu, Chen, Wang, Liu, Li, Wu & Chen, *SmartThinker: Progressive Chain-of-Thought Length
Calibration for Efficient Large Language Model Reasoning* (ICML 2026, arXiv 2603.08000); public code SJTU-RTEAS/SmartThinker (verl; its
reward manager was read to check the case analysis, nothing was copied).

* :mod:`.rewards` — the per-group SmartThinker length reward (optimal length ``l_opt`` from the
  variances of correct and all lengths, a penalty for correct responses longer than ``l_opt``, a
  coefficient ``alpha`` set per group so the most-penalised correct response never drops below
  the group mean) and the baselines it is compared with (Kimi-1.5, Arora & Zanette, L1-exact /
  L1-max, ThinkPrune, none), each citing its paper;
* :mod:`.data` — the verifiable arithmetic task on the zoo's problems (``core/zoo/arithmetic.py``)
  with concise and verbose worked chains (our own synthetic data, not the paper's math sets);
* :mod:`.warmup` — a short supervised warm-up of a zoo model on mixed-verbosity chains;
* :mod:`.grpo` — GRPO training through TRL's ``GRPOTrainer`` with these rewards as ``reward_funcs``,
  groups kept whole, metrics streamed as records; :mod:`.evaluate` — length and accuracy.

Reconstructed: everything at the scale we can run — a 1.4M-parameter model, synthetic arithmetic,
CPU — and the baselines' coefficients for that scale (docs/smartthinker.md). The reward itself
follows the paper's definition exactly. Nothing heavy is imported here (``spec`` is on ``--help``).
"""
