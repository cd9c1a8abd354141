"""Run logs (metrics.csv, TensorBoard), `rl sweep` statistics and `rl plot` PNGs."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("torch")

from mlx26.core.rl import datagen, datasets, logs, sweep  # noqa: E402

TINY = ["--set", "preset=small", "--set", "actor_hidden=16,16", "--set", "value_hidden=16,16",
        "--set", "batch_size=16", "--set", "log_every=5"]


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("toy") / "toy.npz"
    train, val, meta = datagen.generate("mlx26/toy-modes", "oracle", steps=300, seed=0)
    datasets.save(path, train, meta)
    return str(path)


@pytest.fixture(scope="module")
def swept(toy, tmp_path_factory):
    """fql and dfql over 3 seeds through `rl sweep` (10 steps each, eval every 5)."""
    from mlx26.cli.main import app
    from typer.testing import CliRunner

    root = tmp_path_factory.mktemp("sweep")
    result = CliRunner().invoke(app, ["rl", "sweep", "--algo", "fql", "--algo", "dfql", "--env", "mlx26/toy-modes",
                                      "--dataset", toy, "--seeds", "0-2", "--steps", "10", "--eval-every", "5",
                                      "--eval-episodes", "4", *TINY, "--out", str(root), "--format", "json",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    return root, json.loads(result.stdout)


def test_sweep_gives_one_row_per_algorithm_with_mean_and_ci(swept):
    root, rows = swept
    assert [r["group"] for r in rows] == ["fql", "dfql"]
    for row in rows:
        assert row["seeds"] == [0, 1, 2] and row["n"] == 3
        finals = [json.loads((root / f"{row['group']}-s{s}" / "metrics.jsonl").read_text().splitlines()[-1])
                  for s in (0, 1, 2)]
        vals = np.array([f["eval_return"] for f in finals])
        assert math.isclose(row["eval_return_mean"], vals.mean(), rel_tol=1e-12)
        half = 4.302652729911275 * vals.std(ddof=1) / np.sqrt(3)  # t(0.975, 2 d.f.)
        assert math.isclose(row["eval_return_ci_high"] - row["eval_return_mean"], half, rel_tol=1e-9, abs_tol=1e-12)
        assert row["eval_return_ci_low"] <= row["eval_return_mean"] <= row["eval_return_ci_high"]


def test_csv_and_tensorboard_hold_the_jsonl_metrics(swept):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = swept[0] / "dfql-s1"
    records = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    with open(run / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    want = {(r["step"], r["phase"], k): float(v) for r in records for k, v in logs.scalars(r).items()}
    got = {(int(r["step"]), r["phase"], r["metric"]): float(r["value"]) for r in rows}
    assert got == want and len(got) > 10
    acc = EventAccumulator(str(run / "tb"))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert {"train/critic_loss", "eval/eval_return", "train/df_loss"} <= set(tags)
    events = acc.Scalars("eval/eval_return")
    evals = [r for r in records if r["phase"] == "eval"]
    assert [e.step for e in events] == [r["step"] for r in evals] == [5, 10]
    assert np.allclose([e.value for e in events], [r["eval_return"] for r in evals], atol=1e-6)


def test_plot_writes_a_png_with_one_curve_per_algorithm(run_cli, swept, tmp_path):
    from PIL import Image

    root, _ = swept
    png = tmp_path / "curves.png"
    runs = sorted(str(p) for p in root.iterdir())
    result = run_cli("rl", "plot", *runs, "-o", str(png), "--metric", "eval_return", "--format", "json")
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {r["group"]: r["seeds"] for r in rows} == {"fql": 3, "dfql": 3}
    img = np.asarray(Image.open(png).convert("RGB"))
    assert img.shape[0] >= 400 and img.shape[1] >= 700
    assert img.std() > 10 and len(np.unique(img.reshape(-1, 3), axis=0)) > 50  # not blank
    again = run_cli("rl", "plot", *runs, "-o", str(png))
    assert again.code == 2 and "--force" in again.stderr
    missing = run_cli("rl", "plot", *runs, "-o", str(tmp_path / "m.png"), "--metric", "no_such")
    assert missing.code == 2 and "no run logged the metric 'no_such'" in missing.stderr
    notrun = run_cli("rl", "plot", str(tmp_path), "-o", str(tmp_path / "n.png"))
    assert notrun.code == 2 and "not a training run" in notrun.stderr


@pytest.mark.parametrize(("text", "seeds"), [("0-4", [0, 1, 2, 3, 4]), ("3", [3]), ("0,2,7", [0, 2, 7])])
def test_parse_seeds(text, seeds):
    assert sweep.parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["4-1", "a", "", "1,1", "-2", "0,,1"])
def test_parse_seeds_refuses(text):
    with pytest.raises(ValueError, match="--seeds"):
        sweep.parse_seeds(text)


def test_sweep_refuses_an_existing_run_before_training(run_cli, toy, tmp_path):
    (tmp_path / "fql-s1").mkdir()
    (tmp_path / "fql-s1" / "config.json").write_text("{}")
    result = run_cli("rl", "sweep", "--algo", "fql", "--env", "mlx26/toy-modes", "--dataset", toy, "--seeds", "0-1",
                     "--steps", "5", *TINY, "--out", str(tmp_path))
    assert result.code == 2 and "refusing to overwrite" in result.stderr
    assert "--resume" not in result.stderr and "--force" in result.stderr
    assert not (tmp_path / "fql-s0" / "config.json").exists()  # nothing ran


def _fake_run(folder, algo, seed, steps, alpha=1.0):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"algo": algo, "env": "mlx26/toy-modes", "seed": seed,
                                                    "hp": {"alpha": alpha}}))
    (folder / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "phase": "train", "loss": float(s + seed)})
                                                  + "\n" for s in steps))
    return str(folder)


def test_plot_dedupes_folders_and_refuses_copies(run_cli, tmp_path):
    a = _fake_run(tmp_path / "a", "fql", 0, [5, 10])
    b = _fake_run(tmp_path / "b", "fql", 1, [5, 10])
    result = run_cli("rl", "plot", a, b, a + "/", "-o", str(tmp_path / "p.png"), "--metric", "loss",
                     "--format", "json")
    assert result.code == 0, result.stderr
    assert "1 repeated run folder" in result.stderr and json.loads(result.stdout)[0]["seeds"] == 2
    c = _fake_run(tmp_path / "c", "fql", 0, [5, 10])  # a copy of a's algorithm and seed
    result = run_cli("rl", "plot", a, b, c, "-o", str(tmp_path / "q.png"), "--metric", "loss")
    assert result.code == 2 and "over copies" in result.stderr and not (tmp_path / "q.png").exists()


def test_plot_refuses_no_shared_step_and_unknown_group_by(run_cli, tmp_path):
    a = _fake_run(tmp_path / "a", "fql", 0, [5, 10])
    b = _fake_run(tmp_path / "b", "fql", 1, [3, 7])
    result = run_cli("rl", "plot", a, b, "-o", str(tmp_path / "p.png"), "--metric", "loss")
    assert result.code == 2 and "share no logged step" in result.stderr and not (tmp_path / "p.png").exists()
    result = run_cli("rl", "plot", a, "-o", str(tmp_path / "g.png"), "--metric", "loss", "--group-by", "nope")
    assert result.code == 2 and "valid: algo, run" in result.stderr and "alpha" in result.stderr
    ok = run_cli("rl", "plot", a, "-o", str(tmp_path / "g.png"), "--metric", "loss", "--group-by", "alpha")
    assert ok.code == 0, ok.stderr


def test_train_metrics_are_logged_at_the_final_step(run_cli, toy, tmp_path):
    result = run_cli("train", "rl", "--algo", "fql", "--env", "mlx26/toy-modes", "--dataset", toy, "--steps", "7",
                     *TINY, "--out", str(tmp_path / "r"), "--quiet")
    assert result.code == 0, result.stderr
    records = [json.loads(x) for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["phase"] == "train"] == [5, 7]
