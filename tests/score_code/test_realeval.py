"""`score-code eval` on real code: metric arithmetic, renaming, prepending, the stdlib sample, the CLI."""

from __future__ import annotations

import ast
import json
import math

import pytest
from mlx26.core.common.errors import InputError
from mlx26.core.score_code import realeval as R
from mlx26.core.score_code import sven
from mlx26.core.score_code.analyzers import Finding
from mlx26.core.score_code.detect import function_spans
from mlx26.core.score_code.evaluate import prf
from mlx26.core.score_code.segment import segment, split_lines

from tests._data import shared_data

FUNC = '''def total(items, scale=2, *rest, key=None, **opts):
    # keep the comment
    acc = 0
    for i, x in enumerate(items):

        acc += (x if key is None else key(x)) * scale
    extra = [y * 2 for y in rest]
    return acc + sum(extra) + len(opts) + i
'''


class TokenModel:
    """A context-free stand-in PRM: −1 for a step mentioning os.system, +1 otherwise."""

    kind = "linear"

    def score_steps(self, texts):
        return [-1.0 if "os.system" in t else 1.0 for t in texts], False


def _names_blanked(tree: ast.AST) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = "_"
        elif isinstance(node, ast.arg):
            node.arg = "_"
    return ast.dump(tree)


# ----------------------------------------------------------------------------- metric arithmetic


def test_prf_on_hand_made_verdicts():
    # tp = 2 (0, 4), fp = 1 (1), fn = 1 (2), tn = 1 (3): P = R = F1 = 2/3
    row = prf([True, True, False, False, True], [True, False, True, False, True])
    assert (row["precision"], row["recall"], row["f1"]) == (0.6667, 0.6667, 0.6667)
    assert prf([False, False], [False, False])["f1"] == 0.0  # nothing to find, nothing found


def test_ranking_counts_ties_apart():
    r = R.ranking([1.0, 0.0, 0.5, math.nan], [0.0, 0.0, 0.7, 0.1])
    assert (r["preferred"], r["ties"], r["worse"], r["pairs"], r["rate"]) == (1, 2, 1, 4, 0.25)
    # analyzers: fewer findings on the fixed version is better
    a = R.ranking([0, 1, 1], [1, 1, 0], higher_is_safer=False)
    assert (a["preferred"], a["ties"], a["worse"]) == (1, 1, 1)


def test_flips_hit_rate_and_top_finding():
    f = R.flips([True, False, True], [True, True, False], ["a", "b", "c"])
    assert f == {"flips": 2, "n": 3, "flipped": ["b", "c"]}
    assert R.hit_rate([True, False, False, True]) == {"hits": 2, "n": 4, "rate": 0.5}
    low = Finding("f", 2, 2, "bandit", "B1", "MEDIUM", "")
    high_late = Finding("f", 9, 9, "bandit", "B2", "HIGH", "")
    high_early = Finding("f", 5, 6, "bandit", "B3", "HIGH", "")
    assert R.top_finding([low, high_late, high_early]) is high_early
    assert R.top_finding([]) is None


def test_operating_rule_reads_the_manifest(tmp_path):
    assert R.operating_rule("linear", str(tmp_path)) == R.Rule("softmax", 0.1, 0.0)  # no manifest: paper's rule
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"models": {"linear": {"threshold": 0.3, "aggregate": "min", "tau": 0.5}}}))
    rule = R.operating_rule("linear", str(tmp_path))
    assert rule == R.Rule("min", 0.5, 0.3)
    assert rule.flags([0.9, 0.3]) and not rule.flags([0.9, 0.31]) and not rule.flags([])
    (tmp_path / "manifest.json").write_text(json.dumps({"models": {"linear": {"aggregate": "median"}}}))
    with pytest.raises(InputError, match="unknown aggregator"):
        R.operating_rule("linear", str(tmp_path))


# ----------------------------------------------------------------------------- renaming and prepending


def test_rename_preserves_structure_layout_and_behaviour():
    renamed, mapping = R.rename_locals(FUNC)
    assert set(mapping) == {"items", "scale", "rest", "key", "opts", "acc", "i", "x", "extra", "y"}
    assert "# keep the comment" in renamed and len(split_lines(renamed)) == len(split_lines(FUNC))
    assert [(s.start_line, s.end_line) for s in segment(renamed)] == [(s.start_line, s.end_line) for s in segment(FUNC)]
    a, b = ast.parse(FUNC), ast.parse(renamed)
    assert ast.dump(a) != ast.dump(b) and _names_blanked(a) == _names_blanked(b)
    env_a: dict = {}
    env_b: dict = {}
    exec(FUNC, env_a)  # noqa: S102 - our own fixed source
    exec(renamed, env_b)  # noqa: S102
    for args in ([1, 2, 3], [-5]):  # keyword parameters are renamed too: callers use the new names
        assert env_a["total"](args, 3, 4, 5, key=abs, z=1) == env_b["total"](args, 3, 4, 5, z=1,
                                                                             **{mapping["key"]: abs})


def test_rename_keeps_globals_self_and_skips_what_it_cannot_follow():
    code = "def f(self, a):\n    global g\n    g = a\n    try:\n        b = a\n    except E as e:\n        b = e\n    return b\n"
    renamed, mapping = R.rename_locals(code)
    assert set(mapping) == {"a", "b"} and "self" in renamed and "global g" in renamed and "as e" in renamed
    assert R.rename_locals("def f(:\n") is None  # does not parse
    assert R.rename_locals("x = 1\n") is None  # no function
    assert R.rename_locals("def f(a):\n    return locals()[a]\n") is None  # reads its namespace by name


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # invalid string escapes in real code
def test_rename_on_sven_test_functions():
    pairs = R.load_test_pairs(shared_data("sven"))
    done = 0
    for p in pairs:
        code = sven.dedented(p.before)[0]
        out = R.rename_locals(code)
        if out is None:
            continue
        done += 1
        renamed, _ = out
        a, b = ast.parse(code), ast.parse(renamed)
        assert ast.dump(a) != ast.dump(b) and _names_blanked(a) == _names_blanked(b), p.name
        assert len(split_lines(renamed)) == len(split_lines(code))
    assert done >= len(pairs) * 0.8


def test_prepend_helpers_maps_the_original_lines():
    text, offset = R.prepend_helpers(FUNC)
    lines = split_lines(text)
    assert lines[offset:] == split_lines(FUNC)
    assert [n for n, _, _ in function_spans(text)] == ["clamp", "slugify", "total"]
    assert function_spans(text)[-1][1:] == (offset + 1, offset + len(split_lines(FUNC)))
    # block steps of the original function are its own steps shifted by the offset
    own = [(s.start_line - offset, s.end_line - offset, s.text) for s in segment(text) if s.start_line > offset]
    assert own == [(s.start_line, s.end_line, s.text) for s in segment(FUNC)]
    env: dict = {}
    exec(R.HELPERS, env)  # noqa: S102 - the helpers are ordinary working code
    assert env["clamp"](12, 0, 10) == 10 and env["slugify"]("Hello, World!") == "hello-world"


# ----------------------------------------------------------------------------- stdlib sample


def test_stdlib_sample_is_deterministic_and_excludes_tests(tmp_path):
    for rel in ("a.py", "pkg/b.py", "test/t.py", "pkg/tests/t.py", "idlelib/i.py", "lib2to3/l.py",
                "site-packages/s.py", "big.py"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" * (3001 if rel == "big.py" else 3))
    assert [p.relative_to(tmp_path).as_posix() for p in R.stdlib_files(tmp_path)] == ["a.py", "pkg/b.py"]
    first = R.stdlib_sample(40, seed=3)
    assert first == R.stdlib_sample(40, seed=3) and first != R.stdlib_sample(40, seed=4)
    assert len(first) == 40 and len(set(first)) == 40
    for path in first:
        assert not set(path.parts) & set(R.STDLIB_EXCLUDE)
        assert path.read_bytes().count(b"\n") <= R.MAX_STDLIB_LINES
    with pytest.raises(InputError):
        R.stdlib_sample(-1)


# ----------------------------------------------------------------------------- the evaluation (stand-in model)


def _pair(name: str, before: str, after: str, deleted: tuple[int, ...], cwe: str = "cwe-078") -> sven.Pair:
    return sven.Pair(cwe, f"o/{name}", f"github.com/o/{name}/commit/1", name, before, after, deleted, (), "val")


def test_evaluate_real_with_a_stand_in_model(tmp_path):
    found = _pair("a", "def f(x):\n    y = x\n\n    os.system(y)\n", "def f(x):\n    y = x\n\n    run([y])\n", (4,))
    missed = _pair("b", "def g(p):\n    return open(p)\n", "def g(p):\n    return open(safe(p))\n", (2,), "cwe-022")
    late = _pair("c", "def h(c):\n    os.system(c)\n\n    return c\n", "def h(c):\n    run([c])\n\n    return c\n", (4,))
    (tmp_path / "ok.py").write_text("def h():\n    return 1\n")
    (tmp_path / "bad.py").write_text("import os\n\nos.system('ls')\n")
    r = R.evaluate_real([found, missed, late], {"linear": TokenModel()}, {"linear": R.Rule()}, analyzers=[], stdlib_n=5,
                        stdlib_root=tmp_path, stdlib_part="all")
    fl = r["function_level"]["linear"]
    assert (fl["all"]["precision"], fl["all"]["recall"], fl["all"]["n"]) == (1.0, 0.6667, 6)
    assert fl["by_cwe"]["cwe-022"]["recall"] == 0.0 and fl["by_cwe"]["cwe-078"]["f1"] == 1.0
    loc = r["localisation_top1"]["linear"]
    # a: the os.system step (line 4) is deleted; b: its one step holds line 2; c: the riskiest step is lines 1-2
    assert (loc["hits"], loc["n"]) == (2, 3)
    assert loc["random_step_rate"] == 0.6667  # a: 1 of 2 steps, b: 1 of 1, c: 1 of 2
    assert r["ranking"]["linear"]["preferred"] == 2 and r["ranking"]["linear"]["ties"] == 1
    assert r["false_alarms"]["files"] == 2 and r["false_alarms"]["linear"]["examples"] == ["bad.py"]
    rob = r["robustness"]
    assert rob["functions"] == 6 and rob["prepend"]["linear"]["flips"] == 0  # context-free model: no flips
    assert rob["rename"]["linear"]["flips"] == 0
    assert r["throughput_lines_per_s"]["lines"] == 5 and r["throughput_lines_per_s"]["linear"] > 0


def test_evaluate_real_refuses_bad_options():
    with pytest.raises(InputError):
        R.evaluate_real([], {}, {}, analyzers=[])
    with pytest.raises(InputError, match="segmentation"):
        R.evaluate_real([], {}, {}, analyzers=[], mode="words")
    with pytest.raises(InputError, match="analyzer"):
        R.check_analyzers(["pylint"])


# ----------------------------------------------------------------------------- the CLI


KEYS = {"data", "segmentation", "seed", "systems", "operating_rules", "analyzers", "function_level",
        "localisation_top1", "ranking", "false_alarms", "robustness", "throughput_lines_per_s", "provenance"}


def test_cli_eval_on_sven(run_cli, tmp_path):
    folder = shared_data("sven")
    out = tmp_path / "real.json"
    result = run_cli("score-code", "eval", "--sven", folder, "--stdlib-files", 5, "--analyzers", "none", "-o", out,
                     "--quiet")
    assert result.code == 0, result.stderr
    r = json.loads(out.read_text())
    assert set(r) == KEYS and r["systems"] == ["linear"]
    assert r["data"]["pairs"] == len(R.load_test_pairs(folder)) and r["false_alarms"]["files"] == 5
    assert r["function_level"]["linear"]["all"]["n"] == 2 * r["data"]["pairs"]
    assert r["robustness"]["functions"] == 20 and r["operating_rules"]["linear"]["aggregate"] == "softmax"
    again = run_cli("score-code", "eval", "--sven", folder, "--stdlib-files", 5, "--analyzers", "none", "--quiet",
                    "--format", "json")
    assert json.loads(again.stdout)["function_level"] == r["function_level"]  # deterministic
    assert run_cli("score-code", "eval", "--sven", folder, "-o", out).code == 2  # exists, no --force


def test_cli_eval_with_bandit(run_cli):
    folder = shared_data("sven")
    result = run_cli("score-code", "eval", "--sven", folder, "--stdlib-files", 2, "--analyzers", "bandit", "--quiet",
                     "--format", "json")
    if result.code == 3:
        pytest.skip("bandit not installed")
    r = json.loads(result.stdout)
    assert r["systems"] == ["linear", "bandit≥medium"] and r["localisation_top1"]["bandit≥medium"]["n"] == 38
    assert r["ranking"]["bandit≥medium"]["worse"] + r["ranking"]["bandit≥medium"]["preferred"] + r["ranking"][
        "bandit≥medium"]["ties"] == r["data"]["pairs"]


def test_cli_eval_help(run_cli):
    result = run_cli("score-code", "eval", "--help")
    assert result.code == 0 and "Examples:" in result.stdout and "--sven" in result.stdout


def test_cli_eval_error_paths(run_cli, tmp_path, monkeypatch):
    folder = shared_data("sven")
    missing = run_cli("score-code", "eval", "--sven", tmp_path / "nope", "--analyzers", "none")
    assert missing.code == 2 and "no SVEN folder" in missing.stderr
    assert run_cli("score-code", "eval", "--sven", folder, "--analyzers", "pylint").code == 2
    assert run_cli("score-code", "eval", "--sven", folder, "--model", "gpt").code == 2
    assert run_cli("score-code", "eval", "--sven", folder, "--segment", "words").code == 2
    assert run_cli("score-code", "eval", "--analyzers", "none").code == 2  # --sven is required
    monkeypatch.setattr(R, "available", lambda name: name != "semgrep")
    absent = run_cli("score-code", "eval", "--sven", folder, "--analyzers", "bandit,semgrep")
    assert absent.code == 3 and "semgrep" in absent.stderr and "pip install 'mlx26[score-code]'" in absent.stderr


def test_f1_difference_is_paired_and_resamples_whole_pairs():
    from mlx26.core.common.errors import InputError
    from mlx26.core.score_code.evaluate import f1_difference, prf

    gold = [True, False] * 10  # 10 (vulnerable, fixed) pairs
    groups = [i for i in range(10) for _ in range(2)]
    good = list(gold)  # every verdict right
    lazy = [True] * 20  # flags everything: P = 0.5, R = 1
    out = f1_difference(good, lazy, gold, groups, resamples=300, seed=1)
    assert out["difference"] == pytest.approx(prf(good, gold)["f1"] - prf(lazy, gold)["f1"], abs=1e-4)
    # every resample holds whole pairs, so each has a vulnerable and a fixed version: the difference is 1 − 2/3
    assert out["low"] == out["high"] == pytest.approx(1 / 3, abs=1e-4) and out["share_a_above"] == 1.0
    same = f1_difference(lazy, lazy, gold, groups, resamples=50)
    assert same["difference"] == same["low"] == same["high"] == 0.0 and same["share_a_above"] == 0.0
    assert out == f1_difference(good, lazy, gold, groups, resamples=300, seed=1)
    with pytest.raises(InputError):
        f1_difference(good, lazy[:3], gold, groups)
