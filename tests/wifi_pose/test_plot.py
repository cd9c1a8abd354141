"""`mlx26 wifi-pose train --plot`: the loss of every step."""

from __future__ import annotations

import pytest

from tests._plot import assert_png

pytest.importorskip("csiread")
pytest.importorskip("pywt")
pytest.importorskip("torch")
pytest.importorskip("matplotlib")


def test_wifi_pose_train_plot(run_cli, tmp_path):
    assert run_cli("wifi-pose", "synth", tmp_path / "c.npz", "--sequences", "4", "--frames", "4", "-q",
                   "-o", tmp_path / "s.json").code == 0
    png = tmp_path / "w.png"
    r = run_cli("wifi-pose", "train", tmp_path / "c.npz", "--save", tmp_path / "m.pt", "--steps", "3", "--batch", "2",
                "--window", "2", "-q", "--format", "json", "--plot", png)
    assert r.code == 0, r.stderr
    assert_png(png, 1)
