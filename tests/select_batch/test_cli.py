"""`mlx26 select-batch` through the CLI: precomputed features, texts, train, demo data, error paths."""

from __future__ import annotations

import json
import subprocess
from collections import Counter

import numpy as np
import pytest
from mlx26.core.select_batch.synthetic import make_pool


@pytest.fixture
def arrays(tmp_path):
    pool = make_pool(0, sizes=(12, 9, 6), dim=16)
    np.save(tmp_path / "G.npy", pool.G)
    np.save(tmp_path / "V.npy", pool.anchors)
    (tmp_path / "domains.txt").write_text("\n".join(pool.domains) + "\n")
    return tmp_path, ["--grads", tmp_path / "G.npy", "--domains", tmp_path / "domains.txt",
                      "--val-grads", tmp_path / "V.npy"]


def _jsonl(result):
    assert result.code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("sub", [[], ["run"], ["train"], ["demo-data"]])
def test_help(run_cli, sub):
    result = run_cli("select-batch", *sub, "--help")
    assert result.code == 0
    assert ("Examples:" in result.stdout) or (not sub and "train" in result.stdout)


def test_features_path_bare_and_run_agree(run_cli, arrays):
    _, args = arrays
    bare = run_cli("select-batch", *args, "--budget", "9")
    explicit = run_cli("select-batch", "run", *args, "--budget", "9", "--format", "jsonl")
    rows = _jsonl(bare)
    assert bare.stdout == explicit.stdout
    assert [r["rank"] for r in rows] == list(range(9)) and set(rows[0]) == {"id", "domain", "weight", "rank"}
    assert sorted(r["domain"] for r in rows) == ["d0"] * 4 + ["d1"] * 3 + ["d2"] * 2
    assert "partitionsel picked 9 of 27 (d0 4, d1 3, d2 2)" in bare.stderr


@pytest.mark.parametrize("method", ["independent", "gradmatch", "greats", "random"])
def test_methods_and_summary_file(run_cli, arrays, method):
    tmp, args = arrays
    summary = tmp / f"{method}.json"
    rows = _jsonl(run_cli("select-batch", *args, "--budget", "6", "--method", method, "--summary", summary,
                          "--quiet"))
    info = json.loads(summary.read_text())
    assert len(rows) == 6 and info["method"] == method and sum(info["counts"].values()) == 6
    assert {"utility", "conflicting_pairs", "selection_s", "dropped_rows"} <= set(info)


def test_budget_file_and_equal_mode(run_cli, arrays):
    tmp, args = arrays
    (tmp / "b.json").write_text(json.dumps({"d0": 1, "d1": 1, "d2": 4}))
    rows = _jsonl(run_cli("select-batch", *args, "--budget", "6", "--budget-mode", tmp / "b.json"))
    assert sorted(r["domain"] for r in rows) == ["d0", "d1", "d2", "d2", "d2", "d2"]
    rows = _jsonl(run_cli("select-batch", *args, "--budget", "9", "--budget-mode", "equal"))
    assert sorted(r["domain"] for r in rows) == ["d0"] * 3 + ["d1"] * 3 + ["d2"] * 3


def test_nan_rows_dropped_with_count(run_cli, arrays):
    tmp, args = arrays
    G = np.load(tmp / "G.npy")
    G[0] = np.nan
    G[1] = 0
    np.save(tmp / "G.npy", G)
    # 25 usable rows: a budget of 26 is an error, never a silently partial selection of 25
    result = run_cli("select-batch", *args, "--budget", "26", "--method", "gradmatch")
    assert result.code == 2 and "25 usable items" in result.stderr and result.stdout == ""
    result = run_cli("select-batch", *args, "--budget", "25", "--method", "gradmatch")
    assert len(_jsonl(result)) == 25 and "dropped 2 pool and 0 validation rows" in result.stderr


@pytest.mark.parametrize(("tweak", "needle"), [
    ("missing-domain", "budget domain 'math' is not in the pool"),
    ("over-budget", "exceeds the pool"),
    ("dim", "dimension 16 but validation gradients have 15"),
    ("all-zero-val", "every validation gradient row"),
    ("method", "Did you mean 'greats'?"),
    ("inputs", "give either --pool and --val"),
    ("bad-npy", "not a .npy array"),
    ("budget-mode", "--budget-mode must be proportional, equal or a JSON file"),
    ("binary-domains", "is not UTF-8 text"),
    ("blank-domain-line", "line 5 is empty"),
    ("npz", "an .npz archive"),
    ("string-npy", "give a numeric .npy array"),
    ("eta", "--eta must be a positive number"),
    ("proj-dim", "--proj-dim must be 0"),
    ("budget-file-greats", "greats ignores domains"),
    ("same-output", "-o and --summary name the same file"),
    ("summary-stdout", "--summary - would mix"),
])
def test_bad_input_exit_2_one_line(run_cli, arrays, tweak, needle):
    tmp, args = arrays
    extra: list = ["--budget", "6"]
    if tweak == "missing-domain":
        (tmp / "b.json").write_text(json.dumps({"math": 6}))
        extra += ["--budget-mode", tmp / "b.json"]
    elif tweak == "over-budget":
        extra = ["--budget", "28"]
    elif tweak == "dim":
        np.save(tmp / "V.npy", np.load(tmp / "V.npy")[:, :15])
    elif tweak == "all-zero-val":
        np.save(tmp / "V.npy", np.zeros((2, 16)))
    elif tweak == "method":
        extra += ["--method", "graets"]
    elif tweak == "inputs":
        args = args[:2]
    elif tweak == "bad-npy":
        (tmp / "G.npy").write_text("not numpy")
    elif tweak == "budget-mode":
        extra += ["--budget-mode", "fair"]
    elif tweak == "binary-domains":
        (tmp / "domains.txt").write_bytes(b"d0\n\xff\xfe\xd0 not text\n" * 4000)
    elif tweak == "blank-domain-line":  # would shift every later label onto the wrong row
        labels = (tmp / "domains.txt").read_text().splitlines()
        (tmp / "domains.txt").write_text("\n".join(labels[:4] + [""] + labels[5:]) + "\n")
    elif tweak == "npz":
        np.savez(tmp / "G.npz", G=np.load(tmp / "G.npy"))
        args = [tmp / "G.npz" if a == tmp / "G.npy" else a for a in args]
    elif tweak == "string-npy":
        np.save(tmp / "G.npy", np.full((27, 16), "a"))
    elif tweak == "eta":
        extra += ["--eta", "1e300"]
    elif tweak == "proj-dim":
        extra += ["--proj-dim", "1"]
    elif tweak == "budget-file-greats":
        (tmp / "b.json").write_text(json.dumps({"d0": 6}))
        extra += ["--budget-mode", tmp / "b.json", "--method", "greats"]
    elif tweak == "same-output":
        extra += ["--summary", tmp / "sel.jsonl"]
    out = tmp / "sel.jsonl"
    if tweak == "summary-stdout":
        result = run_cli("select-batch", *args, *extra, "--summary", "-")
        assert result.code == 2 and needle in result.error_lines[0] and result.stdout == ""
        return
    result = run_cli("select-batch", *args, *extra, "-o", out)
    assert result.code == 2, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.error_lines[0]
    assert len(result.error_lines) <= 2 and "Traceback" not in result.stderr
    assert result.stdout == "" and not out.exists()


def test_duplicate_ids_in_text_pool_fail_before_loading_a_model(run_cli, tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"id": "a", "domain": "x", "text": "one two"}\n{"id": "a", "domain": "y", "text": "three"}\n')
    result = run_cli("select-batch", "--pool", pool, "--val", pool, "--budget", "1")
    assert result.code == 2 and "line 2: duplicate id 'a'" in result.stderr


def test_text_pool_id_checks(run_cli, tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"id": {"x": 1}, "domain": "x", "text": "one two"}\n')
    result = run_cli("select-batch", "--pool", pool, "--val", pool, "--budget", "1")
    assert result.code == 2 and "line 1: 'id' must be a non-empty string or an integer" in result.stderr
    pool.write_text('{"id": "2", "domain": "x", "text": "one two"}\n{"domain": "x", "text": "three"}\n')
    result = run_cli("select-batch", "--pool", pool, "--val", pool, "--budget", "1")
    assert result.code == 2 and "line 2: has no id, and its default id '2' (the line number)" in result.stderr
    result = run_cli("select-batch", "--pool", "-", "--val", "-", "--budget", "1", stdin=pool.read_text())
    assert result.code == 2 and "cannot both read stdin" in result.stderr


def test_dropped_validation_rows_are_reported(run_cli, arrays):
    tmp, args = arrays
    V = np.load(tmp / "V.npy")
    V[0] = np.nan
    np.save(tmp / "V.npy", V)
    result = run_cli("select-batch", *args, "--budget", "4")
    assert result.code == 0 and "dropped 0 pool and 1 validation rows" in result.stderr


def test_refuses_to_overwrite(run_cli, arrays):
    tmp, args = arrays
    (tmp / "sel.jsonl").write_text("old\n")
    result = run_cli("select-batch", *args, "--budget", "3", "-o", tmp / "sel.jsonl")
    assert result.code == 2 and "--force" in result.stderr and (tmp / "sel.jsonl").read_text() == "old\n"


def test_demo_data(run_cli):
    rows = _jsonl(run_cli("select-batch", "demo-data", "--n", "10", "--format", "jsonl"))
    assert len(rows) == 10 and {r["domain"] for r in rows} == {"code", "prose", "arithmetic"}
    assert sorted(r["domain"] for r in rows).count("code") == 5
    val = _jsonl(run_cli("select-batch", "demo-data", "--split", "val", "--n", "9", "--format", "jsonl"))
    assert not {r["text"] for r in val} & {r["text"] for r in rows}
    bad = run_cli("select-batch", "demo-data", "--split", "test")
    assert bad.code == 2 and "Unknown split 'test'" in bad.stderr


def test_texts_from_stdin_with_tiny_llama(run_cli, tmp_path):
    pytest.importorskip("transformers")
    pool = run_cli("select-batch", "demo-data", "--n", "24", "--format", "jsonl").stdout
    val = tmp_path / "val.jsonl"
    val.write_text(run_cli("select-batch", "demo-data", "--split", "val", "--n", "6", "--format", "jsonl").stdout)
    result = run_cli("select-batch", "--pool", "-", "--val", val, "--budget", "6", "--seq-len", "32",
                     "--proj-dim", "128", "--summary", tmp_path / "s.json", stdin=pool)
    rows = _jsonl(result)
    assert sorted(r["domain"] for r in rows) == ["arithmetic", "code", "code", "code", "prose", "prose"]
    info = json.loads((tmp_path / "s.json").read_text())
    assert info["model"] == "tiny-llama" and info["dropped_rows"] == 0 and info["features_s"] > 0


def test_train_tiny_run(run_cli, tmp_path):
    pytest.importorskip("transformers")
    pool = tmp_path / "pool.jsonl"
    pool.write_text(run_cli("select-batch", "demo-data", "--n", "40", "--format", "jsonl").stdout)
    val = tmp_path / "val.jsonl"
    val.write_text(run_cli("select-batch", "demo-data", "--split", "val", "--n", "6", "--format", "jsonl").stdout)
    result = run_cli("select-batch", "train", "--data", pool, "--val", val, "--steps", "3", "--batch", "5",
                     "--buffer", "3", "--seq-len", "32", "--eval-every", "2", "--summary", tmp_path / "s.json")
    rows = _jsonl(result)
    assert [r["step"] for r in rows] == [0, 1, 2, 3]
    assert rows[0]["val_loss"] > 0 and rows[1]["val_loss"] is None and rows[2]["val_loss"] is not None
    assert all(sum(r["counts"].values()) == 5 for r in rows[1:])
    assert all(0 < r["select_fraction"] < 1 and r["select_s"] >= r["greedy_s"] for r in rows[1:])
    info = json.loads((tmp_path / "s.json").read_text())
    assert info["steps_done"] == 3 and info["final_val_loss"] == rows[-1]["val_loss"]
    # per-domain means recombine, weighted by the validation rows per domain, into the overall mean
    val_domains = Counter(json.loads(line)["domain"] for line in val.read_text().splitlines())
    by_domain = rows[-1]["val_loss_by_domain"]
    assert set(by_domain) == set(val_domains)
    assert sum(by_domain[d] * k for d, k in val_domains.items()) / 6 == pytest.approx(rows[-1]["val_loss"], rel=1e-5)
    assert info["final_val_loss_by_domain"] == by_domain
    # 15-row windows of 40-row permutations: steps 1-2 are disjoint, step 3 starts a new permutation
    assert 10 <= info["unique_trained"] <= 15 and 1 <= info["max_repeats"] <= 2
    assert info["max_repeats"] == (2 if info["unique_trained"] < 15 else 1)
    assert "val loss" in result.stderr


def test_train_validates_early(run_cli, tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text(run_cli("select-batch", "demo-data", "--n", "10", "--format", "jsonl").stdout)
    result = run_cli("select-batch", "train", "--data", pool, "--val", pool, "--batch", "4", "--buffer", "4")
    assert result.code == 2 and "only 10 rows" in result.stderr
    result = run_cli("select-batch", "train", "--data", pool, "--val", pool, "--method", "partitonsel")
    assert result.code == 2 and "Did you mean 'partitionsel'?" in result.stderr
    result = run_cli("select-batch", "train", "--data", pool, "--val", pool, "--features", "ghost",
                     "--grad-params", "last-block")
    assert result.code == 2 and "--features ghost needs --grad-params last-layer" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    result = run_cli("select-batch", "train", "--data", pool, "--val", pool, "--features", "fast")
    assert result.code == 2 and "feature path" in result.stderr
    result = run_cli("select-batch", "train", "--data", pool, "--val", pool, "--refresh", "0")
    assert result.code == 2
    for bad in (["--eta", "0"], ["--proj-dim", "1"]):  # refused before the step-0 record is printed
        result = run_cli("select-batch", "train", "--data", pool, "--val", pool, "--batch", "2", "--buffer", "2",
                         "--steps", "1", *bad)
        assert result.code == 2 and result.stdout == "", (bad, result.stderr)
    # user budgets that some seeded buffer cannot fill: found before training, not after a partial log
    (tmp_path / "b.json").write_text(json.dumps({"arithmetic": 2}))
    result = run_cli("select-batch", "train", "--data", pool, "--val", pool, "--batch", "2", "--buffer", "1",
                     "--steps", "5", "--budget-mode", tmp_path / "b.json", "-o", tmp_path / "log.jsonl")
    assert result.code == 2 and "has no candidate in this buffer" in result.stderr and result.stdout == ""
    assert not (tmp_path / "log.jsonl").exists()


def test_entry_point_pipeline(mlx26_exe, subprocess_env, arrays):
    tmp, _ = arrays
    proc = subprocess.run(f"'{mlx26_exe}' select-batch --grads G.npy --domains domains.txt --val-grads V.npy "
                          "--budget 5 | head -n 1", shell=True, capture_output=True, text=True, env=subprocess_env,
                          cwd=tmp, timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["rank"] == 0
    assert "Traceback" not in proc.stderr and "Error" not in proc.stderr
