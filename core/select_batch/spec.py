"""The choices of ``mlx26 select-batch``, shared by the CLI and the core (standard library only).

``mlx26.cli.select_batch`` imports this at module level (``--help`` must not load numpy or torch);
:mod:`.greedy`, :mod:`.budgets` and :mod:`.features` import the same tuples.
"""

METHODS = ("partitionsel", "independent", "gradmatch", "greats", "random")
BUDGETED = ("partitionsel", "independent", "random")  # the methods that honour per-domain budgets
BUDGET_MODES = ("proportional", "equal")
# train only: budgets that adapt step by step to each domain's utility (upstream PartitionSEL's curriculum)
TRAIN_BUDGET_MODES = (*BUDGET_MODES, "curriculum")
GRAD_PARAMS = ("last-layer", "last-block", "lora")
FEATURE_PATHS = ("auto", "ghost", "vmap")
