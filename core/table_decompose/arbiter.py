"""Arbitration of ambiguous structure decisions: deterministic rules, or a language model.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969): the abstract says
an LLM may arbitrate where the induced structure is ambiguous; the protocol here is ours.

Every ambiguous decision (borderline header height H or width L, overlapping merges, a
"Total" row that indented rows follow, a units row, a section row without cues) becomes an
explicit :class:`Case` with enumerated options and the rule's default. :class:`Arbiter`
(``--arbiter rules``) takes the default. :class:`LLMArbiter` (``--arbiter llm``) sends the
case to an injected ``chat(messages) -> str`` callable and expects one JSON object
``{"choice": "<option id>"}``; anything else (invalid JSON, an unknown id, an exception from
the model) falls back to the rule and is recorded as ``decided_by: "fallback"``. Answers are
cached by a hash of the case (kind, question, context, options), optionally in a JSON file,
so a rerun asks the model nothing and gives the same result.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.common.files import atomic_write

ChatFn = Callable[[list[dict[str, str]]], str]

SYSTEM_PROMPT = (
    "You resolve one ambiguous decision made while decomposing a table into a column header tree "
    "and a row header tree. You are given the decision, a short excerpt of the table and the "
    "options, each with an id. Reply with exactly one JSON object of the form "
    '{"choice": "<option id>"} and nothing else.'
)


@dataclass
class Case:
    """One ambiguous decision with enumerated options and the rule's default."""

    kind: str
    question: str
    context: str
    options: list[tuple[str, str]]
    default: str
    rows: tuple[int, int] | None = None  # the grid rows the decision affects (None: the whole table)
    cols: tuple[int, int] | None = None
    chosen: str = ""
    decided_by: str = ""  # rules | llm | cache | fallback
    note: str = ""

    def key(self) -> str:
        payload = json.dumps([self.kind, self.question, self.context, [list(o) for o in self.options]],
                             ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:20]

    @property
    def arbitrated(self) -> bool:
        return self.decided_by in ("llm", "cache")

    def covers(self, row: int, col: int) -> bool:
        in_rows = self.rows is None or self.rows[0] <= row <= self.rows[1]
        in_cols = self.cols is None or self.cols[0] <= col <= self.cols[1]
        return in_rows and in_cols

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.key(), "kind": self.kind, "question": self.question, "context": self.context,
                "options": [{"id": i, "description": d} for i, d in self.options], "default": self.default,
                "chosen": self.chosen, "decided_by": self.decided_by, "arbitrated": self.arbitrated,
                "rows": list(self.rows) if self.rows else None, "cols": list(self.cols) if self.cols else None,
                **({"note": self.note} if self.note else {})}


class Arbiter:
    """``--arbiter rules``: every case takes the rule's default; cases are still recorded."""

    name = "rules"

    def __init__(self) -> None:
        self.cases: list[Case] = []

    def decide(self, *, kind: str, question: str, context: str, options: list[tuple[str, str]], default: str,
               rows: tuple[int, int] | None = None, cols: tuple[int, int] | None = None) -> str:
        ids = [i for i, _ in options]
        if default not in ids:
            raise InputError(f"internal: default '{default}' is not an option of case {kind}")
        case = Case(kind, question, context, list(options), default, rows, cols)
        case.chosen = self._choose(case)
        self.cases.append(case)
        return case.chosen

    def _choose(self, case: Case) -> str:
        case.decided_by = "rules"
        return case.default


class ArbiterCache:
    """Answers by case hash; in memory, or persisted to a JSON file (written atomically)."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = Path(path) if path else None
        self.entries: dict[str, dict[str, str]] = {}
        self._saved: dict[str, dict[str, str]] = {}
        if self.path and self.path.is_file():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise InputError(f"arbiter cache {self.path} is not valid JSON ({exc.msg})",
                                 "delete the file to start a new cache") from exc
            foreign = not isinstance(data, dict) or any(not (isinstance(v, dict) and "choice" in v)
                                                         for v in data.values())
            if foreign:  # saving would replace someone's file with our entries
                raise InputError(f"{self.path} is not an arbiter cache (expected {{hash: {{\"choice\": …}}}}).",
                                 "give --llm-cache a new file name")
            self.entries = {str(k): v for k, v in data.items()}
        self._saved = dict(self.entries)

    def get(self, key: str) -> str | None:
        entry = self.entries.get(key)
        return str(entry["choice"]) if entry else None

    def put(self, key: str, choice: str, kind: str, model: str) -> None:
        self.entries[key] = {"choice": choice, "kind": kind, "model": model}

    def save(self) -> None:
        if self.path is None or (self.entries == self._saved and self.path.exists()):
            return  # nothing new: leave the file (and its mtime) alone
        text = json.dumps(self.entries, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        atomic_write(self.path, text)


def build_messages(case: Case) -> list[dict[str, str]]:
    """The chat messages for one case (system prompt + the case as JSON)."""
    payload = {"decision": case.kind, "question": case.question, "table_excerpt": case.context,
               "options": [{"id": i, "description": d} for i, d in case.options],
               "answer_format": {"choice": "<one option id>"}}
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": json.dumps(payload, ensure_ascii=False, indent=1)}]


def parse_choice(reply: str, ids: list[str]) -> str | None:
    """The option id from a reply holding a JSON object ``{"choice": id}``; None when invalid."""
    if not isinstance(reply, str):
        return None
    decoder = json.JSONDecoder()
    start = reply.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(reply, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and "choice" in value:
            choice = value["choice"]
            return choice if isinstance(choice, str) and choice in ids else None
        start = reply.find("{", start + 1)
    return None


@dataclass
class LLMArbiter(Arbiter):
    """``--arbiter llm``: ask ``chat`` to choose; fall back to the rule on any invalid answer."""

    chat: ChatFn
    cache: ArbiterCache = field(default_factory=ArbiterCache)
    model: str = ""
    name: str = "llm"

    def __post_init__(self) -> None:
        Arbiter.__init__(self)

    def _choose(self, case: Case) -> str:
        ids = [i for i, _ in case.options]
        key = case.key()
        cached = self.cache.get(key)
        if cached in ids:
            case.decided_by = "cache"
            return cached  # type: ignore[return-value]
        try:
            reply = self.chat(build_messages(case))
        except Exception as exc:  # a failing model must never break the decomposition
            case.decided_by, case.note = "fallback", f"model error: {type(exc).__name__}: {exc}"[:200]
            return case.default
        choice = parse_choice(reply, ids)
        if choice is None:
            case.decided_by = "fallback"
            case.note = f"invalid answer: {' '.join(str(reply).split())[:120]!r}"
            return case.default
        self.cache.put(key, choice, case.kind, self.model)
        case.decided_by = "llm"
        return choice
