"""One optimisation session as the CLI and the benchmark run it: optimise, then evaluate (our own code).

:func:`run_session` drives :class:`~.run.Run` under the ledger's hard budget, hands each round's
record to ``on_round`` as it finishes (the trace streams), then — only when labelled evaluation
data is given — scores the initial and the final prompt on it with the *target* model. The
evaluation is the one place labels are read, and its calls are booked apart from the
optimisation budget (``eval_cost``), so ``usd_spent`` is what the optimiser spent.

:func:`demo_setup` is the embedded default: the SIMULATED target and scripted optimiser of
:mod:`.simulator`, its task, the shipped notes folder and the demo price table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlx26.core.llm import Backend, Ledger, LedgerBackend, PriceTable
from mlx26.core.optimize_prompt import simulator
from mlx26.core.optimize_prompt.harness import Harness, Settings, evaluate_prompt
from mlx26.core.optimize_prompt.run import Run, summary
from mlx26.core.optimize_prompt.spec import SIMULATED
from mlx26.core.optimize_prompt.tasks import Labelled, Task

DEMO_DOCS = Path(__file__).resolve().parent / "data" / "demo-docs"
DEMO_EVAL_N = 60


@dataclass
class Setup:
    task: Task
    target: Backend
    optimizer: Backend
    corpus: Any = None
    eval_data: Sequence[Labelled] | None = None
    data_label: str = ""
    simulated: bool = False


def demo_setup(seed: int = 0, *, n_inputs: int = 8, eval_n: int = DEMO_EVAL_N, retrieval: bool = True) -> Setup:
    from mlx26.core.optimize_prompt.retrieval import Corpus

    return Setup(simulator.demo_task(n_inputs, seed), simulator.SimulatedTarget(seed), simulator.ScriptedOptimizer(seed),
                 Corpus.from_folder(str(DEMO_DOCS)) if retrieval else None, simulator.demo_eval(eval_n, seed),
                 f"{SIMULATED}: simulated target + scripted optimiser (core/optimize_prompt/simulator.py), "
                 f"{eval_n} generated held-out problems", simulated=True)


def demo_prices() -> PriceTable:
    return PriceTable.from_mapping(simulator.DEMO_PRICES, "demo price table")


def run_session(setup: Setup, method: str, settings: Settings, ledger: Ledger, *,
                initial: str | None = None, scorer: str | None = None,
                on_round: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Optimise ``setup.task`` with ``method``; the summary (plus ``gain`` when eval data is given)."""
    h = Harness(setup.task, setup.target, setup.optimizer, ledger, settings, corpus=setup.corpus)
    run = Run(h, method, initial or setup.task.template)
    for record in run.records():
        record = {"record": "round", **({"data": SIMULATED} if setup.simulated else {}), **record}
        if on_round is not None:
            on_round(record)
    out = summary(run)
    out = {"record": "summary", "simulated": setup.simulated, "data": setup.data_label or setup.task.source, "task": setup.task.name,
           "target_model": setup.target.model, "optimizer_model": setup.optimizer.model, **out,
           "settings": settings.to_dict()}
    if setup.eval_data:
        out.update(evaluate_gain(setup, run.initial, run.prompt, settings, scorer=scorer, prices=ledger.prices))
    else:
        out["gain"] = None
        out["gain_note"] = "no labelled --eval-data: gain not measured"
    return out


def dry_run(setup: Setup, method: str, settings: Settings, ledger: Ledger, *, initial: str | None = None
            ) -> dict[str, Any]:
    """What the first round would cost at most, and whether the budget admits it; no call is made."""
    from mlx26.core.optimize_prompt.run import first_estimate

    h = Harness(setup.task, setup.target, setup.optimizer, ledger, settings, corpus=setup.corpus)
    tokens, usd = first_estimate(h, method, initial or setup.task.template)
    return {"record": "dry-run", "simulated": setup.simulated, "method": method, "estimate": settings.estimate,
            "first_round_tokens": tokens, "first_round_usd": round(usd, 10),
            "budget_tokens": ledger.budget_tokens, "budget_usd": ledger.budget_usd,
            "fits": h.over_budget(tokens, usd) is None}


def evaluate_gain(setup: Setup, initial: str, final: str, settings: Settings, *, scorer: str | None = None,
                  prices: PriceTable | None = None) -> dict[str, Any]:
    """Accuracy of the initial and final prompts on the labelled eval data (calls booked apart)."""
    book = Ledger(prices=prices or PriceTable.load(None))
    target = LedgerBackend(setup.target, book, "eval")
    data = list(setup.eval_data or ())
    before = evaluate_prompt(setup.task.answer_format, initial, data, target, max_tokens=settings.target_max_tokens,
                             seed=settings.seed, scorer=scorer)
    after = (before if final == initial else
             evaluate_prompt(setup.task.answer_format, final, data, target, max_tokens=settings.target_max_tokens,
                             seed=settings.seed, scorer=scorer))
    gain = None if before["accuracy"] is None or after["accuracy"] is None else round(
        after["accuracy"] - before["accuracy"], 6)
    return {"gain": gain, "eval_n": before["n"], "accuracy_initial": before["accuracy"],
            "accuracy_final": after["accuracy"], "eval_unparseable": [before["unparseable"], after["unparseable"]],
            "eval_cost": {"tokens": book.spent_tokens, "usd": round(book.spent_usd, 10)}}
