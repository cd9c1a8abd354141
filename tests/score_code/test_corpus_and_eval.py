"""Synthetic corpus invariants, the 'hard' patterns really evade the analyzers, and the evaluation metrics."""

from __future__ import annotations

import ast
import json

import pytest
from mlx26.core.score_code import analyzers, load_model
from mlx26.core.score_code.corpus import CWES, generate
from mlx26.core.score_code.evaluate import evaluate, prf


def test_corpus_is_deterministic_parses_and_is_labelled():
    a, b = generate(120, seed=4), generate(120, seed=4)
    assert [e.to_record() for e in a] == [e.to_record() for e in b]
    assert [e.text for e in generate(5, seed=5)] != [e.text for e in a[:5]]
    for e in a:
        ast.parse(e.text)
        assert e.cwe in CWES
        assert bool(e.vulnerable_lines) == e.vulnerable
        assert "#!V" not in e.text
    assert {e.cwe for e in a if e.vulnerable} == set(CWES)
    with pytest.raises(ValueError):
        generate(0)


@pytest.mark.slow
@pytest.mark.skipif(not (analyzers.available("bandit") and analyzers.available("semgrep")),
                    reason="bandit and semgrep needed")
def test_hard_patterns_evade_bandit_and_mostly_semgrep():
    """bandit misses every 'hard' pattern; semgrep only the two it resolves by constant propagation."""
    hard = [e for e in generate(240, seed=6) if e.hard]
    src = {e.id: e.text for e in hard}
    caught = {"bandit": set(), "semgrep": set()}
    for name, found in (("bandit", analyzers.run_bandit(src)), ("semgrep", analyzers.run_semgrep(src))):
        for e in hard:
            hits = {n for f in found if f.file == e.id for n in range(f.start_line, f.end_line + 1)}
            if hits & set(e.vulnerable_lines):
                caught[name].add(e.pattern)
    assert caught["bandit"] == set()
    assert caught["semgrep"] == {"constant-template", "algo-constant"}
    assert len({e.pattern for e in hard}) == 10


def test_prf_closed_form():
    pred = [True, False, True, True, False, False, True]
    gold = [True, True, False, True, False, True, True]
    row = prf(pred, gold)  # tp 3, fp 1, fn 2
    assert (row["precision"], row["recall"], row["f1"]) == pytest.approx((3 / 4, 3 / 5, 6 / 9), abs=1e-4)
    assert row["positives"] == 5 and row["n"] == 7
    assert prf([False], [False])["f1"] == 0.0


def test_evaluate_without_analyzers_on_held_out_seed():
    result = evaluate(generate(40, seed=77), {"linear": load_model("linear")}, analyzers=(), prefixes=(0.5,))
    assert result["files"] == 40
    assert set(result["step_level"]) == {"linear"} and "analyzer_missed" in result["step_level"]["linear"]
    # with no analyzer, every vulnerable file counts as missed by the analyzers
    assert result["analyzer_missed_files"] == result["vulnerable_files"]
    assert result["file_level"]["linear/softmax"]["all"]["f1"] > result["file_level"]["linear/mean"]["all"]["f1"]
    assert result["prefix_level"]["linear/softmax"]["f1"] > result["prefix_level"]["linear/last"]["f1"]
    assert "50%" in result["partial_code"]


def test_pair_examples_from_files_and_jsonl(tmp_path):
    from mlx26.core.score_code.evaluate import pair_examples

    (tmp_path / "a.vuln.py").write_text("import os\n\ndef f(p):\n    os.system('ls ' + p)\n")
    (tmp_path / "a.fixed.py").write_text("import subprocess\n\ndef f(p):\n    subprocess.run(['ls', p])\n")
    (tmp_path / "p.jsonl").write_text(json.dumps({"before": "x = pickle.loads(b)\n", "after": "x = json.loads(b)\n",
                                                  "cwe": "CWE-502"}) + "\n")
    examples = pair_examples(str(tmp_path))
    assert [(e.id, e.vulnerable, e.vulnerable_lines, e.cwe) for e in examples] == [
        ("a.vuln.py#vulnerable", True, [1, 4], "real"), ("a.vuln.py#fixed", False, [], "real"),
        ("p.jsonl:1#vulnerable", True, [1], "CWE-502"), ("p.jsonl:1#fixed", False, [], "CWE-502")]
    result = evaluate(examples, {"linear": load_model("linear")}, analyzers=(), prefixes=(0.5,))
    assert result["files"] == 4 and result["vulnerable_files"] == 2


def test_pattern_placement_varies_and_does_not_reveal_the_label():
    """Sinks sit early, in the middle and late, so every partial-code prefix has vulnerable cases."""
    from mlx26.core.score_code.detect import prefix_text
    from mlx26.core.score_code.segment import split_lines

    examples = generate(300, seed=8)
    for vulnerable in (True, False):
        assert {e.meta["placement"] for e in examples if e.vulnerable == vulnerable} == {"early", "middle", "late"}
    assert any(e.meta["helper_after_handler"] for e in examples)
    vuln = [e for e in examples if e.vulnerable]
    for frac, at_least in ((0.25, 0.15), (0.5, 0.35), (0.75, 0.55)):
        inside = sum(any(n <= len(split_lines(prefix_text(e.text, frac))) for n in e.vulnerable_lines) for e in vuln)
        assert inside >= at_least * len(vuln), (frac, inside, len(vuln))
    # early placements really are early: the first vulnerable line within the first 40 % of the file
    early = [e for e in vuln if e.meta["placement"] == "early" and not e.meta["minimal"]]
    assert early and all(min(e.vulnerable_lines) <= 0.4 * len(split_lines(e.text)) for e in early)
