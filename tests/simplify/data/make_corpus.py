"""Write ``simplipy_grammar_corpus.json``: 400 skeleton rows in SimpliPy's documented grammar.

The real file (``benchmarks/corpus/raw_skeletons.json`` in psaegert/simplipy) is not vendored;
this corpus is generated from the grammar as we reconstruct it from SimpliPy's documentation:
prefix token lists over ``x1..x3``, the placeholder ``<constant>``, integer literals -10..10 (and
``0.5``), ``float('inf')``/``float('-inf')``/``float('nan')``, and the operator table below
(SimpliPy's names, including ``pow1_3``/``pow1_5`` real odd roots and ``multK``/``divK``
scalings).  The arity table is written here independently of ``mlx26.core.simplify.ops``, so a
token the engine does not know fails the parse test instead of being generated from the engine's
own table.  Run: ``python tests/simplify/data/make_corpus.py`` (deterministic).
"""

import json
import random
from pathlib import Path

GRAMMAR = {  # SimpliPy's operator tokens and arities (reconstruction)
    "+": 2, "-": 2, "*": 2, "/": 2, "pow": 2,
    "neg": 1, "inv": 1, "abs": 1, "exp": 1, "log": 1,
    "pow2": 1, "pow3": 1, "pow4": 1, "pow5": 1, "pow1_2": 1, "pow1_3": 1, "pow1_4": 1, "pow1_5": 1,
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1,
    "sinh": 1, "cosh": 1, "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1,
    "mult2": 1, "mult3": 1, "mult4": 1, "mult5": 1, "div2": 1, "div3": 1, "div4": 1, "div5": 1,
}
LEAVES = ["x1", "x2", "x3", "<constant>"] * 6 + [str(k) for k in range(-10, 11)] + ["0.5"] + [
    "float('inf')", "float('-inf')", "float('nan')"]


def row(rng: random.Random) -> list[str]:
    ops = list(GRAMMAR)
    weights = [4 if GRAMMAR[o] == 2 else 1 for o in ops]
    n_ops = rng.randint(1, 9)
    out: list[str] = []
    open_slots = 1
    for _ in range(n_ops):
        op = rng.choices(ops, weights)[0]
        out.append(op)
        open_slots += GRAMMAR[op] - 1
        # sprinkle leaves in between so the tree shapes vary
        while open_slots > 1 and rng.random() < 0.3:
            out.append(rng.choice(LEAVES))
            open_slots -= 1
    out += [rng.choice(LEAVES) for _ in range(open_slots)]
    return out


def main() -> None:
    rng = random.Random(20260208)
    rows = [row(rng) for _ in range(400)]
    path = Path(__file__).with_name("simplipy_grammar_corpus.json")
    path.write_text("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")


if __name__ == "__main__":
    main()
