"""``mlx26 fmri`` through the CLI: happy paths, the quickstart count, every bad-input case, one subprocess run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nibabel as nib
import numpy as np
import pytest

from .conftest import quickstart_volume

FUNCTIONAL = os.path.join(os.path.dirname(nib.__file__), "tests", "data", "functional.nii")


def _nii(path, txyz, tr=2.0, affine=None):
    img = nib.Nifti1Image(np.moveaxis(np.asarray(txyz, np.float32), 0, -1), np.diag([2.0, 2, 2, 1])
                          if affine is None else affine)
    img.header.set_xyzt_units("mm", "sec")
    img.header["pixdim"][4] = tr
    nib.save(img, str(path))
    return str(path)


@pytest.fixture(scope="module")
def clips_npz(tmp_path_factory):
    from mlx26.cli.main import main

    d = tmp_path_factory.mktemp("fmri")
    assert main(["fmri", "synth", str(d / "data"), "--subjects", "3", "--runs", "1", "--frames", "32", "-q",
                 "-o", str(d / "synth.jsonl")]) == 0
    assert main(["fmri", "preprocess", str(d / "data"), "--npz", str(d / "clips.npz"), "--size", "32",
                 "--frames", "8", "-o", str(d / "pre.json")]) == 0
    return d / "clips.npz"


def test_help(run_cli):
    r = run_cli("fmri", "--help")
    assert r.code == 0
    for cmd in ("synth", "preprocess", "tokenize", "pretrain", "embed", "probe", "show", "bench"):
        assert cmd in r.stdout


def test_quickstart_nifti_tokenizes_to_880_fine_tokens(run_cli, tmp_path):
    path = _nii(tmp_path / "quick.nii", quickstart_volume())
    r = run_cli("fmri", "tokenize", path, "--tau", "0.25", "--npz", tmp_path / "t.npz", "--format", "json")
    assert r.code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["tokens_4"] == 880 and out["tokens_8"] == 0
    assert out["foreground_voxels_covered"] == out["foreground_voxels"] == 32 * 36 * 42
    with np.load(tmp_path / "t.npz") as f:
        assert f["clip0_coords_4"].shape == (880, 3) and f["sizes"].tolist() == [4, 8]


def test_tokenize_real_file_and_npz(run_cli, clips_npz):
    r = run_cli("fmri", "tokenize", FUNCTIONAL, "--format", "json", "-q")
    out = json.loads(r.stdout)
    assert r.code == 0 and out["tokens"] > 0 and out["voxels_covered_twice"] == 0
    r = run_cli("fmri", "tokenize", clips_npz, "--tau", "0", "--format", "jsonl")
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.code == 0 and len(rows) == 12 and all(x["tokens_8"] == 0 for x in rows)
    r = run_cli("fmri", "tokenize", clips_npz, "--scales", "1", "--format", "jsonl")
    assert all(json.loads(x)["tokens"] == json.loads(x)["uniform_tokens"] for x in r.stdout.splitlines())


def test_pretrain_embed_probe_show(run_cli, clips_npz, tmp_path):
    m = tmp_path / "m.pt"
    r = run_cli("fmri", "pretrain", clips_npz, "--save", m, "--steps", "3", "--dim", "16", "--format", "json", "-q")
    assert r.code == 0, r.stderr
    assert json.loads(r.stdout)["steps"] == 3 and m.exists()
    r = run_cli("fmri", "embed", clips_npz, "--model", m, "--npz", tmp_path / "e.npz", "--format", "json")
    assert r.code == 0 and json.loads(r.stdout)["dim"] == 16
    with np.load(tmp_path / "e.npz") as f:
        assert f["embeddings"].shape == (12, 16) and "subject" in f.files
    r = run_cli("fmri", "probe", clips_npz, "--model", m, "--label", "subject", "--format", "json")
    out = json.loads(r.stdout)
    assert r.code == 0 and 0 <= out["probe_pretrained"] <= 1 and out["chance"] == pytest.approx(1 / 3)
    pytest.importorskip("matplotlib")
    r = run_cli("fmri", "show", clips_npz, "--png", tmp_path / "s.png", "--format", "json")
    assert r.code == 0 and (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_tiny(run_cli):
    r = run_cli("fmri", "bench", "--steps", "2", "--subjects", "2", "--frames", "16", "--size", "16",
                "--label", "subject", "--format", "jsonl", "-q")
    assert r.code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["patching"] for x in rows] == ["dynamic", "uniform", "random"]
    assert all(x["data"] == "SYNTHETIC" for x in rows)
    assert rows[0]["tokens_per_clip"] == rows[2]["tokens_per_clip"]  # random = equal token count


def test_all_zero_volume_gives_zero_tokens(run_cli, tmp_path):
    r = run_cli("fmri", "tokenize", _nii(tmp_path / "z.nii", np.zeros((5, 16, 16, 16))), "--format", "json")
    assert r.code == 0 and json.loads(r.stdout)["tokens"] == 0 and "no voxel with |x| > 0.001" in r.stderr
    # a constant run z-scores to exactly 0 everywhere: the same warning at preprocess time, no crash
    r = run_cli("fmri", "preprocess", _nii(tmp_path / "c.nii", np.full((8, 16, 16, 16), 5.0)), "--npz",
                tmp_path / "c.npz", "--size", "16", "--frames", "8", "--format", "json")
    assert r.code == 0 and "no voxel" in r.stderr
    r = run_cli("fmri", "pretrain", tmp_path / "c.npz", "--save", tmp_path / "m.pt", "--steps", "2")
    assert r.code == 1 and "no clip has a foreground token" in r.stderr and not (tmp_path / "m.pt").exists()


def test_checkpoint_on_clips_of_another_length_is_an_input_error(run_cli, clips_npz, tmp_path):
    m = tmp_path / "m.pt"
    assert run_cli("fmri", "pretrain", clips_npz, "--save", m, "--steps", "1", "--dim", "16", "-q").code == 0
    short = tmp_path / "short.npz"
    with np.load(clips_npz) as f:
        np.savez(short, clips=f["clips"][:, :4], subject=f["subject"])
    for cmd in (["embed", short, "--model", m, "--npz", tmp_path / "e.npz"], ["probe", short, "--model", m,
                                                                              "--label", "subject"]):
        r = run_cli("fmri", *cmd)
        assert r.code == 2 and "pretrained on 8-frame clips; these clips have 4 frames" in r.stderr, r.stderr


def test_nan_voxels_warn_and_oblique_resamples(run_cli, tmp_path):
    x = np.random.default_rng(0).normal(size=(5, 16, 16, 16)).astype(np.float32)
    x[0, 0, 0, :3] = np.nan
    r = run_cli("fmri", "tokenize", _nii(tmp_path / "n.nii", x), "--format", "json")
    assert r.code == 0 and "3 NaN/Inf values" in r.stderr and "warning" in r.stderr
    c, s = np.cos(0.4), np.sin(0.4)
    aff = np.array([[2 * c, -2 * s, 0, 0], [2 * s, 2 * c, 0, 0], [0, 0, 3, 0], [0, 0, 0, 1]])
    r = run_cli("fmri", "preprocess", _nii(tmp_path / "o.nii", np.nan_to_num(x) + 1, affine=aff), "--npz",
                tmp_path / "o.npz", "--size", "16", "--frames", "5", "--format", "json")
    assert r.code == 0 and "oblique" in r.stderr and "anisotropic" in r.stderr


@pytest.mark.parametrize("case, args, code, needle", [
    ("3d", ["tokenize", "{d3}"], 2, "fMRI needs 4D"),
    ("short", ["preprocess", "{short}", "--npz", "{tmp}/out.npz", "--frames", "8"], 2, "shorter than one clip"),
    ("tr", ["tokenize", "{badtr}"], 2, "implausible TR"),
    ("txt", ["tokenize", "{txt}"], 2, "not a NIfTI file"),
    ("missing", ["tokenize", "{tmp}/nope.nii.gz"], 2, "file not found"),
    ("stdin", ["tokenize", "-"], 2, "fmri reads files"),
    ("score", ["tokenize", "{short}", "--score", "sdt"], 2, "Did you mean 'std'"),
    ("patching", ["tokenize", "{short}", "--patching", "dynamc"], 2, "Did you mean 'dynamic'"),
    ("label", ["probe", "{tmp}/c.npz", "--model", "{tmp}/m.pt", "--label", "subjct"], 2, "Did you mean 'subject'"),
    ("model", ["embed", "{npz}", "--model", "{txt}", "--npz", "{tmp}/e.npz"], 2, "not an mlx26 fmri checkpoint"),
    ("npz", ["pretrain", "{txt2}", "--save", "{tmp}/m.pt"], 2, "not a readable NPZ"),
    ("exists", ["preprocess", "{short}", "--npz", "{txt}"], 2, "refusing to overwrite"),
    ("single", ["synth", "{tmp}/one.nii.gz", "--subjects", "2"], 2, "a single .nii.gz holds one run"),
])
def test_bad_input(run_cli, tmp_path, case, args, code, needle):
    paths = {"tmp": str(tmp_path), "d3": _nii3(tmp_path / "a.nii"), "short": _nii(tmp_path / "s.nii",
             np.ones((3, 8, 8, 8))), "badtr": _nii(tmp_path / "b.nii", np.ones((4, 8, 8, 8)), tr=50),
             "txt": str(tmp_path / "x.txt"), "txt2": str(tmp_path / "x.npz"), "npz": str(tmp_path / "c.npz")}
    (tmp_path / "x.txt").write_text("not an image\n")
    (tmp_path / "x.npz").write_text("not an npz\n")
    np.savez(tmp_path / "c.npz", clips=np.ones((2, 4, 8, 8, 8), np.float32))
    r = run_cli("fmri", *[a.format(**paths) for a in args])
    assert r.code == code, (r.code, r.stderr)
    assert needle in r.stderr and r.error_lines[0].startswith("Error:") and len(r.error_lines) <= 2, r.stderr


def _nii3(path):
    nib.save(nib.Nifti1Image(np.ones((8, 8, 8), np.float32), np.eye(4)), str(path))
    return str(path)


def test_show_without_matplotlib_exits_3(run_cli, clips_npz, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = run_cli("fmri", "show", clips_npz, "--png", tmp_path / "s.png")
    assert r.code == 3 and "pip install 'mlx26[fmri]'" in r.stderr and not (tmp_path / "s.png").exists()


def test_missing_extra_exits_3(run_cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "nibabel", None)
    r = run_cli("fmri", "tokenize", FUNCTIONAL)
    assert r.code == 3 and "mlx26[fmri]" in r.stderr


def test_subprocess_entry_point(mlx26_exe, subprocess_env, tmp_path):
    proc = subprocess.run([mlx26_exe, "fmri", "tokenize", FUNCTIONAL, "--format", "json", "-q"],
                          capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["foreground_voxels_covered"] == json.loads(proc.stdout)["foreground_voxels"]
