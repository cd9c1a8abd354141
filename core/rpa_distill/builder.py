"""The builder: aligned, translated demonstrations → a program → a Python RPA function.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). Per aligned
slot (issue rules, our own implementation): a run whose values follow a list-valued field item
by item (and whose count is that list's length in every demo) becomes a ``for`` loop; runs of
equal length are unrolled; each selector value and typed text is anti-unified (literal,
parameter, transform, template; :mod:`.antiunify`); a slot present in only some demos becomes
``if api.exists(selector):`` when element presence predicts it in every demo. Whatever cannot
be explained becomes ``NeedsLLM(slot, reason)``: at run time the agent takes that one step.
With an LLM, unexplained values first go to the RAG step (:mod:`.rag`), which asks the model
for an expression with the demos in the prompt and keeps it only if it reproduces every demo.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mlx26.core.rpa_distill.align import Slot
from mlx26.core.rpa_distill.antiunify import Expr, evaluate, explain, to_code, uses_item
from mlx26.core.rpa_distill.selectors import find


@dataclass
class Step:
    op: str
    selector: dict[str, Expr]
    text: Expr | None = None
    guard: bool = False
    coordinates: bool = False


@dataclass
class Loop:
    list_field: str
    body: Step


@dataclass
class NeedsLLM:
    slot: str
    reason: str


@dataclass
class Program:
    task: str
    n_demos: int
    body: list[Any] = field(default_factory=list)
    rag_tokens: int = 0

    def needs_llm(self) -> int:
        return sum(isinstance(node, NeedsLLM) for node in self.body)


def _explain_step(steps: list[tuple[dict[str, Any], dict[str, Any], Any]], with_item: bool, resolver: Any,
                  label: str) -> Step | str:
    """A Step whose expressions explain every (step, fields, item) case, or the reason it cannot."""
    first = steps[0][0]
    keys = list(first["selector"])
    contexts = [(f, it) for _, f, it in steps]
    selector: dict[str, Expr] = {}
    for key in keys:
        values = [s["selector"][key] for s, _, _ in steps]
        expr = explain(values, contexts, with_item=with_item) or resolver(label, f"selector {key}", values, contexts)
        if expr is None:
            return f"the {key} of the target varies across demos and matches no field"
        selector[key] = expr
    text = None
    if "text" in first["action"]:
        values = [s["action"]["text"] for s, _, _ in steps]
        text = explain(values, contexts, with_item=with_item) or resolver(label, "text", values, contexts)
        if text is None:
            return "the typed text varies across demos and matches no field"
    return Step(first["action"]["op"], selector, text, coordinates="xy" in first["selector"])


def _pair_items(steps: list[dict[str, Any]], items: list[Any]) -> list[tuple[dict[str, Any], Any]] | None:
    """Pair each step of a run with the list item it acted on (the order of a loop's effects may
    differ from the list's: an agent ticks checkboxes in page order); in list order, or None."""
    free = list(range(len(items)))
    pairs: dict[int, dict[str, Any]] = {}
    for step in steps:
        seen = {str(v) for v in step["selector"].values()} | {str(step["action"].get("text", ""))}
        hit = next((i for i in free if str(items[i]) in seen or any(
            getattr(str(items[i]), m)() in seen for m in ("lower", "upper", "title", "strip"))), None)
        if hit is None:
            return None
        free.remove(hit)
        pairs[hit] = step
    return [(pairs[i], items[i]) for i in sorted(pairs)]


def _loop(slot: Slot, demos: list[dict[str, Any]], resolver: Any, label: str) -> Loop | None:
    list_keys = [k for k, v in demos[0]["fields"].items() if isinstance(v, list)]
    for key in list_keys:
        cases = []
        for d, traj in enumerate(demos):
            items = traj["fields"].get(key)
            idx = slot.members.get(d, [])
            if not isinstance(items, list) or len(items) != len(idx):
                break
            paired = _pair_items([traj["steps"][j] for j in idx], items)
            if paired is None:
                break
            cases += [(step, traj["fields"], item) for step, item in paired]
        else:
            if not cases:
                continue
            body = _explain_step(cases, True, lambda *a: None, label)
            if isinstance(body, Step) and (any(uses_item(e) for e in body.selector.values())
                                           or (body.text is not None and uses_item(body.text))):
                return Loop(key, body)
    return None


def _guard_predicts(step: Step, slot: Slot, slots: list[Slot], s: int, demos: list[dict[str, Any]]) -> bool:
    """True when the step's selector is absent, at that point, in every demo that skipped the slot."""
    for d, traj in enumerate(demos):
        if d in slot.members:
            continue
        later = next((o.members[d][0] for o in slots[s + 1:] if d in o.members), None)
        elements = traj["steps"][later]["elements"] if later is not None else []
        sel = {k: evaluate(e, traj["fields"]) for k, e in step.selector.items()}
        if later is None or find(elements, sel):
            return False
    return True


def build(demos: list[dict[str, Any]], slots: list[Slot], resolver: Any = None) -> Program:
    """The program for translated ``demos`` (see :func:`.translate.translate`)."""
    resolver = resolver or (lambda *a: None)
    program = Program(demos[0]["task"], len(demos))
    for s, slot in enumerate(slots):
        label = f"slot {s}: {slot.sig[0]} {slot.sig[1]}"
        loop = _loop(slot, demos, resolver, label)
        if loop is not None:
            program.body.append(loop)
            continue
        if len({len(i) for i in slot.members.values()}) > 1:
            program.body.append(NeedsLLM(label, "a repeated block whose count matches no list field"))
            continue
        count = len(next(iter(slot.members.values())))
        for p in range(count):
            cases = [(demos[d]["steps"][idx[p]], demos[d]["fields"], None) for d, idx in slot.members.items()]
            step = _explain_step(cases, False, resolver, f"{label} #{p}")
            if isinstance(step, str):
                program.body.append(NeedsLLM(f"{label} #{p}" if count > 1 else label, step))
                continue
            if slot.optional(len(demos)):
                if not _guard_predicts(step, slot, slots, s, demos):
                    program.body.append(NeedsLLM(label, "a step present in only some demos, not predicted by "
                                                        "element presence"))
                    continue
                step.guard = True
            program.body.append(step)
    return program


def _selector_code(selector: dict[str, Expr], item: str = "item") -> str:
    return "{" + ", ".join(f'"{k}": {to_code(e, item)}' for k, e in selector.items()) + "}"


def _step_code(step: Step, indent: str) -> list[str]:
    sel = _selector_code(step.selector)
    args = sel if step.text is None else f"{sel}, {to_code(step.text)}"
    call = f"api.{step.op}({args})"
    if step.guard:
        return [f"{indent}if api.exists({sel}):", f"{indent}    {call}"]
    return [f"{indent}{call}"]


def to_source(program: Program) -> str:
    """The generated module: ``TASK`` and ``rpa(api, fields)``; it passes the AST whitelist."""
    lines = [f'"""RPA function distilled by mlx26 rpa-distill from {program.n_demos} demonstration(s) of '
             f'{program.task}."""', "", f"TASK = {to_code(('const', program.task))}", "", "",
             "def rpa(api, fields):"]
    for node in program.body:
        if isinstance(node, Step):
            lines += _step_code(node, "    ")
        elif isinstance(node, Loop):
            lines.append(f"    for item in fields[{to_code(('const', node.list_field))}]:")
            lines += _step_code(node.body, "        ")
        else:
            lines.append(f"    NeedsLLM({to_code(('const', node.slot))}, {to_code(('const', node.reason))})")
    if not program.body:
        lines.append("    pass")
    return "\n".join(lines) + "\n"
