"""Fast rule-based simplification of symbolic-regression expressions (``mlx26 simplify``).

Reconstruction of Saegert & Köthe, "Breaking the Simplification Bottleneck in Amortized
Neural Symbolic Regression" (ICML 2026, arXiv 2602.08885; public code psaegert/simplipy),
written from scratch: our own prefix engine (``engine``), rule miner (``miner``), parser
and printer (``parse``), equivalence checker and decontamination (``equiv``), random
expression generator (``generate``) and SymPy benchmark (``bench``).  See docs/simplify.md.
"""

from mlx26.core.common.lazy import lazy_exports

# {submodule: the names it exports}: each is imported on first use, so importing the package
# (and its stdlib-only .spec, which the CLI reads for --help) loads nothing heavy.
__all__ = lazy_exports(__name__, {
    "bench": ("bench", "throughput"),
    "corpus": ("load_corpus", "parse_row"),
    "engine": ("simplify", "simplify_many"),
    "equiv": ("Decontaminator", "decontaminate", "equivalent", "equivalent_details"),
    "errors": ("ExpressionError",),
    "generate": ("random_expressions",),
    "miner": ("mine", "rules_json", "write_rules"),
    "ops": ("OPERATORS", "evaluate"),
    "parse": ("MAX_DEPTH", "parse_infix", "parse_prefix", "to_infix"),
    "ruleset": ("DEFAULT_RULES", "RuleSet", "load_rules"),
})
