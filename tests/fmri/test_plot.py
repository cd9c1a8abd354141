"""`mlx26 fmri pretrain --plot`: the MAE loss of every step."""

from __future__ import annotations

import pytest

from tests._plot import assert_png

pytest.importorskip("torch")
pytest.importorskip("matplotlib")


def test_fmri_pretrain_plot(run_cli, tmp_path):
    assert run_cli("fmri", "synth", tmp_path / "data", "--subjects", "2", "--runs", "1", "--frames", "16", "-q",
                   "-o", tmp_path / "synth.jsonl").code == 0
    assert run_cli("fmri", "preprocess", tmp_path / "data", "--npz", tmp_path / "clips.npz", "--size", "32",
                   "--frames", "8", "-q", "-o", tmp_path / "pre.json").code == 0
    png = tmp_path / "f.png"
    r = run_cli("fmri", "pretrain", tmp_path / "clips.npz", "--save", tmp_path / "m.pt", "--steps", "3", "--dim", "16",
                "--format", "json", "-q", "--plot", png)
    assert r.code == 0, r.stderr
    assert_png(png, 1)
    r = run_cli("fmri", "pretrain", tmp_path / "clips.npz", "--save", tmp_path / "m2.pt", "--steps", "3", "--plot", png)
    assert r.code == 2 and not (tmp_path / "m2.pt").exists()
