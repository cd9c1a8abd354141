"""The choices of ``mlx26 dp-mix``, shared by the CLI and the core (standard library only).

``mlx26.cli.dp_mix`` imports this at module level (``--help`` must not load numpy or scipy);
:mod:`.calibration` imports the same tuple, so the two lists cannot drift.
"""

MECHANISMS = ("multi", "quasi", "gaussian")
