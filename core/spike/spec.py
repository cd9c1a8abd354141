"""The choices and defaults of ``mlx26 spike`` (standard library only; the CLI imports this at module level)."""

ARCHS = ("ann", "snn", "spikinglm")
ATTNS = ("softmax", "spike2max", "linear")
NEURONS = ("if", "lif")
SURROGATES = ("atan", "sigmoid")
RUNTIMES = ("torch", "onnx")
NORMS = ("exact", "pow2")
# Substitute tasks built from text the project has, the synthetic one, and the GLUE formats a user supplies.
SYNTHETIC_TASKS = ("salient", "salient-query")  # generated here: no tokenizer, no text
BUILTIN_TASKS = (*SYNTHETIC_TASKS, "source", "pair")
GLUE_TASKS = ("sst2", "mrpc", "rte", "qnli")
TASKS = BUILTIN_TASKS + GLUE_TASKS
# Per-arch defaults: attention and DAS (the CLI's --attn / --das override them).
ARCH_DEFAULTS = {"ann": ("softmax", False), "snn": ("linear", False), "spikinglm": ("spike2max", True)}
MODEL_FORMAT = "mlx26-spike/1"  # bump when the checkpoint layout changes
DAS_TAU = 0.5  # DAS target mean  = tau * theta
DAS_KAPPA = 0.5  # DAS target std = kappa * theta
