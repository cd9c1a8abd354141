"""Baselines in the same harness, budget and ledger: SPO-style, APE-style, and no optimisation.

* **SPO-style** (reconstructed from Xiang et al. 2025, *Self-Supervised Prompt Optimization*,
  MetaGPT ``metagpt/ext/spo``): a fixed handful of the task's unlabelled inputs (3 by default in
  SPO; ``n_validation`` here); each round the optimiser rewrites the best prompt from its outputs
  and the requirements, the new prompt answers the same inputs, and a pairwise judge without
  references or criteria (SPO's output-vs-output comparison, order swapped) decides; winners
  replace the best. No knowledge, no synthetic inputs, no retrieval.
* **APE-style** (Zhou et al. 2023, *Large Language Models Are Human-Level Prompt Engineers*,
  iterative Monte-Carlo resampling; APE scores against labelled demos, which this setting has
  not, so candidates are scored by the same pairwise judge): each round ``ape_candidates``
  variations of the best are sampled (one call, n choices) and the one with the best net
  pairwise wins replaces it if it wins more than it loses.
* **none**: the initial prompt, no calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mlx26.core.optimize_prompt import prompts
from mlx26.core.optimize_prompt.harness import Call, Harness


def _fixed_inputs(h: Harness) -> list[str]:
    return list(h.task.inputs[:h.settings.n_validation])


def _record(h: Harness, r: int, before: str, candidates: list[str | None], accepted: bool, prompt: str,
            verdicts: list[list[int]], mark: int, est: tuple[int, float], inputs: list[str]) -> dict[str, Any]:
    return {"round": r, "prompt_before": before, "candidate": candidates[0] if len(candidates) == 1 else candidates,
            "accepted": accepted, "prompt": prompt, "validation": [{"input": x} for x in inputs],
            "scores": {"pairwise": [{"wins": v.count(1), "losses": v.count(-1), "ties": v.count(0)} for v in verdicts]},
            "failures": dict(sorted(h.failures.items())), "cost": h.cost_since(mark),
            "estimate": {"tokens": est[0], "usd": round(est[1], 10)}}


def spo_rounds(h: Harness, initial: str) -> Iterator[dict[str, Any]]:
    s, task = h.settings, h.task
    inputs = _fixed_inputs(h)
    best, best_out = initial, None
    for r in range(1, s.rounds + 1):
        n = len(inputs)
        stub = [(h.longest_input(), h.response_stub())] * n
        plan = ([Call("meta", prompts.spo_optimize(task, best, stub), s.optimizer_max_tokens)]
                + h.execution_calls(best, n * (2 if best_out is None else 1)) + h.judge_calls(None, 0, n))
        est = h.estimate(plan)
        yield {"estimate": est}
        h.failures.clear()
        mark = h.mark()
        if best_out is None:
            best_out = [h.execute(best, x) for x in inputs]
        # sampled like SPO's optimiser (temperature > 0, a fresh seed per round), or it would repeat itself
        candidate = prompts.parse_prompt(h.ask("meta", prompts.spo_optimize(task, best, list(zip(inputs, best_out,
                                                                                                  strict=True))),
                                               s.optimizer_max_tokens, temperature=0.7, draw=r)[0])
        verdicts: list[int] = []
        if candidate is None:
            h.failures["unparseable_edit"] += 1
        elif candidate != best:
            cand_out = [h.execute(candidate, x) for x in inputs]
            verdicts = [h.pairwise(None, x, None, a, b) for x, a, b in zip(inputs, best_out, cand_out, strict=True)]
        accepted = candidate is not None and verdicts.count(1) > verdicts.count(-1)
        before = best
        if accepted:
            best, best_out = candidate, cand_out  # type: ignore[assignment]
        yield _record(h, r, before, [candidate], accepted, best, [verdicts], mark, est, inputs)


def ape_rounds(h: Harness, initial: str) -> Iterator[dict[str, Any]]:
    s, task = h.settings, h.task
    inputs = _fixed_inputs(h)
    best, best_out = initial, None
    examples = list(task.inputs[:3])
    for r in range(1, s.rounds + 1):
        n, c = len(inputs), s.ape_candidates
        plan = ([Call("meta", prompts.ape_propose(task, best, examples), s.optimizer_max_tokens, c)]
                + h.execution_calls(best, n * (c + (1 if best_out is None else 0))) + h.judge_calls(None, 0, n * c))
        est = h.estimate(plan)
        yield {"estimate": est}
        h.failures.clear()
        mark = h.mark()
        if best_out is None:
            best_out = [h.execute(best, x) for x in inputs]
        texts = h.ask("meta", prompts.ape_propose(task, best, examples), s.optimizer_max_tokens, temperature=0.7, n=c,
                      draw=r)
        candidates: list[str | None] = []
        for text in texts:
            parsed = prompts.parse_prompt(text)
            if parsed is None:
                h.failures["unparseable_edit"] += 1
            candidates.append(parsed if parsed not in candidates else None)
        all_verdicts: list[list[int]] = []
        scored: list[tuple[int, int, str, list[str]]] = []
        for cand in candidates:
            if cand is None or cand == best:
                all_verdicts.append([])
                continue
            outs = [h.execute(cand, x) for x in inputs]
            v = [h.pairwise(None, x, None, a, b) for x, a, b in zip(inputs, best_out, outs, strict=True)]
            all_verdicts.append(v)
            scored.append((v.count(1) - v.count(-1), -len(scored), cand, outs))
        before = best
        winner = max(scored, default=None)
        accepted = winner is not None and winner[0] > 0
        if accepted:
            best, best_out = winner[2], winner[3]  # type: ignore[index]
        yield _record(h, r, before, candidates, accepted, best, all_verdicts, mark, est, inputs)


def none_rounds(h: Harness, initial: str) -> Iterator[dict[str, Any]]:
    return iter(())
