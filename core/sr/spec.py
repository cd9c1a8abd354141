"""The choices and defaults of ``mlx26 sr`` (standard library only; the CLI imports this at module level)."""

# Operators the model and the prior may use (a subset of core/simplify/ops.py OPERATORS), with the
# prior's sampling weights. `pow` is kept rare: it is the only operator that makes x**y (Nguyen-11).
OPERATOR_WEIGHTS: dict[str, float] = {
    "+": 10.0, "-": 4.0, "*": 10.0, "/": 4.0, "pow": 0.5,
    "neg": 1.0, "inv": 1.0, "pow2": 3.0, "pow3": 1.5, "sqrt": 1.5,
    "exp": 1.5, "log": 1.5, "sin": 2.5, "cos": 2.5,
}
MAX_VARS = 3  # the encoder sees x1..x3 and y
LITERALS = ("0", "1", "-1", "2", "3", "4", "5", "6", "0.5")  # what the engine leaves unmasked
CONSTANT = "<constant>"
SUITES = ("nguyen", "nguyen8", "fastsrb", "synthetic")
BASELINES = ("pyoperon", "gplearn")
SAMPLERS = ("model", "prior")
PRESETS = ("tiny",)
MODEL_FORMAT = "mlx26-sr/1"  # bump when the checkpoint layout or the vocabulary changes
DEFAULT_MODEL = "tiny"
FLOAT32_EPS = 1.1920929e-07  # numeric recovery: FVU <= float32 eps on held-out points
PARSIMONY = 0.05  # λ in log10(FVU) + λ·length (Flash-ANSR's parsimony)
