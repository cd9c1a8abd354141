"""`mlx26 train grpo --plot`: learning curves of the run's metrics.jsonl, warm-up and GRPO steps as two series.

The fast test stands a fake trainer in for TRL (the wiring: checked first, read back, drawn); the real micro run
is marked slow."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests._plot import assert_png

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

RECORDS = [
    *({"phase": "warmup", "step": s, "loss": 3.0 - s / 2} for s in (1, 2, 3)),
    {"phase": "eval", "when": "before", "decode": "greedy", "accuracy": 0.1, "mean_length": 40.0},
    *({"phase": "grpo", "step": s, "loss": 0.1 * s, "reward": 0.2 * s, "completions/mean_length": 40.0 - s,
       "kl": 0.0} for s in (1, 2, 3)),
]


@pytest.fixture
def fake_trainer(monkeypatch):
    from mlx26.core.smartthinker import grpo

    def train(s, sink, *, force=False):
        out = Path(s.out)
        out.mkdir(parents=True, exist_ok=True)
        with (out / "metrics.jsonl").open("w", encoding="utf-8") as log:
            for record in RECORDS:
                log.write(json.dumps(record) + "\n")
                sink(record)
        return {"before": {}, "after": {}}

    monkeypatch.setattr(grpo, "train", train)
    monkeypatch.setattr(grpo, "load_trl", lambda: (None, None))


def test_train_grpo_plot_reads_the_run_metrics(run_cli, tmp_path, fake_trainer):
    from mlx26.core.common.plot import curve_fields

    png = tmp_path / "g.png"
    r = run_cli("train", "grpo", "--preset", "micro", "--out", tmp_path / "run", "-q", "--format", "json",
                "--plot", png)
    assert r.code == 0, r.stderr
    fields = curve_fields(RECORDS, series="phase")
    assert fields == ["loss", "reward", "completions/mean_length"]  # kl is constant, the eval record has no step
    assert_png(png, len(fields))


def test_train_grpo_plot_checked_before_training(run_cli, tmp_path, fake_trainer, monkeypatch):
    png = tmp_path / "g.png"
    png.write_bytes(b"old")
    r = run_cli("train", "grpo", "--preset", "micro", "--out", tmp_path / "run", "--plot", png)
    assert r.code == 2 and png.read_bytes() == b"old" and not (tmp_path / "run").exists()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = run_cli("train", "grpo", "--preset", "micro", "--out", tmp_path / "run", "--plot", tmp_path / "n.png")
    assert r.code == 3 and "mlx26[plot]" in r.stderr and not (tmp_path / "run").exists()


@pytest.mark.slow
def test_train_grpo_micro_plot(run_cli, tmp_path):
    pytest.importorskip("trl")
    png = tmp_path / "g.png"
    r = run_cli("train", "grpo", "--preset", "micro", "--out", tmp_path / "run", "-q", "--format", "json",
                "--plot", png)
    assert r.code == 0, r.stderr
    from mlx26.cli._plot import read_jsonl
    from mlx26.core.common.plot import curve_fields

    fields = curve_fields(read_jsonl(tmp_path / "run" / "metrics.jsonl"), series="phase")
    assert fields and fields[0] == "loss"
    assert_png(png, len(fields))
