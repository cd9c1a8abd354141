"""Shared options and loaders of ``mlx26 spec-bench`` (stdlib + typer at module level; the core loads lazily)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from mlx26.cli._errors import InputError, require
from mlx26.cli._io import read_numbered
from mlx26.core.spec_bench.spec import EMBEDDED

PoolArg = Annotated[str, typer.Argument(help=f"Prompt file (JSON/JSONL with a category and turns/prompt/text; "
                                             f"- = stdin), or '{EMBEDDED}' for the built-in pool.",
                                        metavar="PROMPTS")]
TargetOpt = Annotated[str, typer.Option("--target", help="Target model (zoo name or folder); tiny-llama was trained "
                                        "on 128-token windows, tiny-llama-1k on 1,024.", metavar="TEXT")]
DraftOpt = Annotated[str | None, typer.Option("--draft", help="Draft model with the target's tokenizer.", metavar="TEXT")]
KOpt = Annotated[int, typer.Option("-k", "--k", help="Draft tokens per step (>= 1).", metavar="N")]
MaxTokOpt = Annotated[int, typer.Option("--max-tokens", help="New tokens per prompt.", min=1, metavar="N")]
LimitOpt = Annotated[int | None, typer.Option("--limit", help="Use only the first N prompts (after --per-category).",
                                              min=1, metavar="N")]
PerCatOpt = Annotated[int | None, typer.Option("--per-category", help="Take the first N prompts of each category.",
                                               min=1, metavar="N")]
TruncOpt = Annotated[int | None, typer.Option("--truncate-prompt-tokens", help="Keep only the last N prompt tokens "
                                              "(left truncation); without it an over-long prompt is an error.", min=1, metavar="N")]


def load_pool(source: str, per_category: int | None = None, limit: int | None = None) -> tuple[list[Any], list[Any]]:
    """(prompts, exact input ids or None per prompt) from a file, stdin or the embedded pool."""
    from mlx26.core.spec_bench import prompts as P

    if source == EMBEDDED:
        pool, ids = P.embedded_pool(), None
        records = None
    else:
        records = list(read_numbered(source, "auto", text_default="jsonl"))
        pool = P.from_records(records, "stdin" if source == "-" else source)
        ids = [r.get("input_ids") for _, r in records]
        for (row, _), given in zip(records, ids, strict=True):
            if given is not None and (not isinstance(given, list) or not all(isinstance(t, int) for t in given)):
                raise InputError(f"{source} row {row}: input_ids must be a list of integers.")
    idx = list(range(len(pool)))
    if per_category:
        seen: dict[str, int] = {}
        keep = []
        for i in idx:
            c = pool[i].category
            if seen.get(c, 0) < per_category:
                keep.append(i)
                seen[c] = seen.get(c, 0) + 1
        idx = keep
    if limit:
        idx = idx[:limit]
    return [pool[i] for i in idx], [ids[i] for i in idx] if ids else [None] * len(idx)


def need_models() -> None:
    require("torch", "torch")
    require("transformers", "spec")
