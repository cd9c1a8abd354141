"""The choices of ``mlx26 train rl`` / ``mlx26 rl``, shared by the CLI and the core (standard library only).

``mlx26.cli.train_rl`` and ``mlx26.cli.rl`` import this at module level (``--help`` must not load
numpy or torch); :mod:`.registry` and :mod:`.datagen` import the same objects.
"""

# --algo NAME → "module:function", imported on first use (see mlx26.core.rl.registry, which may add more).
ALGORITHMS: dict[str, str] = {
    "dqn": "mlx26.core.rl.algos.dqn:train",
    "ppo": "mlx26.core.rl.algos.ppo:train",
    "fql": "mlx26.core.rl.algos.fql:train",
    "dfql": "mlx26.core.rl.algos.dfql:train",
    "rapc": "mlx26.core.rl.reach_avoid.rapc:train",
    "ppo-lag": "mlx26.core.rl.reach_avoid.ppo_lag:train",
}
DATA_PARALLEL = ("fql", "dfql")  # run data-parallel under torchrun (offline); the others refuse there
DATA_POLICIES = ("oracle", "noisy", "random")  # `rl data make --policy`
