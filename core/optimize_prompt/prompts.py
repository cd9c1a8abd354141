"""Meta-prompts of the optimisers and their strict reply parsers (our wording; the paper's is unpublished).

Every prompt opens with a ``### KIND`` header line and asks for line-oriented replies
(``STRATEGY:``, ``INPUT:``, ``EXPR:``, ``FAILED:``, ``WINNER:``, a ``PROMPT:`` block between
``<<<`` and ``>>>``), so a reply is either parsed or *unparseable* — never guessed. Unparseable
replies are counted per round in the trace (``failures``) and treated as failures: no knowledge
update, no candidate, no vote, all criteria failed. Responses are cut to ``RESPONSE_CHARS`` in
judge prompts, knowledge lists are capped, so prompts stay within small models' contexts.
"""

from __future__ import annotations

import re

from mlx26.core.optimize_prompt.knowledge import Knowledge, Update, slug

RESPONSE_CHARS = 1200
FORMAT_TEXT = {"number": "a single number", "mc": "one option letter such as (A)", "text": "a short exact answer"}
_LINE = re.compile(r"^\s*(?:[-*]\s*)?(STRATEGY|CRITERION|PITFALL|RETRIEVE)\s*:\s*(.+?)\s*$", re.I | re.M)
_INPUT = re.compile(r"^\s*(?:[-*]\s*|\d+[.)]\s*)?INPUT\s*\d*\s*:\s*(.+?)\s*$", re.I | re.M)
_EXPR = re.compile(r"^\s*EXPR\s*:\s*(.+?)\s*$", re.I | re.M)
_FAILED = re.compile(r"^\s*FAILED\s*:\s*(.*?)\s*$", re.I | re.M)
_WINNER = re.compile(r"WINNER\s*:\s*\(?\s*([AB])\b", re.I)
_PROMPT = re.compile(r"PROMPT\s*:\s*\n?<<<\n?(.*?)\n?>>>", re.S | re.I)


def _clip(text: str, n: int = RESPONSE_CHARS) -> str:
    text = text.replace("<<<", "<< <").replace(">>>", "> >>")
    return text if len(text) <= n else text[:n] + " …"


def _block(prompt: str) -> str:
    return f"<<<\n{prompt}\n>>>"


def knowledge_text(k: Knowledge) -> str:
    parts = [f"KNOWLEDGE (version {k.version}):"]
    for title, items in (("STRATEGIES", list(k.strategies)), ("CRITERIA", [f"{n}: {d}" for n, d in k.criteria]),
                         ("PITFALLS", list(k.pitfalls)), ("NOTES", list(k.notes))):
        parts.append(f"{title}:" + "".join(f"\n- {x}" for x in items) if items else f"{title}: (none)")
    return "\n".join(parts)


def _task_head(task, examples: list[str]) -> str:
    desc = task.description or task.name
    return (f"TASK: {desc}\nANSWER FORMAT: {FORMAT_TEXT.get(task.answer_format, 'a short answer')}\n"
            "EXAMPLE INPUTS:" + "".join(f"\n- {_clip(x, 300)}" for x in examples))


def meta(task, prompt: str, k: Knowledge, examples: list[str], last_failed: list[str]) -> str:
    failed = ", ".join(last_failed) if last_failed else "(none yet)"
    return (f"### META-REASONING\nYou improve a prompt for a task that has no labelled examples. Reason about the "
            f"task and update the task knowledge.\n{_task_head(task, examples)}\nCURRENT PROMPT:\n{_block(prompt)}\n"
            f"{knowledge_text(k)}\nLAST FAILED CRITERIA: {failed}\n"
            "Reply with lines only, one item per line:\nSTRATEGY: <a problem-solving strategy>\n"
            "CRITERION: <short-name>: <a checkable quality criterion for responses>\nPITFALL: <a typical mistake>\n"
            "RETRIEVE: <a search query for reference notes, or NONE>")


def parse_meta(text: str) -> Update | None:
    update = Update()
    found = False
    for key, value in _LINE.findall(text or ""):
        found = True
        key = key.upper()
        if key == "STRATEGY":
            update.strategies.append(value)
        elif key == "PITFALL":
            update.pitfalls.append(value)
        elif key == "RETRIEVE":
            update.retrieve = None if value.strip().strip(".").upper() in ("NONE", "NO", "") else value
        else:
            name, sep, desc = value.partition(":")
            name = slug(name) if sep else slug(value)
            if name:
                update.criteria.append((name, (desc if sep else value).strip()))
    return update if found else None


def generate(task, k: Knowledge, examples: list[str], n: int) -> str:
    return (f"### GENERATE INPUTS\nWrite {n} new, diverse inputs for this task that exercise the strategies, "
            f"criteria and pitfalls below. Do not solve them.\n{_task_head(task, examples)}\n{knowledge_text(k)}\n"
            f"Reply with exactly {n} lines: INPUT: <one input on one line>")


def parse_inputs(text: str) -> list[str]:
    out = []
    for value in _INPUT.findall(text or ""):
        if value and value not in out:
            out.append(value)
    return out


def reference_program(value: str) -> str:
    return ("### REFERENCE PROGRAM\nTranslate the problem into one arithmetic expression whose value is the answer "
            f"(numbers and + - * / ( ) only).\nINPUT: {value}\nReply with one line: EXPR: <expression>")


def parse_expr(text: str) -> str | None:
    hits = _EXPR.findall(text or "")
    return hits[-1] if hits else None


def solve(task, value: str) -> str:
    return (f"### SOLVE\nSolve the input. End with a final line 'Answer: <answer>' where the answer is "
            f"{FORMAT_TEXT.get(task.answer_format, 'a short answer')}.\nINPUT: {value}")


def pointwise(k: Knowledge, value: str, response: str) -> str:
    crit = "".join(f"\n- {n}: {d}" for n, d in k.criteria)
    return (f"### JUDGE POINTWISE\nCheck the response against each criterion.\nCRITERIA:{crit}\nINPUT: {_clip(value, 400)}\n"
            f"RESPONSE:\n{_block(_clip(response))}\n"
            "Reply with one line: FAILED: <comma-separated names of the criteria it fails> or FAILED: none")


def parse_failed(text: str, names: list[str]) -> list[str] | None:
    hits = _FAILED.findall(text or "")
    if not hits:
        return None
    value = hits[-1].strip().strip(".")
    if value.lower() in ("none", "no", "nothing", "-", ""):
        return []
    said = [slug(part) for part in re.split(r"[,;]", value) if part.strip()]
    known = [n for n in names if n in said]
    return known if known or not said else None


def pairwise(k: Knowledge | None, requirements: str, value: str, reference: str | None, a: str, b: str) -> str:
    crit = "".join(f"\n- {n}: {d}" for n, d in k.criteria) if k is not None else ""
    return (f"### JUDGE PAIRWISE\nWhich response answers the input better?\nREQUIREMENTS: {requirements}\n"
            f"CRITERIA:{crit or ' (none)'}\nREFERENCE: {reference if reference is not None else 'none'}\n"
            f"INPUT: {_clip(value, 400)}\nRESPONSE A:\n{_block(_clip(a))}\nRESPONSE B:\n{_block(_clip(b))}\n"
            "Reply with one line: WINNER: A or WINNER: B")


def parse_winner(text: str) -> str | None:
    hits = _WINNER.findall(text or "")
    if hits:
        return hits[-1].upper()
    bare = (text or "").strip().strip(".").upper()
    return bare if bare in ("A", "B") else None


def edit(task, prompt: str, k: Knowledge, failed: list[str], bad: list[tuple[str, str]]) -> str:
    examples = "".join(f"\nINPUT: {_clip(x, 300)}\nRESPONSE:\n{_block(_clip(r, 600))}" for x, r in bad[:2])
    return (f"### EDIT PROMPT\nRevise the prompt with targeted edits so that responses meet the failed criteria; "
            f"keep what works and keep the {{input}} placeholder.\nTASK: {task.description or task.name}\n"
            f"CURRENT PROMPT:\n{_block(prompt)}\n{knowledge_text(k)}\nFAILED CRITERIA: {', '.join(failed)}\n"
            f"FAILING EXAMPLES:{examples or ' (none)'}\n"
            "Reply with the full revised prompt as: PROMPT:\n<<<\n<revised prompt>\n>>>")


def spo_optimize(task, prompt: str, samples: list[tuple[str, str]]) -> str:
    shown = "".join(f"\nINPUT: {_clip(x, 300)}\nOUTPUT:\n{_block(_clip(r, 600))}" for x, r in samples)
    return (f"### SPO OPTIMIZE\nAnalyse the outputs of the current prompt and write an improved prompt (keep the "
            f"{{input}} placeholder).\nREQUIREMENTS: answer with {FORMAT_TEXT.get(task.answer_format, 'a short answer')}"
            f"\nCURRENT PROMPT:\n{_block(prompt)}\nSAMPLES:{shown}\n"
            "Reply with the improved prompt as: PROMPT:\n<<<\n<improved prompt>\n>>>")


def ape_propose(task, prompt: str, examples: list[str]) -> str:
    return (f"### APE PROPOSE\nGenerate a variation of the instruction below for this task, keeping its meaning "
            f"and the {{input}} placeholder.\n{_task_head(task, examples)}\nCURRENT PROMPT:\n{_block(prompt)}\n"
            "Reply as: PROMPT:\n<<<\n<new prompt>\n>>>")


def parse_prompt(text: str) -> str | None:
    """The revised prompt, or None when the block is missing or lost ``{input}``."""
    hits = _PROMPT.findall(text or "")
    if not hits:
        return None
    prompt = hits[-1].strip()
    return prompt if "{input}" in prompt else None
