"""The second real-code pass: code-only lexical features, the split feature layout, per-namespace
L2, input-origin taint, and the standard-library calibration/test split."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import numpy as np
import pytest
from mlx26.core.common.errors import InputError
from mlx26.core.score_code import realeval as R
from mlx26.core.score_code.features import REGIONS, CodeOnly, StepFeaturizer, region_of
from mlx26.core.score_code.linear import LinearPRM, train_linear
from mlx26.core.score_code.onnx_export import feature_hash, model_hash
from mlx26.core.score_code.realtrain import calibrate
from mlx26.core.score_code.segment import segment
from mlx26.core.score_code.taint import TaintState

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def test_code_only_drops_comments_and_docstrings_and_keeps_code_strings():
    strip = CodeOnly()
    out = strip('def f(x):\n    """Opens an absolute path."""\n    q = "SELECT # not a comment %s" % x  # note\n')
    assert "absolute" not in out and "note" not in out
    assert 'q = "SELECT # not a comment %s" % x' in out
    assert out.count("\n") == 3  # line structure kept
    inline = CodeOnly()('sql = """SELECT a\nFROM b""" + where\n')
    assert "SELECT a" in inline and "FROM b" in inline  # a triple-quoted literal in an expression is code


def test_code_only_follows_a_docstring_across_steps():
    strip = CodeOnly()
    assert "os.system" not in strip('def f():\n    """Run it like\n')
    assert strip.open_quote == '"""'
    assert "os.system" not in strip("    os.system('ls') in a shell\n")  # still inside the docstring
    after = strip('    and more."""\n    return os.path.join(a, b)\n')
    assert "os.path.join(a, b)" in after and "more" not in after and strip.open_quote is None


def test_split_layout_keeps_each_namespace_in_its_region():
    dim = 1 << 12
    fz = StepFeaturizer(dim, 64, scope="function", taint=True, layout="split")
    regions: set[str] = set()
    for text in ["def find(name):", "    q = \"SELECT * FROM t WHERE n = '%s'\" % name", "    cur.execute(q)"]:
        own, ctx_new, _ = fz._parts(text)
        assert all(region_of(i, dim) == "context" for i in ctx_new)
        regions |= {region_of(i, dim) for i in own if i}
        fz._push(ctx_new, _)
    assert regions == {"step", "calls", "taint"}
    with pytest.raises(InputError, match="layout"):
        StepFeaturizer(dim, 8, layout="nope")
    with pytest.raises(InputError, match="64"):
        StepFeaturizer(32, 8, layout="split")


def test_region_bounds_partition_the_space():
    dim = 1 << 10
    names = [region_of(i, dim) for i in range(dim)]
    assert names[0] == "step" and names[-1] == "taint"
    sizes = {n: names.count(n) for n in REGIONS}
    assert sizes == {n: int(dim * size) for n, (_, size) in REGIONS.items()}


def test_mixed_layout_is_unchanged_for_earlier_models():
    old = LinearPRM([0.0] * (1 << 12), 1 << 12, 8, scope="function", taint=True)
    assert "layout" not in old.to_arrays()  # the arrays and so the model hash of earlier models stay the same
    new = LinearPRM([0.0] * (1 << 12), 1 << 12, 8, scope="function", taint=True, layout="split")
    back = LinearPRM.from_arrays({k: np.asarray(v) for k, v in new.to_arrays().items()})
    assert back.layout == "split" and model_hash(back) == model_hash(new) != model_hash(old)
    assert feature_hash(new) != feature_hash(old)


def test_per_namespace_l2_shrinks_only_its_namespace():
    texts = [["def f(name):", "    cur.execute('SELECT %s' % name)"], ["def g(name):", "    cur.execute('SELECT ?', name)"]]
    labels = [[0, 1], [0, 0]]
    dim = 1 << 12
    strong = {"step": 1e3, "context": 1e3, "calls": 1e3, "taint": 1e-6}
    model, info = train_linear(texts, labels, dim=dim, window=16, scope="function", taint=True, layout="split",
                               l2=strong)
    w = np.asarray(model.weights)
    by_region = {n: np.abs(w[[i for i in range(dim) if region_of(i, dim) == n]]).max() for n in REGIONS}
    assert by_region["taint"] > 100 * max(by_region["step"], by_region["context"], by_region["calls"])
    assert info["layout"] == "split"
    with pytest.raises(InputError, match="per-namespace"):
        train_linear(texts, labels, dim=dim, window=16, l2=strong)  # needs the split layout


def test_input_origin_is_told_from_parameters():
    t = TaintState(origin=True)
    t.step("def view(path):")
    from_param = t.step("    return open(os.path.join(ROOT, path))")
    assert "sink:path:tainted" in from_param and not any(":input" in f for f in from_param)
    t.reset()
    t.step("def view():")
    t.step("    name = request.args.get('name')")
    feats = t.step("    return open('/srv/%s' % name)")
    assert "sink:path:input" in feats and "sink:path:fmt+input" in feats
    plain = TaintState()  # the earlier models' features are unchanged
    plain.step("def view():")
    plain.step("    name = request.args.get('name')")
    assert not any("input" in f for f in plain.step("    return open('/srv/%s' % name)"))


def test_stdlib_split_is_fixed_and_disjoint():
    test = R.stdlib_sample(60, seed=1, part="test")
    calib = R.stdlib_sample(60, seed=1, part="calibration")
    assert test == R.stdlib_sample(60, seed=1, part="test") and not set(test) & set(calib)
    assert {R.stdlib_part(p.relative_to(STDLIB).as_posix()) for p in test} == {"test"}
    assert {R.stdlib_part(p.relative_to(STDLIB).as_posix()) for p in calib} == {"calibration"}
    every = R.stdlib_files()
    share = sum(R.stdlib_part(p.relative_to(STDLIB).as_posix()) == "calibration" for p in every) / len(every)
    assert 0.2 < share < 0.4
    with pytest.raises(InputError, match="part"):
        R.stdlib_sample(5, part="train")


def test_calibration_cap_holds_in_every_group():
    vulnerable, safe = [-0.9, -0.8, -0.2, 0.5], [0.1, 0.6, -0.85]
    groups = {"packages": [0.9] * 100, "stdlib": [0.9] * 18 + [-0.5, -0.7]}
    out = calibrate(vulnerable, safe, groups, max_false_alarm=0.04)
    assert out["file_false_alarm_by_group"]["stdlib"] == 0 and out["threshold"] < -0.7
    assert out["n"]["benign_files_by_group"] == {"packages": 100, "stdlib": 20}
    pooled = calibrate(vulnerable, safe, groups["packages"] + groups["stdlib"], max_false_alarm=0.04)
    assert pooled["threshold"] >= out["threshold"]  # pooled, the stdlib tail is diluted


def test_split_featuriser_scores_real_code_the_same_in_every_runtime():
    from mlx26.core.score_code.runtime import with_runtime

    dim = 1 << 12
    rng = np.random.default_rng(0)
    model = LinearPRM(rng.normal(size=dim).astype(np.float32).tolist(), dim, 16, scope="function", taint=True, layout="split")
    code = (STDLIB / "shlex.py").read_text()
    texts = [s.text for s in segment(code, "block")]
    ref, _ = model.score_steps(texts)
    got, _ = with_runtime(model, "torch").score_steps(texts)
    assert max(abs(a - b) for a, b in zip(got, ref, strict=True)) < 1e-9


def test_pairwise_term_orders_the_fixed_version_above_the_vulnerable_one():
    # Step labels alone say nothing about these two versions (every step is labelled safe); the
    # pairwise term must make the fixed one score safer on average.
    vulnerable = ["def f(x):", "    out = run('ls %s' % x)"]
    fixed = ["def f(x):", "    out = run(['ls', x])"]
    other = ["def g(y):", "    os.system(y)"]
    texts, labels = [vulnerable, fixed, other], [[0, 0], [0, 0], [0, 1]]
    dim = 1 << 12

    def margin(weight):
        model, info = train_linear(texts, labels, dim=dim, window=16, scope="function", taint=True, layout="split",
                                   pairs=[(0, 1)], pair_weight=weight)
        a, _ = model.score_steps(fixed)
        b, _ = model.score_steps(vulnerable)
        return sum(a) / len(a) - sum(b) / len(b), info

    plain, info0 = margin(0.0)
    paired, info1 = margin(10.0)
    assert paired > plain + 0.1 and paired > 0
    assert "pairs" not in info0 and info1["pairs"] == 1 and info1["pair_weight"] == 10.0
    with pytest.raises(InputError, match="sequence 7"):
        train_linear(texts, labels, dim=dim, window=16, pairs=[(0, 7)], pair_weight=1.0)


def test_fix_pairs_match_versions_of_the_same_fix_in_one_segmentation():
    from mlx26.core.score_code.train import fix_pairs

    records = [{"code": "a", "fix": 3, "version": "vulnerable"}, {"code": "b", "fix": 3, "version": "fixed"},
               {"code": "c"}, {"code": "d", "fix": 4, "version": "vulnerable"}]  # fix 4 has no fixed side
    origins = [(0, "block"), (0, "ast"), (1, "block"), (1, "ast"), (2, "block"), (3, "block")]
    assert fix_pairs(records, origins, "block") == [(0, 2)]
    assert fix_pairs(records, origins, "ast") == [(1, 3)]


def test_command_calls_are_told_apart_by_their_first_argument():
    t = TaintState(origin=True)
    t.step("def hosts(self, name):")
    assert "call:fmt" in t.step("    out = self._cli_run('showhost -verbose %s' % (name), None)")
    assert "call:list" in t.step("    out = self._cli_run(['showhost', '-verbose', name])")
    assert "call:str" in t.step("    self._cli_run('setwsapi -sru high', None)")
    assert not any(f.startswith("call:") for f in t.step("    total = compute(['a'], name)"))  # not command-like
    assert not any(f.startswith("call:") for f in TaintState().step("    run(['ls', name])"))  # earlier models


def test_an_f_string_formats_only_with_a_replacement_field():
    t = TaintState(origin=True)
    t.step("def find(space_id):")
    fixed = t.step('    cur.execute(f"""select * from spaces where id = %s""", (space_id, ))')
    assert "sink:sql:params" in fixed and "sink:sql:fmt" not in fixed and "sqlstr" in fixed
    bug = t.step("    cur.execute(f\"\"\"select * from spaces where id = '{space_id}'\"\"\")")
    assert "sink:sql:fmt" in bug and "sqlstr:fmt" in bug
    assert "sink:sql:fmt" in TaintState().step('    cur.execute(f"select %s", (x,))')  # earlier models unchanged
