"""The choices of ``mlx26 reward length``, ``mlx26 train grpo`` and ``mlx26 data arith``.

Standard library only: the CLI imports this at module level (``mlx26 --help`` stays light).
"""

# Length rewards, each a function of one prompt group (core/smartthinker/rewards.py).
LENGTH_REWARDS = ("smartthinker", "kimi", "arora", "l1-exact", "l1-max", "thinkprune", "none")
DEFAULT_LENGTH_REWARD = "smartthinker"
# Methods that need a target length (--target-length) or a cap.
TARGET_METHODS = ("l1-exact", "l1-max", "thinkprune")
# Size presets of `train grpo` (core/smartthinker/grpo.py: PRESETS holds their values).
GRPO_PRESETS = ("micro", "small", "bench")
DEFAULT_PRESET = "small"
# Reasoning-chain styles of the arithmetic task (core/smartthinker/data.py).
STYLES = ("concise", "verbose", "mixed")
# Training tasks `train grpo --data` knows (only the zoo's arithmetic problems for now).
DATASETS = ("arith",)
