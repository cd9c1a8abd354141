"""Reading 4D fMRI for Omni-fMRI (arXiv 2601.23090): NIfTI through nibabel, NPZ clips, BIDS-style folders.

Every check the issue lists lives here so a bad file fails before any work: a 3D image, an
implausible TR (a header in ms is converted, anything outside ``TR_RANGE`` is an error), NaN/Inf
voxels (counted, zeroed, reported as a warning), oblique or anisotropic affines (reported; the
preprocessing resamples them), a file that is not NIfTI. Arrays are returned as ``(T, X, Y, Z)``
float32 ("time as channels", the layout of the public code).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError

from .spec import TR_RANGE

NIFTI_SUFFIXES = (".nii", ".nii.gz")


@dataclass
class Volume:
    """One 4D run: ``data`` (T, X, Y, Z) float32, its affine, TR in seconds, per-frame labels."""

    data: np.ndarray
    affine: np.ndarray
    tr: float
    source: str
    warnings: list[str] = field(default_factory=list)
    frame_labels: dict[str, list] = field(default_factory=dict)
    subject: str = "sub-01"
    synthetic: bool = False

    @property
    def voxel_size(self) -> tuple[float, float, float]:
        return tuple(float(v) for v in np.sqrt((self.affine[:3, :3] ** 2).sum(0)))  # type: ignore[return-value]


def is_nifti(path: str | Path) -> bool:
    return str(path).endswith(NIFTI_SUFFIXES)


def _tr_seconds(value: float, unit: str, source: str) -> tuple[float, list[str]]:
    warnings = []
    tr = float(value)
    if unit == "msec" or (unit == "unknown" and tr > 100):
        tr /= 1000.0
        warnings.append(f"{source}: TR {value:g} read as milliseconds → {tr:g} s")
    elif unit == "usec":
        tr /= 1e6
    if not np.isfinite(tr) or not TR_RANGE[0] <= tr <= TR_RANGE[1]:
        raise InputError(f"{source}: implausible TR {value:g} ({unit}); expected {TR_RANGE[0]}–{TR_RANGE[1]} s",
                         "fix the header's pixdim[4]/xyzt_units, or pass --tr-in SECONDS")
    return tr, warnings


def clean(data: np.ndarray, source: str) -> tuple[np.ndarray, list[str]]:
    """Count and zero NaN/Inf voxels (a warning), as float32."""
    data = np.asarray(data, dtype=np.float32)
    bad = ~np.isfinite(data)
    warnings = []
    if bad.any():
        n = int(bad.sum())
        warnings.append(f"{source}: {n} NaN/Inf values ({n / bad.size:.2%}) set to 0")
        data = np.where(bad, np.float32(0), data)
    return data, warnings


def affine_warnings(affine: np.ndarray, source: str, tol: float = 1e-3) -> list[str]:
    """Warnings for an oblique or anisotropic affine (both are resampled by preprocess)."""
    out = []
    rot = affine[:3, :3]
    zooms = np.sqrt((rot ** 2).sum(0))
    direction = rot / np.where(zooms == 0, 1, zooms)
    if np.abs(np.abs(direction) - np.round(np.abs(direction))).max() > tol:
        out.append(f"{source}: oblique affine; resampled to an axis-aligned grid")
    if zooms.max() - zooms.min() > tol * zooms.max():
        out.append(f"{source}: anisotropic voxels {tuple(round(float(z), 3) for z in zooms)} mm; resampled isotropic")
    return out


def load_nifti(path: str | Path, tr: float | None = None) -> Volume:
    import nibabel as nib

    source = str(path)
    if not Path(source).is_file():
        raise InputError(f"file not found: {source}", "check the path")
    if not is_nifti(source):
        raise InputError(f"{source}: not a NIfTI file (expected .nii or .nii.gz)", "pass a 4D *_bold.nii(.gz)")
    try:
        img: Any = nib.load(source)
        raw = np.asanyarray(img.dataobj)
    except Exception as exc:  # nibabel raises several classes for a corrupt file
        raise InputError(f"{source}: cannot read as NIfTI ({type(exc).__name__}: {exc})",
                         "pass a 4D *_bold.nii(.gz)") from exc
    if raw.ndim == 5 and raw.shape[3] == 1:
        raw = raw[:, :, :, 0, :]
    if raw.ndim != 4:
        raise InputError(f"{source}: a {raw.ndim}D image {tuple(raw.shape)}; fMRI needs 4D (x, y, z, time)",
                         "pass a 4D BOLD run, not an anatomical or mask volume")
    warnings: list[str] = []
    if tr is None:
        zooms = img.header.get_zooms()
        unit = img.header.get_xyzt_units()[1] if hasattr(img.header, "get_xyzt_units") else "unknown"
        tr, warnings = _tr_seconds(float(zooms[3]) if len(zooms) > 3 else 0.0, unit, source)
    else:
        tr, warnings = _tr_seconds(tr, "sec", source)
    data, w = clean(np.moveaxis(raw, -1, 0), source)
    warnings += w
    affine = np.asarray(img.affine, dtype=np.float64)
    warnings += affine_warnings(affine, source)
    vol = Volume(data, affine, tr, source, warnings)
    sidecar = Path(source[: -len(".nii.gz")] if source.endswith(".nii.gz") else source[:-4]).with_suffix(".json")
    if sidecar.is_file():
        meta = json.loads(sidecar.read_text())
        vol.frame_labels = {k: v for k, v in meta.get("frame_labels", {}).items() if len(v) == data.shape[0]}
        vol.subject = str(meta.get("subject", vol.subject))
        vol.synthetic = bool(meta.get("SYNTHETIC", False))
    return vol


def bids_runs(folder: str | Path) -> list[Path]:
    """The ``*_bold.nii(.gz)`` files of a BIDS-style folder, sorted."""
    runs = sorted(p for p in Path(folder).rglob("*_bold.nii*") if is_nifti(p))
    if not runs:
        raise InputError(f"{folder}: no *_bold.nii or *_bold.nii.gz files found", "pass a BIDS-style folder or a file")
    return runs


def load_clips(path: str | Path) -> dict[str, np.ndarray]:
    """An NPZ written by ``preprocess``: ``clips`` (N, T, X, Y, Z) plus per-clip label arrays."""
    source = str(path)
    if not Path(source).is_file():
        raise InputError(f"file not found: {source}", "check the path")
    try:
        with np.load(source, allow_pickle=False) as f:
            out = {k: f[k] for k in f.files}
    except Exception as exc:
        raise InputError(f"{source}: not a readable NPZ ({type(exc).__name__})",
                         "pass the output of `mlx26 fmri preprocess`") from exc
    if "clips" not in out or out["clips"].ndim != 5:
        raise InputError(f"{source}: no 'clips' array of shape (N, T, X, Y, Z)",
                         "pass the output of `mlx26 fmri preprocess`")
    clips, w = clean(out["clips"], source)
    out["clips"] = clips
    out["_warnings"] = np.array(w)
    return out
