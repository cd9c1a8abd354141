"""The choices of ``mlx26 score-code``, shared by the CLI and the core (standard library only).

``mlx26.cli.score_code`` imports this at module level; :mod:`.segment`, :mod:`.prm`,
:mod:`.aggregate` and :mod:`.analyzers` import the same tuples.
"""

SEGMENT_MODES = ("block", "line", "logical", "ast")
MODELS = ("linear", "transformer")
AGGREGATORS = ("softmax", "min", "mean", "last", "lse", "cvar")
ANALYZERS = ("bandit", "semgrep")
