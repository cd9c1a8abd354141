"""Preprocessing of Omni-fMRI (arXiv 2601.23090, "Data Preparation" of the public README): resample to
isotropic voxels (nilearn ``resample_img``), pad/crop to a cube, interpolate in time to a target TR,
z-score globally over non-zero voxels, cut into T-frame clips.

The paper works at 2 mm on a 96^3 MNI grid with TR 0.72 s and cubic splines; the defaults here are
the same operations at CPU scale (the CLI exposes every size). Reconstructed: the order of the steps
and "z-score over non-zero voxels, background stays 0" follow the README's description.
"""

from __future__ import annotations

import warnings as _warnings
from dataclasses import dataclass

import numpy as np
from mlx26.core.common.errors import InputError

from .io import Volume


@dataclass
class Clips:
    clips: np.ndarray  # (N, T, S, S, S) float32
    labels: dict[str, np.ndarray]
    tr: float
    voxel: float
    warnings: list[str]
    synthetic: bool = False


def resample_isotropic(vol: Volume, voxel: float | None) -> Volume:
    """Resample to isotropic ``voxel`` mm (axis-aligned) with nilearn, when the grid is not already it."""
    zooms = np.array(vol.voxel_size)
    target = float(voxel) if voxel else float(zooms.min())
    aligned = np.allclose(np.abs(vol.affine[:3, :3]), np.diag(zooms), atol=1e-3 * zooms.max())
    if aligned and np.allclose(zooms, target, rtol=1e-3):
        return vol
    import nibabel as nib
    from nilearn.image import resample_img

    img = nib.Nifti1Image(np.moveaxis(vol.data, 0, -1), vol.affine)
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        out = resample_img(img, target_affine=np.diag([target] * 3), interpolation="linear",
                           force_resample=True, copy_header=True)
    data = np.moveaxis(np.asarray(out.get_fdata(dtype=np.float32)), -1, 0)
    return Volume(np.nan_to_num(data), np.asarray(out.affine), vol.tr, vol.source, list(vol.warnings),
                  dict(vol.frame_labels), vol.subject, vol.synthetic)


def pad_crop(data: np.ndarray, size: int) -> np.ndarray:
    """Centre-pad with zeros / centre-crop the three spatial axes of (T, X, Y, Z) to ``size``."""
    out = data
    for axis in (1, 2, 3):
        n = out.shape[axis]
        if n > size:
            start = (n - size) // 2
            out = np.take(out, range(start, start + size), axis=axis)
        elif n < size:
            before = (size - n) // 2
            pad = [(0, 0)] * 4
            pad[axis] = (before, size - n - before)
            out = np.pad(out, pad)
    return np.ascontiguousarray(out, dtype=np.float32)


def retime(data: np.ndarray, tr_in: float, tr_out: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Cubic-spline interpolation along time to ``tr_out``; returns data and the source frame of each frame."""
    t_in = np.arange(data.shape[0]) * tr_in
    if not tr_out or abs(tr_out - tr_in) < 1e-6 or data.shape[0] < 4:
        return data, np.arange(data.shape[0])
    from scipy.interpolate import CubicSpline

    t_out = np.arange(0, t_in[-1] + 1e-9, tr_out)
    out = CubicSpline(t_in, data, axis=0)(t_out).astype(np.float32)
    return out, np.clip(np.rint(t_out / tr_in).astype(int), 0, data.shape[0] - 1)


def zscore_nonzero(data: np.ndarray) -> np.ndarray:
    """Global z-score over voxels that are non-zero at some frame; the background stays exactly 0."""
    fg = np.abs(data).max(axis=0) > 0
    if not fg.any():
        return data.astype(np.float32)
    vals = data[:, fg]
    sd = float(vals.std())
    out = np.zeros_like(data, dtype=np.float32)
    out[:, fg] = (vals - float(vals.mean())) / (sd if sd > 0 else 1.0)
    return out


def segment(n_frames: int, frames: int, stride: int | None = None) -> list[int]:
    stride = stride or frames
    if n_frames < frames:
        raise InputError(f"the run has {n_frames} frames, shorter than one clip of {frames}",
                         "lower --frames, or pass a longer run")
    return list(range(0, n_frames - frames + 1, stride))


def preprocess(volumes: list[Volume], *, size: int, frames: int, voxel: float | None = None,
               tr: float | None = None, zscore: bool = True, stride: int | None = None) -> Clips:
    if size <= 0 or frames <= 0:
        raise InputError("--size and --frames must be positive")
    clips, labels, warns = [], {}, []  # type: ignore[var-annotated]
    subjects = sorted({v.subject for v in volumes})
    for vol in volumes:
        warns += vol.warnings
        v = resample_isotropic(vol, voxel)
        data, src = retime(v.data, v.tr, tr)
        data = pad_crop(data, size)
        if zscore:
            data = zscore_nonzero(data)
        for start in segment(data.shape[0], frames, stride):
            clips.append(data[start:start + frames])
            idx = src[start:start + frames]
            for key, values in v.frame_labels.items():
                arr = np.asarray(values)[idx]
                uniq, counts = np.unique(arr, return_counts=True)
                labels.setdefault(key, []).append(uniq[np.argmax(counts)])
            labels.setdefault("subject", []).append(subjects.index(v.subject))
    voxel_out = float(voxel) if voxel else float(min(volumes[0].voxel_size))
    return Clips(np.stack(clips).astype(np.float32), {k: np.asarray(a) for k, a in labels.items()},
                 float(tr or volumes[0].tr), voxel_out, warns, any(v.synthetic for v in volumes))
