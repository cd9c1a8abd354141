"""`mlx26 train rl --plot`: the learning curves of the run's metrics.jsonl, and matplotlib checked before training."""

from __future__ import annotations

import sys

import pytest

from tests._plot import assert_png

pytest.importorskip("gymnasium")
pytest.importorskip("matplotlib")

TINY = ["train", "rl", "--algo", "dqn", "--env", "CartPole-v1", "--set", "learning_starts=100", "--set", "train_freq=50",
        "--set", "gradient_steps=8", "--set", "log_every=50", "--eval-episodes", "2", "--steps", "200",
        "--eval-every", "100", "--quiet", "--format", "json"]


def test_train_rl_plot(run_cli, tmp_path):
    from mlx26.cli._plot import read_jsonl
    from mlx26.core.common.plot import curve_fields

    png = tmp_path / "rl.png"
    r = run_cli(*TINY, "--out", tmp_path / "run", "--plot", png)
    assert r.code == 0, r.stderr
    fields = curve_fields(read_jsonl(tmp_path / "run" / "metrics.jsonl"), series="phase")
    assert "eval_return" in fields and "loss" in fields and "phase" not in fields
    assert_png(png, len(fields))


def test_train_rl_plot_is_checked_before_training(run_cli, tmp_path, monkeypatch):
    png = tmp_path / "rl.png"
    png.write_bytes(b"old")
    r = run_cli(*TINY, "--out", tmp_path / "run", "--plot", png)
    assert r.code == 2 and png.read_bytes() == b"old" and not (tmp_path / "run").exists()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = run_cli(*TINY, "--out", tmp_path / "run", "--plot", tmp_path / "new.png")
    assert r.code == 3 and "mlx26[plot]" in r.stderr and not (tmp_path / "run").exists()
