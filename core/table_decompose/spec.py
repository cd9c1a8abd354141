"""The choices of ``mlx26 table-decompose``, shared by the CLI and the core (standard library only).

``mlx26.cli.table_decompose`` imports this at module level; :mod:`.load` and :mod:`.evaluate`
import the same tuples.
"""

FORMATS = ("auto", "html", "xlsx", "csv", "tsv", "md", "hitab-json")
RENDERS = ("xlsx", "csv", "html", "csv-indent", "md")  # how `eval` renders each AITQA table
DEFAULT_RENDERS = ("xlsx", "csv")
GOLD_FORMATS = ("aitqa", "hitab", "mlx26")
GOLD_SOURCES = ("xlsx", "html")  # the source files an mlx26 gold table is scored on
SPLITS = ("tune", "heldout")
