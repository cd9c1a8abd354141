"""``mlx26 fmri pretrain|embed|probe|bench``: the model half of ``mlx26 fmri`` (registered by cli/fmri.py)."""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _fmri as F
from mlx26.cli._errors import require, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    emit,
    notice,
)
from mlx26.cli._plot import PlotOpt, check_plot, curves, record_steps
from mlx26.core.fmri.spec import BG_PAPER, PROBE_LABELS, TAU_PAPER

A = OutputFormat.auto
LabelOpt = Annotated[str, typer.Option("--label", help="Probe target: condition | network | subject.", metavar="TEXT")]


def _label(clips_meta: dict, label: str):
    if label not in PROBE_LABELS:
        raise unknown_name("label", label, PROBE_LABELS)
    if label not in clips_meta:
        from mlx26.cli._errors import InputError

        raise InputError(f"the clips carry no '{label}' labels (have: {', '.join(sorted(clips_meta)) or 'none'})",
                         "preprocess runs whose JSON sidecars hold frame_labels (mlx26 fmri synth writes them)")
    return clips_meta[label]


def register(app: typer.Typer) -> None:
    @app.command("pretrain")
    def pretrain_cmd(clips: F.ClipsArg, save: Annotated[str, typer.Option("--save", help="Checkpoint to write (.pt).",
                                                                            metavar="PATH")],
                     patching: F.PatchingOpt = "dynamic", tau: F.TauOpt = TAU_PAPER, bg: F.BgOpt = BG_PAPER,
                     steps: F.STEPS = 200, batch: Annotated[int, typer.Option("--batch", min=1, metavar="N")] = 8,
                     lr: Annotated[float, typer.Option("--lr", help="AdamW learning rate.", metavar="NUMBER")] = 1e-3,
                     dim: F.DimOpt = 64, depth: Annotated[int, typer.Option("--depth", min=1, metavar="N")] = 2,
                     mask_ratio: Annotated[float, typer.Option("--mask-ratio", help="MAE mask ratio.", metavar="NUMBER")] = 0.75,
                     plot: PlotOpt = None,
                     seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
                     force: Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Overwrite an existing "
                                                         "--save, --output or --plot file.")] = False,
                     quiet: QuietOpt = False) -> None:
        """Masked-autoencoder pretraining of the tiny dual-path model on CPU (mask ratio 0.75).

        \b
        Examples:
          mlx26 fmri pretrain clips.npz --save mae.pt --steps 20 --force
        """
        s = F.settings(tau, bg, patching=patching, seed=seed)
        F.start(output, force, save)
        check_plot(plot, force)
        require("torch", "torch")
        from mlx26.cli._progress import Bar, spinner
        from mlx26.core.fmri import train

        curve: list[dict] | None = [] if plot else None  # the loss of every step, for --plot

        with spinner(f"fmri pretrain: loading {clips} and patching…", quiet=quiet):
            x, meta = F.clips(clips, quiet)
            ts = train.prepare(x, s)
        with Bar("fmri pretrain", total=steps, unit="steps", quiet=quiet) as bar:
            model, info = train.pretrain(ts, steps=steps, batch=batch, lr=lr, dim=dim, depth=depth, seed=seed,
                                         mask_ratio=mask_ratio, log=None if quiet else lambda m: notice(f"fmri: {m}"),
                                         progress=record_steps(curve, (lambda step, loss: bar.update(
                                             step, status=f"loss {loss:.4f}")) if bar.active else None))
            bar.set_status("evaluating…")
            ev = train.evaluate(model, ts, mask_ratio=mask_ratio, seed=seed)
        info.update(ev)
        train.save(model, save, s, info)
        emit({**F.tag(meta), **info, **s.as_dict(), "clips": int(len(x)), "save": save}, output, fmt, force=force,
             title="fmri pretrain")
        curves(plot, curve or [], title="fmri pretrain (MAE loss per step)", force=force, quiet=quiet)

    @app.command("embed")
    def embed_cmd(clips: F.ClipsArg, model: F.ModelOpt, npz: Annotated[str, typer.Option(
                      "--npz", help="NPZ to write: embeddings (N, D) plus the clips' labels.", metavar="PATH")],
                  output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
        """Mean-pooled encoder embeddings of every clip (no masking) to an NPZ.

        \b
        Examples:
          mlx26 fmri embed clips.npz --model mae.pt --npz emb.npz --force
        """
        F.start(output, force, npz)
        require("torch", "torch")
        from mlx26.core.fmri import train

        net, s, _ = train.load(model)
        x, meta = F.clips(clips, quiet)
        train.check_clips(net, x, model)
        emb = train.embed(net, train.prepare(x, s))
        F.write_npz(npz, embeddings=emb, **{k: v for k, v in meta.items() if k in (*PROBE_LABELS, "synthetic")})
        emit({**F.tag(meta), "clips": int(len(emb)), "dim": int(emb.shape[1]), "npz": npz}, output, fmt, force=force,
             title="fmri embed")

    @app.command("probe")
    def probe_cmd(clips: F.ClipsArg, model: F.ModelOpt, label: LabelOpt = "condition", seed: SeedOpt = 0,
                  output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
        """Linear probe (balanced logistic regression, C by inner CV; held-out subjects unless --label subject).

        \b
        Examples:
          mlx26 fmri probe clips.npz --model mae.pt --label condition
        """
        if label not in PROBE_LABELS:
            raise unknown_name("label", label, PROBE_LABELS)
        F.start(output, force)
        require("torch", "torch")
        require("sklearn", "fmri")
        from mlx26.core.fmri import train

        net, s, _ = train.load(model)
        x, meta = F.clips(clips, quiet)
        train.check_clips(net, x, model)
        y = _label(meta, label)
        groups = meta.get("subject") if label != "subject" and len(set(meta.get("subject", []))) > 1 else None
        ts = train.prepare(x, s)
        pre = train.probe(train.embed(net, ts), y, seed, groups=groups)
        rnd = train.probe(train.embed(train.build_model(x.shape[1], s, dim=net.config["dim"],
                                                        depth=net.config["depth"], seed=seed), ts), y, seed,
                          groups=groups)
        emit({**F.tag(meta), "label": label, "probe_pretrained": pre["accuracy"], "probe_random_init": rnd["accuracy"],
              "gain_points": 100 * (pre["accuracy"] - rnd["accuracy"]), "chance": pre["chance"],
              "metric": pre["metric"], "held_out": "subjects" if groups is not None else "clips",
              "folds": pre["folds"], "clips": pre["n"], "seed": seed}, output, fmt, force=force, title="fmri probe")

    @app.command("bench")
    def bench_cmd(steps: F.STEPS = 120, subjects: Annotated[int, typer.Option("--subjects", min=2, metavar="N")] = 6,
                  frames: Annotated[int, typer.Option("--frames", help="Frames per run.", min=8, metavar="N")] = 48,
                  size: Annotated[int, typer.Option("--size", min=8, metavar="N")] = 32, tau: F.TauOpt = TAU_PAPER,
                  bg: F.BgOpt = BG_PAPER, label: Annotated[list[str] | None, typer.Option(
                      "--label", help="Probe target(s), repeatable (default subject, condition).", metavar="TEXT")] = None,
                  seed: SeedOpt = 0, seeds: Annotated[int, typer.Option(
                      "--seeds", help="Repeat with seeds SEED..SEED+N-1 (new data and init each).", min=1, metavar="N")] = 1,
                  output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
        """Dynamic vs uniform vs random patching on SYNTHETIC data: tokens, SSE, train time, MAE MSE, probe.

        \b
        Examples:
          mlx26 fmri bench --steps 4 --subjects 2 --frames 16 --size 16 --label subject --format csv
        """
        F.start(output, force)
        require("torch", "torch")
        require("sklearn", "fmri")
        labels = tuple(label or ("subject", "condition"))
        for one in labels:
            if one not in PROBE_LABELS:
                raise unknown_name("label", one, PROBE_LABELS)
        from mlx26.core.fmri import bench

        recs = bench.compare(subjects=subjects, frames=frames, size=size, steps=steps, tau=tau, bg=bg,
                             seeds=tuple(range(seed, seed + seeds)),
                             labels=labels,
                             log=None if quiet else lambda m: notice(f"fmri bench: {m}"))
        emit(recs, output, fmt, force=force, title="fmri bench (SYNTHETIC)")
