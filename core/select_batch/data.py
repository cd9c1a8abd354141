"""Pool rows ``{"id", "domain", "text"}`` and the three-domain demo mix for PartitionSel.

Our own data plumbing (no paper data is reconstructed). The demo domains come from the zoo's
local corpora, so nothing is downloaded: ``code`` (stdlib-code), ``prose`` (stdlib-prose:
docstrings and pydoc topics) and ``arithmetic`` (seeded word problems with worked solutions).
Pools come from the corpora's ``train`` split, validation sets from their ``heldout`` split,
so no validation text is in a pool. A snippet is one chunk of about ``chars`` characters cut
at line ends; each document gives one snippet (chosen with the seed) before any gives a
second, so a pool mixes many source files.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mlx26.core.common.errors import InputError

DEMO_DOMAINS = {"code": "stdlib-code", "prose": "stdlib-prose", "arithmetic": "arithmetic"}
POOL_MIX = {"code": 0.5, "prose": 0.3, "arithmetic": 0.2}
VAL_MIX = {"code": 1 / 3, "prose": 1 / 3, "arithmetic": 1 / 3}


@dataclass(frozen=True)
class PoolItem:
    id: str
    domain: str
    text: str


def parse_rows(rows: Iterable[tuple[int, Mapping[str, Any]]], source: str, *, need_domain: bool = True
               ) -> list[PoolItem]:
    """Validate (line, record) pairs into items; ValueError naming the line for anything wrong."""
    items: list[PoolItem] = []
    seen: dict[str, int] = {}
    for line, record in rows:
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{source} line {line}: needs a non-empty string 'text'.")
        domain = record.get("domain")
        if domain is None and not need_domain:
            domain = "all"
        if not isinstance(domain, str) or not domain:
            raise InputError(f"{source} line {line}: needs a string 'domain'.")
        given = "id" in record
        rid = record.get("id", line)
        if isinstance(rid, bool) or not isinstance(rid, str | int) or (isinstance(rid, str) and not rid):
            raise InputError(f"{source} line {line}: 'id' must be a non-empty string or an integer, not {rid!r}.")
        rid = str(rid)
        if rid in seen:
            what = f"duplicate id '{rid}'" if given else f"has no id, and its default id '{rid}' (the line number)"
            raise InputError(f"{source} line {line}: {what} (first on line {seen[rid]}).", "ids must be unique")
        seen[rid] = line
        items.append(PoolItem(rid, domain, text))
    if not items:
        raise InputError(f"{source} has no rows.")
    return items


def _snippets(text: str, chars: int) -> list[str]:
    out, current = [], ""
    for line in text.splitlines(keepends=True):
        if current and len(current) + len(line) > chars:
            out.append(current)
            current = ""
        current += line[: 4 * chars]
    if current.strip():
        out.append(current)
    return [s for s in out if len(s.strip()) >= 20]


def demo_rows(split: str = "train", n: int = 240, seed: int = 0, mix: Mapping[str, float] | None = None,
              chars: int = 240) -> list[dict[str, str]]:
    """``n`` rows {id, domain, text} of the three-domain mix (train → pool, heldout/val → validation)."""
    from mlx26.core.zoo import corpus

    corpus_split = {"train": "train", "pool": "train", "val": "heldout", "heldout": "heldout"}.get(split)
    if corpus_split is None:
        raise InputError(f"Unknown split '{split}'.", "choose train or val")
    if n < 1:
        raise InputError(f"--n must be ≥ 1, got {n}.")
    mix = dict(mix or (POOL_MIX if corpus_split == "train" else VAL_MIX))
    scaled = {d: max(1, round(w * 1_000_000)) for d, w in mix.items()}
    counts = _proportional(scaled, n)
    rng = random.Random(f"select-batch-demo:{seed}:{corpus_split}")
    rows: list[dict[str, str]] = []
    for domain, k in counts.items():
        if k == 0:
            continue
        docs = corpus(DEMO_DOMAINS[domain]).documents(corpus_split)
        chunks: list[list[str]] = []
        for doc in docs:
            pieces = _snippets(doc.text, chars)
            if pieces:
                rng.shuffle(pieces)
                chunks.append(pieces)
            if len(chunks) >= k:
                break
        taken = 0
        depth = 0
        while taken < k:
            before = taken
            for pieces in chunks:
                if depth < len(pieces) and taken < k:
                    rows.append({"id": f"{domain}-{corpus_split}-{taken}", "domain": domain,
                                 "text": pieces[depth]})
                    taken += 1
            depth += 1
            if taken == before:
                most = int(taken / max(mix[domain] / sum(mix.values()), 1e-9))
                raise InputError(f"--n {n} is too large: the {domain} corpus has only {taken} snippets for the "
                                 f"{split} split.", f"use --n ≤ about {most}")
    order = list(range(len(rows)))
    rng.shuffle(order)
    return [rows[i] for i in order]


def _proportional(weights: Mapping[str, int], n: int) -> dict[str, int]:
    from mlx26.core.select_batch.budgets import water_fill

    return water_fill({d: n for d in weights}, n, {d: float(w) for d, w in weights.items()})
