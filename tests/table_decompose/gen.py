"""Random hierarchical tables with known header paths, for property tests (seeded, deterministic)."""

from __future__ import annotations

import random

from mlx26.core.table_decompose.render import LogicalTable

_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "de")


def _word(rng: random.Random, used: set[str]) -> str:
    while True:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
        if rng.random() < 0.3:
            word += " " + "".join(rng.choice(_SYLLABLES) for _ in range(2))
        if word not in used:
            used.add(word)
            return word


def _paths(rng: random.Random, depth: int, max_children: int, used: set[str], *, variable: bool) -> list[list[str]]:
    """Root-to-leaf label paths of a random tree (leaves may stop early when ``variable``)."""
    out: list[list[str]] = []

    def grow(prefix: list[str], level: int) -> None:
        for _ in range(rng.randint(1, max_children) if level else rng.randint(2, max_children)):
            path = prefix + [_word(rng, used)]
            if level + 1 >= depth or (variable and level and rng.random() < 0.3):
                out.append(path)
            else:
                grow(path, level + 1)

    grow([], 0)
    return out


def _value(rng: random.Random) -> str:
    kind = rng.random()
    n = rng.randint(0, 99999)
    if kind < 0.45:
        return f"{n:,}"
    if kind < 0.6:
        return f"{rng.uniform(-50, 50):.1f}%"
    if kind < 0.72:
        return f"${n:,}"
    if kind < 0.8:
        return f"({n:,})"
    if kind < 0.86:
        return rng.choice(["..", "—", "x", "F", "n/a"])
    if kind < 0.93:
        return ""
    return f"{rng.uniform(0, 10):.2f}"


def random_table(seed: int) -> LogicalTable:
    """A table with a random column tree (1-3 levels) and row tree (1-3 levels, some parents with data)."""
    rng = random.Random(seed)
    used: set[str] = set()
    cols = _paths(rng, rng.randint(1, 3), 3, used, variable=True)[:9]
    rows = _paths(rng, rng.randint(1, 3), 3, used, variable=True)[:14]
    # Some parents are data rows themselves: [A] right before [A, x].
    with_parents: list[list[str]] = []
    for path in rows:
        if len(path) > 1 and rng.random() < 0.2 and path[:-1] not in with_parents:
            with_parents.append(path[:-1])
        with_parents.append(path)
    data = []
    for _ in with_parents:
        row = [_value(rng) for _ in cols]
        row[rng.randrange(len(cols))] = f"{rng.randint(1, 9999):,}"  # every row has a number: never a section row
        data.append(row)
    return LogicalTable(cols, with_parents, data, id=f"gen-{seed}")
