"""Acceptance properties of the harness: ledger sums, the hard budget, order swapping, replay, no labels."""

from __future__ import annotations

import json

import pytest
from mlx26.core.llm import read_ledger
from mlx26.core.llm.base import Backend
from mlx26.core.optimize_prompt import simulator as sim


def test_ledger_equals_the_sum_of_per_call_usage(demo_session, tmp_path):
    path = tmp_path / "ledger.jsonl"
    summary, rounds, book = demo_session(ledger_path=str(path))
    lines = [e for e in read_ledger(str(path)) if not e.get("refused")]
    assert summary["tokens_spent"] == sum(e["prompt_tokens"] + e["completion_tokens"] for e in lines)
    assert summary["usd_spent"] == pytest.approx(sum(e["cost_usd"] for e in lines), abs=1e-9)
    assert sum(r["tokens"] for r in summary["by_purpose"].values()) == summary["tokens_spent"]
    assert sum(r["cost"]["tokens"] for r in rounds) == summary["tokens_spent"]
    # prices are applied per line: $0.15 / $0.60 per 1M prompt / completion tokens
    for e in lines[:20]:
        assert e["cost_usd"] == pytest.approx((0.15 * e["prompt_tokens"] + 0.60 * e["completion_tokens"]) / 1e6)


class NoUsage(Backend):
    """Like a server that reports no usage: billed by estimate, bounded only by the byte bound."""

    kind = "no-usage"

    def __init__(self, inner):
        super().__init__(inner.model, f"no-usage:{inner.label}")
        self.inner = inner

    def capabilities(self):
        return self.inner.capabilities()

    def call(self, request, on_token=None):
        result = self.inner.call(request, on_token)
        from dataclasses import replace

        from mlx26.core.llm.types import Usage

        return replace(result, usage=Usage(result.usage.prompt_tokens, result.usage.completion_tokens, "estimated"))
    # prompt_token_bound: the base class's byte bound, as for a server


@pytest.mark.parametrize("estimate", ["worst", "expected"])
@pytest.mark.parametrize("wrap", [False, True], ids=["usage", "no-usage"])
@pytest.mark.parametrize("method", ["mrpea", "spo", "ape"])
def test_budget_is_never_exceeded(demo_session, wrap, method, estimate):
    kw = {"target": NoUsage(sim.SimulatedTarget()), "optimizer": NoUsage(sim.ScriptedOptimizer())} if wrap else {}
    kw["estimate"] = estimate
    rounds_max = 4 if estimate == "worst" else 12
    full, full_rounds, _ = demo_session(method, rounds=rounds_max, **kw)
    first = full_rounds[0]["estimate"]["tokens"]  # the worst case of round 1 (max_tokens on every call)
    budgets = ([int(first * f) for f in (1.0, 1.3, 2.0)] if estimate == "worst"
               else [max(first, int(full["tokens_spent"] * f)) for f in (0.4, 0.7, 0.9)])
    stopped = 0
    for budget in budgets:
        summary, rounds, book = demo_session(method, rounds=rounds_max, budget_tokens=budget, **kw)
        assert book.spent_tokens <= budget
        if estimate == "worst":  # rounds stop before a call is refused
            assert all(not e.get("refused") for e in book.entries)
        else:  # a refused call ends the run with the round marked aborted
            assert all(not r.get("aborted") for r in rounds[:-1])
        stopped += summary["stopped"].startswith("budget")
        if wrap:
            assert all(e["usage_source"] == "estimated" for e in book.entries if not e.get("refused"))
    if estimate == "worst" or any(b < full["tokens_spent"] for b in budgets):
        assert stopped >= 1  # the budget did bind
    else:  # round 1's worst case (byte bounds without server usage) exceeds the whole run: nothing to cut
        assert estimate == "expected" and wrap


def test_budget_below_the_first_round_is_an_input_error_and_spends_nothing(demo_session):
    from mlx26.core.common.errors import InputError

    with pytest.raises(InputError, match="first round"):
        demo_session(budget_usd=1e-5)


class AlwaysA(sim.ScriptedOptimizer):
    def _pairwise(self, text, index):
        return "WINNER: A"


class AlwaysB(sim.ScriptedOptimizer):
    def _pairwise(self, text, index):
        return "WINNER: B"


@pytest.mark.parametrize("judge", [AlwaysA, AlwaysB])
@pytest.mark.parametrize("method", ["mrpea", "spo", "ape"])
def test_a_judge_that_prefers_one_position_never_gets_a_candidate_accepted(demo_session, judge, method):
    summary, rounds, _ = demo_session(method, optimizer=judge())
    assert summary["accepted"] == 0 and summary["prompt"] == summary["initial_prompt"]
    assert summary["gain"] == 0


def test_the_unbiased_judge_does_accept(demo_session):
    assert demo_session("mrpea")[0]["accepted"] >= 1


def _trace(rounds):
    return json.dumps(rounds, sort_keys=True)


def test_same_seed_same_trace_and_replay_reproduces_it(demo_session, tmp_path):
    from mlx26.core.llm.recording import RecordingBackend, ReplayBackend

    t_file, o_file = tmp_path / "target.jsonl", tmp_path / "optimizer.jsonl"
    first = demo_session(target=RecordingBackend(sim.SimulatedTarget(), str(t_file)),
                         optimizer=RecordingBackend(sim.ScriptedOptimizer(), str(o_file)))
    second = demo_session()
    assert _trace(first[1]) == _trace(second[1])
    replayed = demo_session(target=ReplayBackend(str(t_file)), optimizer=ReplayBackend(str(o_file)))
    assert _trace(replayed[1]) == _trace(first[1])  # estimates too: the recording keeps the bounds it gave
    assert replayed[0]["prompt"] == first[0]["prompt"]
    other = demo_session(seed=5)
    assert _trace(other[1]) != _trace(first[1])


class Guarded(dict):
    """A record whose label fields raise when the optimiser touches them."""

    def __getitem__(self, key):
        if key in ("answer", "target", "label"):
            raise AssertionError(f"the optimiser read the label field {key!r}")
        return super().__getitem__(key)

    def get(self, key, default=None):
        if key in ("answer", "target", "label"):
            raise AssertionError(f"the optimiser read the label field {key!r}")
        return super().get(key, default)

    def values(self):
        raise AssertionError("the optimiser read every field")

    def items(self):
        raise AssertionError("the optimiser read every field")


def test_the_optimiser_never_reads_labels(monkeypatch, tmp_path):
    from mlx26.core.llm import Ledger
    from mlx26.core.optimize_prompt import session, tasks
    from mlx26.core.optimize_prompt.harness import Settings

    rng = __import__("random").Random(0)
    problems = [sim.make_problem(rng, i) for i in range(6)]
    records = [Guarded(question=p.text, answer=f"#### {p.answer}") for p in problems]
    monkeypatch.setattr(tasks, "_records", lambda path: records)
    task = tasks.load_task(str(tmp_path / "gsm.jsonl"))
    assert task.inputs == tuple(p.text for p in problems)
    assert not any(str(p.answer) == x for x in task.inputs for p in problems)
    setup = session.Setup(task, sim.SimulatedTarget(), sim.ScriptedOptimizer(), data_label="guarded")
    summary = session.run_session(setup, "mrpea", Settings(rounds=3), Ledger())
    assert summary["rounds"] == 3 and summary["gain"] is None


def test_unparseable_replies_are_counted_as_failures(demo_session):
    class Junk(sim.ScriptedOptimizer):
        def reply(self, text, index, temperature, seed=None):
            return "I think this is a fine prompt."

    summary, rounds, _ = demo_session(optimizer=Junk(), rounds=2)
    assert summary["accepted"] == 0
    failures = rounds[0]["failures"]
    for kind in ("unparseable_meta", "too_few_inputs", "unparseable_reference"):
        assert failures.get(kind, 0) >= 1
