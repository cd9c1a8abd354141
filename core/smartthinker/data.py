"""The arithmetic task of ``train grpo`` / ``data arith``: prompts, gold answers, concise and verbose chains.

Synthetic data of our own (no dataset of the SmartThinker paper, arXiv 2603.08000, is used: it
trains on competition mathematics; this is the small verifiable stand-in we can train on a CPU).
Problems come from the zoo's seeded generator (:mod:`mlx26.core.zoo.arithmetic`); each gets two
worked chains that reach the same answer:

* **concise** — the zoo's solution, ``Step k: expr = value`` lines then ``Answer: N``;
* **verbose** — a restating opening line, the same steps each followed by an inverse-operation
  check (``Check: 19 - 7 = 12``, exact integer arithmetic), a recap line, then ``Answer: N``.

The prompt is the question line (``Question: …\\n``); a completion is one chain and the end-of-text
token. Correctness is the integer on the completion's last ``Answer:`` line equal to the gold answer.
Problem ``i`` of a split depends only on ``(seed, split, i)``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.smartthinker.spec import STYLES
from mlx26.core.zoo.arithmetic import TEMPLATES, ArithmeticProblem, extract_answer, format_problem, problem

KINDS = tuple(sorted(TEMPLATES))
OPENINGS = ("Let me work through this carefully, one step at a time.",
            "I will solve this step by step and check every step.",
            "First I restate the numbers, then I compute and verify each step.")


def _check(expr: str, value: int) -> str:
    """The inverse operation of ``a op b = value`` (exact for the zoo's integer steps)."""
    a, op, b = expr.split()
    inverse = {"+": f"{value} - {b} = {a}", "-": f"{value} + {b} = {a}", "*": f"{value} // {b} = {a}",
               "//": f"{value} * {b} = {a}"}
    return inverse[op]


def concise_chain(p: ArithmeticProblem) -> str:
    return p.solution()


def verbose_chain(p: ArithmeticProblem, variant: int = 0) -> str:
    lines = [OPENINGS[variant % len(OPENINGS)]]
    for i, (expr, value) in enumerate(p.steps, 1):
        lines.append(f"Step {i}: {expr} = {value}")
        lines.append(f"Check: {_check(expr, value)}")
    lines.append(f"Putting the steps together, the result is {p.answer}.")
    lines.append(f"Answer: {p.answer}")
    return "\n".join(lines)


def prompt_text(p: ArithmeticProblem) -> str:
    return format_problem(p, with_solution=False)


def is_correct(completion: str, answer: int) -> bool:
    return extract_answer(completion) == int(answer)


def check_kinds(kinds: Sequence[str] | None) -> tuple[str, ...]:
    if not kinds:
        return KINDS
    for k in kinds:
        if k not in KINDS:
            raise unknown_name("problem kind", k, KINDS)
    return tuple(dict.fromkeys(kinds))


def problems(n: int, *, seed: int = 0, split: str = "train", kinds: Sequence[str] | None = None
             ) -> Iterator[tuple[int, ArithmeticProblem]]:
    """``(index, problem)`` for the first ``n`` problems of ``split`` whose kind is in ``kinds``."""
    if n < 0:
        raise InputError(f"the number of problems must be ≥ 0, got {n}.")
    allowed = set(check_kinds(kinds))
    i = found = 0
    while found < n:
        p = problem(seed, i, split)
        if p.kind in allowed:
            yield i, p
            found += 1
        i += 1


def records(n: int, *, seed: int = 0, split: str = "train", kinds: Sequence[str] | None = None,
            style: str = "mixed") -> Iterator[dict[str, Any]]:
    """``data arith`` rows: id, kind, prompt, answer, both chains and the SFT ``completion`` of ``style``.

    ``mixed`` draws concise or verbose per problem (seeded by the problem's id), so a warm-up on it
    sees both styles for every kind.
    """
    if style not in STYLES:
        raise unknown_name("style", style, STYLES)
    for i, p in problems(n, seed=seed, split=split, kinds=kinds):
        r = random.Random(f"mlx26-smartthinker-style:{seed}:{split}:{i}")
        verbose = verbose_chain(p, r.randrange(len(OPENINGS)))
        pick = style if style != "mixed" else ("verbose" if r.random() < 0.5 else "concise")
        yield {"id": f"{split}-{i}", "kind": p.kind, "prompt": prompt_text(p), "answer": p.answer,
               "concise": concise_chain(p), "verbose": verbose, "style": pick,
               "completion": verbose if pick == "verbose" else concise_chain(p)}
