"""`mlx26 zoo train --plot`: the train loss and held-out probe of the manifest's history."""

from __future__ import annotations

import json

import pytest

from tests._plot import assert_png

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("matplotlib")


def test_zoo_train_plot(run_cli, tmp_path):
    from mlx26.core.common.plot import curve_fields

    png = tmp_path / "z.png"
    r = run_cli("zoo", "train", "micro-llama", "--steps", "2", "--max-train-bytes", "20000", "--eval-bytes", "2000",
                "--out", tmp_path / "m", "-q", "--format", "json", "--plot", png)
    assert r.code == 0, r.stderr
    history = json.loads((tmp_path / "m" / "manifest.json").read_text())["training"]["history"]
    fields = curve_fields(history)
    assert "heldout_bpb_probe" in fields
    assert_png(png, len(fields))
    r = run_cli("zoo", "train", "micro-llama", "--steps", "2", "--out", tmp_path / "m2", "--plot", png)
    assert r.code == 2 and "refusing to overwrite" in r.stderr and not (tmp_path / "m2").exists()
