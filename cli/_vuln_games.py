"""Options and helpers of ``mlx26 vuln-games`` (cli/vuln_games.py): stdlib + typer only at module level."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from mlx26.cli._io import emit_raw, to_json
from mlx26.core.vuln_games.spec import ALGOS, GAMES, PROXY_METRICS, TOKEN_ALGOS, VARIANTS

GameOpt = Annotated[str, typer.Option("--game", help=" | ".join(GAMES) + ".", metavar="TEXT")]
VariantOpt = Annotated[str, typer.Option("--variant", help=" | ".join(VARIANTS) + ".", metavar="TEXT")]
AlgoOpt = Annotated[str, typer.Option("--algo", help=" | ".join(ALGOS) + " (lm-grpo: tiny-llama through TRL; "
                                      "tampering and self-grading).", metavar="TEXT")]
TokenAlgoOpt = Annotated[str, typer.Option("--algo", help=" | ".join(TOKEN_ALGOS) + ".", metavar="TEXT")]
AuditPOpt = Annotated[float | None, typer.Option("--audit-p", help="Self-grading audit probability in [0, 1] "
                                                 "[default: 0.05 vulnerable, 1 secure].", metavar="NUMBER")]
MetricOpt = Annotated[str, typer.Option("--metric", help="Proxy game overlap: " + " | ".join(PROXY_METRICS) + ".", metavar="TEXT")]
PlotOpt = Annotated[str | None, typer.Option("--plot", help="Also draw ER/ITP curves to this PNG (matplotlib).",
                                             metavar="PNG")]
StepsOpt = Annotated[int, typer.Option("--steps", help="Training steps.", min=0, metavar="N")]
ForcePlotOpt = Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Replace an existing --plot PNG "
                                             "or -o file.")]
ForceRunOpt = Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Replace an existing --plot PNG "
                                           "or -o file (lm-grpo: and the --out folder).")]
LrOpt = Annotated[float | None, typer.Option("--lr", help="Learning rate [default: 0.05 token policies, 1e-3 LM].", metavar="NUMBER")]


def check(name: str, value: str, choices: tuple[str, ...]) -> None:
    from mlx26.cli._errors import unknown_name

    if value not in choices:
        raise unknown_name(name, value, choices)


def stream(record: dict[str, Any]) -> None:
    emit_raw(to_json(record) + "\n")


def plot(records: list[dict[str, Any]], path: str | None, title: str, key: str = "policy") -> None:
    if path:
        from mlx26.core.vuln_games.plot import curves

        curves(records, path, title, key)


def check_plot(path: str | None, force: bool) -> None:
    from mlx26.cli._io import check_output

    if path:
        if not path.lower().endswith(".png"):
            from mlx26.cli._errors import UsageError

            raise UsageError(f"--plot writes a PNG; got {path}", "name the file *.png")
        check_output(path, force)
