"""score-code runtimes: numpy, torch and onnxruntime give the same step scores; ONNX export and its refusals.

References are the existing numpy/torch scorers (independent code paths: the onnx graph and the
torch linear path never call ``StepFeaturizer.dot``). Real code: Python's own standard library
(many functions per file, so the function-scope context resets are exercised).
"""

from __future__ import annotations

import inspect
import json
import textwrap

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
torch = pytest.importorskip("torch")

from mlx26.core.score_code import load_model  # noqa: E402
from mlx26.core.score_code.corpus import generate  # noqa: E402
from mlx26.core.score_code.features import StepFeaturizer  # noqa: E402
from mlx26.core.score_code.runtime import with_runtime  # noqa: E402
from mlx26.core.score_code.segment import segment  # noqa: E402
from mlx26.core.score_code.stream import StreamScorer  # noqa: E402


def _stdlib_texts():
    import argparse
    import json.decoder
    import textwrap as tw

    return [inspect.getsource(m) for m in (argparse, json.decoder, tw)]


def _files():
    return [e.to_record()["code"] for e in generate(40, seed=3)] + _stdlib_texts()


def _steps(code):
    return [s.text for s in segment(code, "block")]


def _streamed(model, code):
    scorer = StreamScorer(model, "block")
    out = []
    for line in code.split("\n"):
        out += [v for _, v in scorer.feed(line)]
    return out + [v for _, v in scorer.close()]


def test_delta_rebuilds_the_featuriser_rows_on_real_code():
    # own + running context (from entered/left lists) equals __call__'s row as a multiset, step by step.
    for code in _stdlib_texts():
        texts = _steps(code)
        for scope, taint in (("function", True), ("window", False)):
            rows = StepFeaturizer(1 << 12, 8, scope=scope, taint=taint)
            deltas = StepFeaturizer(1 << 12, 8, scope=scope, taint=taint)
            running: set[int] = set()
            for text in texts:
                row = rows(text)
                own, entered, left = deltas.delta(text)
                assert not running & set(entered) and set(left) <= running
                running = (running | set(entered)) - set(left)
                assert sorted(row) == sorted(own + sorted(running))


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
def test_linear_runtimes_equal_numpy_batch_and_stream(runtime):
    model = load_model("linear")
    scorer = with_runtime(model, runtime)
    for code in _files():
        texts = _steps(code)
        ref, ref_cut = model.score_steps(texts)
        got, cut = scorer.score_steps(texts)
        assert cut == ref_cut and len(got) == len(ref)
        assert max(abs(a - b) for a, b in zip(got, ref, strict=True)) < 1e-9
        assert max(abs(a - b) for a, b in zip(_streamed(scorer, code), ref, strict=True)) < 1e-9


def test_transformer_onnx_equals_torch_on_the_shipped_corpus():
    model = load_model("transformer")
    scorer = with_runtime(model, "onnx")
    worst = 0.0
    for code in _files()[:20] + _stdlib_texts()[2:]:  # textwrap: longer than one 512-token window
        texts = _steps(code)
        ref, ref_cut = model.score_steps(texts)
        got, cut = scorer.score_steps(texts)
        assert cut == ref_cut
        worst = max(worst, max(abs(a - b) for a, b in zip(got, ref, strict=True)))
        assert max(abs(a - b) for a, b in zip(_streamed(scorer, code), ref, strict=True)) < 1e-5
    assert worst < 1e-5


def test_streaming_cost_does_not_grow_with_the_file(monkeypatch):
    # Linear: one featurisation per step, never of the prefix; transformer: at most max_len tokens per step.
    code = _stdlib_texts()[0]
    n_steps = len(_steps(code))
    calls = []
    original = StepFeaturizer._parts
    monkeypatch.setattr(StepFeaturizer, "_parts", lambda self, text: calls.append(1) or original(self, text))
    scorer = with_runtime(load_model("linear"), "onnx")
    calls.clear()  # loading featurises the probe code of the feature hash
    _streamed(scorer, code)
    assert len(calls) == n_steps
    tr = with_runtime(load_model("transformer"), "onnx")
    lengths = []
    original_ws = type(tr).window_scores
    monkeypatch.setattr(type(tr), "window_scores", lambda self, ids: lengths.append(len(ids)) or original_ws(self, ids))
    _streamed(tr, code[:20000])
    assert lengths and max(lengths) <= tr.config.max_len


def test_shipped_onnx_files_match_the_shipped_models():
    import onnx
    from mlx26.core.score_code.onnx_export import feature_hash, model_hash, read_manifest
    from mlx26.core.score_code.prm import SHIPPED_DIR

    for kind in ("linear", "transformer"):
        info = read_manifest(onnx.load(str(SHIPPED_DIR / f"{kind}.onnx")))
        model = load_model(kind)
        assert info["kind"] == kind and info["feature_hash"] == feature_hash(model)
        assert info["source_model_hash"] == model_hash(model), f"re-export {kind}.onnx after retraining"


def _user_model(tmp_path):
    import numpy as np
    from mlx26.core.score_code.linear import LinearPRM
    from mlx26.core.score_code.prm import save_model

    rng = np.random.default_rng(0)
    model = LinearPRM(rng.normal(size=1 << 10).tolist(), 1 << 10, 16, scope="function", taint=True)
    folder = tmp_path / "mine"
    save_model(model, str(folder))
    return folder


def test_export_a_user_model_and_score_with_it(run_cli, tmp_path):
    folder = _user_model(tmp_path)
    out = tmp_path / "mine.onnx"
    result = run_cli("score-code", "export", "--model", str(folder), "--onnx", str(out), "--format", "json")
    assert result.code == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["kind"] == "linear" and info["opset"] == 17 and info["settings"]["dim"] == 1 << 10
    code = _stdlib_texts()[2]
    src = tmp_path / "tw.py"
    src.write_text(code)
    rows = {}
    for args in (["--runtime", "numpy"], ["--onnx", str(out)]):
        r = run_cli("score-code", "score", str(src), "--model-dir", str(folder), *args, "--format", "jsonl")
        assert r.code == 0, r.stderr
        rows[args[0]] = [json.loads(x)["score"] for x in r.stdout.splitlines()]
    assert len(rows["--runtime"]) > 10
    assert max(abs(a - b) for a, b in zip(rows["--runtime"], rows["--onnx"], strict=True)) < 1e-9
    again = run_cli("score-code", "export", "--model", str(folder), "--onnx", str(out))
    assert again.code == 2 and "--force" in again.stderr  # never overwrites without --force
    # the user model's ONNX against the shipped model: refused (other settings), one line, exit 2
    wrong = run_cli("score-code", "score", str(src), "--onnx", str(out))
    assert wrong.code == 2 and "another linear model" in wrong.stderr and "Traceback" not in wrong.stderr


def _rewrite(src, dst, edit):
    import onnx

    proto = onnx.load(str(src))
    edit(proto)
    dst.write_bytes(proto.SerializeToString())
    return dst


def test_refusals_are_one_line(run_cli, tmp_path):
    from mlx26.core.score_code.prm import SHIPPED_DIR

    shipped = SHIPPED_DIR / "linear.onnx"
    code = tmp_path / "a.py"
    code.write_text(textwrap.dedent('import os\n\ndef f(p):\n    os.system("ls " + p)\n'))

    def set_meta(key, value):
        def edit(proto):
            for e in proto.metadata_props:
                if e.key == f"mlx26.{key}":
                    e.value = json.dumps(value)
        return edit

    def opset_99(proto):
        proto.opset_import[0].version = 99

    cases = {
        "feature": (_rewrite(shipped, tmp_path / "f.onnx", set_meta("feature_hash", "0" * 16)), "feature hash"),
        "weights": (_rewrite(shipped, tmp_path / "w.onnx", set_meta("source_model_hash", "0" * 16)), "other weights"),
        "kind": (SHIPPED_DIR / "transformer.onnx", "holds a transformer PRM"),
        "opset": (_rewrite(shipped, tmp_path / "o.onnx", opset_99), "opset 99"),
    }
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(shipped.read_bytes()[:5000])
    cases["corrupt"] = (corrupt, "not a readable ONNX file")
    cases["missing"] = (tmp_path / "nope.onnx", "not found")
    for name, (path, needle) in cases.items():
        r = run_cli("score-code", "detect", str(code), "--onnx", str(path))
        assert r.code == 2, (name, r.stderr)
        assert needle in r.error_lines[0] and "Traceback" not in r.stderr, (name, r.stderr)
    for args, needle in ((["--model", "transformer", "--runtime", "numpy"], "runs in torch or onnx"),
                         (["--runtime", "torch", "--onnx", str(shipped)], "cannot be combined"),
                         (["--runtime", "onxx"], "Did you mean 'onnx'")):
        r = run_cli("score-code", "score", str(code), *args)
        assert r.code == 2 and needle in r.stderr, (args, r.stderr)
    r = run_cli("score-code", "export", "--model", "linear")
    assert r.code == 2 and "--onnx" in r.stderr


def test_onnx_runtime_missing_exits_3_with_the_pip_line(run_cli, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    code = tmp_path / "a.py"
    code.write_text("x = 1\n")
    r = run_cli("score-code", "score", str(code), "--runtime", "onnx")
    assert r.code == 3 and "pip install 'mlx26[onnx]'" in r.stderr
    # --stream's auto choice falls back to the numpy path instead
    r = run_cli("score-code", "score", "-", "--stream", stdin="x = 1\n\ny = 2\n")
    assert r.code == 0 and len(r.stdout.splitlines()) == 2


def test_detect_and_rank_agree_across_runtimes(run_cli, tmp_path):
    files = []
    for i, e in enumerate(generate(6, seed=11)):
        path = tmp_path / f"f{i}.py"
        path.write_text(e.to_record()["code"])
        files.append(str(path))
    cands = tmp_path / "c.jsonl"
    cands.write_text("\n".join(json.dumps({"id": f"c{i}", "prefix": "import os\n", "candidate": t}) for i, t in
                               enumerate(['os.system("ls " + d)\n', 'subprocess.run(["ls", d])\n'])) + "\n")
    outputs = {}
    for rt in ("numpy", "torch", "onnx"):
        d = run_cli("score-code", "detect", *files, "--unit", "function", "--runtime", rt, "--format", "jsonl")
        r = run_cli("score-code", "rank", "--candidates", str(cands), "--runtime", rt, "--format", "jsonl")
        assert d.code == 0 and r.code == 0, (d.stderr, r.stderr)
        outputs[rt] = ([json.loads(x) for x in d.stdout.splitlines()], [json.loads(x) for x in r.stdout.splitlines()])
    ref_d, ref_r = outputs["numpy"]
    for rt in ("torch", "onnx"):
        got_d, got_r = outputs[rt]
        assert [v["vulnerable"] for v in got_d] == [v["vulnerable"] for v in ref_d]
        assert max(abs(a["aggregate"] - b["aggregate"]) for a, b in zip(got_d, ref_d, strict=True)) < 1e-9
        assert [c["id"] for c in got_r] == [c["id"] for c in ref_r]
        assert max(abs(a["reward"] - b["reward"]) for a, b in zip(got_r, ref_r, strict=True)) < 1e-9


def test_tampered_graph_weights_are_refused_even_with_the_manifest_intact(run_cli, tmp_path):
    import numpy as np
    from mlx26.core.score_code.prm import SHIPPED_DIR
    from onnx import numpy_helper

    def zero_weights(proto):
        init = next(t for t in proto.graph.initializer if t.name == "weights")
        init.CopyFrom(numpy_helper.from_array(np.zeros_like(numpy_helper.to_array(init)), "weights"))

    zeroed = _rewrite(SHIPPED_DIR / "linear.onnx", tmp_path / "zero.onnx", zero_weights)
    code = tmp_path / "a.py"
    code.write_text("import os\n\ndef f(p):\n    os.system(p)\n")
    r = run_cli("score-code", "score", str(code), "--onnx", str(zeroed))
    assert r.code == 2 and "modified since it was exported" in r.error_lines[0]


def test_export_opset_ranges_and_user_model_hints(run_cli, tmp_path):
    r = run_cli("score-code", "export", "--model", "transformer", "--onnx", str(tmp_path / "t.onnx"), "--opset", "13")
    assert r.code == 2 and r.stdout == "" and "14..20" in r.error_lines[0] and len(r.error_lines) == 2
    folder = _user_model(tmp_path)
    out = tmp_path / "mine.onnx"
    assert run_cli("score-code", "export", "--model", str(folder), "--onnx", str(out)).code == 0
    code = tmp_path / "a.py"
    code.write_text("x = 1\n\ny = 0\n")
    r = run_cli("score-code", "score", str(code), "--onnx", str(out))  # against the shipped model: names the cause
    assert r.code == 2 and "another linear model" in r.stderr and "--model-dir" in r.stderr
    r = run_cli("score-code", "score", str(code), "--model", str(folder), "--onnx", str(out), "--format", "jsonl")
    assert r.code == 0, r.stderr  # --model DIR works on score as on export
    r = run_cli("score-code", "score", str(code), "--onnx", str(tmp_path))
    assert r.code == 2 and "is a directory" in r.stderr


def test_stream_auto_falls_back_from_a_stale_onnx_beside_the_model(run_cli, tmp_path):
    import shutil

    from mlx26.core.score_code.prm import SHIPPED_DIR

    folder = _user_model(tmp_path)
    shutil.copy(SHIPPED_DIR / "linear.onnx", folder / "linear.onnx")  # stale: another model's graph
    stdin = "import os\n\ndef f(p):\n    os.system(p)\n\nx = 1\n"
    r = run_cli("score-code", "score", "-", "--stream", "--model-dir", str(folder), stdin=stdin)
    assert r.code == 0 and "streaming with --runtime numpy" in r.stderr
    ref = run_cli("score-code", "score", "-", "--model-dir", str(folder), "--runtime", "numpy", stdin=stdin)
    assert r.stdout == ref.stdout
    r = run_cli("score-code", "score", "-", "--stream", "--model-dir", str(folder), "--runtime", "onnx", stdin=stdin)
    assert r.code == 2  # asked for explicitly: refused, not replaced


def test_detect_reports_the_threshold_it_used(run_cli, tmp_path):
    from mlx26.core.score_code.detect import operating_threshold

    code = tmp_path / "a.py"
    code.write_text("import os\n\ndef f(p):\n    os.system(p)\n")
    rows = [json.loads(x) for x in run_cli("score-code", "detect", str(code), "--format", "jsonl").stdout.splitlines()]
    assert rows[0]["threshold"] == operating_threshold("linear", None, "softmax", 0.1) < 0
    assert rows[0]["vulnerable"] == (rows[0]["aggregate"] <= rows[0]["threshold"])
