"""`mlx26 sr train --plot`: the loss curve the manifest keeps."""

from __future__ import annotations

import json

import pytest

from tests._plot import assert_png

pytest.importorskip("torch")
pytest.importorskip("matplotlib")


def test_sr_train_plot(run_cli, tmp_path):
    png = tmp_path / "sr.png"
    r = run_cli("sr", "train", "--save", tmp_path / "m", "--steps", "4", "--pool", "200", "-q", "--format", "json",
                "--plot", png)
    assert r.code == 0, r.stderr
    curve = json.loads((tmp_path / "m" / "manifest.json").read_text())["train"]["curve"]
    assert [c["step"] for c in curve] == [1, 2, 3, 4]
    assert_png(png, 1)
    assert run_cli("sr", "train", "--save", tmp_path / "m3", "--steps", "4", "--plot", tmp_path / "x.svg").code == 2
    assert not (tmp_path / "m3").exists()
