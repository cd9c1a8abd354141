"""The LLM translator: one recorded trajectory → soft-coded steps (selectors by role/label/text, fields named).

Part of the AutoRPA reconstruction (Chen et al., ICML 2026, arXiv 2605.21082; no public code). The paper's
translator agent rewrites a ReAct agent's hard-coded actions ("click element 17") as soft-coded ones
that survive a re-rendered page. Ours runs the rule translator (:mod:`.translate`) first, then asks the
model, one trajectory per request, for a selector per step (:data:`PROMPT`): each proposal is kept only
when its keys are selector keys and it matches exactly the element the step acted on in that step's own
snapshot; otherwise the step keeps the rule translator's selector. So a model can only improve a
selector's wording, never break the contract the builders rely on (every selector unique in its
snapshot). Typed texts the model names as ``fields["k"]`` are checked against the trajectory's fields.
The LLM builder (:mod:`.llm_builder`) renders whichever selectors result; the rule synthesiser keeps
using the rule translator's, because it needs one key set per aligned slot across all demos.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mlx26.core.rpa_distill.align import target
from mlx26.core.rpa_distill.dom import render_element
from mlx26.core.rpa_distill.selectors import STABLE_KEYS, TEXT_KEYS, find

SELECTOR_KEYS = frozenset({"tag", "nth", *TEXT_KEYS, *STABLE_KEYS})
MAX_CONTEXT_ELEMENTS = 30
PROMPT = (
    "Below is one recorded run of a web task: the instruction, its field values, and for each step the page's "
    "elements (one per line: [ref] tag \"text\" attributes) and the action taken on one of them.\n"
    "Rewrite every action as a soft-coded step that still finds the same element when the page is rendered "
    "again with other values: a selector of element properties (keys: tag, text, label, name, placeholder, "
    "aria-label, type, role, class, id, nth) — prefer visible text and labels; avoid ids or classes that look "
    "generated — and, for typed or selected text, the field it comes from.\n"
    "Reply with only a JSON list, one object per step: "
    "[{\"step\": 1, \"selector\": {\"tag\": \"button\", \"text\": \"Login\"}, \"text\": \"fields[\\\"username\\\"]\"}]"
)
_FIELD = re.compile(r'^fields\[\s*["\']([^"\']+)["\']\s*\]$')


def render_trajectory(traj: dict[str, Any]) -> str:
    lines = [f"Instruction: {traj['instruction']}", f"Fields: {json.dumps(traj['fields'], ensure_ascii=False)}"]
    for i, step in enumerate(traj["steps"], 1):
        els = step["elements"][:MAX_CONTEXT_ELEMENTS]
        action = step["action"]
        text = f" text={json.dumps(action['text'], ensure_ascii=False)}" if "text" in action else ""
        lines.append(f"Step {i} page:\n" + "\n".join(render_element(el) for el in els))
        lines.append(f"Step {i} action: {action['op']} [{action.get('ref')}]{text}")
    return "\n".join(lines)


def parse_reply(text: str) -> list[dict[str, Any]]:
    """The JSON list in a reply (fenced or bare); [] when there is none."""
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return []
    try:
        data = json.loads(text[start:end + 1])
    except json.JSONDecodeError:
        return []
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def _valid(selector: Any, step: dict[str, Any]) -> bool:
    if not (isinstance(selector, dict) and selector and set(selector) <= SELECTOR_KEYS):
        return False
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in selector.values()):
        return False
    return find(step["elements"], selector) == [target(step)]


def translate_with_llm(demos: list[dict[str, Any]], backend: Any) -> dict[str, Any]:
    """Replace rule selectors (in place, in already translated ``demos``) by the model's valid ones.

    Returns the report: steps, selectors accepted / kept from the rules, field names confirmed, tokens."""
    report = {"steps": 0, "accepted": 0, "kept_rule_selector": 0, "fields_named": 0,
              "tokens": {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}}
    for traj in demos:
        reply = backend.chat([{"role": "user", "content": PROMPT + "\n\n" + render_trajectory(traj)}],
                             temperature=0.0, max_tokens=64 * max(1, len(traj["steps"])), seed=0)
        for key, value in (("prompt_tokens", reply.usage.prompt_tokens),
                           ("completion_tokens", reply.usage.completion_tokens), ("calls", 1)):
            report["tokens"][key] += value
        proposals = {int(p["step"]): p for p in parse_reply(reply.text)
                     if isinstance(p.get("step"), int) and not isinstance(p.get("step"), bool)}
        for i, step in enumerate(traj["steps"], 1):
            report["steps"] += 1
            proposal = proposals.get(i, {})
            if _valid(proposal.get("selector"), step):
                step["selector"] = dict(proposal["selector"])
                step["translated_by"] = "llm"
                report["accepted"] += 1
            else:
                step["translated_by"] = "rules"
                report["kept_rule_selector"] += 1
            named = _FIELD.match(str(proposal.get("text", "")).strip())
            if named and named.group(1) in traj["fields"] and traj["fields"][named.group(1)] == step["action"].get("text"):
                step["field"] = named.group(1)
                report["fields_named"] += 1
    return report
