"""The choices of ``mlx26 rationality`` (standard library only; the CLI imports this at module level)."""

ENVS = ("CliffWalking-v1", "FrozenLake-v1", "FrozenLake8x8-v1", "Taxi-v4")
DEFAULT_ENV = "CliffWalking-v1"
METRICS = ("grid", "discrete")  # ground metric on states for W1
W1_METHODS = ("auto", "closed", "pot")
HYPOTHESES = ("regularizer", "domain-randomization", "shift")
REGULARIZERS = ("none", "layer_norm", "l2", "weight_norm")
# What the paper predicts for each hypothesis (sign of the effect on deployed risk).
PREDICTIONS = {
    "regularizer": "each regulariser reduces risk vs none",
    "domain-randomization": "randomising eps_train reduces risk vs a fixed eps_train",
    "shift": "risk increases with eps_deploy",
}
