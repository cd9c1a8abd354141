"""Stochastic minimum-cost reach-avoid RL (RAPC) — a **reconstruction**.

Pan, Wu, Xue & Xue, "Stochastic minimum-cost reach-avoid RL" (ICML 2026, arXiv 2605.11975)
publish no code; everything here is rebuilt from the paper's summary and the prior work it
builds on (discounted reach-avoid Bellman equations, Hsu et al. 2021; RC-PPO, So et al. 2024).

* :mod:`.operator` — the reach-avoid Bellman operator B_γ and the reach-avoid GAE;
* :mod:`.grid` — ``mlx26/ra-grid``, a slippery tabular grid with exact P(RA) by linear solve;
* :mod:`.certificates` — sound certificates B ≤ B_γ B and the Monte-Carlo Wilson check;
* :mod:`.projection` — symmetric projection of conflicting policy gradients;
* :mod:`.rapc` — the learner, registered as ``--algo rapc``.
"""
