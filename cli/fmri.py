"""``mlx26 fmri``: Omni-fMRI (ICML 2026, arXiv 2601.23090) — atlas-free voxel tokenisation with dynamic
patching and a tiny masked-autoencoder foundation model. Thin wrapper over ``mlx26.core.fmri``; shared
options and loaders live in ``cli/_fmri.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli import _fmri as F
from mlx26.cli import _fmri_train
from mlx26.cli._errors import InputError, require, unknown_name
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
)
from mlx26.core.fmri.spec import BG_PAPER, FINE, SYNTH_KINDS, TAU_PAPER

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)
A = OutputFormat.auto


@app.command("synth")
def synth_cmd(dest: Annotated[str, typer.Argument(help="A folder (BIDS-style sub-*/func/*_bold.nii.gz) or one "
                                                  ".nii.gz file.", metavar="DEST")],
              subjects: Annotated[int, typer.Option("--subjects", min=1, metavar="N")] = 4,
              runs: Annotated[int, typer.Option("--runs", min=1, metavar="N")] = 2,
              frames: Annotated[int, typer.Option("--frames", help="Frames per run.", min=1, metavar="N")] = 96,
              size: Annotated[int, typer.Option("--size", help="Cube edge in voxels.", min=8, metavar="N")] = 32,
              tr: Annotated[float, typer.Option("--tr", help="TR in seconds.", metavar="NUMBER")] = 2.0,
              kind: Annotated[str, typer.Option("--kind", help="task (HRF blocks) | rest (AR(1)).", metavar="TEXT")] = "task",
              tsnr: Annotated[float, typer.Option("--tsnr", help="Temporal SNR of the noise.", metavar="NUMBER")] = 60.0,
              seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
              quiet: QuietOpt = False) -> None:
    """Write SYNTHETIC 4D runs on nilearn's bundled MNI152 masks, with per-frame labels in JSON sidecars.

    \b
    Examples:
      mlx26 fmri synth data --subjects 2 --runs 1 --frames 32 --force
    """
    if kind not in SYNTH_KINDS:
        raise unknown_name("kind", kind, SYNTH_KINDS)
    single = dest.endswith((".nii", ".nii.gz"))
    if single and subjects * runs != 1:
        raise InputError("a single .nii.gz holds one run", "pass --subjects 1 --runs 1, or a folder")
    if Path(dest).exists() and not force:
        raise InputError(f"{dest} exists", "pass --force to replace it")
    F.start(output, force)
    from mlx26.core.common.files import atomic_folder
    from mlx26.core.fmri import synth

    vols = synth.generate(subjects=subjects, runs=runs, frames=frames, size=size, tr=tr, kind=kind, tsnr=tsnr,
                          seed=seed)
    records = []
    if single:
        F.write_run(vols[0], Path(dest))
        paths = [Path(dest)]
    else:
        with atomic_folder(dest) as tmp:
            paths = []
            for v in vols:
                sub, run = v.source.split(":")[1].split("_")
                rel = Path(sub) / "func" / f"{sub}_task-synth_{run}_bold.nii.gz"
                (tmp / rel.parent).mkdir(parents=True, exist_ok=True)
                F.write_run(v, tmp / rel)
                paths.append(Path(dest) / rel)
    for v, p in zip(vols, paths, strict=True):
        records.append({"data": "SYNTHETIC", "path": str(p), "subject": v.subject, "shape": list(v.data.shape),
                        "tr": v.tr, "kind": kind, "seed": seed})
    emit(records, output, fmt, force=force, title="fmri synth (SYNTHETIC)")


@app.command("preprocess")
def preprocess_cmd(input: F.SourceArg, npz: Annotated[str, typer.Option("--npz", help="Output NPZ of clips.",
                                                                         metavar="PATH")],
                   size: Annotated[int, typer.Option("--size", help="Cube edge after pad/crop.", min=1, metavar="N")] = 32,
                   frames: F.FramesOpt = 8, voxel: Annotated[float | None, typer.Option(
                       "--voxel", help="Isotropic voxel size in mm (default: the finest axis).", metavar="NUMBER")] = None,
                   tr: Annotated[float | None, typer.Option("--tr", help="Target TR in seconds (cubic spline).", metavar="NUMBER")] = None,
                   tr_in: F.TrInOpt = None, zscore: F.ZscoreOpt = True, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
                   force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Resample isotropic, pad/crop to a cube, retime to a TR, z-score, cut T-frame clips into an NPZ.

    \b
    Examples:
      mlx26 fmri preprocess data --npz clips.npz --size 32 --frames 8 --force
    """
    F.start(output, force, npz)
    import numpy as np
    from mlx26.core.fmri import preprocess

    res = preprocess.preprocess(F.volumes(input, tr_in, quiet), size=size, frames=frames, voxel=voxel, tr=tr,
                                zscore=zscore)
    empty = [i for i, c in enumerate(res.clips) if not np.abs(c).max(initial=0) > BG_PAPER]
    if empty:
        F.no_foreground(empty, len(res.clips), BG_PAPER, quiet)
    F.write_npz(npz, clips=res.clips, tr=res.tr, voxel=res.voxel, synthetic=res.synthetic, **res.labels)
    emit({**F.tag(res.synthetic), "clips": int(res.clips.shape[0]), "shape": list(res.clips.shape[1:]), "tr": res.tr, "voxel_mm": res.voxel,
          "labels": sorted(res.labels), "warnings": len(res.warnings), "npz": npz}, output, fmt, force=force,
         title="fmri preprocess")


@app.command("tokenize")
def tokenize_cmd(input: F.SourceArg, tau: F.TauOpt = TAU_PAPER, bg: F.BgOpt = BG_PAPER, patch: F.PatchOpt = FINE,
                 scales: F.ScalesOpt = 2, score: F.ScoreOpt = "std", patching: F.PatchingOpt = "dynamic",
                 frames: Annotated[int, typer.Option("--frames", "-T", help="Use the first T frames of a NIfTI run "
                                                     "(0 = all).", min=0, metavar="N")] = 0,
                 zscore: F.ZscoreOpt = True, tr_in: F.TrInOpt = None, npz: F.NpzOpt = None, seed: SeedOpt = 0,
                 output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Dynamic patching: token counts per scale, foreground voxels and coverage; tokens to --npz.

    \b
    Examples:
      mlx26 fmri tokenize clips.npz --tau 0.25 --npz tokens.npz --force
    """
    s = F.settings(tau, bg, patch, scales, score, patching, seed)
    F.start(output, force, npz)
    import numpy as np
    from mlx26.core.fmri import patching as P

    x, meta = F.clips(input, quiet, frames=frames, zscore=zscore, tr_in=tr_in)
    toks = [P.tokenize(c, P.Settings(**{**s.as_dict(), "seed": seed + i})) for i, c in enumerate(x)]
    recs = [{**F.tag(meta), "clip": i, **t.summary()} for i, t in enumerate(toks)]
    empty = [r["clip"] for r in recs if not r["foreground_voxels"]]
    if empty:
        F.no_foreground(empty, len(recs), bg, quiet)
    if npz:
        arrays = {f"clip{i}_coords_{p}": t.coords(k) for i, t in enumerate(toks) for k, p in enumerate(t.sizes)}
        F.write_npz(npz, sizes=np.array(toks[0].sizes), **arrays)
    emit(recs[0] if len(recs) == 1 else recs, output, fmt, force=force, title="fmri tokenize")


@app.command("show")
def show_cmd(input: F.SourceArg, png: Annotated[str, typer.Option("--png", help="PNG to write.", metavar="PATH")],
             clip: Annotated[int, typer.Option("--clip", help="Clip index of an NPZ.", min=0, metavar="N")] = 0,
             axis: Annotated[str, typer.Option("--axis", help="x | y | z.", metavar="TEXT")] = "z",
             index: Annotated[int | None, typer.Option("--slice", help="Slice index (default: middle).", metavar="N")] = None,
             tau: F.TauOpt = TAU_PAPER, bg: F.BgOpt = BG_PAPER, zscore: F.ZscoreOpt = True,
             output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Draw one slice with the chosen patches (coarse vs fine) to a PNG.

    \b
    Examples:
      mlx26 fmri show clips.npz --png slice.png --force
    """
    s = F.settings(tau, bg)
    F.start(output, force, png)
    require("matplotlib", "fmri")
    from mlx26.core.fmri import patching as P
    from mlx26.core.fmri import show

    x, meta = F.clips(input, quiet, zscore=zscore)
    if clip >= len(x):
        raise InputError(f"--clip {clip} is out of range (the input has {len(x)})")
    tok = P.tokenize(x[clip], s)
    label = " (SYNTHETIC)" if F.tag(meta) else ""
    emit({**F.tag(meta), **show.draw(x[clip], tok, png, axis=axis, index=index, title=f"{Path(input).name}{label} "
                                     f"clip {clip}, tau {tau}"), **tok.summary(), "png": png}, output, fmt, force=force, title="fmri show")


_fmri_train.register(app)  # pretrain, embed, probe, bench (cli/_fmri_train.py)
