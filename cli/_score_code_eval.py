"""``mlx26 score-code eval``: the PRM on real code beside bandit and semgrep (SecCodePRM, Yu et al.).

Registered on the ``score-code`` app by :func:`register`; the science is in
``mlx26.core.score_code.realeval``. Standard library + typer at module level.
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli._errors import unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    check_output,
    emit,
    notice,
)
from mlx26.core.score_code.spec import ANALYZERS, MODELS
from mlx26.core.score_code.spec import SEGMENT_MODES as SEGMENTS


def _analyzers(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if names == ["none"]:
        return []
    for n in names:
        if n not in ANALYZERS:
            raise unknown_name("analyzer", n, (*ANALYZERS, "none"))
    return list(dict.fromkeys(names))


def eval_cmd(
    sven_dir: Annotated[str, typer.Option("--sven", help="SVEN folder holding train/ and val/ (eth-sri/sven "
                                          "data_train_val); mlx26 ships no copy.", metavar="DIR")],
    model: Annotated[str, typer.Option("--model", help="linear | transformer.", metavar="KIND")] = "linear",
    model_dir: Annotated[str | None, typer.Option("--model-dir", help="Folder from `score-code train` (default: "
                                                  "the shipped models); its manifest's aggregate/tau/threshold "
                                                  "are the operating rule.", metavar="DIR")] = None,
    stdlib_files: Annotated[int, typer.Option("--stdlib-files", help="Standard-library files sampled for the "
                                              "false-alarm rate and throughput (0 = skip).", min=0,
                                              metavar="N")] = 200,
    analyzers: Annotated[str, typer.Option("--analyzers", help="Baselines on the same inputs: bandit,semgrep "
                                           "(comma-joined) or none.", metavar="NAMES")] = "bandit,semgrep",
    segment: Annotated[str, typer.Option("--segment", help="Steps: block (the paper's) | line | logical | ast.",
                                         metavar="MODE")] = "block",
    seed: SeedOpt = 0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Evaluate a PRM on real code: SVEN test fixes, stdlib false alarms, robustness, ranking.

    One JSON object: function-level P/R/F1 (overall, per CWE), top-1 step localisation,
    ranking (fixed over vulnerable), false alarms on a seeded stdlib sample (ordinary code,
    assumed benign), verdict flips when benign helpers are prepended or locals renamed, and
    lines/s. bandit (severity ≥ medium) and semgrep (shipped local rules) see the same inputs.

    \b
    Examples:
      mlx26 score-code eval --sven ../shared/data/sven -o real.json
      mlx26 score-code eval --sven SVEN --analyzers none --stdlib-files 20 --model transformer -o real.json
    """
    if model not in MODELS:
        raise unknown_name("model", model, MODELS)
    if segment not in SEGMENTS:
        raise unknown_name("segmentation", segment, SEGMENTS)
    names = _analyzers(analyzers)
    from mlx26.core.score_code import realeval

    realeval.check_analyzers(names)  # exit 3 with the pip line before any work
    check_output(output, force)
    pairs = realeval.load_test_pairs(sven_dir)
    if model == "transformer":
        from mlx26.cli._errors import require

        require("torch", "torch")
    from mlx26.core.score_code import load_model

    m = load_model(model, model_dir)
    rule = realeval.operating_rule(model, model_dir)
    result = realeval.evaluate_real(pairs, {model: m}, {model: rule}, mode=segment, analyzers=names,
                                    stdlib_n=stdlib_files, seed=seed, progress=None if quiet else notice)
    from mlx26.core._version import __version__

    result["provenance"] = {"mlx26": __version__, "model": model, "model_dir": model_dir or "shipped",
                            "sven": sven_dir, "seed": seed, "segment": segment, "stdlib_files": stdlib_files,
                            "analyzers": names}
    emit(result, output, fmt, force=force, title="score-code eval (real code)")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
