"""The MR.PEA loop (reconstruction; see the package docstring for what comes from where).

One round, in order:

1. **meta-reasoning** over the task, the incumbent prompt, the knowledge and the criteria that
   failed last round → new strategies, criteria, pitfalls and a retrieval decision (knowledge
   version bumps when anything changed; the trace records the diff);
2. **retrieval** (optional) — BM25 over the user's docs folder with the query meta-reasoning chose;
   the passages become knowledge notes;
3. **validation inputs** — the optimiser writes ``n`` new inputs covering the knowledge (too few →
   topped up from the task's own unlabelled inputs, counted as a failure), each with a
   self-derived reference where checkable (:meth:`Harness.reference`);
4. the **incumbent** answers them; pointwise assessment against the criteria;
5. a **targeted edit** for the criteria that failed (with failing examples) → the candidate;
6. the **candidate** answers the same inputs; pointwise, and pairwise against the incumbent with
   the order swapped;
7. **accept only winners**: more pairwise wins than losses *and* a pointwise score no lower.

After ``IDLE_ROUNDS`` rounds in a row with no knowledge change and no candidate the loop stops
(``stopped: converged``) instead of spending the rest of the budget on repeats.

When nothing failed, no edit is asked for (nothing to target). Labels never enter: the task has none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from mlx26.core.optimize_prompt import prompts
from mlx26.core.optimize_prompt.harness import Call, Harness
from mlx26.core.optimize_prompt.knowledge import Knowledge

IDLE_ROUNDS = 2  # rounds in a row with nothing new to try before MR.PEA stops spending


def plan(h: Harness, prompt: str, k: Knowledge) -> list[Call]:
    s, task = h.settings, h.task
    ex = list(task.inputs[:3])
    n = s.n_validation
    stub = [(h.longest_input(), h.response_stub())] * 2
    return ([Call("meta", prompts.meta(task, prompt, k, ex, k.criterion_names), s.optimizer_max_tokens),
             Call("generation", prompts.generate(task, k, ex, n), s.optimizer_max_tokens)]
            + h.reference_calls(n) + h.execution_calls(prompt, 2 * n)
            + [Call("meta", prompts.edit(task, prompt, k, k.criterion_names, stub), s.optimizer_max_tokens)]
            + h.judge_calls(k, 2 * n, n))


def _inputs(h: Harness, text: str, round_no: int) -> list[str]:
    n = h.settings.n_validation
    got = prompts.parse_inputs(text)[:n]
    if len(got) < n:
        h.failures["too_few_inputs"] += 1
        pool = list(h.task.inputs)
        start = (round_no - 1) * n
        for i in range(len(pool)):
            if len(got) >= n:
                break
            x = pool[(start + i) % len(pool)]
            if x not in got:
                got.append(x)
    return got


def rounds(h: Harness, initial: str) -> Iterator[dict[str, Any]]:
    """Yield one record per finished round; ``h.stop`` says why it ended."""
    task, s = h.task, h.settings
    k = Knowledge.initial(task.answer_format)
    incumbent = initial
    last_failed: list[str] = []
    examples = list(task.inputs[:3])
    idle = 0
    for r in range(1, s.rounds + 1):
        est = h.estimate(plan(h, incumbent, k))
        yield {"estimate": est}
        h.failures.clear()
        mark = h.mark()
        # 1-2: meta-reasoning and retrieval
        update = prompts.parse_meta(h.ask("meta", prompts.meta(task, incumbent, k, examples, last_failed),
                                          s.optimizer_max_tokens)[0])
        retrieved: list[dict[str, Any]] = []
        new_k = k
        if update is None:
            h.failures["unparseable_meta"] += 1
        else:
            notes = []
            if update.retrieve and s.retrieval and h.corpus is not None:
                for passage, score in h.corpus.search(update.retrieve, s.retrieval_k):
                    retrieved.append({"query": update.retrieve, "source": passage.source, "score": round(score, 4),
                                      "text": passage.text})
                    notes.append(passage.text)
            new_k = k.updated(r, update.strategies, update.criteria, update.pitfalls, notes)
        # 3: validation inputs and self-derived references
        inputs = _inputs(h, h.ask("generation", prompts.generate(task, new_k, examples, s.n_validation),
                                  s.optimizer_max_tokens)[0], r)
        refs = [h.reference(x) for x in inputs]
        # 4: the incumbent
        inc_out = [h.execute(incumbent, x) for x in inputs]
        inc_pw = [h.pointwise(new_k, x, o, ref) for x, o, (ref, _) in zip(inputs, inc_out, refs, strict=True)]
        counts = Counter(c for p in inc_pw for c in p["failed"])
        failed = [c for c, _ in counts.most_common()]
        # 5: targeted edit
        candidate = None
        if failed:
            bad = [(x, o) for x, o, p in zip(inputs, inc_out, inc_pw, strict=True) if p["failed"]]
            candidate = prompts.parse_prompt(h.ask("meta", prompts.edit(task, incumbent, new_k, failed, bad),
                                                   s.optimizer_max_tokens)[0])
            if candidate is None:
                h.failures["unparseable_edit"] += 1
            elif candidate == incumbent:
                candidate = None
        # 6-7: the candidate, judged against the incumbent
        cand_pw: list[dict[str, Any]] = []
        verdicts: list[int] = []
        if candidate is not None:
            cand_out = [h.execute(candidate, x) for x in inputs]
            cand_pw = [h.pointwise(new_k, x, o, ref) for x, o, (ref, _) in zip(inputs, cand_out, refs, strict=True)]
            verdicts = [h.pairwise(new_k, x, ref, a, b)
                        for x, (ref, _), a, b in zip(inputs, refs, inc_out, cand_out, strict=True)]
        inc_score = _mean(p["score"] for p in inc_pw)
        cand_score = _mean(p["score"] for p in cand_pw) if cand_pw else None
        wins, losses = verdicts.count(1), verdicts.count(-1)
        accepted = candidate is not None and wins > losses and cand_score is not None and cand_score >= inc_score
        record = {
            "round": r, "prompt_before": incumbent, "candidate": candidate, "accepted": accepted,
            "prompt": candidate if accepted else incumbent,
            "knowledge_version": new_k.version, "knowledge_diff": new_k.diff(k), "knowledge": new_k.to_dict(),
            "retrieved": retrieved,
            "validation": [{"input": x, "reference": ref, "reference_source": src} for x, (ref, src) in zip(inputs, refs, strict=True)],
            "scores": {"incumbent_pointwise": inc_score, "candidate_pointwise": cand_score,
                       "failed_criteria": dict(counts), "pairwise": {"wins": wins, "losses": losses,
                                                                     "ties": len(verdicts) - wins - losses}},
            "failures": dict(sorted(h.failures.items())), "cost": h.cost_since(mark),
            "estimate": {"tokens": est[0], "usd": round(est[1], 10)}}
        idle = idle + 1 if candidate is None and new_k.version == k.version else 0
        k = new_k
        last_failed = failed
        if accepted:
            incumbent = candidate  # type: ignore[assignment]
        yield record
        if idle >= IDLE_ROUNDS and r < s.rounds:
            yield {"stop": f"converged: {IDLE_ROUNDS} rounds without a knowledge change or a candidate"}
            return


def _mean(values: Any) -> float:
    values = list(values)
    return round(sum(values) / len(values), 6) if values else 0.0
