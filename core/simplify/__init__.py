"""Fast rule-based simplification of symbolic-regression expressions (``mlx26 simplify``).

Reconstruction of Saegert & Köthe, "Breaking the Simplification Bottleneck in Amortized
Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885; public code psaegert/simplipy),
written from scratch: our own prefix engine (``engine``), rule miner (``miner``), parser
and printer (``parse``), equivalence checker and decontamination (``equiv``), random
expression generator (``generate``) and SymPy benchmark (``bench``).  See docs/simplify.md.
"""

from mlx26.core.simplify.bench import bench, throughput
from mlx26.core.simplify.engine import simplify, simplify_many
from mlx26.core.simplify.equiv import Decontaminator, decontaminate, equivalent, equivalent_details
from mlx26.core.simplify.errors import ExpressionError
from mlx26.core.simplify.generate import random_expressions
from mlx26.core.simplify.miner import mine, rules_json, write_rules
from mlx26.core.simplify.ops import OPERATORS, evaluate
from mlx26.core.simplify.parse import MAX_DEPTH, parse_infix, parse_prefix, to_infix
from mlx26.core.simplify.ruleset import DEFAULT_RULES, RuleSet, load_rules

__all__ = [
    "DEFAULT_RULES", "MAX_DEPTH", "OPERATORS", "Decontaminator", "ExpressionError", "RuleSet", "bench",
    "decontaminate", "equivalent", "equivalent_details", "evaluate", "load_rules", "mine", "parse_infix",
    "parse_prefix", "random_expressions", "rules_json", "simplify", "simplify_many", "throughput", "to_infix",
    "write_rules",
]
