"""``mlx26 select-batch``: PartitionSel cross-domain minibatch selection (Agrawal et al., ICML 2026).

Thin wrapper over ``mlx26.core.select_batch``. ``mlx26 select-batch --pool …`` is short for
``mlx26 select-batch run --pool …`` (see ``DEFAULT_SUBCOMMANDS`` in main.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli._errors import InputError, UsageError, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    ConfigOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    PrintConfigOpt,
    QuietOpt,
    RecordStream,
    SeedOpt,
    check_output,
    emit,
    notice,
    print_config_requested,
    to_json,
    write_text,
)
from mlx26.cli._plot import ForcePlotOpt, PlotOpt, check_plot, curves, tee
from mlx26.core.select_batch.spec import (
    BUDGET_MODES,
    BUDGETED,
    FEATURE_PATHS,
    GRAD_PARAMS,
    METHODS,
    TRAIN_BUDGET_MODES,
)

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)

MethodOpt = Annotated[str, typer.Option("--method", help=" | ".join(METHODS) + ".", metavar="TEXT")]
ModelOpt = Annotated[str, typer.Option("--model", help="A zoo NAME (mlx26 zoo list) or a model folder.",
                                       metavar="MODEL")]
BudgetModeOpt = Annotated[str, typer.Option("--budget-mode", help=" | ".join(BUDGET_MODES) + " | a JSON file "
                                            "{domain: k} (user budgets).", metavar="MODE|FILE")]
TrainBudgetModeOpt = Annotated[str, typer.Option("--budget-mode", help=" | ".join(TRAIN_BUDGET_MODES) + " | a JSON "
                                                 "file {domain: k} (user budgets); curriculum adapts the budgets "
                                                 "each step.", metavar="MODE|FILE")]
GradParamsOpt = Annotated[str, typer.Option("--grad-params", help="Gradient features of: last-layer (LM head), "
                                            "last-block, lora (peft adapters on the last block).", metavar="TEXT")]
ProjDimOpt = Annotated[int, typer.Option("--proj-dim", help="CountSketch dimension of the features (0 = none).",
                                         min=0, metavar="N")]
FeaturesOpt = Annotated[str, typer.Option("--features", help="How per-example gradients are computed: ghost "
                                          "(closed form from one no-grad forward; last-layer only), vmap (exact "
                                          "per-example backward), auto (ghost for last-layer, else vmap).", metavar="TEXT")]
SeqLenOpt = Annotated[int, typer.Option("--seq-len", help="Tokens per example (longer ones are cut).", min=2, metavar="N")]
EtaOpt = Annotated[float, typer.Option("--eta", help="Learning rate η of the utility (features are unit-norm).", metavar="NUMBER")]
RandomizedOpt = Annotated[bool, typer.Option("--randomized", help="Draw each pick from the per-domain "
                                             "shortlists instead of taking the best.")]
SummaryOpt = Annotated[str | None, typer.Option("--summary", help="Also write the summary as JSON here.",
                                                metavar="FILE")]


def _check(method: str, grad_params: str, features: str = "auto") -> None:
    if method not in METHODS:
        raise unknown_name("method", method, METHODS)
    if grad_params not in GRAD_PARAMS:
        raise unknown_name("gradient parameter set", grad_params, GRAD_PARAMS)
    if features not in FEATURE_PATHS:
        raise unknown_name("feature path", features, FEATURE_PATHS)
    if features == "ghost" and grad_params != "last-layer":
        raise UsageError(f"--features ghost needs --grad-params last-layer, not '{grad_params}'.")


def _check_numbers(eta: float, proj_dim: int) -> None:
    """Validate before any model load or output (the core checks again, later)."""
    import math

    if not (math.isfinite(eta) and 0 < eta <= 1e6):
        raise UsageError(f"--eta must be a positive number ≤ 1e6 (features are unit-norm), got {eta}.")
    if proj_dim == 1 or proj_dim < 0:
        raise UsageError(f"--proj-dim must be 0 (no projection) or ≥ 2, got {proj_dim}.")


def _check_budget_mode(method: str, budget_mode: str) -> None:
    if method not in BUDGETED and budget_mode != "proportional":  # the default
        raise UsageError(f"--budget-mode applies to {', '.join(BUDGETED[:-1])} and {BUDGETED[-1]}; {method} "
                         "ignores domains, so it would be silently unused.")


def _check_outputs(output: str | None, summary: str | None, force: bool) -> None:
    from pathlib import Path

    check_output(output, force)
    if summary == "-" and output in (None, "-"):
        raise UsageError("--summary - would mix the summary into the records on stdout.",
                         hint="give --summary a file, or the records -o FILE")
    if summary not in (None, "-"):
        check_output(summary, force)
        if output not in (None, "-") and Path(output).absolute() == Path(summary).absolute():
            raise UsageError("-o and --summary name the same file; the summary would replace the records.")


def _items(path: str, what: str) -> list:
    from mlx26.core.select_batch.data import parse_rows

    source = RecordStream(path)
    return parse_rows(iter(source), source.name, need_domain=what == "pool")


def _lines(path: str, what: str) -> list[str]:
    """One label per line; a blank line in the middle would shift every later label, so it is an error."""
    from pathlib import Path

    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:  # its args would dump the whole file into the hint
        raise UsageError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from None
    lines = [line.strip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if "" in lines:
        raise UsageError(f"{what} {path} line {lines.index('') + 1} is empty; give one label per row.")
    return lines


def _npy(path: str, what: str):
    import numpy as np

    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise UsageError(f"{what} {path}: not a .npy array ({' '.join(str(exc).split())}).") from None
    if not isinstance(array, np.ndarray):  # an .npz archive
        array.close()
        raise UsageError(f"{what} {path}: an .npz archive; give a single .npy array.")
    if array.dtype.kind not in "biuf":
        raise UsageError(f"{what} {path}: holds {array.dtype} values; give a numeric .npy array.")
    return array


@app.command("run")
def run(
    ctx: typer.Context,
    budget: Annotated[int, typer.Option("--budget", "-B", help="Minibatch size B to select.", min=1, metavar="N")],
    pool: Annotated[str | None, typer.Option("--pool", help="Pool rows {id, domain, text} (JSONL/CSV/JSON); - = stdin.",
                                        metavar="FILE")] = None,
    val: Annotated[str | None, typer.Option("--val", help="Validation rows {text[, domain, id]}.", metavar="FILE")] = None,
    grads: Annotated[str | None, typer.Option("--grads", help="Precomputed pool features (N × d .npy).",
                                         metavar="G.npy")] = None,
    domains: Annotated[str | None, typer.Option("--domains", help="Domain of each --grads row, one a line.",
                                           metavar="FILE")] = None,
    val_grads: Annotated[str | None, typer.Option("--val-grads", help="Validation features (M × d .npy).",
                                             metavar="V.npy")] = None,
    ids: Annotated[str | None, typer.Option("--ids", help="Id of each --grads row, one a line (default: row number).",
                                       metavar="FILE")] = None,
    budget_mode: BudgetModeOpt = "proportional",
    method: MethodOpt = "partitionsel",
    model: ModelOpt = "tiny-llama",
    grad_params: GradParamsOpt = "last-layer",
    proj_dim: ProjDimOpt = 512,
    features: FeaturesOpt = "auto",
    seq_len: SeqLenOpt = 64,
    eta: EtaOpt = 0.1,
    randomized: RandomizedOpt = False,
    seed: SeedOpt = 0,
    summary: SummaryOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    config: ConfigOpt = None,
    print_config: PrintConfigOpt = False,
) -> None:
    """Select a minibatch of B pool items under per-domain budgets; writes {id, domain, weight, rank}.

    Features come from texts (--pool, --val, --model) or precomputed arrays (--grads,
    --domains, --val-grads). The summary (utility, counts, conflicting pairs, timings) goes to
    stderr, or as JSON to --summary FILE. NaN/Inf and all-zero gradient rows are dropped and
    counted; every other inconsistency is an error (exit 2) before anything is written.

    \b
    Examples:
      mlx26 select-batch --pool <(mlx26 select-batch demo-data --n 60) --val <(mlx26 select-batch demo-data --split val --n 9) --budget 8
      mlx26 select-batch --grads G.npy --domains domains.txt --val-grads V.npy --budget 16 --method independent
    """
    if print_config_requested(ctx, print_config):
        return
    _check(method, grad_params, features)
    texts, arrays = pool is not None or val is not None, grads is not None or val_grads is not None
    if texts == arrays or (texts and (pool is None or val is None)) or (
            arrays and (grads is None or val_grads is None or domains is None)):
        raise UsageError("give either --pool and --val (texts) or --grads, --domains and --val-grads (features).")
    if pool == "-" and val == "-":
        raise UsageError("--pool and --val cannot both read stdin.")
    _check_numbers(eta, proj_dim)
    _check_budget_mode(method, budget_mode)
    _check_outputs(output, summary, force)
    from mlx26.core.select_batch.budgets import parse_budget_mode
    from mlx26.core.select_batch.pipeline import select_from_features, select_from_texts

    mode = parse_budget_mode(budget_mode)
    if pool is not None and val is not None:
        records, info = select_from_texts(_items(pool, "pool"), _items(val, "validation"), budget, mode, method,
                                          model=model, grad_params=grad_params, proj_dim=proj_dim, seq_len=seq_len,
                                          eta=eta, seed=seed, randomized=randomized, features=features)
    else:
        assert grads is not None and val_grads is not None and domains is not None
        G, V, labels = _npy(grads, "--grads"), _npy(val_grads, "--val-grads"), _lines(domains, "--domains")
        names = _lines(ids, "--ids") if ids else [str(i) for i in range(len(labels))]
        records, info, _ = select_from_features(G, labels, names, V, budget, mode, method, eta=eta, seed=seed,
                                                randomized=randomized)
    emit(records, output, fmt, force=force, title=f"select-batch ({method})")
    if summary:
        write_text(to_json(info, indent=2) + "\n", summary, force=force)
    counts = ", ".join(f"{d} {k}" for d, k in info["counts"].items())
    notice(f"select-batch: {method} picked {info['size']} of {info['pool']} ({counts}); utility "
           f"{info['utility']:.6g}; {info['conflicting_pairs']} conflicting pairs; dropped {info['dropped_rows']} "
           f"pool and {info.get('dropped_val_rows', 0)} validation rows; selection {info['selection_s']:.3g} s" + (f", features {info['features_s']:.3g} s"
                                                             if "features_s" in info else ""), quiet)


@app.command("train")
def train(
    ctx: typer.Context,
    model: ModelOpt = "tiny-llama",
    data: Annotated[str | None, typer.Option("--data", help="Pool rows {id, domain, text}; default: the demo mix.",
                                        metavar="FILE")] = None,
    val: Annotated[str | None, typer.Option("--val", help="Validation rows; default: the demo validation mix.",
                                       metavar="FILE")] = None,
    test: Annotated[str | None, typer.Option("--test", help="Optional held-out rows, scored like --val but never "
                                             "used for selection.", metavar="FILE")] = None,
    method: MethodOpt = "partitionsel",
    steps: Annotated[int, typer.Option("--steps", help="Optimizer steps.", min=1, metavar="N")] = 20,
    batch: Annotated[int, typer.Option("--batch", help="Selected minibatch size B.", min=1, metavar="N")] = 8,
    buffer: Annotated[int, typer.Option("--buffer", help="Candidates per step = batch × buffer.", min=1, metavar="N")] = 8,
    lr: Annotated[float, typer.Option("--lr", help="AdamW learning rate.", metavar="NUMBER")] = 3e-4,
    budget_mode: TrainBudgetModeOpt = "proportional",
    grad_params: GradParamsOpt = "last-layer",
    proj_dim: ProjDimOpt = 512,
    features: FeaturesOpt = "auto",
    refresh: Annotated[int, typer.Option("--refresh", help="Reuse a candidate's features for R steps and "
                                         "recompute the anchors every R steps (1 = fresh every step).", min=1, metavar="N")] = 1,
    reservoir: Annotated[int, typer.Option("--reservoir", help="Amortised selection: unselected candidates wait "
                                           "with their features for up to K steps; each step draws only enough new "
                                           "ones to refill the window (0 = off: a new window every step).",
                                           min=0, metavar="K")] = 0,
    anchor_every: Annotated[int, typer.Option("--anchor-every", help="Recompute the validation anchors' features "
                                              "every N steps (0 = every --refresh / --reservoir steps).", min=0,
                                              metavar="N")] = 0,
    curriculum_lambda: Annotated[float, typer.Option("--curriculum-lambda", help="--budget-mode curriculum: "
                                                     "b_c = B/C − (B/λ)·z_c, z the standardised per-domain utility of "
                                                     "the last selection (smaller λ moves budget harder).",
                                                     metavar="NUMBER")] = 1.0,
    feature_len: Annotated[int, typer.Option("--feature-len", help="Compute the gradient features on the first T "
                                             "tokens only (0 = the whole --seq-len); training keeps --seq-len.",
                                             min=0, metavar="T")] = 0,
    seq_len: SeqLenOpt = 64,
    eta: EtaOpt = 0.1,
    randomized: RandomizedOpt = False,
    weighted: Annotated[bool, typer.Option("--weighted", help="Weight the loss by the selection weights.")] = False,
    eval_every: Annotated[int, typer.Option("--eval-every", help="Validation loss every N steps.", min=1, metavar="N")] = 1,
    seed: SeedOpt = 0,
    checkpoint: Annotated[str | None, typer.Option("--checkpoint", help="On Ctrl-C/SIGTERM save the run here "
                                                   "(then exit 130) for --resume.", metavar="FILE")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run saved in --checkpoint with its stored "
                                         "options; the whole log is written again.")] = False,
    summary: SummaryOpt = None,
    plot: PlotOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForcePlotOpt = False,
    quiet: QuietOpt = False,
    config: ConfigOpt = None,
    print_config: PrintConfigOpt = False,
) -> None:
    """Fine-tune a zoo model, selecting every minibatch from batch × buffer candidates; logs JSONL per step.

    Each record: step, val_loss, train_loss, per-domain counts, utility, conflicting pairs and
    timings (feature_s, greedy_s, select_s, update_s, select_fraction; feature_s counts every
    cost the update would not pay: forward over candidates and anchors, per-example gradients,
    projection) and fresh (feature rows computed that step; --refresh R > 1 reuses stale
    ones; --reservoir K keeps unselected candidates and their features for up to K steps, and
    records waiting); --format auto is that JSONL log, streamed. Same --seed, same candidate stream for
    every method, so runs are comparable. Results on the tiny zoo model
    and the local demo corpora are labelled as such in the summary.
    With --checkpoint FILE, Ctrl-C (or SIGTERM) saves the run after the step in progress and exits
    130; --checkpoint FILE --resume continues it (same losses and selections as an uninterrupted run).

    \b
    Examples:
      mlx26 select-batch train --steps 2 --batch 4 --buffer 2 --eval-every 2 | tail -n 1
      mlx26 select-batch train --steps 3 --batch 4 --buffer 2 --refresh 10 --features ghost | tail -n 1
      mlx26 select-batch train --steps 3 --batch 4 --buffer 4 --reservoir 4 --anchor-every 8 --feature-len 32 | tail -n 1
      mlx26 select-batch train --data pool.jsonl --val val.jsonl --method independent --steps 200 -o log.jsonl
    """
    if print_config_requested(ctx, print_config):
        return
    _check(method, grad_params, features)
    if data == "-" and (val == "-" or test == "-") or val == "-" and test == "-":
        raise UsageError("only one of --data, --val and --test can read stdin.")
    _check_numbers(eta, proj_dim)
    _check_budget_mode(method, budget_mode)
    _check_outputs(output, summary, force)
    check_plot(plot, force)
    kept: list[dict] | None = [] if plot else None  # the per-step records, for --plot
    if resume and not checkpoint:
        raise UsageError("--resume needs --checkpoint FILE: the file the interrupted run saved")
    if checkpoint and not resume:
        check_output(checkpoint, force)
    if resume and checkpoint and not Path(checkpoint).is_file():  # said before torch loads (issue 31)
        raise InputError(f"nothing to resume: {checkpoint} does not exist",
                         "start the run without --resume (with --checkpoint FILE to keep its work on Ctrl-C)")
    from mlx26.core.common.interrupts import stop_requested
    from mlx26.core.select_batch.budgets import parse_budget_mode
    from mlx26.core.select_batch.data import demo_rows, parse_rows
    from mlx26.core.select_batch.train import SelectTrainer, TrainConfig, load_checkpoint

    state = load_checkpoint(checkpoint) if resume and checkpoint else None
    if state is not None:
        cfg = TrainConfig(**state["config"])
        notice(f"select-batch train: resuming {cfg.method} at step {state['step']} of {cfg.steps}", quiet)
    else:
        cfg = TrainConfig(model=model, method=method, steps=steps, batch=batch, buffer=buffer, lr=lr,
                          seq_len=seq_len, grad_params=grad_params, proj_dim=proj_dim, eta=eta,
                          budget_mode=parse_budget_mode(budget_mode, train=True), randomized=randomized,
                          weighted=weighted, curriculum_lambda=curriculum_lambda,
                          eval_every=eval_every, seed=seed, features=features, refresh=refresh,
                          reservoir=reservoir, anchor_every=anchor_every, feature_len=feature_len)
    batch, buffer, seed = cfg.batch, cfg.buffer, cfg.seed
    from mlx26.core.common.distributed import check_divisible, env, session

    check_divisible(batch, "--batch")  # under torchrun, before any model loads
    pool_items = _items(data, "pool") if data else parse_rows(enumerate(demo_rows("train", max(1200, batch * buffer),
                                                                                  seed), 1), "demo pool")
    val_items = _items(val, "validation") if val else parse_rows(enumerate(demo_rows("val", 24, seed), 1), "demo val")
    from mlx26.cli._progress import spinner, track

    main_rank = env().main  # under torchrun only rank 0 prints and writes (docs/scale-out.md)
    quiet = quiet or not main_rank
    again = " ".join(["mlx26 select-batch train", *(f"--{k} {v}" for k, v in (("data", data), ("val", val),
                      ("test", test)) if v), f"--checkpoint {checkpoint} --resume"])
    with session(device="cpu"):
        with spinner(f"select-batch train: loading {cfg.model}…", quiet=quiet):
            trainer = SelectTrainer(pool_items, val_items, cfg, _items(test, "test") if test else ())
        with stop_requested() as stop:
            records = track(trainer.run(stop.is_set, checkpoint, state, again), total=cfg.steps, unit="steps",
                            description=f"select-batch {cfg.method}", quiet=quiet, at=lambda record: record["step"],
                            status=lambda record: f"train loss {record['train_loss']:.4f}" if "train_loss" in record
                            else None, start="initial losses…")
            if not main_rank:
                for _ in records:  # the other ranks train in step with rank 0, which logs
                    pass
                return
            emit(tee(records, kept), output, "jsonl" if OutputFormat(fmt) == OutputFormat.auto else fmt, force=force)
    info = {**trainer.summary(), "note": "tiny zoo model on local corpora" if not data else None}
    if summary:
        write_text(to_json(info, indent=2) + "\n", summary, force=force)
    notice(f"select-batch train: {cfg.method}, {info['steps_done']} steps; val loss {info['initial_val_loss']:.4f} → "
           f"{info['final_val_loss']:.4f}; selection {100 * info['select_fraction']:.1f}% of step time "
           f"(greedy alone {100 * info['greedy_fraction']:.2f}%)", quiet)
    curves(plot, kept or [], title=f"select-batch train {cfg.method} on {cfg.model}", force=force, quiet=quiet)


@app.command("demo-data")
def demo_data(
    split: Annotated[str, typer.Option("--split", help="train (a pool) or val (held-out validation mix).", metavar="TEXT")] = "train",
    n: Annotated[int, typer.Option("--n", help="Rows to write.", min=1, metavar="N")] = 240,
    seed: SeedOpt = 0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Three local domains (stdlib code, prose, arithmetic word problems) as rows {id, domain, text}.

    The pool mix is 50/30/20 % code/prose/arithmetic from the corpora's train splits; the
    validation mix is a third each from their held-out splits. Nothing is downloaded.

    \b
    Examples:
      mlx26 select-batch demo-data --n 6 --format jsonl
      mlx26 select-batch demo-data --split val --n 30 -o val.jsonl
    """
    if split not in ("train", "val"):
        raise unknown_name("split", split, ("train", "val"))
    check_output(output, force)
    from mlx26.core.select_batch.data import demo_rows

    emit(demo_rows(split, n, seed), output, fmt, force=force, title=f"select-batch demo-data ({split})")
