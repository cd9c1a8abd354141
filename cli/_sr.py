"""Shared options and the data loader of ``mlx26 sr`` (registered by cli/sr.py)."""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli._errors import UsageError, require
from mlx26.cli._io import notice, parse_number
from mlx26.core.sr.spec import DEFAULT_MODEL, PARSIMONY

ModelOpt = Annotated[str, typer.Option("--model", help="Shipped model name (tiny) or a folder from 'sr train'.",
                                       metavar="NAME|DIR")]
SamplerOpt = Annotated[str, typer.Option("--sampler", help="model: the decoder proposes skeletons; prior: the "
                                         "training prior does (ablation).", metavar="TEXT")]
CandOpt = Annotated[int, typer.Option("--candidates", help="Skeletons sampled per problem.", min=1, metavar="N")]
OpsOpt = Annotated[list[str] | None, typer.Option("--operators", help="Allowed operator (repeatable; default all: "
                                                  "+ - * / pow neg inv pow2 pow3 sqrt exp log sin cos).",
                                                  metavar="OP")]
MaxConstOpt = Annotated[int, typer.Option("--max-constants", help="Most free constants per candidate.", min=0, metavar="N")]
ParsOpt = Annotated[float, typer.Option("--parsimony", help="λ in log10(FVU) + λ·length.", min=0.0, metavar="NUMBER")]
RestartsOpt = Annotated[int, typer.Option("--restarts", help="Random LM restarts besides all-ones.", min=0, metavar="N")]
DEFAULTS = {"model": DEFAULT_MODEL, "parsimony": PARSIMONY}


def deps() -> None:
    require("torch", "sr")
    require("scipy", "sr")


def operators(ops: list[str] | None) -> tuple[str, ...] | None:
    if not ops:
        return None
    from mlx26.core.sr.sampler import check_operators

    return check_operators(ops)


def sampler(name: str) -> str:
    from mlx26.core.sr.spec import SAMPLERS

    if name not in SAMPLERS:
        from mlx26.cli._errors import unknown_name

        raise unknown_name("sampler", name, SAMPLERS)
    return name


def load_model(name: str, which: str):
    if which != "model":
        return None
    from mlx26.core.sr.train import load

    model, _ = load(name)
    return model


def read_table(path: str, target: str, xs: list[str] | None, input_format, quiet: bool):
    """(X, y, columns, dropped) from a CSV/TSV/JSON(L) file: columns by name, NaN rows dropped."""
    import numpy as np
    from mlx26.cli._io import read_records

    records = list(read_records(path, input_format))
    if not records:
        raise UsageError(f"{path}: no rows")
    names = list(records[0])
    if target not in names:
        from mlx26.cli._errors import unknown_name

        raise unknown_name("column", target, names)
    cols = list(xs) if xs else [c for c in names if c != target]
    for c in cols:
        if c not in names:
            from mlx26.cli._errors import unknown_name

            raise unknown_name("column", c, names)
    if target in cols:
        raise UsageError(f"the target column {target!r} cannot also be an input", "drop it from --x")
    if not cols:
        raise UsageError("no input columns", "name them with --x")

    def num(v):
        p = parse_number(v)
        if p is None and isinstance(v, str) and v.strip().lower() in ("inf", "+inf", "-inf", "infinity"):
            return float(v)
        return float("nan") if p is None else float(p)

    M = np.array([[num(r.get(c)) for c in [*cols, target]] for r in records], dtype=float)
    if not xs:  # inputs chosen for the user: leave out columns with no number at all (ids, names, flags)
        text = [j for j, c in enumerate(cols) if np.isnan(M[:, j]).all()]
        if text and len(text) < len(cols):
            notice(f"sr fit: left out non-numeric column(s) {', '.join(cols[j] for j in text)} (choose inputs "
                   f"with --x)", quiet)
            keep = [j for j in range(len(cols)) if j not in text]
            M = M[:, [*keep, len(cols)]]
            cols = [cols[j] for j in keep]
    bad = np.isnan(M).any(axis=1)
    dropped = int(bad.sum())
    if dropped:
        notice(f"sr fit: dropped {dropped} of {len(M)} rows with a missing or non-numeric value", quiet)
    M = M[~bad]
    if len(M) == 0:
        empty = [c for j, c in enumerate([*cols, target]) if np.isnan(M[:, j]).all()]
        raise UsageError(f"{path}: every row has a missing value" +
                         (f" (column(s) {', '.join(empty)} hold no number)" if empty else ""),
                         "choose numeric inputs with --x" if empty else None)
    return M[:, :-1], M[:, -1], cols, dropped


def require_baseline(name: str) -> None:
    require({"pyoperon": "pyoperon.sklearn", "gplearn": "gplearn.genetic"}[name], "sr-bench")
