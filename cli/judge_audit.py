"""``mlx26 judge-audit``: how reliable are LLM-as-a-judge safety verdicts? (Schwinn et al., arXiv 2603.06594).

Thin wrapper over ``mlx26.core.judge_audit``; the table options and loading live in
``cli/_judge_audit.py``, the ``judge`` and ``simulate`` commands in ``cli/_judge_audit_run.py``.
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _judge_audit_run
from mlx26.cli._errors import require
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
    BalanceOpt,
    CompleteOpt,
    HumanOpt,
    HumanScaleOpt,
    HumanThresholdOpt,
    IdOpt,
    InputFormatOpt,
    InputOpt,
    JudgeOpt,
    JudgeScaleOpt,
    JudgeThresholdOpt,
    PlotOpt,
    PresetOpt,
    SeedOpt,
    SimulatedOpt,
    SliceOpt,
    WideOpt,
    compact,
    labelled,
    load_table,
    need_column,
    slices,
)

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                  help="Audit LLM-judge verdicts against human labels: metrics, ASR, concordance, ReliableBench, "
                       "JudgeStressTest.")
_judge_audit_run.register(app)
A = InputFormat.auto


def _start(output, force, plot=None):
    check_output(output, force)
    if plot:
        require("matplotlib", "judge-audit")
        check_output(plot, force)


@app.command("metrics")
def metrics_cmd(ctx: typer.Context, input: InputOpt = None, simulated: SimulatedOpt = False, input_format: InputFormatOpt = A,
                preset: PresetOpt = None, id: IdOpt = None, human: HumanOpt = None, human_scale: HumanScaleOpt = "auto",
                human_threshold: HumanThresholdOpt = None, judge: JudgeOpt = None, judge_scale: JudgeScaleOpt = None,
                judge_threshold: JudgeThresholdOpt = 0.5, balance: BalanceOpt = None, complete_cases: CompleteOpt = False, seed: SeedOpt = 0,
                slice: SliceOpt = None,
                n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples for the 95% CIs.", min=0, metavar="N")] = 1000,
                min_n: Annotated[int, typer.Option("--min-n", help="Flag slices with fewer items (low_n).", min=1, metavar="N")] = 30,
                wide: WideOpt = False, plot: PlotOpt = None, output: OutputOpt = None,
                fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Per judge × slice value: accuracy, balanced accuracy, precision, recall, FPR, FNR, F1, κ, MCC, AUROC (+ CIs).

    On a terminal a compact table (judge, slices, n, accuracy [95% CI], balanced accuracy, κ, AUROC,
    F1; --wide for every column); JSON, JSONL and CSV always carry every metric with its _lo/_hi CI.
    κ, MCC and balanced accuracy follow scikit-learn on single-class slices; undefined values are null.

    \b
    Examples:
      mlx26 judge-audit metrics --simulated --slice attack --n-boot 200 --format csv
      mlx26 judge-audit metrics labels.csv --human human --judge guard=guard_score --slice attack,model
    """
    _start(output, force, plot)
    from mlx26.core.judge_audit import metrics
    from mlx26.core.judge_audit import plot as plots

    def cols(t):
        return [c for g in slices(slice, t.preset.get("slices", ())) for c in g]

    tab = load_table(ctx.params, check=lambda t: [t.column(c) for c in cols(t)], group_columns=cols)
    groups = slices(slice, tab.preset.get("slices", ()))
    records, warnings = metrics.slice_metrics(tab, groups, n_boot=n_boot, seed=seed, min_n=min_n)
    for w in warnings:
        notice(f"judge-audit: warning: {w}", quiet)
    rows, title = labelled(records, tab), "judge-audit metrics"
    if not wide:
        rows, title = compact(rows, fmt, output, title)
    emit(rows, output, fmt, force=force, title=title)
    if plot:
        plots.roc(tab, groups[-1], plot)
        notice(f"judge-audit: wrote {plot}", quiet)


@app.command("asr")
def asr_cmd(ctx: typer.Context, input: InputOpt = None, simulated: SimulatedOpt = False, input_format: InputFormatOpt = A,
            preset: PresetOpt = None, id: IdOpt = None, human: HumanOpt = None, human_scale: HumanScaleOpt = "auto",
            human_threshold: HumanThresholdOpt = None, judge: JudgeOpt = None, judge_scale: JudgeScaleOpt = None,
            judge_threshold: JudgeThresholdOpt = 0.5, balance: BalanceOpt = None, complete_cases: CompleteOpt = False, seed: SeedOpt = 0,
            by: Annotated[list[str] | None, typer.Option("--by", help="Group column (default the attack column); "
                                                         "repeat to cross.", metavar="COL")] = None,
            n_positives: Annotated[list[int] | None, typer.Option("--n-positives", help="N for P(≥1 truly harmful | "
                                                                  "N judge positives); repeat (default 1, 5, 10).",
                                                                  min=1, metavar="N")] = None,
            n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples for the 95% CIs of the "
                                                "three ASRs (0 = none).", min=0, metavar="N")] = 1000,
            output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
            quiet: QuietOpt = False) -> None:
    """Judge ASR vs human ASR per attack, precision-corrected ASR, inflation, P(≥1 truly harmful | N positives).

    \b
    Columns, per judge × --by cell of n items (TP/FP = judge positives humans do / do not confirm):
      judge_asr          judge positives / n            (+ _lo/_hi bootstrap 95% CI, --n-boot, --seed)
      human_asr          human-labelled harmful / n     (+ _lo/_hi)
      judge_minus_human  judge_asr − human_asr: the signed error (< 0 when the judge misses harms)
      precision          TP / judge positives (null without judge positives)
      corrected_asr      judge_asr × precision = TP / n, never above judge_asr (+ _lo/_hi)
      inflation          judge_asr − corrected_asr = FP / n (false positives only, never < 0)
      inflation_ratio    judge_asr / corrected_asr = 1 / precision (never < 1; null when TP = 0)
      p_any_harmful_at_N P(≥ 1 of N judge positives is truly harmful) = 1 − C(FP, N) / C(TP+FP, N)
    inflation and inflation_ratio only see false positives; when judge_asr < human_asr read
    judge_minus_human.

    \b
    Examples:
      mlx26 judge-audit asr --simulated --format csv
    """
    _start(output, force)
    from mlx26.core.judge_audit import analyses

    def groups_of(t):
        return by or [("Attack" if t.preset.get("human") == "Human_Judgement" else "attack")]

    tab = load_table(ctx.params, check=lambda t: need_column(t, groups_of(t), "--by COL", "the ASR groups"),
                     group_columns=groups_of)
    groups = groups_of(tab)
    emit(labelled(analyses.asr(tab, groups, n_positives or [1, 5, 10], n_boot=n_boot, seed=seed), tab), output, fmt,
         force=force,
         title="judge-audit asr")


@app.command("concordance")
def concordance_cmd(ctx: typer.Context, input: InputOpt = None, simulated: SimulatedOpt = False,
                    input_format: InputFormatOpt = A, preset: PresetOpt = None, id: IdOpt = None, human: HumanOpt = None,
                    human_scale: HumanScaleOpt = "auto", human_threshold: HumanThresholdOpt = None,
                    judge: JudgeOpt = None, judge_scale: JudgeScaleOpt = None, judge_threshold: JudgeThresholdOpt = 0.5,
                    balance: BalanceOpt = None, complete_cases: CompleteOpt = False, seed: SeedOpt = 0,
                    summary: Annotated[bool, typer.Option("--summary", help="One record per concordance bin (n, "
                                                          "majority and per-judge accuracy) instead of per item.")] = False,
                    bins: Annotated[int, typer.Option("--bins", help="Concordance bins for --summary.", min=1, metavar="N")] = 5,
                    output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
                    quiet: QuietOpt = False) -> None:
    """Judge Concordance per item, 1 − H₂(fraction of judges voting harmful): a label-free reliability signal.

    \b
    Examples:
      mlx26 judge-audit concordance --simulated --summary --format csv
    """
    _start(output, force)
    from mlx26.core.judge_audit import analyses

    tab = load_table(ctx.params, check=lambda t: analyses.need_judges(t, 2, "concordance"))
    rows = analyses.concordance_summary(tab, bins) if summary else analyses.concordance_records(tab)
    emit(labelled(rows, tab), output, fmt, force=force, title="judge-audit concordance")


@app.command("reliable")
def reliable_cmd(ctx: typer.Context, input: InputOpt = None, simulated: SimulatedOpt = False,
                 input_format: InputFormatOpt = A, preset: PresetOpt = None, id: IdOpt = None, human: HumanOpt = None,
                 human_scale: HumanScaleOpt = "auto", human_threshold: HumanThresholdOpt = None, judge: JudgeOpt = None,
                 judge_scale: JudgeScaleOpt = None, judge_threshold: JudgeThresholdOpt = 0.5,
                 balance: BalanceOpt = None, complete_cases: CompleteOpt = False, seed: SeedOpt = 0,
                 behavior: Annotated[str | None, typer.Option("--behavior", help="Behaviour column (default "
                                                              "'behavior').", metavar="COL")] = None,
                 k: Annotated[int | None, typer.Option("--k", help="Emit the ReliableBench items of the top k "
                                                       "behaviours instead of the k-vs-accuracy curve.", min=1, metavar="N")] = None,
                 plot: PlotOpt = None, output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
                 force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """ReliableBench: behaviours by mean judge accuracy; the curve as k falls, or the top-k items (--k).

    \b
    Examples:
      mlx26 judge-audit reliable --simulated --format csv
      mlx26 judge-audit reliable --simulated --k 10 --format jsonl
    """
    _start(output, force, plot)
    from mlx26.core.judge_audit import analyses
    from mlx26.core.judge_audit import plot as plots

    def behavior_of(t):
        return [behavior or t.preset.get("behavior", "behavior")]

    tab = load_table(ctx.params, check=lambda t: need_column(t, behavior_of(t), "--behavior COL", "the behaviours"),
                     group_columns=behavior_of)
    column = behavior_of(tab)[0]
    curve, ranked = analyses.reliable_curve(tab, column)
    if k is None:
        emit(labelled(curve, tab), output, fmt, force=force, title="judge-audit reliable")
    else:
        if k > len(ranked):
            notice(f"judge-audit: --k {k} is more than the {len(ranked)} behaviours: all {len(ranked)} kept", quiet)
        kept = set(ranked[:k])
        emit(labelled([r for r, b in zip(tab.records, tab.column(column), strict=True) if b in kept], tab),
             output, fmt, force=force)
    if plot:
        plots.reliable(curve, plot, tab.simulated)
        notice(f"judge-audit: wrote {plot}", quiet)


@app.command("stress")
def stress_cmd(ctx: typer.Context, input: InputOpt = None, simulated: SimulatedOpt = False, input_format: InputFormatOpt = A,
               preset: PresetOpt = None, id: IdOpt = None, human: HumanOpt = None, human_scale: HumanScaleOpt = "auto",
               human_threshold: HumanThresholdOpt = None, judge: JudgeOpt = None, judge_scale: JudgeScaleOpt = None,
               judge_threshold: JudgeThresholdOpt = 0.5, balance: BalanceOpt = None, complete_cases: CompleteOpt = False, seed: SeedOpt = 0,
               max_correct: Annotated[int, typer.Option("--max-correct", help="Keep items at most this many judges "
                                                        "get right.", min=0, metavar="N")] = 1,
               loo: Annotated[bool, typer.Option("--loo", help="Emit the leave-one-out Acc@0/Acc@1 table instead.")
                              ] = False,
               output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
               quiet: QuietOpt = False) -> None:
    """JudgeStressTest: the items at most one judge gets right; --loo validates it by leave-one-out.

    \b
    Examples:
      mlx26 judge-audit stress --simulated --balance attack --balance model --loo --format csv
    """
    _start(output, force)
    from mlx26.core.judge_audit import analyses

    tab = load_table(ctx.params, check=lambda t: analyses.need_judges(t, 2, "the stress test"))
    if loo:
        rows = analyses.leave_one_out(tab)
    else:
        names, correct, _ = analyses.correct_matrix(tab)
        rows = [{**tab.records[i], "n_correct": int(correct[i].sum()),
                 "correct_judges": ",".join(n for n, c in zip(names, correct[i], strict=True) if c)}
                for i in analyses.stress_items(tab, max_correct)]
        notice(f"judge-audit: stress test: {len(rows)} of {tab.n} items have ≤ {max_correct} correct judge(s)", quiet)
    emit(labelled(rows, tab), output, fmt, force=force, title="judge-audit stress")
