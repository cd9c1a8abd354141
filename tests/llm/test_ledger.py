"""Budget never exceeded (pre-check with max_tokens); ledger totals equal the sum of per-call usage."""

from __future__ import annotations

import json
import random
import threading

import pytest
from mlx26.core.llm import (
    BudgetExceeded,
    Ledger,
    LedgerBackend,
    PriceTable,
    get_backend,
    read_ledger,
    summarize,
)

PRICES = {"rules-model": {"prompt": 2.0, "completion": 8.0}, "*": {"prompt": 1.0, "completion": 1.0}}


def test_prices_and_per_purpose_sums(tmp_path, rules_file):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(str(path), prices=PriceTable.from_mapping(PRICES))
    judge = LedgerBackend(get_backend(f"scripted:{rules_file}"), ledger, "judge")
    arbiter = judge.for_purpose("arbiter")
    results = [judge.chat("story"), judge.chat("add 1 and 2"), arbiter.chat("capital of france", n=2)]
    entries = read_ledger(str(path))
    assert [e["purpose"] for e in entries] == ["judge", "judge", "arbiter"]
    for entry, result in zip(entries, results, strict=True):
        assert entry["prompt_tokens"] == result.usage.prompt_tokens
        assert entry["completion_tokens"] == result.usage.completion_tokens
        assert entry["cost_usd"] == pytest.approx((2.0 * result.usage.prompt_tokens
                                                   + 8.0 * result.usage.completion_tokens) / 1e6)
    rows = {r["purpose"]: r for r in summarize(entries)}
    assert rows["judge"]["calls"] == 2 and rows["arbiter"]["calls"] == 1
    assert rows["TOTAL"]["total_tokens"] == sum(r.usage.total_tokens for r in results)
    assert rows["TOTAL"]["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in entries))
    assert PriceTable.from_mapping(PRICES).rates("other") == (1.0, 1.0) and PriceTable().rates("x") == (0.0, 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_budget_is_never_exceeded_random_sessions(rules_file, seed):
    rng = random.Random(seed)
    budget = rng.randint(40, 400)
    ledger = Ledger(budget_tokens=budget, prices=PriceTable.from_mapping(PRICES), budget_usd=rng.uniform(1e-4, 2e-3))
    llm = LedgerBackend(get_backend(f"scripted:{rules_file}"), ledger)
    refused = 0
    for _ in range(60):
        prompt = rng.choice(["story", "add 3 and 4", "capital of france", "x" * rng.randint(1, 200)])
        try:
            llm.chat(prompt, max_tokens=rng.randint(1, 40), n=rng.randint(1, 3))
        except BudgetExceeded:
            refused += 1
        assert ledger.spent_tokens <= budget and ledger.spent_usd <= ledger.budget_usd + 1e-12
    assert refused > 0  # the sessions are long enough to hit the budget
    billed = [e for e in ledger.entries if not e.get("refused")]
    assert ledger.spent_tokens == sum(e["prompt_tokens"] + e["completion_tokens"] for e in billed)
    assert sum(1 for e in ledger.entries if e.get("refused")) == refused


def test_budget_holds_under_concurrent_calls(rules_file):
    ledger = Ledger(budget_tokens=300)
    llm = LedgerBackend(get_backend(f"scripted:{rules_file}"), ledger)
    errors: list[BaseException] = []

    def worker():
        for _ in range(20):
            try:
                llm.chat("story", max_tokens=25)
            except BudgetExceeded:
                pass
            except BaseException as exc:  # noqa: BLE001 (collected for the assertion)
                errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and ledger.spent_tokens <= 300
    assert ledger._reserved_tokens == 0


def test_refusal_is_recorded_and_existing_ledger_counts(tmp_path, rules_file):
    path = tmp_path / "ledger.jsonl"
    first = LedgerBackend(get_backend(f"scripted:{rules_file}"), Ledger(str(path), budget_tokens=60))
    first.chat("story", max_tokens=30)
    spent = first.ledger.spent_tokens
    # a new process with the same ledger file starts from what is already spent
    second = LedgerBackend(get_backend(f"scripted:{rules_file}"), Ledger(str(path), budget_tokens=60))
    assert second.ledger.spent_tokens == spent
    with pytest.raises(BudgetExceeded, match="budget") as info:
        second.chat("story", max_tokens=60 - spent)
    assert "--max-tokens" in info.value.hint
    entries = read_ledger(str(path))
    assert entries[-1]["refused"] is True and entries[-1]["prompt_tokens"] == 0
    assert summarize(entries)[-1]["refused"] == 1


def test_cached_calls_are_billed_nothing(tmp_path, rules_file):
    from mlx26.core.llm.cache import CachingBackend

    ledger = Ledger(prices=PriceTable.from_mapping(PRICES))
    llm = LedgerBackend(CachingBackend(get_backend(f"scripted:{rules_file}")), ledger)
    a, b = llm.chat("story"), llm.chat("story")
    assert b.cached and ledger.entries[1]["cost_usd"] == 0 and ledger.entries[1]["cached"]
    assert ledger.spent_tokens == a.usage.total_tokens


def test_bad_price_tables(tmp_path):
    for data in ([1], {"m": 3}, {"m": {"prompt": -1}}, {"m": {"input": 1}}):
        with pytest.raises(ValueError):
            PriceTable.from_mapping(data)
    path = tmp_path / "p.yaml"
    path.write_text("m:\n  prompt: 1.5\n  completion: 2\n")
    assert PriceTable.load(str(path)).rates("m") == (1.5, 2.0)
    with pytest.raises(ValueError, match="not found"):
        PriceTable.load(str(tmp_path / "none.json"))


def test_cli_budget_ledger_and_summary(run_cli, tmp_path, rules_file):
    ledger, prices = tmp_path / "ledger.jsonl", tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    base = ["llm", "chat", "--llm", f"scripted:{rules_file}", "--ledger", ledger, "--prices", prices,
            "--budget-tokens", "120"]
    ok = [run_cli(*base, "story", "--max-tokens", "20", "--purpose", p) for p in ("judge", "judge", "arbiter")]
    assert all(r.code == 0 for r in ok)
    refused = run_cli(*base, "story", "--max-tokens", "100")
    assert refused.code == 1 and refused.error_lines[0].startswith("Error: budget:")
    assert refused.error_lines[1].startswith("Hint:")
    entries = read_ledger(str(ledger))
    assert sum(e["prompt_tokens"] + e["completion_tokens"] for e in entries) <= 120
    summary = run_cli("llm", "ledger", ledger, "--format", "jsonl")
    rows = {r["purpose"]: r for r in map(json.loads, summary.stdout.splitlines())}
    assert rows["judge"]["calls"] == 2 and rows["arbiter"]["calls"] == 1 and rows["TOTAL"]["refused"] == 1
    assert rows["TOTAL"]["total_tokens"] == sum(e.get("total_tokens", 0) for e in entries)
    by_model = run_cli("llm", "ledger", ledger, "--by", "model", "--format", "json")
    assert json.loads(by_model.stdout)[0]["model"] == "rules-model"
    assert run_cli("llm", "ledger", ledger, "--by", "colour").code == 2


@pytest.mark.parametrize(("entry", "needle"), [({"purpose": [1]}, "must be a plain value"),
                                                ({"prompt_tokens": -5}, "finite and ≥ 0"),
                                                ({"cost_usd": float("inf")}, "finite and ≥ 0")])
def test_ledger_summary_refuses_malformed_entries(entry, needle):
    with pytest.raises(ValueError, match=needle):
        summarize([entry])
