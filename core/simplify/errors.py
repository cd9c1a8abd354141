"""Error type of the simplify core (Saegert & Köthe, ICML 2026, arXiv 2602.08885 reconstruction).

Every malformed or undefined expression raises ``ExpressionError`` (a ``ValueError``) with a
one-line message; the CLI layer prints that message per input line.
"""

from mlx26.core.common.errors import InputError


class ExpressionError(InputError):
    """A malformed, unsupported or undefined expression (one-line message)."""
