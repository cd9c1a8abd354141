"""The choices of ``mlx26 dp-mix``, shared by the CLI and the core (standard library only).

``mlx26.cli.dp_mix`` imports this at module level (``--help`` must not load numpy or scipy);
:mod:`.calibration` imports the same tuples, so the lists cannot drift.
"""

#: mechanisms with a certified delta search (calibrate, verify, cross-check)
MIXTURES = ("multi", "quasi", "gaussian")
#: everything ``calibrate`` and ``noise`` accept: the mixtures, the optimised lattice mixture,
#: the pure-DP / truncated references, and ``best`` (the cheapest of all of them)
MECHANISMS = MIXTURES + ("optimised", "laplace", "truncated-laplace", "staircase", "best")
OBJECTIVES = ("l1", "l2")
