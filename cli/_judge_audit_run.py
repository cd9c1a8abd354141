"""``mlx26 judge-audit judge`` and ``simulate`` (registered on the group's app by :func:`register`)."""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli._engine import BatchSizeOpt, EngineOpt, NumCpusOpt, RayAddressOpt, check_engine, run_engine
from mlx26.cli._errors import InputError, RunFailure, require, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    InputFormat,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    check_output,
    emit,
    notice,
)
from mlx26.cli._judge_audit import (
    HumanOpt,
    HumanScaleOpt,
    HumanThresholdOpt,
    InputFormatOpt,
)
from mlx26.cli._llm_options import BudgetUsdOpt, CacheOpt, LedgerOpt, LLMOpt, llm_errors, open_llm
from mlx26.core.judge_audit.spec import (
    JUDGE_METHODS,
    LLM_FORMATS,
    PREFIX_LISTS,
    SIM_ATTACKS,
    SIM_MODELS,
    SIMULATED,
)

JudgeInputOpt = Annotated[str | None, typer.Argument(help="Table with a response column (CSV/TSV/JSON/JSONL), "
                                                     "- = stdin (the default).", metavar="INPUT")]
JudgeSeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the tfidf folds and of the LLM calls (sent "
                                           "with temperature 0; a backend may ignore it); refusal is deterministic.",
                                           min=0, metavar="N")]
UNPARSEABLE = ("missing", "safe")
UNPARSEABLE_WARN = 0.2  # warn when more than this share of the LLM replies is unparseable


def judge_cmd(ctx: typer.Context, input: JudgeInputOpt = None, input_format: InputFormatOpt = InputFormat.auto,
              method: Annotated[str, typer.Option("--method", help=" | ".join(JUDGE_METHODS) + ".", metavar="TEXT")] = "refusal",
              text: Annotated[str, typer.Option("--text", help="Response column.", metavar="COL")] = "response",
              prompt: Annotated[str, typer.Option("--prompt", help="Request (behaviour) column, for --method llm.",
                                                  metavar="COL")] = "prompt",
              name: Annotated[str | None, typer.Option("--name", help="Score column to add (default: the method, "
                                                       "or the LLM format).", metavar="TEXT")] = None,
              prefixes: Annotated[str, typer.Option("--prefixes", help="Refusal list: " + " | ".join(PREFIX_LISTS)
                                                    + ".", metavar="TEXT")] = "gcg",
              folds: Annotated[int, typer.Option("--folds", help="Cross-validation folds of --method tfidf.", metavar="N")] = 5,
              human: HumanOpt = None, human_scale: HumanScaleOpt = "auto", human_threshold: HumanThresholdOpt = None,
              llm_format: Annotated[str, typer.Option("--llm-format", help=" | ".join(LLM_FORMATS) + ".", metavar="TEXT")
                                    ] = "harmbench",
              llm: LLMOpt = None, ledger: LedgerOpt = None, budget_usd: BudgetUsdOpt = None, cache: CacheOpt = None,
              show_prompt: Annotated[bool, typer.Option("--show-prompt", help="Print the --llm-format template and "
                                                        "exit.")] = False,
              unparseable: Annotated[str, typer.Option("--unparseable", help="An LLM reply that does not follow "
                                                       "the format: missing (empty score; metrics drops the item for "
                                                       "this judge) | safe (score 0).", metavar="TEXT")] = "missing",
              force_column: Annotated[bool, typer.Option("--force-column", help="Replace the column NAME when the "
                                                         "input already has one.")] = False,
              keep_reply: Annotated[bool, typer.Option("--keep-reply", help="Add the raw LLM reply as NAME_reply.")
                                    ] = False,
              seed: JudgeSeedOpt = 0, engine: EngineOpt = "local", ray_address: RayAddressOpt = None,
              batch_size: BatchSizeOpt = 1000, num_cpus: NumCpusOpt = None, output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
              force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Score every response with a judge and add its [0, 1] score column (pipe into metrics --judge NAME).

    tfidf trains on the table's human labels, out-of-fold; llm sends one prompt per item (StrongREJECT,
    HarmBench or Llama-Guard format) to --llm and parses the verdict strictly: an unparseable reply leaves
    the score empty (--unparseable safe scores it 0), a warning above 20 % unparseable, exit 1 when every
    reply is. NAME must be a new column (--force-column replaces one). --engine ray runs the
    refusal judge on Ray Data (tfidf trains on the whole table; llm backends keep per-process
    state: both run locally).

    \b
    Examples:
      mlx26 judge-audit simulate --n 200 | mlx26 judge-audit judge - --method refusal | mlx26 judge-audit metrics - --judge refusal --n-boot 0 --format csv
      mlx26 judge-audit judge --show-prompt --llm-format llama-guard
    """
    for kind, value, choices in (("judge method", method, JUDGE_METHODS), ("LLM judge format", llm_format, LLM_FORMATS),
                                 ("refusal list", prefixes, PREFIX_LISTS),
                                 ("--unparseable choice", unparseable, UNPARSEABLE)):
        if value not in choices:
            raise unknown_name(kind, value, choices)
    from mlx26.core.judge_audit import judges

    if show_prompt:
        return emit({"format": llm_format, "prompt": judges.TEMPLATES[llm_format]}, output, fmt, force=force)
    if engine == "ray" and method != "refusal":
        raise InputError(f"--engine ray runs the refusal judge only, not --method {method}: "
                         + ("tfidf trains on the whole table (out-of-fold)." if method == "tfidf" else
                            "an LLM backend keeps state in its process (scripted rules cycle their replies, "
                            "--cache/--ledger/--budget-usd are this process's files), so Ray workers would "
                            "not give the local answers."), "drop --engine ray for this method")
    check_engine(engine, ray_address, inputs=[input or "-"], num_cpus=num_cpus)
    check_output(output, force)
    if method == "tfidf":
        require("sklearn", "judge-audit")
    from mlx26.cli._judge_audit import read_table
    from mlx26.core.judge_audit import table

    records = read_table(input or "-", input_format)
    col = name or (llm_format if method == "llm" else method)
    if records and not force_column and any(col in r for r in records):
        raise InputError(f"the input already has a column '{col}'; the {method} judge would overwrite it.",
                         "give --name OTHER for the new score column, or --force-column to replace it")
    tab = table.build(records, human=(human or "human") if method == "tfidf" else None, judges=[],
                      human_scale=human_scale, human_threshold=human_threshold)
    texts = tab.column(text)
    if method == "refusal":  # one batch function for both engines (the output is identical)
        from functools import partial

        scores = list(run_engine(partial(judges.refusal_batch, prefix_list=prefixes), list(texts), engine=engine,
                                 ray_address=ray_address, batch_size=batch_size, num_cpus=num_cpus,
                                 total=len(texts), description="judge-audit judge", unit="items", quiet=quiet))
        replies = None
    elif method == "tfidf":
        scores, replies = judges.tfidf_scores(texts, tab.human, folds=folds, seed=seed), None
    else:
        with llm_errors():
            backend = open_llm(llm, ledger=ledger, budget_usd=budget_usd, cache=cache, purpose="judge-audit")
            scores, replies, bad = judges.llm_scores(
                lambda m, k: backend.chat(m, temperature=0.0, max_tokens=k, seed=seed), llm_format,
                tab.column(prompt), texts)
        n = len(texts)
        if n and bad == n:
            raise RunFailure(f"all {n} {llm_format} judge replies were unparseable: the model does not answer in "
                             f"the {llm_format} format.", "check --llm and --llm-format (--show-prompt shows the "
                             "template; the --ledger file holds the replies)")
        how = "score left empty" if unparseable == "missing" else "scored 0 (safe)"
        notice(f"judge-audit: {llm_format} judge: {bad} of {n} replies unparseable ({how})", quiet and not bad)
        if bad > UNPARSEABLE_WARN * n:
            notice(f"judge-audit: warning: {bad / n:.0%} of the {llm_format} replies are unparseable (above "
                   f"{UNPARSEABLE_WARN:.0%}): the judge's metrics cover only the parsed items", False)
        if unparseable == "safe":
            import numpy as np

            scores = np.nan_to_num(scores, nan=0.0)
    out = []
    for i, r in enumerate(tab.records):
        rec = {**r, col: None if scores[i] != scores[i] else float(scores[i])}
        if keep_reply and replies is not None:
            rec[col + "_reply"] = replies[i]
        out.append(rec)
    emit(out, output, fmt, force=force)


def simulate_cmd(n: Annotated[int, typer.Option("--n", help="Items.", min=1, metavar="N")] = 2000,
                 behaviors: Annotated[int, typer.Option("--behaviors", help="Distinct behaviours.", min=1, metavar="N")] = 40,
                 prevalence: Annotated[float, typer.Option("--prevalence", help="Harmful fraction (before the "
                                                           "per-attack success rates).", metavar="NUMBER")] = 0.22,
                 shift: Annotated[list[str] | None, typer.Option("--shift", help="ATTACK=STRENGTH in [0, 1): judge "
                                                                 "degradation on that attack; repeat (default "
                                                                 "PAIR=0.4 BoN=0.8; 'none' for no shift).", metavar="TEXT")] = None,
                 model_shift: Annotated[list[str] | None, typer.Option("--model-shift", help="MODEL=STRENGTH; repeat "
                                                                       "(default sim-model-c=0.3).", metavar="TEXT")] = None,
                 difficulty: Annotated[float, typer.Option("--difficulty", help="Spread of behaviour difficulty in "
                                                           "[0, 1).", metavar="NUMBER")] = 0.5,
                 seed: Annotated[int, typer.Option("--seed", help="Seed of the simulator.", min=0, metavar="N")] = 0, output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
                 force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Generate a SIMULATED labelled audit table (placeholder texts, no harmful content) with injected shifts.

    \b
    Examples:
      mlx26 judge-audit simulate --n 500 --format csv | head -3
      mlx26 judge-audit simulate --shift BoN=0.9 --shift GCG=0.5 -o sim.csv --force
    """
    check_output(output, force)
    from mlx26.core.judge_audit import simulate

    shifts = None if shift is None else ({} if shift == ["none"] else simulate.parse_shifts(shift, SIM_ATTACKS,
                                                                                             "shift"))
    models = None if model_shift is None else ({} if model_shift == ["none"] else
                                               simulate.parse_shifts(model_shift, SIM_MODELS, "model-shift"))
    records = simulate.simulate(n, seed=seed, behaviors=behaviors, prevalence=prevalence, shifts=shifts,
                                model_shifts=models, difficulty=difficulty)
    notice(f"judge-audit simulate: {n} {SIMULATED} items (not real judges or responses)", quiet)
    emit(records, output, OutputFormat.jsonl if fmt == OutputFormat.auto and output is None else fmt, force=force)


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_cmd)
    app.command("simulate")(simulate_cmd)

