"""Drive one optimiser under the hard budget and summarise the run (our own harness code).

:func:`optimize` asks the optimiser for its next round's estimate before the round starts: a first
round whose worst case exceeds the budget is an input error up front (nothing is spent); a later
one ends the run (``stopped: budget``). Should a call still be refused mid-round (the estimate is
an estimate; the ledger's refusal is the guarantee), the round is recorded as aborted and the run
ends with the incumbent unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.llm import BudgetExceeded
from mlx26.core.optimize_prompt import baselines, mrpea
from mlx26.core.optimize_prompt.harness import Harness

ROUNDS = {"mrpea": mrpea.rounds, "spo": baselines.spo_rounds, "ape": baselines.ape_rounds,
          "none": baselines.none_rounds}


class Run:
    """Iterate :meth:`records` (one per round); then :attr:`stopped` and :attr:`prompt` hold the outcome."""

    def __init__(self, harness: Harness, method: str, initial: str):
        if method not in ROUNDS:
            raise InputError(f"unknown optimizer {method!r}.")
        self.h, self.method, self.initial = harness, method, initial
        self.prompt = initial
        self.stopped = "no optimisation (--optimizer none)" if method == "none" else "max rounds reached"
        self.n_rounds = 0
        self.accepted = 0

    def records(self) -> Iterator[dict[str, Any]]:
        h = self.h
        gen = ROUNDS[self.method](h, self.initial)
        first = True
        mark = h.mark()
        while True:
            try:
                item = next(gen)
            except StopIteration:
                return
            except BudgetExceeded as exc:
                self.stopped = f"budget: a call was refused ({exc.message})"
                self.n_rounds += 1
                yield {"round": self.n_rounds, "method": self.method, "aborted": self.stopped, "accepted": False,
                       "prompt": self.prompt, "cost": h.cost_since(mark)}
                return
            if set(item) == {"stop"}:  # the optimiser converged: nothing left to try
                self.stopped = item["stop"]
                return
            if set(item) == {"estimate"}:
                tokens, usd = item["estimate"]
                why = h.over_budget(tokens, usd)
                if why and first:
                    raise InputError(f"the budget is below the first round's estimate: {why}.",
                                 "raise --budget-usd/--budget-tokens, or lower --n-validation, --target-max-tokens or "
                                 "--optimizer-max-tokens (run --dry-run prints the estimate)")
                if why:
                    self.stopped = f"budget: {why}"
                    gen.close()
                    return
                first = False
                mark = h.mark()
                continue
            self.n_rounds += 1
            self.accepted += bool(item.get("accepted"))
            self.prompt = item["prompt"]
            yield {"method": self.method, **item}


def first_estimate(harness: Harness, method: str, initial: str) -> tuple[int, float]:
    """The first round's estimate (tokens, USD), without making a call (every optimiser yields it first)."""
    if method not in ROUNDS:
        raise InputError(f"unknown optimizer {method!r}.")
    gen = ROUNDS[method](harness, initial)
    try:
        item = next(gen)
    except StopIteration:
        return 0, 0.0
    finally:
        gen.close()
    return item["estimate"]


def summary(run: Run, *, tasks: int = 1) -> dict[str, Any]:
    ledger = run.h.ledger
    return {"method": run.method, "rounds": run.n_rounds, "accepted": run.accepted, "stopped": run.stopped,
            "initial_prompt": run.initial, "prompt": run.prompt, "tokens_spent": ledger.spent_tokens,
            "usd_spent": round(ledger.spent_usd, 10),
            "estimated_usage_calls": sum(e.get("usage_source") == "estimated" for e in ledger.entries
                                         if not e.get("refused")), "usd_per_task": round(ledger.spent_usd / max(tasks, 1), 10),
            "budget_tokens": ledger.budget_tokens, "budget_usd": ledger.budget_usd,
            "by_purpose": {r["purpose"]: {"calls": r["calls"], "tokens": r["total_tokens"], "usd": r["cost_usd"]}
                           for r in ledger.summary() if r["purpose"] != "TOTAL"}}
