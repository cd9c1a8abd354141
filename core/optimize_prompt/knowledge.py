"""The task knowledge base of MR.PEA, versioned per round (reconstruction).

The paper's meta-reasoning accumulates "problem-solving strategies and evaluation criteria"; we
keep four lists — strategies, criteria (``name: description``; a name is a short slug the judge
reports back), pitfalls and retrieved notes — each capped (oldest dropped) so meta-prompts stay
bounded for small-context models. Version 0 holds one criterion derived from the task's answer
format (the only prior the user gives); every round that changes anything bumps the version, and
the trace records the diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

CAP = 6
FIELDS = ("strategies", "criteria", "pitfalls", "notes")
FORMAT_CRITERION = {
    "number": "the response ends with a final line 'Answer: <number>'",
    "mc": "the response ends with a final line 'Answer: (<letter>)'",
    "text": "the response ends with a final line 'Answer: <answer>'",
}


def slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words[:3])[:32]


@dataclass(frozen=True)
class Knowledge:
    version: int = 0
    strategies: tuple[str, ...] = ()
    criteria: tuple[tuple[str, str], ...] = ()
    pitfalls: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @classmethod
    def initial(cls, answer_format: str) -> Knowledge:
        return cls(criteria=(("format", FORMAT_CRITERION.get(answer_format, FORMAT_CRITERION["text"])),))

    @property
    def criterion_names(self) -> list[str]:
        return [name for name, _ in self.criteria]

    def updated(self, version: int, strategies: list[str] = (), criteria: list[tuple[str, str]] = (),  # type: ignore[assignment]
                pitfalls: list[str] = (), notes: list[str] = ()) -> Knowledge:  # type: ignore[assignment]
        crit = dict(self.criteria)
        for name, desc in criteria:
            crit.pop(name, None)
            crit[name] = desc
        new = replace(self, strategies=_merge(self.strategies, strategies), criteria=tuple(crit.items())[-CAP:],
                      pitfalls=_merge(self.pitfalls, pitfalls), notes=_merge(self.notes, notes))
        return replace(new, version=version) if new != self else self

    def diff(self, old: Knowledge) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in FIELDS:
            before, after = [_show(x) for x in getattr(old, name)], [_show(x) for x in getattr(self, name)]
            added, removed = [x for x in after if x not in before], [x for x in before if x not in after]
            if added or removed:
                out[name] = {"added": added, "removed": removed}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "strategies": list(self.strategies),
                "criteria": [f"{n}: {d}" for n, d in self.criteria], "pitfalls": list(self.pitfalls),
                "notes": list(self.notes)}


@dataclass
class Update:
    """What one meta-reasoning reply asks for (parsed strictly by :mod:`.prompts`)."""

    strategies: list[str] = field(default_factory=list)
    criteria: list[tuple[str, str]] = field(default_factory=list)
    pitfalls: list[str] = field(default_factory=list)
    retrieve: str | None = None


def _show(item: Any) -> str:
    return f"{item[0]}: {item[1]}" if isinstance(item, tuple) else str(item)


def _merge(old: tuple[str, ...], new: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    seen = {" ".join(x.lower().split()) for x in old}
    out = list(old)
    for item in new:
        key = " ".join(item.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(item.strip())
    return tuple(out[-CAP:])
