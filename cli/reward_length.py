"""``mlx26 reward length``: per-group length rewards for GRPO (SmartThinker and baselines).

Thin wrapper over ``mlx26.core.smartthinker.rewards`` (SmartThinker, ICML 2026, arXiv 2603.08000):
rows ``{group, length, correct}`` in, each row plus ``reward``, ``l_opt`` and ``alpha`` out.
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli._errors import UsageError
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    InputFormat,
    InputFormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    check_output,
    emit,
    notice,
    read_numbered,
)
from mlx26.core.smartthinker.spec import DEFAULT_LENGTH_REWARD, LENGTH_REWARDS

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)


@app.command("length")
def length_cmd(
    input: Annotated[str | None, typer.Argument(help="Rows {group, length, correct}: a file, or - for stdin.",
                                                metavar="INPUT")] = None,
    method: Annotated[str, typer.Option("--method", "-m", help=" | ".join(LENGTH_REWARDS) + ".", metavar="TEXT")
                      ] = DEFAULT_LENGTH_REWARD,
    group_key: Annotated[str, typer.Option("--group-key", help="Field naming the prompt group.", metavar="TEXT")] = "group",
    length_key: Annotated[str, typer.Option("--length-key", help="Field holding the token length.", metavar="TEXT")] = "length",
    correct_key: Annotated[str, typer.Option("--correct-key", help="Field holding correctness (bool-like).", metavar="TEXT")
                           ] = "correct",
    target_length: Annotated[float | None, typer.Option("--target-length", help="Target (l1-exact, l1-max) or "
                                                        "cap (thinkprune) in tokens.", metavar="NUMBER")] = None,
    coef: Annotated[float | None, typer.Option("--coef", help="Length coefficient of kimi / arora / l1-* "
                                               "(default: the paper's).", metavar="NUMBER")] = None,
    demo: Annotated[bool, typer.Option("--demo", help="Score the built-in example groups (no INPUT).")] = False,
    input_format: InputFormatOpt = InputFormat.auto,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Score each prompt group's responses by correctness and length; rows keep their order.

    SmartThinker: l_opt from the variances of correct vs all lengths, a penalty for correct
    responses longer than l_opt, alpha set per group so no correct response falls below the
    group mean. A group of one response gets alpha = 0 and a warning on stderr.

    \b
    Examples:
      mlx26 reward length --demo
      mlx26 reward length --demo --method kimi --format jsonl | mlx26 io convert - --format csv
      printf '{"group":1,"length":50,"correct":1}\\n{"group":1,"length":90,"correct":0}\\n' | mlx26 reward length -
      mlx26 reward length groups.jsonl --method l1-max --target-length 256
    """
    from mlx26.core.smartthinker.rewards import check_params

    check_params(method, target_length, coef)
    if demo == (input is not None):
        raise UsageError("give INPUT (a file or -) or --demo, not both and not neither.",
                         hint="mlx26 reward length --demo")
    check_output(output, force)
    from mlx26.core.smartthinker.rewards import demo_groups, score_rows

    numbered = enumerate(demo_groups(), 1) if demo else read_numbered(input, input_format, text_default="csv")
    scored = score_rows(numbered, method, group_key=group_key, length_key=length_key, correct_key=correct_key,
                        target=target_length, coef=coef)
    for warning in scored.warnings:
        notice(warning, quiet)
    emit(scored.rows, output, fmt, force=force, title=f"reward length ({method})")
