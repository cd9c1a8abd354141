"""LLM arbitration protocol with a fake model: JSON answers, fallback, cache, `arbitrated` flags."""

from __future__ import annotations

import json

import pytest
from mlx26.core.table_decompose import decompose, load_grid
from mlx26.core.table_decompose.arbiter import (
    SYSTEM_PROMPT,
    Arbiter,
    ArbiterCache,
    Case,
    LLMArbiter,
    build_messages,
    parse_choice,
)

TOTAL_TABLE = (b"<table><tr><th></th><th>2024</th></tr>"
               b"<tr><td>All persons</td><td>100</td></tr>"
               b"<tr><td style='padding-left:1em'>Men</td><td>48</td></tr>"
               b"<tr><td style='padding-left:1em'>Women</td><td>52</td></tr>"
               b"<tr><td>Other</td><td>5</td></tr></table>")


class FakeModel:
    """Answers every case with a scripted reply; records the messages it saw."""

    def __init__(self, reply):
        self.reply = reply
        self.calls: list[list[dict[str, str]]] = []

    def __call__(self, messages):
        self.calls.append(messages)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply(messages) if callable(self.reply) else self.reply


def _run(arbiter):
    return decompose(load_grid(TOTAL_TABLE, fmt="html"), arbiter=arbiter)


@pytest.mark.parametrize(("reply", "expected"), [
    ('{"choice": "B"}', "B"),
    ('```json\n{"choice": "A"}\n```', "A"),
    ('Sure. {"reason": "x", "choice": "B"} hope that helps', "B"),
    ('{"choice": "C"}', None),
    ('{"choice": 1}', None),
    ("B", None),
    ("", None),
    ('{"answer": "A"}', None),
    ('{"choice": "A"', None),
])
def test_parse_choice(reply, expected):
    assert parse_choice(reply, ["A", "B"]) == expected


def test_messages_carry_the_case_and_the_options():
    case = Case("total-parent", "Are they its children?", "row 1: All persons", [("parent", "p"), ("sibling", "s")],
                "parent")
    system, user = build_messages(case)
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    payload = json.loads(user["content"])
    assert payload["decision"] == "total-parent" and [o["id"] for o in payload["options"]] == ["parent", "sibling"]
    assert payload["table_excerpt"] == "row 1: All persons"


def test_case_key_is_stable_and_content_addressed():
    a = Case("k", "q", "ctx", [("1", "x")], "1")
    b = Case("k", "q", "ctx", [("1", "x")], "1", rows=(3, 4))
    c = Case("k", "q", "other ctx", [("1", "x")], "1")
    assert a.key() == b.key() != c.key()


def test_model_choice_is_applied_and_flagged():
    rules = _run(Arbiter())
    model = FakeModel('{"choice": "sibling"}')
    llm = _run(LLMArbiter(model, model="fake"))
    assert rules.lines()[1] == "All persons > Men | 2024 = 48"
    assert llm.lines()[1] == "Men | 2024 = 48"
    assert len(model.calls) == 1
    (case,) = llm.cases
    assert case.kind == "total-parent" and case.decided_by == "llm" and case.arbitrated
    # Only the rows the case spans are marked arbitrated.
    flags = {r["text"]: r["arbitrated"] for r in llm.records}
    assert flags == {"100": True, "48": True, "52": False, "5": False}
    assert not any(r["arbitrated"] for r in rules.records)


@pytest.mark.parametrize("reply", ['{"choice": "maybe"}', "no idea", RuntimeError("model down")])
def test_invalid_answers_fall_back_to_the_rule(reply):
    rules = _run(Arbiter())
    llm = _run(LLMArbiter(FakeModel(reply)))
    assert llm.lines() == rules.lines()
    (case,) = llm.cases
    assert case.decided_by == "fallback" and not case.arbitrated and case.note
    assert not any(r["arbitrated"] for r in llm.records)


def test_cache_answers_reruns_without_asking(tmp_path):
    path = tmp_path / "cache.json"
    model = FakeModel('{"choice": "sibling"}')
    cache = ArbiterCache(path)
    first = _run(LLMArbiter(model, cache=cache, model="fake"))
    cache.save()
    assert len(model.calls) == 1
    stored = json.loads(path.read_text())
    assert list(stored.values()) == [{"choice": "sibling", "kind": "total-parent", "model": "fake"}]
    silent = FakeModel(AssertionError("must not be called"))
    second = _run(LLMArbiter(silent, cache=ArbiterCache(path)))
    assert second.lines() == first.lines() and second.cases[0].decided_by == "cache" and not silent.calls


def test_fallbacks_are_not_cached(tmp_path):
    cache = ArbiterCache()
    _run(LLMArbiter(FakeModel("nonsense"), cache=cache))
    assert cache.entries == {}


def test_corrupt_cache_file_is_a_usage_error(tmp_path):
    path = tmp_path / "cache.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        ArbiterCache(path)


@pytest.mark.parametrize("text", ['{"foo": "bar"}\n', "[1]\n", '{"k": {"choice": "a"}, "x": 1}\n'])
def test_foreign_json_file_is_refused_and_left_alone(tmp_path, text):
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="is not an arbiter cache"):
        ArbiterCache(path)
    assert path.read_text() == text


def test_unchanged_cache_is_not_rewritten(tmp_path):
    path = tmp_path / "cache.json"
    path.write_text('{"k": {"choice": "a", "kind": "x", "model": "m"}}')
    cache = ArbiterCache(path)
    cache.save()
    assert path.read_text() == '{"k": {"choice": "a", "kind": "x", "model": "m"}}'  # byte for byte
    cache.put("k2", "b", "x", "m")
    cache.save()
    assert set(ArbiterCache(path).entries) == {"k", "k2"}


def test_rule_arbiter_rejects_a_default_outside_the_options():
    with pytest.raises(ValueError, match="not an option"):
        Arbiter().decide(kind="k", question="q", context="c", options=[("a", "x")], default="b")


def test_span_conflict_can_be_arbitrated():
    html = (b"<table><tr><td></td><td>A</td><td rowspan=2>B</td></tr>"
            b"<tr><td>x</td><td colspan=2>C</td></tr><tr><td>r</td><td>1</td><td>2</td></tr></table>")
    model = FakeModel(lambda messages: '{"choice": "second"}' if "overlap" in messages[1]["content"]
                      else '{"choice": "' + json.loads(messages[1]["content"])["options"][0]["id"] + '"}')
    arbiter = LLMArbiter(model)
    grid = load_grid(html, fmt="html", decide=arbiter.decide)
    assert grid.label_at(1, 2) == "C"
    assert arbiter.cases[0].kind == "span-conflict" and arbiter.cases[0].decided_by == "llm"
