"""``mlx26 spike``: SpikingLM (ICML 2026; a RECONSTRUCTION from the abstract, no public code) — spiking
transformer classifiers with Distribution-aware Scaling and Spike2Max, modelled energy, ONNX export.
Thin wrapper over ``mlx26.core.spike``; shared options live in ``cli/_spike.py``.
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _spike as S
from mlx26.cli._errors import InputError, require
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    InputArg,
    InputFormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    emit,
    notice,
    read_numbered,
)
from mlx26.cli._plot import PlotOpt, check_plot, curves
from mlx26.core.spike.spec import GLUE_TASKS

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)
A = OutputFormat.auto


def _threads():
    import torch
    from mlx26.core.common.threads import apply_torch_threads

    apply_torch_threads(torch)


@app.command("train")
def train_cmd(out: Annotated[str, typer.Option("--out", help="Model folder to write.", metavar="DIR")],
              task: S.TaskOpt = "salient",
              train_tsv: Annotated[str | None, typer.Option("--train", help="GLUE TSV to train on.", metavar="TSV")] = None,
              test: S.TestOpt = None,
              arch: Annotated[str, typer.Option("--arch", help="ann | snn (plain) | spikinglm (DAS + Spike2Max).", metavar="TEXT")] = "spikinglm",
              attn: Annotated[str | None, typer.Option("--attn", help="softmax | spike2max | linear (default: the arch's).", metavar="TEXT")] = None,
              das: Annotated[bool | None, typer.Option("--das/--no-das", help="Distribution-aware Scaling (default: on for spikinglm).")] = None,
              T: Annotated[int | None, typer.Option("--T", "-T", help="Time steps (default 4; spiking archs).", metavar="N")] = None,
              neuron: Annotated[str | None, typer.Option("--neuron", help="if | lif (default if).", metavar="TEXT")] = None,
              theta: Annotated[float | None, typer.Option("--theta", help="Firing threshold θ (default 1.0).", metavar="NUMBER")] = None,
              surrogate: Annotated[str | None, typer.Option("--surrogate", help="atan | sigmoid surrogate gradient "
                                                            "(default atan).", metavar="TEXT")] = None,
              norm: Annotated[str, typer.Option("--norm", help="Spike2Max normalisation: pow2 (a shift) | exact.", metavar="TEXT")] = "pow2",
              ternary: Annotated[bool, typer.Option("--ternary", help="Bi-directional spikes {-1, 0, 1}.")] = False,
              layers: Annotated[int, typer.Option("--layers", min=1, metavar="N")] = 2,
              d_model: Annotated[int, typer.Option("--d-model", min=4, metavar="N")] = 64,
              heads: Annotated[int, typer.Option("--heads", min=1, metavar="N")] = 4,
              max_len: S.MaxLenOpt = 32,
              n_train: Annotated[int, typer.Option("--n-train", help="Training examples of a built-in task.", min=8,
                                                   max=200_000, metavar="N")] = 4000,
              n_test: S.NTestOpt = 1000,
              steps: Annotated[int, typer.Option("--steps", min=1, metavar="N")] = 400,
              batch: Annotated[int, typer.Option("--batch", min=1, metavar="N")] = 64,
              lr: Annotated[float, typer.Option("--lr", help="AdamW peak learning rate.", metavar="NUMBER")] = 3e-3,
              metrics: Annotated[str | None, typer.Option("--metrics", help="Write training metrics here as JSONL.",
                                                          metavar="PATH")] = None,
              plot: PlotOpt = None,
              seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: S.ForceTrainOpt = False,
              quiet: QuietOpt = False) -> None:
    """Train a classifier on CPU (ANN, plain SNN or SpikingLM) and evaluate it on held-out data.

    Ctrl-C stops after the current step, saves the model trained so far and exits 130.

    \b
    Examples:
      mlx26 spike train --task salient --arch spikinglm --steps 5 --n-train 64 --n-test 32 --d-model 32 --out spk --force -q
    """
    opts = S.model_options(arch, attn, das, T, neuron, theta, surrogate, norm, ternary)
    if not (lr > 0 and lr < float("inf")):
        raise InputError(f"--lr must be a finite number > 0, got {lr}")
    S.check_folder(out, force)
    S.start(output, force, metrics)
    check_plot(plot, force)
    _threads()
    from mlx26.core.common.interrupts import Interrupted, stop_requested
    from mlx26.core.common.seeding import seed_everything
    from mlx26.core.spike import tasks
    from mlx26.core.spike import train as TR

    tasks.check_task(task)
    S.require_text(task)
    seed_everything(seed)
    from mlx26.cli._progress import Bar, spinner

    with spinner(f"spike train: loading {task}…", quiet=quiet):
        data = tasks.load(task, "train", data=train_tsv, n=n_train, seed=seed, max_len=max_len)
        heldout = S.test_data({"task": task, "seed": seed, "config": {"max_len": max_len}}, test, n_test, max_len)
    for d, what in ((data, "training"), (heldout, "test")):
        if d.truncated:
            notice(f"spike train: {d.truncated} {what} sequences were longer than --max-len {max_len} and were "
                   "truncated", quiet)
    model = TR.build(data, max_len=max_len, layers=layers, d_model=d_model, heads=heads, **opts)
    log_lines: list[dict] = []

    def log(m: dict) -> None:
        log_lines.append(m)
        notice(f"spike train: step {m['step']}/{steps} loss {m['loss']:.4f}", quiet)

    with stop_requested() as stop, Bar(f"spike train {arch}", total=steps, unit="steps", quiet=quiet,
                                       status="calibrating…") as bar:
        info = TR.fit(model, data, steps=steps, batch=batch, lr=lr, seed=seed, log=log,
                      log_every=max(1, steps // 10), stop=stop.is_set,
                      progress=(lambda done, loss: bar.update(done, status=f"loss {loss:.4f}")) if bar.active else None)
        bar.set_status("evaluating…")
        acc = TR.accuracy(TR.predict(model, heldout), heldout.labels)
    from pathlib import Path

    meta = {"task": task, "seed": seed, "train_path": train_tsv and str(Path(train_tsv).resolve()),
            "test_path": test and str(Path(test).resolve()), "n_train": len(data), "n_test": len(heldout), "label_names": data.label_names,
            "synthetic": data.synthetic, "data": data.source, "train": info,
            "test_accuracy": acc}
    saved = TR.save(model, out, meta)
    if metrics:
        from mlx26.cli._io import atomic_output, to_json

        with atomic_output(metrics, force) as fh:
            for line in log_lines:
                fh.write(to_json(line) + "\n")
    curves(plot, log_lines, title=f"spike train {arch} on {task}" + (" (SYNTHETIC task)" if data.synthetic else ""),
           force=force, quiet=quiet)
    rec = {"task": task, "synthetic": data.synthetic, "arch": arch, **{k: opts[k] for k in ("attn", "das", "T")},
           "steps": info["steps"], "interrupted": info["interrupted"], "test_accuracy": acc, "train_accuracy": info["train_accuracy"],
           "dead_fraction_init": info["init"].get("dead_fraction"), "dead_fraction": info["final"].get("dead_fraction"),
           "firing_rate": info["final"].get("firing_rate"),
           "grad_norm_init": info["init"]["first_layer_grad_norm"], "params": info["params"],
           "truncated_train": data.truncated, "truncated_test": heldout.truncated, "out": out, "model_hash": saved["model_hash"]}
    emit(rec, output, fmt, force=force, title="spike train" + (" (SYNTHETIC task)" if data.synthetic else ""))
    if info["interrupted"]:
        raise Interrupted(f"interrupted at step {info['steps']} of {steps}; the model at that step is saved in {out}",
                          "it evaluates and exports as is; run `spike train` again to train to the end")


@app.command("eval")
def eval_cmd(model: S.ModelOpt, test: S.TestOpt = None, n_test: Annotated[int | None, typer.Option(
                 "--n-test", help="Held-out examples of a built-in task (default: as trained).", min=1, metavar="N")] = None,
             runtime: Annotated[str | None, typer.Option("--runtime", help="torch | onnx (onnxruntime); default torch, "
                                                         "onnx when --onnx is given.", metavar="TEXT")] = None,
             onnx: Annotated[str | None, typer.Option("--onnx", help="ONNX file (default: DIR/model.onnx).",
                                                      metavar="PATH")] = None,
             output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Accuracy of a trained model on its held-out data, with firing statistics (torch) or through onnxruntime.

    \b
    Examples:
      mlx26 spike train --steps 2 --n-train 16 --n-test 16 --d-model 16 --out spk --force -q -o /dev/null && mlx26 spike eval --model spk --format json
    """
    runtime = S.runtime(runtime or ("onnx" if onnx else "torch"))
    if onnx and runtime != "onnx":
        raise InputError("--onnx is read only with --runtime onnx")
    S.start(output, force)
    if runtime == "onnx":
        require("onnxruntime", "onnx")
    _threads()
    from pathlib import Path

    from mlx26.core.spike import train as TR

    net, record = TR.load(model)
    if n_test is not None and record.get("task") in GLUE_TASKS:
        notice(f"spike eval: --n-test is for built-in tasks; evaluating the whole {record['task']} TSV", quiet)
    data = S.test_data(record, test, n_test)
    rec: dict = {"task": record.get("task"), "synthetic": data.synthetic, "runtime": runtime, "examples": len(data)}
    if runtime == "onnx":
        from mlx26.core.spike import export as X

        sess = X.session(onnx or str(Path(model) / "model.onnx"), record["model_hash"])
        logits = X.onnx_logits(sess, data.ids, data.pad_id)
    else:
        from mlx26.core.spike.neurons import firing_report, recording

        with recording(net):
            logits = TR.predict(net, data)
        if net.config.spiking:
            rep = firing_report(net)
            rec.update({"firing_rate": rep["firing_rate"], "dead_fraction": rep["dead_fraction"]})
    rec["accuracy"] = TR.accuracy(logits, data.labels)
    rec["truncated"] = data.truncated
    emit(rec, output, fmt, force=force, title="spike eval" + (" (SYNTHETIC task)" if data.synthetic else ""))


@app.command("energy")
def energy_cmd(model: Annotated[str | None, typer.Option("--model", "-m", help="Model folder.", metavar="DIR")] = None,
               test: S.TestOpt = None,
               n_test: Annotated[int | None, typer.Option("--n-test", help="Held-out examples of a built-in task "
                                                          "(default: those `eval` uses).", min=1, max=100_000, metavar="N")] = None,
               energy_table: S.EnergyTableOpt = None,
               table: Annotated[bool, typer.Option("--table", help="Print the per-operation cost table and exit.")] = False,
               output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """MODELLED energy per sequence (45 nm table): the model from its actual spikes vs its ANN twin, and the
    attention normalisation: softmax vs Spike2Max.

    \b
    Examples:
      mlx26 spike energy --table --format csv
      mlx26 spike train --steps 2 --n-train 16 --n-test 16 --d-model 16 --out spk --force -q -o /dev/null && mlx26 spike energy --model spk --n-test 8 --format json
    """
    S.start(output, force)
    from mlx26.core.spike import energy as E

    costs = E.load_table(energy_table)
    if table:
        emit(E.table_records(costs), output, fmt, force=force, title="spike energy: cost per operation (pJ, 45 nm)")
        return
    if model is None:
        raise InputError("--model DIR is needed (or --table to print the cost table)")
    _threads()
    from mlx26.core.spike import train as TR

    net, record = TR.load(model)
    data = S.test_data(record, test, n_test)
    if not quiet:
        for r in E.table_records(costs):
            notice(f"spike energy: {r['op']:>10} {r['pj']:6.2f} pJ  ({r['source']})")
    rec = {"task": record.get("task"), "synthetic": data.synthetic, **E.model_comparison(
        TR.count_energy(net, data, costs), TR.count_energy(TR.ann_twin(net), data, costs), net.config, data, costs)}
    emit(rec, output, fmt, force=force, title="spike energy (MODELLED, 45 nm)")


@app.command("softmax-cmp")
def softmax_cmp_cmd(input: InputArg, input_format: InputFormatOpt = "auto",
                    scale: Annotated[float, typer.Option("--scale", help="Multiply scores by this before Spike2Max "
                                                         "(1.4427 = log2 e makes exact Spike2Max equal softmax).", metavar="NUMBER")] = 1.0,
                    output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, quiet: QuietOpt = False, force: ForceOpt = False) -> None:
    """Records with a `scores` list in; softmax, spike2max (exact) and spike2max_pow2 columns out, per row.

    \b
    Examples:
      echo '{"scores": [1, 2, 3]}' | mlx26 spike softmax-cmp - --format jsonl
    """
    S.start(output, force)
    from mlx26.core.spike.cmp import compare_rows

    rows = list(compare_rows(read_numbered(input, input_format, text_default="jsonl"), scale))
    if not rows:
        notice("spike softmax-cmp: the input holds no records")
    emit(rows, output, fmt, force=force, title="spike softmax-cmp")


@app.command("export")
def export_cmd(model: S.ModelOpt, test: S.TestOpt = None,
               onnx: Annotated[str | None, typer.Option("--onnx", help="ONNX file (default: DIR/model.onnx).",
                                                        metavar="PATH")] = None,
               check: Annotated[int, typer.Option("--check", help="Held-out inputs compared torch vs onnxruntime "
                                                  "and timed.", min=1, metavar="N")] = 100,
               output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: S.ForceExportOpt = False, quiet: QuietOpt = False) -> None:
    """Fold DAS into its linears, export to ONNX, compare onnxruntime with torch and time both (batch 1, 1 thread).

    \b
    Examples:
      mlx26 spike train --steps 2 --n-train 16 --n-test 16 --d-model 16 --out spk --force -q -o /dev/null && mlx26 spike export --model spk --check 8 --force --format json
    """
    from pathlib import Path

    path = onnx or str(Path(model) / "model.onnx")
    S.start(output, force, path)
    require("onnx", "onnx")
    require("onnxruntime", "onnx")
    _threads()
    from mlx26.core.spike import export as X
    from mlx26.core.spike import train as TR

    net, record = TR.load(model)
    data = S.test_data(record, test, check)
    rec = X.export_onnx(net, path, record["model_hash"])
    sess = X.session(path, record["model_hash"])
    rec.update(X.compare(net, sess, data.ids[:check]))
    if rec["max_abs_diff"] > 1e-4:
        notice(f"spike export: warning: onnxruntime differs from torch by {rec['max_abs_diff']:.2e} (> 1e-4)", quiet)
    rec.update(X.latency(net, sess, data.ids[: min(check, 50)]))
    emit(rec, output, fmt, force=force, title="spike export")
