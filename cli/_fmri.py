"""Options and loaders shared by the ``mlx26 fmri`` commands (kept out of cli/fmri.py to keep it thin)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli._errors import InputError, require
from mlx26.cli._io import check_output, notice
from mlx26.core.fmri.spec import FINE

SourceArg = Annotated[str, typer.Argument(help="A 4D NIfTI (.nii/.nii.gz), a BIDS-style folder of *_bold.nii.gz, "
                                          "or an NPZ of clips from `fmri preprocess`.", metavar="INPUT")]
ClipsArg = Annotated[str, typer.Argument(help="NPZ of clips from `mlx26 fmri preprocess`.", metavar="CLIPS")]
TauOpt = Annotated[float, typer.Option("--tau", help="Keep a coarse patch whole when its score < tau (paper 0.25; "
                                       "public code 0.23; 0 = all fine).", min=0, metavar="NUMBER")]
BgOpt = Annotated[float, typer.Option("--bg", help="Background: a patch with max |x| <= bg is dropped (paper 1e-3; "
                                      "public code 1e-2).", min=0, metavar="NUMBER")]
PatchOpt = Annotated[int, typer.Option("--patch", help="Fine patch edge in voxels (coarse = 2x).", min=1, metavar="N")]
ScalesOpt = Annotated[int, typer.Option("--scales", help="Patch scales (1 = uniform fine patching).", min=1, max=4, metavar="N")]
ScoreOpt = Annotated[str, typer.Option("--score", help="Complexity score: std (public code) | var.", metavar="TEXT")]
PatchingOpt = Annotated[str, typer.Option("--patching", help="dynamic | uniform | random (equal-count control).", metavar="TEXT")]
NpzOpt = Annotated[str | None, typer.Option("--npz", help="Write the arrays to this NPZ file.", metavar="PATH")]
ModelOpt = Annotated[str, typer.Option("--model", "-m", help="Checkpoint from `mlx26 fmri pretrain`.",
                                       metavar="PATH")]
ZscoreOpt = Annotated[bool, typer.Option("--zscore/--no-zscore", help="Global z-score over non-zero voxels first.")]
FramesOpt = Annotated[int, typer.Option("--frames", "-T", help="Frames per clip.", min=1, metavar="N")]
TrInOpt = Annotated[float | None, typer.Option("--tr-in", help="Override the header's TR (seconds).", metavar="NUMBER")]
STEPS = Annotated[int, typer.Option("--steps", help="Optimiser steps.", min=1, metavar="N")]
DimOpt = Annotated[int, typer.Option("--dim", help="Model width.", min=8, metavar="N")]


def settings(tau: float, bg: float, patch: int = FINE, scales: int = 2, score: str = "std",
             patching: str = "dynamic", seed: int = 0):
    from mlx26.core.fmri.patching import Settings

    return Settings(tau=tau, bg=bg, patch=patch, scales=scales, score=score, patching=patching, seed=seed).check()


def start(output: str | None, force: bool, *files: str | None) -> None:
    """Check every output path before any work starts, and that the fmri extra is installed."""
    check_output(output, force)
    for f in files:
        if f:
            check_output(f, force)
    require("nibabel", "fmri")
    require("nilearn", "fmri")


def volumes(source: str, tr_in: float | None, quiet: bool):
    """A NIfTI file or BIDS-style folder as a list of Volume, warnings on stderr."""
    from mlx26.core.fmri import io

    p = Path(source)
    if source == "-":
        raise InputError("fmri reads files, not stdin", "pass a .nii/.nii.gz path or a folder")
    paths = io.bids_runs(p) if p.is_dir() else [p]
    vols = [io.load_nifti(x, tr_in) for x in paths]
    for v in vols:
        for w in v.warnings:
            notice(f"fmri: warning: {w}", quiet)
    return vols


def clips(source: str, quiet: bool, *, frames: int = 0, zscore: bool = True, tr_in: float | None = None):
    """(N, T, X, Y, Z) clips and labels from an NPZ, or one clip per NIfTI run (first ``frames`` frames; 0 = all)."""
    import numpy as np
    from mlx26.core.fmri import io, preprocess

    if source.endswith(".npz"):
        data = io.load_clips(source)
        for w in data.pop("_warnings").tolist():
            notice(f"fmri: warning: {w}", quiet)
        return data.pop("clips"), data
    out, synthetic = [], False
    for v in volumes(source, tr_in, quiet):
        synthetic |= v.synthetic
        v = preprocess.resample_isotropic(v, None)
        x = v.data[:frames] if frames else v.data
        if frames and v.data.shape[0] < frames:
            raise InputError(f"{v.source}: {v.data.shape[0]} frames, shorter than --frames {frames}",
                             "lower --frames")
        out.append(preprocess.zscore_nonzero(x) if zscore else x)
    if len({x.shape for x in out}) > 1:
        raise InputError("the runs differ in shape; preprocess them to one grid first", "mlx26 fmri preprocess")
    return np.stack(out), {"synthetic": synthetic}


def no_foreground(empty: list[int], total: int, bg: float, quiet: bool) -> None:
    """Warn (not fail) when clips have no voxel above the background threshold: 0 tokens follow."""
    which = "every clip" if len(empty) == total else f"clips {', '.join(map(str, empty[:5]))}{' …' if len(empty) > 5 else ''}"
    notice(f"fmri: warning: {which} of {total} has no voxel with |x| > {bg:g} (an all-zero or constant volume? "
           "a z-scored constant is 0): 0 tokens", quiet)


def tag(meta) -> dict:
    """``{"data": "SYNTHETIC"}`` for clips made by ``fmri synth`` (a bool or a clips-NPZ dict), else ``{}``."""
    flag = meta.get("synthetic", False) if isinstance(meta, dict) else meta
    return {"data": "SYNTHETIC"} if bool(flag) else {}


def write_npz(path: str, **arrays) -> None:
    import numpy as np
    from mlx26.core.common.files import atomic_path

    with atomic_path(path, suffix=".npz") as tmp:
        np.savez_compressed(tmp, **arrays)


def write_run(vol, path: Path) -> None:
    """A SYNTHETIC run as NIfTI (TR in the header, seconds) plus a JSON sidecar with the frame labels."""
    import json

    import nibabel as nib
    import numpy as np
    from mlx26.core.common.files import atomic_path, atomic_write

    img = nib.Nifti1Image(np.moveaxis(vol.data, 0, -1), vol.affine)
    img.header.set_xyzt_units("mm", "sec")
    img.header["pixdim"][4] = vol.tr
    with atomic_path(path, suffix=".nii.gz") as tmp:
        nib.save(img, tmp)
    side = Path(str(path).removesuffix(".gz").removesuffix(".nii") + ".json")
    atomic_write(side, json.dumps({"RepetitionTime": vol.tr, "SYNTHETIC": True, "subject": vol.subject,
                                   "frame_labels": vol.frame_labels}) + "\n")
