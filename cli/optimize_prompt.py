"""``mlx26 optimize-prompt``: MR.PEA self-supervised prompt optimisation under a hard budget (reconstruction).

Thin wrapper over ``mlx26.core.optimize_prompt``: ``run`` (optimise; the trace streams to
``--out``), ``eval`` (the only command that reads labels) and ``report`` (a trace as a table).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from mlx26.cli._errors import UsageError, require, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    ForceOutOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    atomic_output,
    check_output,
    emit,
    notice,
    read_records,
    to_json,
)
from mlx26.cli._llm_options import (
    BudgetTokensOpt,
    BudgetUsdOpt,
    LedgerOpt,
    PricesOpt,
    ensure_extras,
    llm_errors,
)
from mlx26.core.optimize_prompt.spec import DEFAULT_ROUNDS, DEFAULT_VALIDATION, OPTIMIZERS, SCORERS

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                  help="MR.PEA prompt optimisation by meta-reasoning, with a hard token/USD budget (reconstruction).")

DemoOpt = Annotated[bool, typer.Option("--demo", help="Embedded default: the SIMULATED target, scripted optimiser, "
                                       "demo task, notes and held-out problems (offline).")]
TaskOpt = Annotated[str | None, typer.Option("--task", metavar="FILE", help="Task YAML (template with {input}, "
                                             "inputs, answer_format) or a GSM8K JSONL / BBH JSON file (inputs only).")]
TargetOpt = Annotated[str | None, typer.Option("--llm", envvar="MLX26_LLM", metavar="SPEC",
                                               help="The target model whose prompt is optimised (openai:URL#MODEL, "
                                                    "hf:NAME, scripted:FILE, replay:FILE, record:FILE=SPEC).")]
OptimizerLLMOpt = Annotated[str | None, typer.Option("--optimizer-llm", metavar="SPEC",
                                                     help="The optimiser/judge model [default: the --llm model].")]
ScorerOpt = Annotated[str | None, typer.Option("--scorer", help=f"Answer scorer: {', '.join(SCORERS)} "
                                               "[default: from the task's answer format].", metavar="TEXT")]


def _check_choice(kind: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise unknown_name(kind, value, choices)


def _backend(spec: str) -> Any:
    ensure_extras(spec)
    from mlx26.core.llm import get_backend

    return get_backend(spec)


def _initial_prompt(prompt_file: str | None, template: str | None) -> str | None:
    from mlx26.core.optimize_prompt.tasks import check_template

    if prompt_file and template:
        raise UsageError("give --prompt FILE or --template TEXT, not both.")
    if prompt_file:
        try:
            text = open(prompt_file, encoding="utf-8").read().rstrip("\n")
        except OSError as exc:
            raise UsageError(f"cannot read prompt file {prompt_file}: {exc.strerror}.") from None
        return check_template(text, prompt_file)
    return check_template(template, "--template") if template is not None else None


@app.command("run")
def run_cmd(
    demo: DemoOpt = False, task: TaskOpt = None, llm: TargetOpt = None, optimizer_llm: OptimizerLLMOpt = None,
    optimizer: Annotated[str, typer.Option("--optimizer", help=f"{' | '.join(OPTIMIZERS)} (SPO-, APE-style "
                                           "baselines and no optimisation run in the same harness).", metavar="TEXT")] = "mrpea",
    rounds: Annotated[int, typer.Option("--rounds", help="Most optimisation rounds.", min=0, metavar="N")] = DEFAULT_ROUNDS,
    n_validation: Annotated[int, typer.Option("--n-validation", help="Validation inputs per round.", min=1, metavar="N")]
    = DEFAULT_VALIDATION,
    n_inputs: Annotated[int, typer.Option("--n-inputs", help="Unlabelled inputs read from a data file.", min=1, metavar="N")] = 8,
    pairwise_repeats: Annotated[int, typer.Option("--pairwise-repeats", help="Pairwise judgements per input and "
                                                  "order (both orders always).", min=1, metavar="N")] = 1,
    target_max_tokens: Annotated[int, typer.Option("--target-max-tokens", help="Most tokens per target answer.",
                                                   min=1, metavar="N")] = 256,
    optimizer_max_tokens: Annotated[int, typer.Option("--optimizer-max-tokens", help="Most tokens per optimiser "
                                                      "reply.", min=1, metavar="N")] = 384,
    budget_usd: BudgetUsdOpt = None, budget_tokens: BudgetTokensOpt = None, prices: PricesOpt = None,
    ledger: LedgerOpt = None,
    estimate: Annotated[str, typer.Option("--estimate", help="Round cost estimate: worst (every call at max "
                                          "tokens; a started round always finishes) | expected (1.5 × the "
                                          "costliest round so far; more rounds fit, the last may be cut). "
                                          "The budget holds either way.", metavar="TEXT")] = "worst",
    docs: Annotated[str | None, typer.Option("--docs", metavar="DIR", help="Notes folder (.md/.txt) for BM25 "
                                             "retrieval [default with --demo: the shipped demo notes].")] = None,
    no_retrieval: Annotated[bool, typer.Option("--no-retrieval", help="Never retrieve (ablation).")] = False,
    prompt: Annotated[str | None, typer.Option("--prompt", metavar="FILE", help="Initial prompt file "
                                               "[default: the task's template].")] = None,
    template: Annotated[str | None, typer.Option("--template", help="Initial prompt text with {input}.", metavar="TEXT")] = None,
    eval_data: Annotated[str | None, typer.Option("--eval-data", metavar="FILE", help="Labelled data to measure "
                                                  "the gain after optimising (read by eval only).")] = None,
    eval_n: Annotated[int, typer.Option("--eval-n", help="Labelled records used by --eval-data.", min=1, metavar="N")] = 60,
    eval_offset: Annotated[int, typer.Option("--eval-offset", help="Skip this many labelled records first "
                                             "(keep them apart from --task inputs).", min=0, metavar="N")] = 0,
    scorer: ScorerOpt = None, seed: SeedOpt = 0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the first round's cost estimate (and whether "
                                          "the budget admits it) and exit; no call is made.")] = False,
    out: Annotated[str | None, typer.Option("--out", metavar="FILE", help="Trace JSONL: one record per round, "
                                            "then the summary (written atomically).")] = None,
    output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOutOpt = False, quiet: QuietOpt = False,
) -> None:
    """Optimise a prompt without labels; print the summary (gain, tokens_spent, usd_spent, usd_per_task).

    Each round: meta-reasoning updates the task knowledge (strategies, criteria, pitfalls) and may
    retrieve notes (BM25 over --docs); new validation inputs with self-derived references; the
    incumbent and a targeted edit answer them; pointwise and order-swapped pairwise judging; only
    winners are accepted. The budget is hard: a call whose worst case could exceed it is refused,
    and a round whose estimate exceeds what remains is not started (the first one: an error).
    With --demo every figure is SIMULATED (a rule-based target; see docs/optimize-prompt.md); its
    first round is priced at about $0.0043 / 15.9k tokens with the defaults (--dry-run prints it).

    \b
    Examples:
      mlx26 optimize-prompt run --demo --budget-usd 0.01 --format json
      mlx26 optimize-prompt run --demo --dry-run --budget-usd 0.004 --format json
      mlx26 optimize-prompt run --demo --optimizer spo --rounds 3 --out spo-trace.jsonl --force --format json
    """
    _check_choice("optimizer", optimizer, OPTIMIZERS)
    _check_choice("scorer", scorer, SCORERS)
    _check_choice("estimate", estimate, ("worst", "expected"))
    if not demo and not task:
        raise UsageError("give --task FILE (or --demo for the embedded simulated default).")
    if demo and task:
        raise UsageError("--demo brings its own task; drop --task (or drop --demo).")
    if not demo and not llm:
        raise UsageError("--task needs a target model: --llm SPEC (or set MLX26_LLM).",
                         "e.g. --llm openai:http://127.0.0.1:8000/v1#tiny-llama (mlx26 llm serve)")
    check_output(output, force)
    check_output(out, force)
    if ledger:
        check_output(ledger, True)  # a ledger file accumulates by design (one file = one budget)
    initial = _initial_prompt(prompt, template)
    from mlx26.core.llm import Ledger, PriceTable
    from mlx26.core.optimize_prompt import session
    from mlx26.core.optimize_prompt.harness import Settings

    settings = Settings(rounds=rounds, n_validation=n_validation, pairwise_repeats=pairwise_repeats,
                        target_max_tokens=target_max_tokens, optimizer_max_tokens=optimizer_max_tokens,
                        retrieval=not no_retrieval, seed=seed, estimate=estimate)
    price_table = PriceTable.load(prices) if prices else (session.demo_prices() if demo else PriceTable.load(None))
    book = Ledger(ledger, prices=price_table, budget_usd=budget_usd, budget_tokens=budget_tokens)
    with llm_errors():
        setup = _setup(demo, task, llm, optimizer_llm, docs, no_retrieval, eval_data, eval_n, eval_offset,
                       n_inputs, seed)
        if dry_run:
            emit(session.dry_run(setup, optimizer, settings, book, initial=initial), output, fmt, force=force,
                 title="optimize-prompt run --dry-run")
            return
        if setup.simulated:
            notice("optimize-prompt: SIMULATED target and scripted optimiser: figures show the loop works, "
                   "not that it helps a real model.", quiet)
        if out:
            with atomic_output(out, force) as handle:
                result = session.run_session(setup, optimizer, settings, book, initial=initial, scorer=scorer,
                                             on_round=lambda r: _trace(handle, r, quiet))
                handle.write(to_json(result) + "\n")
        else:
            result = session.run_session(setup, optimizer, settings, book, initial=initial, scorer=scorer,
                                         on_round=lambda r: _trace(None, r, quiet))
    emit(result, output, fmt, force=force, title="optimize-prompt run")


def _trace(handle: Any, record: dict[str, Any], quiet: bool) -> None:
    if handle is not None:
        handle.write(to_json(record) + "\n")
        handle.flush()
    cost = record.get("cost") or {}
    state = "aborted" if record.get("aborted") else "accepted" if record.get("accepted") else "kept incumbent"
    notice(f"optimize-prompt: round {record.get('round')}: {state}; {cost.get('tokens', 0)} tokens, "
           f"${cost.get('usd', 0):.6f}", quiet)


def _setup(demo: bool, task: str | None, llm: str | None, optimizer_llm: str | None, docs: str | None,
           no_retrieval: bool, eval_data: str | None, eval_n: int, eval_offset: int, n_inputs: int, seed: int):
    from mlx26.core.optimize_prompt import session
    from mlx26.core.optimize_prompt.tasks import load_labelled, load_task

    if demo:
        if not no_retrieval and docs is None:
            require("rank_bm25", "optimize-prompt")
        setup = session.demo_setup(seed, retrieval=not no_retrieval and docs is None)
        if llm:  # a real model on the demo task: the problems and their answers are generated, not simulated
            setup.target = _backend(llm)
            setup.optimizer = _backend(optimizer_llm) if optimizer_llm else setup.target
            setup.simulated = False
            setup.data_label = f"generated demo problems (synthetic), target {llm}"
    else:
        assert task is not None and llm is not None
        target = _backend(llm)
        setup = session.Setup(load_task(task, n_inputs=n_inputs), target,
                              _backend(optimizer_llm) if optimizer_llm else target, data_label=task)
    if docs and not no_retrieval:
        require("rank_bm25", "optimize-prompt")
        from mlx26.core.optimize_prompt.retrieval import Corpus

        setup.corpus = Corpus.from_folder(docs)
    if eval_data:
        setup.eval_data = load_labelled(eval_data, limit=eval_n, offset=eval_offset)
        setup.data_label = f"{setup.data_label}; eval {eval_data} [{eval_offset}:{eval_offset + len(setup.eval_data)}]"
    return setup


@app.command("eval")
def eval_cmd(
    demo: DemoOpt = False,
    prompt: Annotated[str | None, typer.Option("--prompt", metavar="FILE", help="Prompt file with {input}.")] = None,
    template: Annotated[str | None, typer.Option("--template", help="Prompt text with {input}.", metavar="TEXT")] = None,
    data: Annotated[str | None, typer.Option("--data", metavar="FILE", help="Labelled GSM8K JSONL, BBH JSON or "
                                             "JSON/JSONL records with input + target/answer/label.")] = None,
    scorer: ScorerOpt = None, llm: TargetOpt = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Evaluate the first N records.", min=1, metavar="N")] = None,
    offset: Annotated[int, typer.Option("--offset", help="Skip this many records first.", min=0, metavar="N")] = 0,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Most tokens per answer.", min=1, metavar="N")] = 256,
    seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Accuracy of one prompt on labelled data (the only command that reads labels).

    \b
    Examples:
      mlx26 optimize-prompt eval --demo --template "Q: {input}\\nA:" --format json
    """
    _check_choice("scorer", scorer, SCORERS)
    check_output(output, force)
    text = _initial_prompt(prompt, template)
    if text is None:
        raise UsageError("give the prompt: --prompt FILE or --template TEXT.")
    if not demo and not data:
        raise UsageError("give --data FILE (labelled), or --demo for the simulated held-out problems.")
    if not demo and not llm:
        raise UsageError("--data needs the target model: --llm SPEC (or set MLX26_LLM).")
    from mlx26.core.optimize_prompt import simulator
    from mlx26.core.optimize_prompt.harness import evaluate_prompt
    from mlx26.core.optimize_prompt.tasks import infer_format, load_labelled

    with llm_errors():
        if data:
            items = load_labelled(data, limit=limit, offset=offset)
            fmt_name = infer_format(data, tuple(i.input for i in items[:20]))
        else:
            items = simulator.demo_eval(limit or 60, seed)[offset:]
            fmt_name = "number"
        backend = _backend(llm) if llm else simulator.SimulatedTarget(seed)
        result = evaluate_prompt(fmt_name, text, items, backend, max_tokens=max_tokens, seed=seed, scorer=scorer)
    label = data or ("generated demo problems (synthetic)" if llm else "SIMULATED target on generated demo problems")
    emit({"data": label, "model": backend.model, "scorer": scorer or fmt_name, **result},
         output, fmt, force=force, title="optimize-prompt eval")
    if not llm and demo:
        notice("optimize-prompt: SIMULATED target (demo).", quiet)


@app.command("report")
def report_cmd(
    trace: Annotated[str, typer.Argument(help="Trace JSONL written by `run --out`, or - for stdin.", metavar="TRACE")],
    output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, quiet: QuietOpt = False, force: ForceOpt = False,
) -> None:
    """One row per round of a trace (accepted, scores, pairwise tally, tokens, $) and the TOTAL row.

    \b
    Examples:
      mlx26 optimize-prompt run --demo --rounds 2 --out demo-trace.jsonl --force --format json
      mlx26 optimize-prompt report demo-trace.jsonl --format csv
    """
    check_output(output, force)
    from mlx26.core.optimize_prompt.report import rows

    emit(rows(read_records(trace, "jsonl")), output, fmt, force=force, title="optimize-prompt report")
