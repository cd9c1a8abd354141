"""`mlx26 spike train --plot`: the logged loss, learning rate and time against the step."""

from __future__ import annotations

import json

import pytest

from tests._plot import assert_png

pytest.importorskip("torch")
pytest.importorskip("matplotlib")


def test_spike_train_plot(run_cli, tmp_path):
    from mlx26.core.common.plot import curve_fields

    png, metrics = tmp_path / "s.png", tmp_path / "m.jsonl"
    r = run_cli("spike", "train", "--task", "salient", "--steps", "4", "--n-train", "32", "--n-test", "16",
                "--d-model", "16", "--layers", "1", "--out", tmp_path / "spk", "-q", "--format", "json",
                "--metrics", metrics, "--plot", png)
    assert r.code == 0, r.stderr
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    fields = curve_fields(records)
    assert fields[0] == "loss"
    assert_png(png, len(fields))
