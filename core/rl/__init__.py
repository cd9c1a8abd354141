"""Reinforcement learning for ``mlx26 train rl`` / ``mlx26 rl …``: shared machinery and algorithms.

Papers: Direct Flow Q-Learning (DFQL, ICML 2026; no public code, **reconstructed** from the
issue's description), Flow Q-Learning (FQL; Park, Li & Levine 2025, reference JAX code
seohongpark/fql, re-implemented in torch), plus readable DQN and PPO baselines in the
cleanrl spirit. Later methods (reach-avoid RAPC, rationality measures, vulnerability games)
plug into :mod:`mlx26.core.rl.registry`.

Modules (one job each): ``registry`` (algorithm name → "module:train"), ``hparams``
(dataclass hyperparameters, ``--set`` overrides), ``envs`` (gymnasium / OGBench / own envs),
``toy_modes`` (the 2-D multi-modal bandit), ``datasets`` (OGBench-schema ``.npz`` generation
and validation), ``checkpoint``, ``evaluation``, ``runner`` (run folder, metrics, resume),
``nets`` and ``algos/*``. Nothing here imports typer or rich.
"""
