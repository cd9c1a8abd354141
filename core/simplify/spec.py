"""The choices of ``mlx26 simplify``, shared by the CLI and the core (standard library only).

``mlx26.cli.simplify`` imports this at module level (``--help`` must not load numpy);
:mod:`.engine` and :mod:`.equiv` import the same tuples.
"""

MODES = ("sound", "lossy")  # sound: equal wherever the input is defined; lossy: where both are finite
DOMAINS = ("strict", "intersection")  # equivalence: same domain too, or compare where both are finite
