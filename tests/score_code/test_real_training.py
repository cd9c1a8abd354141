"""Training on real code: the SVEN split, step labels from fixes, taint features, calibration, scope."""

from __future__ import annotations

import json

import pytest
from mlx26.core.score_code.features import StepFeaturizer
from mlx26.core.score_code.prm import load_model, manifest, score_text
from mlx26.core.score_code.realtrain import calibrate, vulnerable_lines
from mlx26.core.score_code.sven import Pair, load_pairs, split
from mlx26.core.score_code.taint import TaintState, starts_function

from tests._data import shared_data


@pytest.fixture(scope="module")
def pairs():
    return load_pairs(shared_data("sven"))


def test_only_python_functions_and_the_issue_counts(pairs):
    assert len([p for p in pairs if p.part == "train"]) == 342
    assert len([p for p in pairs if p.part == "val"]) == 38
    assert all(p.before != p.after for p in pairs)


def test_split_shares_no_repository_and_tests_on_sven_val(pairs):
    parts = split(pairs)
    repos = {name: {p.repo for p in ps} for name, ps in parts.items() if name != "dropped_shared_repo"}
    assert not repos["fit"] & repos["test"] and not repos["calibration"] & repos["test"]
    assert not repos["fit"] & repos["calibration"]
    assert parts["test"] == [p for p in pairs if p.part == "val"]
    kept = len(parts["fit"]) + len(parts["calibration"]) + len(parts["dropped_shared_repo"])
    assert kept == 342


def test_vulnerable_lines_cover_deleted_lines_and_insertion_points():
    pair = Pair("cwe-089", "a/b", "", "f", "def f(x):\n    q = 'SELECT %s' % x\n    run(q)\n",
                "def f(x):\n    q = 'SELECT ?'\n    run(q, x)\n", (2, 3))
    assert vulnerable_lines(pair) == [2, 3]
    guard = Pair("cwe-022", "a/b", "", "g", "def g(p):\n    return open(p)\n",
                 "def g(p):\n    check(p)\n    return open(p)\n", ())
    assert vulnerable_lines(guard) == [2]  # the line the fix guards


def test_taint_reaches_sql_sink_through_a_built_string():
    t = TaintState()
    t.step("def find(name):")
    assert set(t.step("    q = \"SELECT * FROM users WHERE name = '%s'\" % name")) >= {"sqlstr:fmt",
                                                                                      "sqlstr:fmt+tainted"}
    feats = t.step("    cur.execute(q)")
    assert "sink:sql:sqlbuilt" in feats and "sink:sql:built-no-params" in feats
    safe = t.step("    cur.execute('SELECT * FROM users WHERE name = ?', (name,))")
    assert "sink:sql:params" in safe and "sink:sql:fmt" not in safe


def test_taint_state_resets_at_a_new_function():
    t = TaintState()
    t.step("def a(cmd):")
    assert "sink:cmd:tainted" in t.step("    os.system(cmd)")
    t.reset()
    t.step("def b(x):")
    assert "sink:cmd:tainted" not in t.step("    os.system(cmd)")
    assert starts_function("@app.route('/')\ndef view():") == 0
    assert starts_function("    def method(self):") == 4 and starts_function("x = 1") is None


def test_function_scope_makes_scores_independent_of_code_before_the_function():
    body = ["def handler(name):\n    q = 'SELECT %s' % name", "    cur.execute(q)\n    return cur.fetchall()"]
    helper = ["def clamp(v, lo, hi):\n    return max(lo, min(hi, v))"]
    import numpy as np

    w = np.random.default_rng(0).normal(size=1 << 12)
    for scope, same in (("function", True), ("window", False)):
        alone = StepFeaturizer(1 << 12, 64, scope=scope, taint=True)
        first = [alone.dot(t, w) for t in body]
        joined = StepFeaturizer(1 << 12, 64, scope=scope, taint=True)
        second = [joined.dot(t, w) for t in helper + body][1:]
        assert (np.allclose(first, second)) is same


def test_calibrate_respects_the_false_alarm_cap_and_maximises_f1():
    vulnerable, safe, benign = [-0.9, -0.8, -0.2, 0.5], [0.1, 0.6, -0.85], [0.9] * 98 + [-0.5, -0.95]
    out = calibrate(vulnerable, safe, benign, max_false_alarm=0.01)
    assert out["file_false_alarm"] <= 0.01
    assert -0.95 < out["threshold"] < -0.5 or out["threshold"] == -0.9
    loose = calibrate(vulnerable, safe, benign, max_false_alarm=0.05)
    assert loose["f1"] >= out["f1"]


def test_shipped_linear_model_is_the_real_code_one_with_a_calibrated_threshold():
    info = manifest()["models"]["linear"]
    assert info["scope"] == "function" and info["taint"] is True
    assert info["threshold"] < 0 and info["calibration"]["file_false_alarm"] <= info["calibration"]["max_false_alarm"]
    data = manifest()["data"]
    assert data["sven"]["test"]["pairs"] == 38 and data["library_files"]["files"] > 100
    model = load_model("linear")
    vuln = score_text("def f(name):\n    q = \"SELECT * FROM t WHERE n = '%s'\" % name\n    cur.execute(q)\n", model)
    fixed = score_text("def f(name):\n    q = 'SELECT * FROM t WHERE n = ?'\n    cur.execute(q, (name,))\n", model)
    assert min(vuln.scores) < min(fixed.scores)


def test_train_sven_and_data_together_is_a_usage_error(run_cli, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"code": "x = 1\n", "vulnerable_lines": []}) + "\n")
    result = run_cli("score-code", "train", "--sven", tmp_path, "--data", data, "--out", tmp_path / "m")
    assert result.code == 2 and "not both" in result.stderr


def test_train_sven_missing_folder(run_cli, tmp_path):
    result = run_cli("score-code", "train", "--sven", tmp_path / "nope", "--model", "linear", "--out", tmp_path / "m")
    assert result.code == 2 and "no SVEN folder" in result.stderr
