"""Prompt pools: records with a category and a text (Spec-Bench's ``question.jsonl`` or any JSON/JSONL
file), or the embedded default built from text the project already has.

The embedded pool (our own construction, deterministic): the first documents of the zoo corpora
``stdlib-code`` (continue-this-code prompts), the module docstrings of further ``stdlib-code`` files (explain-this prompts, as ``stdlib-prose``)
and ``arithmetic`` (seeded word problems), cut at a line end within a few hundred characters, plus
generated code-writing prompts over stdlib module names. Nothing is copied from a dataset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Any

from mlx26.core.common.errors import InputError

TEXT_FIELDS = ("turns", "prompt", "text", "question", "instruction")


@dataclass(frozen=True)
class Prompt:
    id: str
    category: str
    text: str


def from_records(records: Iterable[tuple[int, Mapping[str, Any]]], source: str) -> list[Prompt]:
    """Prompts from (row number, record); an empty or missing text names its row."""
    pool: list[Prompt] = []
    for row, rec in records:
        field = next((f for f in TEXT_FIELDS if f in rec), None)
        if field is None:
            raise InputError(f"{source} row {row}: no prompt text (expected one of: {', '.join(TEXT_FIELDS)}).")
        value = rec[field]
        if field == "turns":
            value = value[0] if isinstance(value, list) and value else value
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{source} row {row}: the prompt is empty.", "remove the row or give it a text")
        ident = rec.get("question_id", rec.get("id", row))
        pool.append(Prompt(str(ident), str(rec.get("category") or "default"), value))
    if not pool:
        raise InputError(f"{source}: no prompts.")
    return pool


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[:cut if cut > limit // 3 else limit].rstrip()


def embedded_pool(per_category: int = 40) -> list[Prompt]:
    """The default pool: four categories of ``per_category`` prompts from the zoo corpora and generators."""
    return list(_embedded(per_category))


@lru_cache(maxsize=2)  # reading the stdlib files is the slow part; the pool is deterministic
def _embedded(per_category: int) -> tuple[Prompt, ...]:
    from mlx26.core.zoo import corpus
    from mlx26.core.zoo.corpora import docstrings

    pool: list[Prompt] = []
    files = [d for d in islice(corpus("stdlib-code").documents("train"), 6 * per_category) if len(d.text) > 400]
    code = files[:per_category]
    pool += [Prompt(f"code-{i}", "code-completion", "Continue this Python code:\n" + _cut(d.text, 500))
             for i, d in enumerate(code)]
    # the docstrings of further stdlib files (stdlib-prose's source, without parsing all of it)
    prose = [t for d in files[per_category:] for t in docstrings(d.text)[:1] if len(t) > 200][:per_category]
    pool += [Prompt(f"prose-{i}", "explain", "Explain in plain words:\n" + _cut(t, 500))
             for i, t in enumerate(prose)]
    arith = list(islice(corpus("arithmetic").documents("heldout"), per_category))
    pool += [Prompt(f"arith-{i}", "arithmetic", d.text.split("\nStep", 1)[0].strip() + "\nSolve it step by step.")
             for i, d in enumerate(arith)]
    names = sorted({d.name.split("/")[-1].removesuffix(".py").strip("_") for d in code})
    verbs = ("parse", "validate", "merge", "sort", "cache", "stream", "retry", "format")
    tasks = [f"Write a Python function that uses the {name} module to {verbs[i % len(verbs)]} its input, "
             f"with a docstring and one example." for i, name in enumerate(names)]
    while len(tasks) < per_category:
        i = len(tasks)
        tasks.append(f"Write a Python function that computes the {i}th term of a sequence defined by "
                     f"a(n) = {i % 7 + 2} * a(n-1) - {i % 5 + 1}, with a docstring.")
    pool += [Prompt(f"write-{i}", "code-writing", t) for i, t in enumerate(tasks[:per_category])]
    return tuple(pool)


def by_category(pool: Iterable[Prompt]) -> dict[str, list[Prompt]]:
    groups: dict[str, list[Prompt]] = {}
    for p in pool:
        groups.setdefault(p.category, []).append(p)
    return groups


def as_record(p: Prompt, **extra: Any) -> dict[str, Any]:
    return {"id": p.id, "category": p.category, "prompt": p.text, **extra}
