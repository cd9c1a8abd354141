"""The action vocabulary shared by agents, trajectories, environments and distilled functions.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper's
agents act by element id; we use three element actions and their textual form, which is also
what the ReAct agent must answer with::

    click(e12)          {"op": "click", "ref": "e12"}
    type(e7, "alice")   {"op": "type", "ref": "e7", "text": "alice"}
    select(e3, "Red")   {"op": "select", "ref": "e3", "text": "Red"}
"""

from __future__ import annotations

import json
import re
from typing import Any

from mlx26.core.common.errors import InputError

OPS = ("click", "type", "select")
_ACTION = re.compile(r"Action:\s*(click|type|select)\(\s*\[?([\w.:-]+)\]?\s*(?:,\s*(\"(?:[^\"\\]|\\.)*\"))?\s*\)",
                     re.IGNORECASE)


def make(op: str, ref: str, text: str | None = None) -> dict[str, Any]:
    if op not in OPS:
        raise InputError(f"unknown action '{op}'.", "use click, type or select")
    action: dict[str, Any] = {"op": op, "ref": str(ref)}
    if op in ("type", "select"):
        if text is None:
            raise InputError(f"action {op} needs a text argument.")
        action["text"] = str(text)
    return action


def format_action(action: dict[str, Any]) -> str:
    if action["op"] == "click":
        return f"click({action['ref']})"
    return f"{action['op']}({action['ref']}, {json.dumps(action['text'], ensure_ascii=False)})"


def parse_action(reply: str) -> dict[str, Any]:
    """The first ``Action: op(ref[, "text"])`` in an agent reply; ValueError when there is none."""
    match = _ACTION.search(reply)
    if not match:
        shown = " ".join(reply.split())[:80]
        raise InputError(f"no parsable 'Action: …' in the agent reply {shown!r}.")
    op, ref, quoted = match.group(1).lower(), match.group(2), match.group(3)
    text = json.loads(quoted) if quoted is not None else None
    if op != "click" and text is None:
        raise InputError(f"agent action {op}({ref}) lacks its text argument.")
    return make(op, ref, text)
