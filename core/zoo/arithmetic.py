"""Seeded arithmetic word problems with worked chain-of-thought solutions and an answer line.

Our own generator (not a reconstruction of any paper's data): GSM8K-*style* one- to
three-step problems over small integers, built from templates. Every problem carries its
question, its worked steps (each ``expression = value``, checkable with ``eval``-free
integer arithmetic) and the integer answer; :func:`format_problem` renders it as

    Question: Mia has 12 marbles. She buys 7 more. ...
    Step 1: 12 + 7 = 19
    Answer: 19

and :func:`extract_answer` reads the last ``Answer:`` line back. Used as a corpus by the zoo
and, later, as a verifiable-reward task (``train grpo``) and a selection pool
(``select-batch``). Problem ``i`` of a split depends only on ``(seed, split, i)``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from mlx26.core.common.errors import InputError

NAMES = ("Mia", "Noah", "Ava", "Liam", "Zoe", "Omar", "Lena", "Ravi", "Sofia", "Kenji", "Amara", "Jonas",
         "Priya", "Mateo", "Elif", "Tariq", "Hana", "Felix", "Nadia", "Theo")
ITEMS = ("apples", "marbles", "stickers", "pencils", "books", "stamps", "shells", "cards", "coins", "buttons")
GOODS = (("notebook", "notebooks"), ("pen", "pens"), ("ticket", "tickets"), ("sandwich", "sandwiches"),
         ("plant", "plants"), ("ball", "balls"))
ANSWER_RE = re.compile(r"^\s*Answer:\s*(-?\d+)\s*$", re.M)


@dataclass(frozen=True)
class ArithmeticProblem:
    """One problem: ``steps`` are ``(expression, value)`` pairs; ``answer`` is the last value."""

    question: str
    steps: tuple[tuple[str, int], ...]
    answer: int
    kind: str

    def solution(self) -> str:
        lines = [f"Step {i}: {expr} = {value}" for i, (expr, value) in enumerate(self.steps, 1)]
        return "\n".join([*lines, f"Answer: {self.answer}"])


def format_problem(problem: ArithmeticProblem, *, with_solution: bool = True) -> str:
    """The problem as text; ``with_solution=False`` gives only the question line (a prompt)."""
    head = f"Question: {problem.question}\n"
    return head + (problem.solution() + "\n" if with_solution else "")


def extract_answer(text: str) -> int | None:
    """The integer on the last ``Answer: N`` line of ``text``, or None."""
    found = ANSWER_RE.findall(text)
    return int(found[-1]) if found else None


def check_steps(problem: ArithmeticProblem) -> bool:
    """Re-evaluate every step with integer arithmetic (``+ - * //`` only, no ``eval``)."""
    return all(_evaluate(expr) == value for expr, value in problem.steps) and problem.steps[-1][1] == problem.answer


def _evaluate(expr: str) -> int:
    tokens = expr.split()
    # left-to-right with * and // binding tighter: two passes
    values: list[int] = [int(tokens[0])]
    ops: list[str] = []
    for op, num in zip(tokens[1::2], tokens[2::2], strict=True):
        n = int(num)
        if op == "*":
            values[-1] *= n
        elif op == "//":
            values[-1] //= n
        elif op in "+-":
            ops.append(op)
            values.append(n)
        else:
            raise InputError(f"unknown operator {op!r} in step {expr!r}")
    total = values[0]
    for op, v in zip(ops, values[1:], strict=True):
        total = total + v if op == "+" else total - v
    return total


def _gain(r: random.Random) -> ArithmeticProblem:
    name, item = r.choice(NAMES), r.choice(ITEMS)
    a, b = r.randint(2, 60), r.randint(2, 60)
    q = f"{name} has {a} {item}. A friend gives {name} {b} more. How many {item} does {name} have now?"
    return ArithmeticProblem(q, ((f"{a} + {b}", a + b),), a + b, "gain")


def _change(r: random.Random) -> ArithmeticProblem:
    name, (one, many) = r.choice(NAMES), r.choice(GOODS)
    price, count = r.randint(2, 15), r.randint(2, 9)
    paid = (price * count // 10 + 1 + r.randint(0, 3)) * 10
    q = (f"A {one} costs {price} dollars. {name} buys {count} {many} and pays with {paid} dollars. "
         f"How much change does {name} get?")
    cost = price * count
    return ArithmeticProblem(q, ((f"{price} * {count}", cost), (f"{paid} - {cost}", paid - cost)), paid - cost,
                             "change")


def _left(r: random.Random) -> ArithmeticProblem:
    item = r.choice(ITEMS)
    boxes, each = r.randint(2, 12), r.randint(3, 20)
    total = boxes * each
    away = r.randint(1, total - 1)
    q = f"There are {boxes} boxes with {each} {item} in each box. {away} {item} are given away. How many are left?"
    return ArithmeticProblem(q, ((f"{boxes} * {each}", total), (f"{total} - {away}", total - away)), total - away,
                             "left")


def _share(r: random.Random) -> ArithmeticProblem:
    item, kids, each = r.choice(ITEMS), r.randint(2, 9), r.randint(2, 15)
    total = kids * each
    q = f"{total} {item} are shared equally among {kids} children. How many {item} does each child get?"
    return ArithmeticProblem(q, ((f"{total} // {kids}", each),), each, "share")


def _distance(r: random.Random) -> ArithmeticProblem:
    v1, t1, v2, t2 = r.randint(20, 90), r.randint(1, 5), r.randint(20, 90), r.randint(1, 5)
    d1, d2 = v1 * t1, v2 * t2
    q = (f"A train travels at {v1} km per hour for {t1} hours, then at {v2} km per hour for {t2} hours. "
         "How many kilometres does it travel in total?")
    return ArithmeticProblem(q, ((f"{v1} * {t1}", d1), (f"{v2} * {t2}", d2), (f"{d1} + {d2}", d1 + d2)), d1 + d2,
                             "distance")


def _savings(r: random.Random) -> ArithmeticProblem:
    name = r.choice(NAMES)
    start, weekly, weeks, spent = r.randint(0, 50), r.randint(3, 25), r.randint(2, 8), r.randint(1, 40)
    saved = weekly * weeks
    total = start + saved
    spent = min(spent, total)
    q = (f"{name} has {start} dollars and saves {weekly} dollars every week for {weeks} weeks. "
         f"Then {name} spends {spent} dollars. How many dollars does {name} have left?")
    steps = ((f"{weekly} * {weeks}", saved), (f"{start} + {saved}", total), (f"{total} - {spent}", total - spent))
    return ArithmeticProblem(q, steps, total - spent, "savings")


TEMPLATES: dict[str, Callable[[random.Random], ArithmeticProblem]] = {
    "gain": _gain, "change": _change, "left": _left, "share": _share, "distance": _distance, "savings": _savings,
}


def problem(seed: int, index: int, split: str = "train") -> ArithmeticProblem:
    """Problem ``index`` of ``split`` for ``seed`` (string seeding of ``random`` is stable across runs)."""
    r = random.Random(f"mlx26-arith:{seed}:{split}:{index}")
    return TEMPLATES[r.choice(sorted(TEMPLATES))](r)


def generate_problems(n: int, seed: int = 0, split: str = "train") -> Iterator[ArithmeticProblem]:
    """The first ``n`` problems of ``split`` for ``seed``."""
    if n < 0:
        raise InputError(f"n must be ≥ 0, got {n}.")
    return (problem(seed, i, split) for i in range(n))
