"""`mlx26 select-batch train --plot`: the per-step records (val/train loss, utility, timings) against the step."""

from __future__ import annotations

import json

import pytest

from tests._plot import assert_png

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("matplotlib")


def test_select_batch_train_plot(run_cli, tmp_path):
    from mlx26.core.common.plot import curve_fields

    png, log, pool, val = (tmp_path / n for n in ("sb.png", "log.jsonl", "pool.jsonl", "val.jsonl"))
    pool.write_text(run_cli("select-batch", "demo-data", "--n", "16", "--format", "jsonl").stdout)
    val.write_text(run_cli("select-batch", "demo-data", "--split", "val", "--n", "4", "--format", "jsonl").stdout)
    r = run_cli("select-batch", "train", "--data", pool, "--val", val, "--steps", "2", "--batch", "2", "--buffer", "2",
                "--seq-len", "32", "-q", "-o", log, "--plot", png)
    assert r.code == 0, r.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()]
    fields = curve_fields(records)
    assert fields[:2] == ["val_loss", "train_loss"]
    assert_png(png, len(fields))


def test_select_batch_train_plot_checked_first(run_cli, tmp_path):
    r = run_cli("select-batch", "train", "--steps", "2", "--plot", tmp_path / "sb.pdf")
    assert r.code == 2 and ".png" in r.stderr
