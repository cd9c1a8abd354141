"""Choice lists of ``mlx26 claims`` (stdlib only: imported by the CLI at module level)."""

FORMATS = ("table", "json", "jsonl", "md")
# The order is the order of the summary line.
STATUSES = ("reproduced", "reproduced in direction", "partly reproduced", "not reproduced", "not testable here")
DATA_KINDS = ("real", "tiny-model", "synthetic", "computed", "none")
