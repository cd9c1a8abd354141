"""The harness every optimiser runs in: ledger views per purpose, budget estimates, execution, judging.

Our own design around MR.PEA's description (reconstruction). One :class:`~mlx26.core.llm.Ledger`
books every call of a run under one of four purposes — ``meta`` (meta-reasoning and prompt
edits), ``generation`` (validation inputs and their references), ``execution`` (the target model
answering) and ``judging`` — so tokens and dollars are the plain sums of per-call lines, and the
ledger's own worst-case check refuses any call that could take the run over budget (also when a
server reports no usage: the ledger then books the labelled estimate, bounded by one token per
byte). Above that guarantee, :meth:`Harness.estimate` prices the *next round* from its planned
calls (prompt bound of representative prompts + ``max_tokens`` per call, never less than the worst
case the previous round reserved), so a round that cannot finish within budget is never started.

Judging: pointwise against the knowledge's criteria (plus, when a self-derived reference exists,
the built-in ``correct`` check done by code), and pairwise against the incumbent with the order
swapped (``repeats`` × both orders, majority): a judge that always prefers one position produces
ties, never a win. Unparseable replies are counted in ``failures`` and treated as failures.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.llm import Backend, Ledger, LedgerBackend
from mlx26.core.llm.types import ChatParams, ChatRequest
from mlx26.core.optimize_prompt import prompts, scoring
from mlx26.core.optimize_prompt.knowledge import Knowledge
from mlx26.core.optimize_prompt.programs import NotArithmetic, evaluate
from mlx26.core.optimize_prompt.spec import PURPOSES
from mlx26.core.optimize_prompt.tasks import Task

EXPR_TOKENS = 64
MARGIN = 1.25  # prompts grow with the knowledge between rounds
ESTIMATES = ("worst", "expected")
EXPECTED_MARGIN = 1.5  # over the costliest finished round, for the expected-cost estimate


@dataclass(frozen=True)
class Settings:
    rounds: int = 5
    n_validation: int = 4
    pairwise_repeats: int = 1
    target_max_tokens: int = 256
    optimizer_max_tokens: int = 384
    judge_max_tokens: int = 48
    vote_samples: int = 3
    ape_candidates: int = 3
    retrieval_k: int = 2
    retrieval: bool = True
    seed: int = 0
    estimate: str = "worst"  # worst: every call at max_tokens | expected: the costliest round so far × EXPECTED_MARGIN

    def __post_init__(self) -> None:
        for name in ("rounds", "n_validation", "pairwise_repeats", "target_max_tokens", "optimizer_max_tokens",
                     "judge_max_tokens", "vote_samples", "ape_candidates", "retrieval_k"):
            value = getattr(self, name)
            low = 0 if name == "rounds" else 1
            if not isinstance(value, int) or value < low:
                raise InputError(f"{name.replace('_', '-')} must be an integer ≥ {low}, got {value!r}.")
        if self.estimate not in ESTIMATES:
            raise InputError(f"estimate must be one of {', '.join(ESTIMATES)}, not {self.estimate!r}.")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Call:
    """One planned call of a round (for the estimate): purpose, representative prompt, max tokens, n."""

    purpose: str
    text: str
    max_tokens: int
    n: int = 1


class Harness:
    def __init__(self, task: Task, target: Backend, optimizer: Backend, ledger: Ledger, settings: Settings,
                 corpus: Any = None):
        self.task = task
        self.settings = settings
        self.ledger = ledger
        self.corpus = corpus
        self.views = {p: LedgerBackend(target if p == "execution" else optimizer, ledger, p) for p in PURPOSES}
        self.failures: Counter[str] = Counter()
        self._last_worst: tuple[int, float] = (0, 0.0)
        self._max_actual: tuple[int, float] = (0, 0.0)

    # ------------------------------------------------------------------ calls
    def ask(self, purpose: str, text: str, max_tokens: int, *, temperature: float = 0.0, n: int = 1,
            draw: int = 0) -> list[str]:
        """The reply texts; ``draw`` offsets the seed so sampled calls repeated across rounds differ."""
        result = self.views[purpose].chat(text, temperature=temperature, max_tokens=max_tokens,
                                          seed=self.settings.seed + draw, n=n)
        return result.texts

    def execute(self, template: str, value: str) -> str:
        return self.ask("execution", self.task.render(template, value), self.settings.target_max_tokens)[0]

    def answer(self, text: str) -> str | None:
        found = scoring.extract(text, self.task.answer_format)
        if found is None:
            self.failures["unparseable_output"] += 1
        return found

    def reference(self, value: str) -> tuple[str | None, str | None]:
        """A self-derived reference: program execution for number tasks, a majority vote otherwise."""
        if self.task.answer_format == "number":
            expr = prompts.parse_expr(self.ask("generation", prompts.reference_program(value), EXPR_TOKENS)[0])
            if expr is None:
                self.failures["unparseable_reference"] += 1
                return None, None
            try:
                return scoring.format_number(evaluate(expr)), "program"
            except NotArithmetic:
                self.failures["unparseable_reference"] += 1
                return None, None
        k = self.settings.vote_samples
        texts = self.ask("generation", prompts.solve(self.task, value), self.settings.optimizer_max_tokens,
                         temperature=0.7 if k > 1 else 0.0, n=k)
        votes = Counter(a for a in (scoring.extract(t, self.task.answer_format) for t in texts) if a is not None)
        if votes and votes.most_common(1)[0][1] * 2 > k:
            return votes.most_common(1)[0][0], "vote"
        self.failures["no_majority"] += 1
        return None, None

    def pointwise(self, k: Knowledge, value: str, response: str, reference: str | None) -> dict[str, Any]:
        names = k.criterion_names
        failed: list[str] = []
        if names:
            parsed = prompts.parse_failed(self.ask("judging", prompts.pointwise(k, value, response),
                                                   self.settings.judge_max_tokens)[0], names)
            if parsed is None:
                self.failures["unparseable_judge"] += 1
                parsed = list(names)  # an unreadable verdict counts as failing every criterion
            failed = parsed
        total = len(names)
        if reference is not None:
            total += 1
            if not scoring.correct(self.answer(response), reference, self.task.answer_format):
                failed = [*failed, "correct"]
        score = 1.0 - len(failed) / total if total else 1.0
        return {"failed": failed, "score": round(score, 6)}

    def pairwise(self, k: Knowledge | None, value: str, reference: str | None, incumbent: str, candidate: str) -> int:
        """+1 if the candidate wins the majority of both-order comparisons, -1 if it loses, 0 for a tie."""
        requirements = f"answer with {prompts.FORMAT_TEXT.get(self.task.answer_format, 'a short answer')}"
        votes = 0
        for _ in range(self.settings.pairwise_repeats):
            for cand_pos, a, b in (("B", incumbent, candidate), ("A", candidate, incumbent)):
                winner = prompts.parse_winner(self.ask("judging", prompts.pairwise(k, requirements, value, reference,
                                                                                  a, b), self.settings.judge_max_tokens)[0])
                if winner is None:
                    self.failures["unparseable_judge"] += 1
                    continue
                votes += 1 if winner == cand_pos else -1
        return (votes > 0) - (votes < 0)

    # ------------------------------------------------------------------ accounting
    def mark(self) -> int:
        return len(self.ledger.entries)

    def cost_since(self, mark: int) -> dict[str, Any]:
        entries = [e for e in self.ledger.entries[mark:] if not e.get("refused")]
        by = {p: {"calls": 0, "tokens": 0, "usd": 0.0} for p in PURPOSES}
        for e in entries:
            row = by.setdefault(e.get("purpose", "?"), {"calls": 0, "tokens": 0, "usd": 0.0})
            row["calls"] += 1
            row["tokens"] += int(e["prompt_tokens"] + e["completion_tokens"])
            row["usd"] += float(e["cost_usd"])
        worst = (sum(int(e.get("worst_case_tokens", 0)) for e in entries),
                 sum(float(e.get("worst_case_usd", 0.0)) for e in entries))
        self._last_worst = worst
        spent = (int(sum(r["tokens"] for r in by.values())), float(sum(r["usd"] for r in by.values())))
        self._max_actual = (max(self._max_actual[0], spent[0]), max(self._max_actual[1], spent[1]))
        return {"calls": len(entries), "tokens": sum(r["tokens"] for r in by.values()),
                "usd": round(sum(r["usd"] for r in by.values()), 10),
                "by_purpose": {p: r | {"usd": round(r["usd"], 10)} for p, r in by.items()},
                "tokens_total": self.ledger.spent_tokens, "usd_total": round(self.ledger.spent_usd, 10),
                "estimated_usage_calls": sum(e.get("usage_source") == "estimated" for e in entries)}

    def estimate(self, plan: Sequence[Call]) -> tuple[int, float]:
        """(tokens, USD) the next round may cost.

        ``worst`` (default): every planned call at its worst case, never below the last round's
        reservations, so a started round always finishes. ``expected``: after the first round,
        the costliest finished round × ``EXPECTED_MARGIN`` — more rounds fit a small budget, and a
        round that still runs out is cut by the ledger's per-call refusal (the budget holds either way).
        """
        if self.settings.estimate == "expected" and self._max_actual[0] > 0:
            return (math.ceil(self._max_actual[0] * EXPECTED_MARGIN), self._max_actual[1] * EXPECTED_MARGIN)
        tokens, usd = 0, 0.0
        for call in plan:
            view = self.views[call.purpose]
            request = ChatRequest.chat(call.text, ChatParams.make(max_tokens=call.max_tokens, n=call.n))
            prompt = math.ceil(view.inner.prompt_token_bound(request) * MARGIN)
            completion = call.max_tokens * call.n
            tokens += prompt + completion
            usd += self.ledger.prices.cost(view.inner.model or "?", prompt, completion)
        return max(tokens, self._last_worst[0]), max(usd, self._last_worst[1])

    def over_budget(self, tokens: int, usd: float) -> str | None:
        """Why a round of this estimate must not start, or None."""
        why = []
        if self.ledger.budget_tokens is not None and self.ledger.spent_tokens + tokens > self.ledger.budget_tokens:
            why.append(f"the next round could use {tokens} tokens but "
                       f"{max(self.ledger.budget_tokens - self.ledger.spent_tokens, 0)} remain")
        if self.ledger.budget_usd is not None and self.ledger.spent_usd + usd > self.ledger.budget_usd + 1e-12:
            why.append(f"the next round could cost ${usd:.6g} but "
                       f"${max(self.ledger.budget_usd - self.ledger.spent_usd, 0):.6g} remain")
        return "; ".join(why) or None

    # ------------------------------------------------------------------ plans
    def response_stub(self) -> str:
        return "x" * min(4 * self.settings.target_max_tokens, prompts.RESPONSE_CHARS)

    def longest_input(self) -> str:
        return max(self.task.inputs, key=len)

    def execution_calls(self, template: str, count: int) -> list[Call]:
        return [Call("execution", self.task.render(template, self.longest_input()), self.settings.target_max_tokens)
                ] * count

    def reference_calls(self, count: int) -> list[Call]:
        x = self.longest_input()
        if self.task.answer_format == "number":
            return [Call("generation", prompts.reference_program(x), EXPR_TOKENS)] * count
        return [Call("generation", prompts.solve(self.task, x), self.settings.optimizer_max_tokens,
                     self.settings.vote_samples)] * count

    def judge_calls(self, k: Knowledge | None, count_point: int, count_pair: int) -> list[Call]:
        x, r = self.longest_input(), self.response_stub()
        out = []
        if k is not None and k.criteria:
            out += [Call("judging", prompts.pointwise(k, x, r), self.settings.judge_max_tokens)] * count_point
        out += [Call("judging", prompts.pairwise(k, "answer", x, "0", r, r), self.settings.judge_max_tokens)
                ] * (count_pair * 2 * self.settings.pairwise_repeats)
        return out


def evaluate_prompt(task_format: str, template: str, data: Sequence[Any], backend: Backend, *,
                    max_tokens: int = 256, seed: int = 0, scorer: str | None = None) -> dict[str, Any]:
    """Accuracy of ``template`` on labelled ``data`` (eval only: the one place labels are compared)."""
    fmt = {"exact": "text", "number": "number", "mc": "mc"}.get(scorer or "", task_format)
    right = unparseable = 0
    for item in data:
        text = backend.chat(template.replace("{input}", item.input), temperature=0.0, max_tokens=max_tokens,
                            seed=seed).text
        predicted = scoring.extract(text, fmt)
        unparseable += predicted is None
        right += scoring.correct(predicted, scoring.label_answer(item.label, fmt), fmt)
    n = len(data)
    return {"n": n, "correct": right, "accuracy": round(right / n, 6) if n else None, "unparseable": unparseable}
