"""``mlx26 spike`` through the CLI: train → eval → energy → export → eval on onnxruntime, softmax-cmp, every
documented bad input (exit 2, one line), Ctrl-C saving the model (exit 130), and the installed entry point."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

TINY = ["--steps", "6", "--n-train", "64", "--n-test", "100", "--d-model", "16", "--heads", "2", "--layers", "1",
        "-q"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from mlx26.cli.main import main

    d = tmp_path_factory.mktemp("spike")
    out = d / "m"
    assert main(["spike", "train", "--task", "salient", "--out", str(out), *TINY, "-o", str(d / "t.json")]) == 0
    return out, json.loads((d / "t.json").read_text())


def test_help_lists_every_command(run_cli):
    r = run_cli("spike", "--help")
    assert r.code == 0
    for cmd in ("train", "eval", "energy", "softmax-cmp", "export"):
        assert cmd in r.stdout


def test_train_record_and_folder(model):
    out, rec = model
    assert rec["synthetic"] is True and rec["arch"] == "spikinglm" and rec["attn"] == "spike2max" and rec["das"]
    assert 0 <= rec["test_accuracy"] <= 1 and rec["steps"] == 6
    assert (out / "config.json").is_file() and (out / "weights.pt").is_file()
    assert rec["dead_fraction_init"] is not None and rec["model_hash"].startswith("sha256:")


def test_eval_reproduces_the_training_accuracy(run_cli, model):
    out, rec = model
    r = run_cli("spike", "eval", "--model", out, "--format", "json")
    assert r.code == 0, r.stderr
    ev = json.loads(r.stdout)
    assert ev["accuracy"] == rec["test_accuracy"] and ev["examples"] == 100 and 0 <= ev["firing_rate"] <= 1


def test_export_then_onnx_eval_match_torch(run_cli, model, tmp_path):
    out, rec = model
    r = run_cli("spike", "export", "--model", out, "--check", "100", "--format", "json")
    assert r.code == 0, r.stderr
    ex = json.loads(r.stdout)
    assert ex["inputs"] == 100 and ex["max_abs_diff"] <= 1e-4 and ex["das_fused"] == 4
    assert ex["onnx_over_torch"] > 0
    r = run_cli("spike", "eval", "--model", out, "--runtime", "onnx", "--format", "json")
    assert r.code == 0, r.stderr
    assert abs(json.loads(r.stdout)["accuracy"] - rec["test_accuracy"]) <= 0.02
    # export refuses to overwrite its file without --force
    r = run_cli("spike", "export", "--model", out)
    assert r.code == 2 and "existing file" in r.stderr


def test_a_model_of_an_earlier_task_version_is_refused_with_one_line(run_cli, tmp_path, monkeypatch):
    """The salient task grew from 6 to 16 levels: a model trained on the old vocabulary must not meet the
    regenerated held-out ids with an IndexError."""
    from mlx26.cli.main import main
    from mlx26.core.spike import tasks

    old = tmp_path / "old"
    with monkeypatch.context() as patch:
        patch.setattr(tasks, "SALIENT_LEVELS", 6)
        assert main(["spike", "train", "--task", "salient", "--out", str(old), *TINY, "-o",
                     str(tmp_path / "t.json")]) == 0
    for command in ("eval", "energy"):
        r = run_cli("spike", command, "--model", old)
        assert r.code == 2 and "earlier version of --task salient (vocabulary 25" in r.stderr, r.stderr
        assert len(r.error_lines) <= 2 and "Traceback" not in r.stderr


def test_onnx_of_another_model_is_refused(run_cli, model, tmp_path):
    from mlx26.cli.main import main

    out, _ = model
    other = tmp_path / "other"
    assert main(["spike", "train", "--task", "salient", "--out", str(other), *TINY, "--seed", "1", "-o",
                 str(tmp_path / "t.json")]) == 0
    assert main(["spike", "export", "--model", str(other), "--check", "4", "-q", "-o", str(tmp_path / "e.json")]) == 0
    r = run_cli("spike", "eval", "--model", out, "--runtime", "onnx", "--onnx", other / "model.onnx")
    assert r.code == 2 and "was not exported from this model" in r.stderr
    assert len(r.error_lines) <= 2 and "Traceback" not in r.stderr


def test_energy_record_and_table(run_cli, model, tmp_path):
    out, _ = model
    r = run_cli("spike", "energy", "--model", out, "--n-test", "16", "--format", "json", "-q")
    assert r.code == 0, r.stderr
    e = json.loads(r.stdout)
    assert 0 < e["model_over_ann"] and e["paper_energy_change_pct"] == -57.9
    assert e["spike2max_pow2_over_softmax"] <= 0.05
    t = run_cli("spike", "energy", "--table", "--format", "csv")
    assert t.code == 0 and t.stdout.splitlines()[0] == "op,pj,source" and "fp32_mac,4.6," in t.stdout
    tbl = tmp_path / "t.json"
    tbl.write_text('{"fp32_mac": 0.0, "fp32_ac": 0.0}')
    r = run_cli("spike", "energy", "--model", out, "--n-test", "4", "--energy-table", tbl, "--format", "json", "-q")
    assert r.code == 0 and json.loads(r.stdout)["ann_twin_pj"] < e["ann_twin_pj"]


def test_softmax_cmp_rows(run_cli, tmp_path):
    r = run_cli("spike", "softmax-cmp", "-", "--scale", "1.4426950408889634", "--format", "jsonl",
                stdin='{"id": "a", "scores": [0.5, 2.0, -1.0]}\n{"scores": [3, 1], "mask": [false, true]}\n')
    assert r.code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    import math

    z = [math.exp(v) for v in (0.5, 2.0, -1.0)]
    assert all(abs(a - b / sum(z)) < 1e-9 for a, b in zip(rows[0]["spike2max"], z, strict=True))
    assert rows[0]["id"] == "a" and rows[1]["spike2max"] == [0.0, 1.0] and rows[1]["softmax"] == [0.0, 1.0]
    assert 2 ** -0.5 <= rows[0]["pow2_row_sum"] <= 2 ** 0.5
    csv = tmp_path / "s.csv"
    csv.write_text('scores\n"[1, 2]"\n"4 4"\n')
    r = run_cli("spike", "softmax-cmp", csv, "--format", "csv")
    assert r.code == 0 and r.stdout.splitlines()[0].startswith("scores,softmax,spike2max,spike2max_pow2")


@pytest.mark.parametrize("stdin,msg", [
    ('{"scores": [1, NaN]}\n', "record 1: scores must be finite"),
    ('{"x": 1}\n', "record 1 has no 'scores' field"),
    ('{"scores": []}\n', "non-empty list"),
    ('{"scores": [1, "a"]}\n', "must be numbers"),
    ('{"scores": [1, 2], "mask": [true]}\n', "'mask' must be 2 booleans"),
    ('{"scores": [1, NaN], "mask": [false, true]}\n', "record 1: scores must be finite"),
])
def test_softmax_cmp_bad_rows(run_cli, stdin, msg):
    r = run_cli("spike", "softmax-cmp", "-", stdin=stdin)
    assert r.code == 2 and msg in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args,msg", [
    (["--T", "0"], "--T must be ≥ 1"),
    (["--theta", "0"], "--theta must be a finite number > 0"),
    (["--theta", "-2"], "--theta must be a finite number > 0"),
    (["--arch", "cnn"], "Unknown arch 'cnn'"),
    (["--attn", "softmaxx"], "Did you mean 'softmax'"),
    (["--task", "sst2"], "reads a GLUE TSV"),
    (["--task", "cola"], "Unknown task 'cola'"),
    (["--arch", "ann", "--das"], "drop --das for --arch ann"),
    (["--arch", "ann", "--T", "8", "--ternary"], "--T, --ternary set(s) spiking neurons"),
    (["--T", "100000"], "more time steps"),
    (["--lr", "nan"], "--lr must be a finite number > 0"),
    (["--lr", "-1"], "--lr must be a finite number > 0"),
])
def test_train_bad_options(run_cli, tmp_path, args, msg):
    r = run_cli("spike", "train", "--out", tmp_path / "m", *TINY, *args)
    assert r.code == 2 and msg in r.stderr, r.stderr
    assert not (tmp_path / "m").exists()


def test_glue_tsv_errors_and_truncation(run_cli, tmp_path):
    pytest.importorskip("transformers")
    good = tmp_path / "train.tsv"
    rows = ["sentence\tlabel"] + [f"{'a fine film ' * (i % 9 + 1)}\t{i % 2}" for i in range(40)]
    good.write_text("\n".join(rows) + "\n")
    r = run_cli("spike", "train", "--task", "sst2", "--train", good, "--test", good, "--out", tmp_path / "m",
                "--max-len", "8", *TINY[:-1], "--format", "json")
    assert r.code == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["truncated_train"] > 0 and "longer than --max-len 8" in r.stderr and rec["synthetic"] is False
    bad = tmp_path / "bad.tsv"
    bad.write_text("sentence\tlabel\ngood\t1\nbad\tneutral\n")
    r = run_cli("spike", "train", "--task", "sst2", "--train", bad, "--test", good, "--out", tmp_path / "m2", *TINY)
    assert r.code == 2 and f"{bad}:3: unknown label 'neutral'" in r.stderr
    bad.write_text("sentence\tlabel\ngood\t1\tx\n")
    r = run_cli("spike", "train", "--task", "sst2", "--train", bad, "--test", good, "--out", tmp_path / "m2", *TINY)
    assert r.code == 2 and f"{bad}:2: expected 2 tab-separated fields, got 3" in r.stderr
    # eval of a GLUE model defaults to its --test file
    r = run_cli("spike", "eval", "--model", tmp_path / "m", "--format", "json")
    assert r.code == 0 and json.loads(r.stdout)["examples"] == 40


def test_masked_nan_is_ignored_and_scale_must_be_positive(run_cli):
    r = run_cli("spike", "softmax-cmp", "-", "--format", "json", stdin='{"scores": [1, NaN, 3], "mask": [1, 0, 1]}\n')
    assert r.code == 0, r.stderr
    row = json.loads(r.stdout)[0]
    assert row["spike2max"][1] == 0.0 and row["scores"] == [1.0, None, 3.0] and row["mask"] == [1, 0, 1]
    # finite scores whose scaled values overflow are refused, not reported as null rows that "agree"
    r = run_cli("spike", "softmax-cmp", "-", "--scale", "1.4427", stdin='{"scores": [1.7e308, 1.7e308]}\n')
    assert r.code == 2 and "record 1: scores × --scale 1.4427 overflow" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("spike", "softmax-cmp", "-", "--scale", "0", stdin='{"scores": [1]}\n')
    assert r.code == 2 and "--scale must be a finite number > 0" in r.stderr


def test_force_never_replaces_a_folder_that_is_not_a_model(run_cli, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    r = run_cli("spike", "train", "--out", mine, *TINY, "--force")
    assert r.code == 2 and "refusing to replace it" in r.stderr
    assert (mine / "notes.txt").read_text() == "keep me"


def test_weights_from_another_model_are_refused(run_cli, model, tmp_path):
    import shutil

    from mlx26.cli.main import main

    out, _ = model
    other = tmp_path / "other"
    assert main(["spike", "train", "--out", str(other), *TINY, "--seed", "3", "-o", str(tmp_path / "t.json")]) == 0
    shutil.copy(out / "config.json", other / "config.json")  # other's weights under this model's config
    r = run_cli("spike", "eval", "--model", other)
    assert r.code == 2 and "weights.pt does not match the model_hash" in r.stderr


def test_test_data_longer_than_training_data_is_truncated_not_refused(run_cli, tmp_path):
    pytest.importorskip("transformers")
    short, long = tmp_path / "short.tsv", tmp_path / "long.tsv"
    short.write_text("sentence\tlabel\n" + "".join(f"w{i}\t{i % 2}\n" for i in range(20)))
    long.write_text("sentence\tlabel\n" + "".join(f"{'many words here ' * 6}\t{i % 2}\n" for i in range(20)))
    r = run_cli("spike", "train", "--task", "sst2", "--train", short, "--test", long, "--out", tmp_path / "m",
                "--max-len", "12", *TINY[:-1], "--format", "json")
    assert r.code == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["truncated_train"] == 0 and rec["truncated_test"] == 20
    r = run_cli("spike", "eval", "--model", tmp_path / "m", "--format", "json")  # the recorded (absolute) --test
    assert r.code == 0 and json.loads(r.stdout)["truncated"] == 20


def test_existing_out_folder_needs_force_and_bad_model_folder(run_cli, model, tmp_path):
    out, _ = model
    r = run_cli("spike", "train", "--out", out, *TINY)
    assert r.code == 2 and "holds a spike model" in r.stderr and "--force" in r.stderr
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x").write_text("")
    r = run_cli("spike", "eval", "--model", tmp_path / "junk")
    assert r.code == 2 and "not a spike model folder" in r.stderr


def test_ctrl_c_saves_the_model_and_exits_130(tmp_path, subprocess_env, mlx26_exe):
    out = tmp_path / "m"
    p = subprocess.Popen([mlx26_exe, "spike", "train", "--out", str(out), "--steps", "100000", "--n-train", "64",
                          "--n-test", "16", "--d-model", "16", "--heads", "2", "--layers", "1", "--format", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env)
    time.sleep(15)  # past imports, data and the first steps
    assert p.poll() is None
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 130, stderr
    assert "interrupted at step" in stderr and "Traceback" not in stderr
    rec = json.loads(stdout)
    assert rec["interrupted"] is True and 0 < rec["steps"] < 100000 and (out / "weights.pt").is_file()


def test_entry_point_softmax_cmp(mlx26_exe, subprocess_env):
    r = subprocess.run([mlx26_exe, "spike", "softmax-cmp", "-", "--format", "json"], input='{"scores": [0, 0]}\n',
                       capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["spike2max"] == [0.5, 0.5]


def test_salient_query_trains_and_evaluates_on_its_regenerated_heldout_split(tmp_path):
    from mlx26.cli.main import main

    out = tmp_path / "q"
    assert main(["spike", "train", "--task", "salient-query", "--norm", "exact", "--out", str(out), *TINY,
                 "-o", str(tmp_path / "t.json")]) == 0
    rec = json.loads((tmp_path / "t.json").read_text())
    assert rec["synthetic"] is True
    assert main(["spike", "eval", "--model", str(out), "-q", "-o", str(tmp_path / "e.json")]) == 0
    ev = json.loads((tmp_path / "e.json").read_text())
    # the model's own held-out split, regenerated from its record: the same accuracy train reported
    assert ev["accuracy"] == rec["test_accuracy"] and ev["examples"] == 100
