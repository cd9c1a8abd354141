"""Choice lists of ``mlx26 optimize-prompt`` (standard library only: the CLI imports this at module level)."""

from __future__ import annotations

OPTIMIZERS = ("mrpea", "spo", "ape", "none")
SCORERS = ("exact", "number", "mc")
ANSWER_FORMATS = ("number", "mc", "text")
# Ledger purposes of the optimisation (one budget covers all four); evaluation is booked apart.
PURPOSES = ("meta", "generation", "execution", "judging")
SIMULATED = "SIMULATED"
DEFAULT_ROUNDS = 5
DEFAULT_VALIDATION = 4
