"""RL algorithms registered in :mod:`mlx26.core.rl.registry` (one readable file each)."""
