"""``mlx26 wifi-pose train|eval|export|bench``: the model half of ``mlx26 wifi-pose`` (registered by cli/wifi_pose.py)."""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _wifi_pose as W
from mlx26.cli._errors import InputError, require
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
from mlx26.core.wifi_pose.spec import PIW3D_LAYOUT

A = OutputFormat.auto
StepsOpt = Annotated[int, typer.Option("--steps", help="Optimiser steps.", min=1, metavar="N")]
BatchOpt = Annotated[int, typer.Option("--batch", help="Windows per step.", min=1, metavar="N")]
WindowOpt = Annotated[int, typer.Option("--window", help="Frames per window (truncated BPTT length).", min=1, metavar="N")]
LrOpt = Annotated[float, typer.Option("--lr", help="AdamW peak learning rate (one-cycle).", metavar="NUMBER")]
TestOpt = Annotated[float, typer.Option("--test-fraction", help="Sequences held out for testing.", min=0.05, max=0.9, metavar="NUMBER")]


def _threads():
    import torch
    from mlx26.core.common.threads import apply_torch_threads

    apply_torch_threads(torch)


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train_cmd(clips: W.ClipsArg, save: Annotated[str, typer.Option("--save", help="Checkpoint to write (.pt).",
                                                                        metavar="PATH")],
                  arch: W.ArchOpt = "mamba", preset: W.PresetOpt = "tiny", memory: W.MemoryOpt = True,
                  steps: StepsOpt = 300, batch: BatchOpt = 16, window: WindowOpt = 4, lr: LrOpt = 3e-3,
                  test_fraction: TestOpt = 0.25, layout: W.LayoutOpt = PIW3D_LAYOUT, links: W.LinksOpt = None,
                  antennas: W.AntOpt = None, subcarriers: W.SubOpt = None, packets: W.PktOpt = None,
                  plot: PlotOpt = None,
                  seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
                  force: Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Overwrite an existing "
                                                      "--save, --output or --plot file.")] = False,
                  quiet: QuietOpt = False) -> None:
        """Train WiFi-Mamba or the PiW3D-style baseline on CPU; held-out sequences are evaluated at the end.

        \b
        Examples:
          mlx26 wifi-pose synth clips.npz --sequences 4 --frames 8 --force -q -o /dev/null
          mlx26 wifi-pose train clips.npz --save m.pt --steps 2 --batch 2 --window 2 --force --format json -q
        """
        W.check_model(arch, preset)
        exp = W.expect(links, antennas, subcarriers, packets, layout)
        W.start(output, force, save, torch=True)
        check_plot(plot, force)
        _threads()
        from mlx26.core.common.seeding import seed_everything
        from mlx26.core.wifi_pose import train as T

        curve: list[dict] | None = [] if plot else None  # the loss of every step, for --plot

        seed_everything(seed)
        c = W.clips(clips, quiet, layout, exp)
        tr, te = T.split_by_sequence(c, test_fraction, seed)
        dtr, dte = T.Data.from_clips(tr), T.Data.from_clips(te)
        net = T.build_for(arch, dtr, preset, memory)
        from mlx26.cli._progress import Bar

        with Bar(f"wifi-pose train {arch}", total=steps, unit="steps", quiet=quiet) as bar:
            info = T.fit(net, dtr, steps=steps, batch=batch, window=window, lr=lr, seed=seed,
                         log=None if quiet else lambda m: notice(f"wifi-pose train: {m}"),
                         progress=record_steps(curve, (lambda step, loss: bar.update(step, status=f"loss {loss:.4f}"))
                                               if bar.active else None))
            from mlx26.core.wifi_pose import model as M

            bar.set_status("evaluating…")
            ev = T.evaluate(net, dte)
        info.update({"arch": arch, "preset": preset, "memory": bool(getattr(net, "memory", False)),
                     "params": M.n_params(net), "flops_per_frame": M.analytic_flops(net), "seed": seed,
                     "train_clips": int(len(dtr.amp)), "test_clips": int(len(dte.amp)), "synthetic": c.synthetic})
        T.save(net, save, info)
        emit({**W.tag(c.synthetic), **info, **{f"test_{k}": v for k, v in ev.items()}, "save": save}, output, fmt,
             force=force, title="wifi-pose train")
        curves(plot, curve or [], title=f"wifi-pose train {arch} ({preset}; loss per step)", force=force, quiet=quiet)

    @app.command("eval")
    def eval_cmd(clips: W.ClipsArg, model: W.ModelOpt,
                 memory: Annotated[bool | None, typer.Option("--memory/--no-memory", help="Override the checkpoint's "
                                                             "persistent memory at inference.")] = None,
                 png: Annotated[str | None, typer.Option("--png", help="Draw predicted vs true skeletons of a few "
                                                         "frames here (matplotlib).", metavar="PATH")] = None,
                 layout: W.LayoutOpt = PIW3D_LAYOUT, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
                 force: ForceOpt = False, quiet: QuietOpt = False) -> None:
        """MPJPE (Hungarian and PiW3D's greedy matching), PCK3D@50/100/150 mm of a checkpoint on every clip.

        \b
        Examples:
          mlx26 wifi-pose eval clips.npz --model m.pt --format json
        """
        W.start(output, force, png, torch=True)
        if png:
            require("matplotlib", "wifi")
        _threads()
        from mlx26.core.wifi_pose import train as T

        c = W.clips(clips, quiet, layout)
        net, info = T.load(model)
        data = T.Data.from_clips(c)
        T.check_shape(net, data)
        kp, conf = T.predict(net, data, memory)
        from mlx26.core.wifi_pose import metrics

        rec = {**W.tag(c.synthetic), "arch": net.kind, "memory": bool(getattr(net, "memory", False) if memory is None
                                                                        else memory and net.kind == "mamba"),
               "clips": int(len(data.amp)), **metrics.evaluate(kp, conf, data.kp)}
        if png:
            from mlx26.core.wifi_pose import show

            frames = list(range(0, len(kp), max(1, len(kp) // 4)))[:4]
            rec.update(show.draw(kp, conf, data.kp, png, frames, title=("SYNTHETIC " if c.synthetic else "") + net.kind))
        emit(rec, output, fmt, force=force, title="wifi-pose eval")

    @app.command("export")
    def export_cmd(model: W.ModelOpt, onnx: Annotated[str, typer.Option("--onnx", help="ONNX file to write.",
                                                                        metavar="PATH")],
                   frames: Annotated[int, typer.Option("--frames", help="Frames timed per backend.", min=1, metavar="N")] = 100,
                   output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
        """Export to ONNX, check onnxruntime against torch (max |diff|), time both per frame (batch 1, 1 thread).

        \b
        Examples:
          mlx26 wifi-pose export --model m.pt --onnx m.onnx --frames 5 -o export.json
        """
        W.start(output, force, onnx, torch=True)
        require("onnxruntime", "wifi")
        require("onnx", "wifi")
        _threads()
        from mlx26.core.wifi_pose import export as E
        from mlx26.core.wifi_pose import train as T

        net, _ = T.load(model)
        rec = E.export_onnx(net, onnx)
        rec.update(E.compare(net, onnx))
        if rec["max_abs_diff"] > 1e-4:
            notice(f"wifi-pose: warning: onnxruntime differs from torch by {rec['max_abs_diff']:.2e} (> 1e-4)", quiet)
        rec.update(E.latency(net, onnx, frames=frames, warmup=min(10, frames)))
        emit({"arch": net.kind, **rec}, output, fmt, force=force, title="wifi-pose export")

    @app.command("bench")
    def bench_cmd(steps: StepsOpt = 200, sequences: Annotated[int, typer.Option("--sequences", min=4, metavar="N")] = 160,
                  frames: Annotated[int, typer.Option("--frames", min=2, metavar="N")] = 6, window: WindowOpt = 3,
                  batch: BatchOpt = 8, preset: W.PresetOpt = "tiny", seed: SeedOpt = 0, output: OutputOpt = None,
                  fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
        """SYNTHETIC side-by-side at equal width and budget: WiFi-Mamba ± memory vs PiW3D-style vs the mean pose.

        \b
        Examples:
          mlx26 wifi-pose bench --steps 1 --sequences 4 --frames 2 --window 1 --batch 1 --format csv -q
        """
        W.check_model("mamba", preset)
        W.start(output, force, torch=True)
        if window > frames:
            raise InputError(f"--window {window} is longer than --frames {frames}")
        _threads()
        from mlx26.core.wifi_pose import bench

        recs = bench.compare(steps=steps, sequences=sequences, frames=frames, window=window, batch=batch,
                             preset=preset, seed=seed, log=None if quiet else lambda m: notice(f"wifi-pose bench: {m}"))
        emit(recs, output, fmt, force=force, title="wifi-pose bench (SYNTHETIC)")
