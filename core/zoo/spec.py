"""The names ``mlx26 zoo`` offers, shared by the CLI and the core (standard library only).

``mlx26.cli.zoo`` imports this at module level; :mod:`.corpora` builds its registry in this order.
"""

CORPUS_NAMES = ("stdlib-code", "stdlib-prose", "shakespeare", "arithmetic", "packages-code")
