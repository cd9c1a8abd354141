"""The LLM builder: translated demonstrations + retrieved exemplars → an RPA function, verified and repaired.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026, arXiv 2605.21082; no public code). The
paper's builder agent synthesises an RPA function by retrieval-augmented generation over several
trajectories. Ours, part by part:

* **input** — the rule-based translator's output (:mod:`.translate`): every step of every successful
  demonstration with its soft-coded selector, the typed text and the instruction fields, rendered as
  text (:func:`render_demo`). The paper's translator is an LLM too; ours stays rule-based (reconstruction);
* **retrieval** — the ``k`` nearest functions of an exemplar store by bag-of-words cosine over the
  instruction and the page's element texts (:func:`nearest`). The default store is built on the fly
  from the synthetic families (3 oracle demonstrations each, distilled by the synthesiser; the task
  being built is left out), plus any JSONL store the user gives (``{"instruction", "source", …}``);
* **generation** — one chat request (:data:`SYSTEM`, :func:`build_prompt`); the reply's code is
  taken from a fenced block or from ``TASK =`` / ``def rpa`` on (:func:`extract_code`);
* **verification** — the AST whitelist first (:mod:`.whitelist`; a refused function is never run),
  then the function runs without an agent on the demonstrations' own instances (their seeds) and on
  ``heldout`` fresh ones; it is accepted only if it solves every one;
* **repair** — the refusal or the first failure (instance, error, the elements on the page at that
  moment) goes back to the model as the next user turn, up to ``budget`` attempts in all.

Token usage is the backend's (the server's ``usage`` fields for ``openai:``, exact for ``hf:``,
labelled estimates for ``scripted:``), summed over every attempt. Nothing here is the paper's prompt:
the prompts are ours and are printed on the docs page.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.rpa_distill.whitelist import WhitelistError, check

SYSTEM = (
    "You write robotic-process-automation (RPA) functions for web tasks in a restricted Python subset.\n"
    "Write exactly one function `def rpa(api, fields):`. Inside it you may only use:\n"
    "  api.click(SELECTOR), api.type(SELECTOR, TEXT), api.select(SELECTOR, TEXT),\n"
    "  `if api.exists(SELECTOR):` / `if not api.exists(SELECTOR):`, `for item in fields[\"NAME\"]:`,\n"
    "  string constants, fields[\"NAME\"], `+`, and the string methods .lower() .upper() .title() .strip().\n"
    "A SELECTOR is a dict literal of element properties that must match exactly one element, e.g.\n"
    "  {\"tag\": \"button\", \"text\": \"Login\"} or {\"tag\": \"input\", \"label\": fields[\"name\"]}.\n"
    "No imports, no other names, no other calls, no assignments. Reply with the function in one\n"
    "```python fenced block and nothing else."
)
MAX_REPLY_TOKENS = 512
DOC_QUOTES = ('"' * 3, "'" * 3)
MIN_REPLY_TOKENS = 128  # what a reply may need at least; a small model's context is shrunk to leave it
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass
class Attempt:
    number: int
    verdict: str  # "refused" | "failed" | "verified" | "no code"
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"attempt": self.number, "verdict": self.verdict, "detail": self.detail}


@dataclass
class LLMBuild:
    task: str
    source: str | None
    attempts: list[Attempt] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0})
    exemplars: list[str] = field(default_factory=list)
    translation: dict[str, Any] | None = None  # the LLM translator's report, when it ran

    @property
    def verified(self) -> bool:
        return bool(self.attempts) and self.attempts[-1].verdict == "verified"


# --------------------------------------------------------------------------- rendering

def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render_demo(demo: dict[str, Any]) -> str:
    """One translated demonstration as text: instruction, fields, numbered soft-coded steps."""
    lines = [f"Instruction: {demo['instruction']}", f"Fields: {_show(demo['fields'])}", "Steps:"]
    for i, step in enumerate(demo["steps"], 1):
        action = step["action"]
        sel = _show(step.get("selector", {}))
        if action["op"] in ("type", "select"):
            text = action.get("text", "")
            same = [step["field"]] if "field" in step else [k for k, v in demo["fields"].items() if v == text]
            hint = f"  (= fields[{_show(same[0])}])" if same else ""
            lines.append(f"  {i}. {action['op']} {sel} <- {_show(text)}{hint}")
        else:
            lines.append(f"  {i}. {action['op']} {sel}")
    return "\n".join(lines)


def _page_words(traj: dict[str, Any]) -> str:
    texts = [str(el.get("text") or el.get("label") or "") for step in traj.get("steps", [])[:1]
             for el in step.get("elements", [])]
    return " ".join(t for t in texts if t)


def build_prompt(task: str, demos: Sequence[dict[str, Any]], exemplars: Sequence[dict[str, Any]]) -> str:
    parts = []
    if exemplars:
        parts.append("Functions written for other tasks (for the form only):")
        for ex in exemplars:
            parts.append(f"# task: {ex['instruction']}\n{ex['source'].strip()}")
    parts.append(f"Recorded demonstrations of the task {task} (the field values change from run to run):")
    parts.extend(render_demo(d) for d in demos)
    parts.append(f"Write the function for {task} so it works for any field values. Start it with "
                 f"TASK = {_show(task)}.")
    return "\n\n".join(parts)


def extract_code(text: str, task: str) -> str | None:
    """The function in a reply: the first fenced block, else from ``TASK =``/``def rpa`` on; TASK added
    when the model left it out (the only line of boilerplate we supply)."""
    match = _FENCE.search(text)
    code = match.group(1) if match else None
    if code is None:
        starts = [i for i in (text.find("TASK ="), text.find("def rpa")) if i >= 0]
        if not starts:
            return None
        code = text[min(starts):]
    code = code.strip("\n") + "\n"
    if not re.search(r"^TASK\s*=", code, re.MULTILINE):
        code = f"TASK = {_show(task)}\n\n\n" + code
    if not code.lstrip().startswith(DOC_QUOTES):
        code = f'"""RPA function written by the LLM builder of mlx26 rpa-distill for {task}."""\n\n' + code
    return code


# --------------------------------------------------------------------------- retrieval

def _bag(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(v * b[k] for k, v in a.items())
    na, nb = math.sqrt(sum(v * v for v in a.values())), math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


def nearest(store: Sequence[dict[str, Any]], query: str, k: int) -> list[dict[str, Any]]:
    """The ``k`` store entries whose instruction + page text is closest to ``query`` (ties: store order)."""
    q = _bag(query)
    scored = sorted(range(len(store)), key=lambda i: -_cosine(q, _bag(store[i]["instruction"] + " "
                                                                       + store[i].get("page", ""))))
    return [store[i] for i in scored[:max(0, k)]]


def synthetic_store(exclude: str = "") -> list[dict[str, Any]]:
    """Exemplars from the synthetic families: 3 oracle demos each, distilled by the synthesiser."""
    from mlx26.core.rpa_distill import synthetic
    from mlx26.core.rpa_distill.distill import distill
    from mlx26.core.rpa_distill.oracle import OracleAgent
    from mlx26.core.rpa_distill.record import record_episode

    out = []
    for fam in synthetic.FAMILIES:
        name = f"synthetic/{fam}"
        if name == exclude:
            continue
        env = synthetic.SyntheticEnv(fam)
        trajs = [record_episode(env, OracleAgent(fam), seed) for seed in range(3)]
        source, _, _ = distill(trajs)
        body = source[source.index("def rpa"):]
        out.append({"task": name, "instruction": trajs[0]["instruction"], "page": _page_words(trajs[0]),
                    "source": body})
    return out


def read_store(path: str) -> list[dict[str, Any]]:
    """A user's exemplar store: JSONL of {"instruction": …, "source": …} (extra keys ignored)."""
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise InputError(f"exemplar store not found: {path}", "give a JSONL file of {\"instruction\", \"source\"}")
    rows = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} line {n}: not JSON ({exc.msg})") from None
        if not (isinstance(row, dict) and isinstance(row.get("instruction"), str)
                and isinstance(row.get("source"), str)):
            raise InputError(f"{path} line {n}: an exemplar needs string 'instruction' and 'source'")
        rows.append({"task": row.get("task", ""), "instruction": row["instruction"],
                     "page": str(row.get("page", "")), "source": row["source"]})
    return rows


# --------------------------------------------------------------------------- verification

def _elements_brief(elements: Sequence[dict[str, Any]], limit: int = 12) -> str:
    keep = ("tag", "text", "label", "name", "placeholder", "type")
    rows = []
    for el in list(elements)[:limit]:
        rows.append(_show({k: v for k, v in {**el.get("attrs", {}), **el}.items() if k in keep and v not in ("", None)}))
    more = len(elements) - limit
    return "\n".join(rows) + (f"\n… {more} more" if more > 0 else "")


def check_function(env: Any, source: str, seeds: Sequence[int], *, step_timeout: float, poll: bool
                   ) -> str | None:
    """None when the function solves every instance in ``seeds``, else a description of the first failure."""
    from mlx26.core.rpa_distill.distill import check_env, compile_function
    from mlx26.core.rpa_distill.runtime import run_function

    try:
        task, rpa, _ = compile_function(source)
        check_env(task, env.name)
    except InputError as exc:
        return exc.message
    for seed in seeds:
        run = run_function(env, rpa, seed, agent=None, fallback=False, step_timeout=step_timeout, poll=poll)
        if not run["success"]:
            why = run["failure"] or "the episode ended unsolved (wrong element or wrong text)"
            page = env.observe()["elements"] if hasattr(env, "observe") else []
            return (f"On an instance with fields {_show(run['fields'])} it failed: {why}\n"
                    f"Elements on the page at that point:\n{_elements_brief(page)}")
    return None


def build_with_llm(trajs: list[dict[str, Any]], backend: Any, env: Any, *, store: Sequence[dict[str, Any]] = (),
                   k: int = 3, budget: int = 3, heldout: int = 5, heldout_seed: int = 0, step_timeout: float = 10.0,
                   poll: bool = False, translator: Any = None) -> LLMBuild:
    """Generate, verify and repair until a function solves the demos' and ``heldout`` fresh instances.

    ``translator``: an LLM backend for :mod:`.llm_translate` (its valid selectors replace the rule ones in
    the prompt); None keeps the rule translator's."""
    from mlx26.core.rpa_distill.distill import HELD_OUT_SEED
    from mlx26.core.rpa_distill.translate import translate

    if budget < 1:
        raise InputError(f"the repair budget must be >= 1 attempt, got {budget}")
    demos, _, _ = translate(trajs)
    report = None
    if translator is not None:
        from mlx26.core.rpa_distill.llm_translate import translate_with_llm

        report = translate_with_llm(demos, translator)
    task = demos[0]["task"]
    shots = nearest(store, demos[0]["instruction"] + " " + _page_words(demos[0]), k)
    result = LLMBuild(task, None, exemplars=[s.get("task") or s["instruction"][:40] for s in shots], translation=report)
    if report:
        for key in ("prompt_tokens", "completion_tokens", "calls"):
            result.tokens[key] += report["tokens"][key]
    seeds = [int(d["seed"]) for d in demos if "seed" in d] + [HELD_OUT_SEED + heldout_seed + i for i in range(heldout)]
    history: list[dict[str, str]] = []
    n_shots, n_demos = len(shots), len(demos)
    for number in range(1, budget + 1):
        while True:  # fit the request into a small model's context: older repair turns, exemplars, demos go first
            messages = [{"role": "system", "content": SYSTEM},
                        {"role": "user", "content": build_prompt(task, demos[:n_demos], shots[:n_shots])}, *history]
            if _fits(backend, messages):
                break
            if len(history) > 2:
                history = history[2:]
            elif n_shots:
                n_shots -= 1
            elif n_demos > 1:
                n_demos -= 1
            else:
                break  # the backend names the overflow itself
        reply = backend.chat(messages, temperature=0.0, max_tokens=MAX_REPLY_TOKENS, seed=0)
        result.tokens["prompt_tokens"] += reply.usage.prompt_tokens
        result.tokens["completion_tokens"] += reply.usage.completion_tokens
        result.tokens["calls"] += 1
        code = extract_code(reply.text, task)
        if code is None:
            result.attempts.append(Attempt(number, "no code", "the reply holds no function"))
            feedback = "Your reply holds no function. Reply with `def rpa(api, fields):` in a ```python block."
        else:
            try:
                check(code)
            except WhitelistError as exc:
                result.attempts.append(Attempt(number, "refused", exc.message))
                feedback = (f"Your function was rejected before running: {exc.message} "
                            "Rewrite it inside the allowed subset.")
            else:
                failure = check_function(env, code, seeds, step_timeout=step_timeout, poll=poll)
                if failure is None:
                    result.attempts.append(Attempt(number, "verified", f"solved {len(seeds)} instances"))
                    result.source = code
                    return result
                result.attempts.append(Attempt(number, "failed", failure.splitlines()[0]))
                feedback = f"Your function did not solve the task. {failure}\nFix it and reply with the whole function."
        history += [{"role": "assistant", "content": reply.text}, {"role": "user", "content": feedback}]
    return result


def _fits(backend: Any, messages: list[dict[str, str]]) -> bool:
    """Whether the request leaves ``MIN_REPLY_TOKENS`` of the backend's context for the reply (True when
    the backend states no context)."""
    from mlx26.core.llm.types import ChatParams, ChatRequest

    context = backend.capabilities().max_context
    if not context:
        return True
    bound = backend.prompt_token_bound(ChatRequest.chat(messages, ChatParams.make(max_tokens=MAX_REPLY_TOKENS)))
    return bound + MIN_REPLY_TOKENS <= context


def no_function_error(result: LLMBuild) -> RunFailure:
    last = result.attempts[-1] if result.attempts else None
    detail = f" (last: {last.verdict}: {last.detail})" if last else ""
    return RunFailure(f"the LLM builder produced no verified function for {result.task} in "
                      f"{len(result.attempts)} attempt(s){detail}.",
                      "raise --repair-budget, use --builder synth/auto, or try a stronger --llm")
