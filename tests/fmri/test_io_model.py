"""I/O checks, preprocessing, the MAE and the probe (SYNTHETIC data)."""

from __future__ import annotations

import json

import nibabel as nib
import numpy as np
import pytest
from mlx26.core.common.errors import InputError
from mlx26.core.fmri import io, preprocess


def _nii(path, data_xyzt, affine=None, tr=2.0, unit="sec"):
    img = nib.Nifti1Image(np.asarray(data_xyzt, np.float32), np.eye(4) * 2 if affine is None else affine)
    img.affine[3, 3] = 1
    img.header.set_xyzt_units("mm", unit)
    if np.ndim(data_xyzt) == 4:
        img.header["pixdim"][4] = tr
    nib.save(img, str(path))
    return str(path)


def test_real_functional_nii_loads_and_is_resampled():
    import os

    path = os.path.join(os.path.dirname(nib.__file__), "tests", "data", "functional.nii")
    vol = io.load_nifti(path)
    assert vol.data.ndim == 4 and 0.2 <= vol.tr <= 10
    assert any("anisotropic" in w for w in vol.warnings)
    iso = preprocess.resample_isotropic(vol, None)
    assert np.allclose(iso.voxel_size, min(vol.voxel_size))


def test_tr_in_ms_is_converted_and_implausible_tr_rejected(tmp_path):
    d = np.random.default_rng(0).normal(size=(8, 8, 8, 5))
    vol = io.load_nifti(_nii(tmp_path / "ms.nii", d, tr=2000, unit="msec"))
    assert vol.tr == pytest.approx(2.0)
    with pytest.raises(InputError, match="implausible TR"):
        io.load_nifti(_nii(tmp_path / "bad.nii", d, tr=0.001))


def test_nan_inf_are_counted_and_zeroed(tmp_path):
    d = np.ones((8, 8, 8, 5))
    d[0, 0, 0, 0], d[1, 1, 1, 1] = np.nan, np.inf
    vol = io.load_nifti(_nii(tmp_path / "nan.nii", d))
    assert np.isfinite(vol.data).all() and vol.data[0, 0, 0, 0] == 0
    assert any("2 NaN/Inf" in w for w in vol.warnings)


def test_oblique_affine_warns_and_resamples(tmp_path):
    c, s = np.cos(0.3), np.sin(0.3)
    aff = np.array([[2 * c, -2 * s, 0, 0], [2 * s, 2 * c, 0, 0], [0, 0, 2, 0], [0, 0, 0, 1]])
    vol = io.load_nifti(_nii(tmp_path / "obl.nii", np.ones((10, 10, 10, 4)), affine=aff))
    assert any("oblique" in w for w in vol.warnings)
    iso = preprocess.resample_isotropic(vol, 2.0)
    assert np.allclose(np.abs(iso.affine[:3, :3]), np.eye(3) * 2)


def test_3d_and_non_nifti_and_short_runs_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="3D image"):
        io.load_nifti(_nii(tmp_path / "a.nii", np.ones((8, 8, 8))))
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(InputError, match="not a NIfTI"):
        io.load_nifti(tmp_path / "x.txt")
    vol = io.load_nifti(_nii(tmp_path / "short.nii", np.ones((8, 8, 8, 3))))
    with pytest.raises(InputError, match="shorter than one clip"):
        preprocess.preprocess([vol], size=8, frames=8)


def test_zscore_pad_crop_retime():
    rng = np.random.default_rng(0)
    x = np.zeros((6, 10, 10, 10), np.float32)
    x[:, 2:8, 2:8, 2:8] = 100 + 5 * rng.standard_normal((6, 6, 6, 6))
    z = preprocess.zscore_nonzero(x)
    fg = np.abs(x).max(0) > 0
    assert (z[:, ~fg] == 0).all() and abs(z[:, fg].mean()) < 1e-5 and abs(z[:, fg].std() - 1) < 1e-4
    assert preprocess.pad_crop(x, 16).shape == (6, 16, 16, 16) and preprocess.pad_crop(x, 4).shape == (6, 4, 4, 4)
    out, src = preprocess.retime(x, 2.0, 1.0)
    assert out.shape[0] == 11 and src[-1] == 5
    np.testing.assert_allclose(out[::2], x, atol=1e-3)


def test_synth_labels_and_bids_roundtrip(tmp_path, run_cli):
    r = run_cli("fmri", "synth", tmp_path / "d", "--subjects", "2", "--runs", "1", "--frames", "24", "--format", "jsonl")
    assert r.code == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 2 and all(x["data"] == "SYNTHETIC" for x in rows)
    runs = io.bids_runs(tmp_path / "d")
    vol = io.load_nifti(runs[0])
    assert vol.tr == 2.0 and set(vol.frame_labels) == {"condition", "network"} and vol.subject == "sub-01"


def test_mae_beats_mean_predictor_and_probe_runs(synth_clips):
    from mlx26.core.fmri import train
    from mlx26.core.fmri.patching import Settings

    ts = train.prepare(synth_clips.clips, Settings())
    model, info = train.pretrain(ts, steps=80, seed=0, dim=32, heads=4, threads=1)
    ev = train.evaluate(model, ts, seed=0)
    assert ev["mae_mse"] < ev["mean_predictor_mse"]
    emb = train.embed(model, ts)
    assert emb.shape == (len(synth_clips.clips), 32) and np.isfinite(emb).all()
    res = train.probe(emb, synth_clips.labels["subject"])
    assert 0 <= res["accuracy"] <= 1 and res["classes"] == 3


def test_pretraining_is_deterministic(synth_clips):
    from mlx26.core.fmri import train
    from mlx26.core.fmri.patching import Settings

    ts = train.prepare(synth_clips.clips[:6], Settings())
    a = train.pretrain(ts, steps=3, seed=1, dim=16, heads=2, threads=1)[1]["final_loss"]
    b = train.pretrain(ts, steps=3, seed=1, dim=16, heads=2, threads=1)[1]["final_loss"]
    assert a == b


def test_coarse_mlp_is_zero_initialised():
    from mlx26.core.fmri import train
    from mlx26.core.fmri.patching import Settings

    m = train.build_model(4, Settings(), dim=16, heads=2)
    assert not m.sub_mlp[-1].weight.detach().any() and not m.sub_mlp[-1].bias.detach().any()


def test_cells_partition_the_foreground_and_match_the_coarse_patches(synth_clips):
    """Every patching reconstructs the same foreground fine cells; a coarse token's cells are its 4^3 blocks."""
    from mlx26.core.fmri import train
    from mlx26.core.fmri.patching import Settings, patch_arrays, tokenize

    x = synth_clips.clips[0]
    d = train.clip_tokens(x, Settings())
    u = train.clip_tokens(x, Settings(patching="uniform"))
    assert d["n_coarse"] > 0 and len(d["inp"]) == d["n_fine"] + d["n_coarse"] < len(u["inp"])
    assert len(d["cells"]) == len(u["cells"]) == len(u["inp"])  # = the uniform token count
    key = lambda c: np.sort(c.reshape(len(c), -1).sum(1))  # noqa: E731
    np.testing.assert_allclose(key(d["cells"]), key(u["cells"]), rtol=1e-5)
    tok = tokenize(x, Settings())
    coarse = patch_arrays(x, tok)[1]  # (K, T, 8, 8, 8)
    k = d["cell_tok"][d["cell_sub"] >= 0][0] - d["n_fine"]
    first = np.flatnonzero(d["cell_tok"] == d["n_fine"] + k)
    for i in first:
        a, b, c = (int(d["cell_sub"][i]) >> 2) & 1, (int(d["cell_sub"][i]) >> 1) & 1, int(d["cell_sub"][i]) & 1
        block = coarse[k][:, 4 * a:4 * a + 4, 4 * b:4 * b + 4, 4 * c:4 * c + 4]
        np.testing.assert_array_equal(d["cells"][i], block.reshape(-1))
    np.testing.assert_allclose(d["inp"][d["n_fine"] + k],
                               coarse[k].reshape(8, 4, 2, 4, 2, 4, 2).mean(axis=(2, 4, 6)).reshape(-1), rtol=1e-5)


def test_factored_coarse_head_starts_shared_and_mean_predictor_matches(synth_clips):
    """At init the split is zero (all sub-cells of a coarse token get one prediction); the reported baseline
    is the mean predictor on exactly the masked voxels."""
    import torch
    from mlx26.core.fmri import train
    from mlx26.core.fmri.patching import Settings

    ts = train.prepare(synth_clips.clips[:2], Settings())
    m = train.build_model(8, Settings(), dim=16, heads=2)
    assert not m.split.detach().any()
    b = train.collate(ts, [0, 1])
    loss, base, count = m(b, 0.75, torch.Generator().manual_seed(0))
    assert count % (8 * 4 ** 3) == 0 and 0 < count < b["cells"][b["cell_tok"] >= 0].numel()
    assert float(base) > 0 and torch.isfinite(loss)


@pytest.mark.xfail(strict=True, reason="known weakness (docs/fmri.md): with held-out subjects, standardised "
                   "one-hot subject features blow up on unseen subjects (0.70 here, not chance) and drown a real "
                   "signal column (0.73 < 0.9); strict: this test fails when the probe is fixed, so drop the mark")
def test_probe_protocol_holds_out_subjects():
    """Features that only identify the subject carry no task information across subjects: with held-out
    subjects the probe is at chance, with shuffled clips it is not; a real signal is found either way."""
    from mlx26.core.fmri import train

    rng = np.random.default_rng(0)
    subj = np.repeat(np.arange(8), 10)
    label = subj % 2  # confounded with subject identity
    feats = np.eye(8)[subj] + 0.05 * rng.standard_normal((80, 8))
    within = train.probe(feats, label, seed=0)
    across = train.probe(feats, label, seed=0, groups=subj)
    assert within["accuracy"] > 0.9 and across["accuracy"] < 0.7 and across["held_out"] == "groups"
    real = np.c_[feats, label + 0.3 * rng.standard_normal(80)]
    assert train.probe(real, label, seed=0, groups=subj)["accuracy"] > 0.9
    assert within["chance"] == 0.5 and within["metric"] == "balanced_accuracy"


@pytest.mark.slow
def test_bench_claims_on_synthetic_data():
    """dynamic: <= 0.85x uniform tokens, MAE MSE within +10 % of uniform, probe gain >= 10 points (subject)."""
    from mlx26.core.fmri import bench

    recs = {r["patching"]: r for r in bench.compare(steps=200, labels=("subject",), patchings=("dynamic", "uniform"))}
    d, u = recs["dynamic"], recs["uniform"]
    assert d["tokens_per_clip"] <= 0.85 * u["tokens_per_clip"]
    assert d["mae_mse"] <= 1.10 * u["mae_mse"] and d["mae_mse"] < d["mean_predictor_mse"]
    assert d["probe_subject_gain_points"] >= 10
