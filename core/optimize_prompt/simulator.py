"""The embedded default of ``optimize-prompt run --demo``: a SIMULATED target and a scripted optimiser.

Nothing here is from the paper: it is our test bed, so the whole loop runs offline with
measurable gains. Every figure it produces is labelled SIMULATED. What it can show is that an
optimiser *finds and keeps* the prompt features the simulator rewards within its budget; what
it cannot show is that MR.PEA improves a real model — the simulator's rules decide which
features help, and they were written by us (see docs/optimize-prompt.md).

The task family: grade-school word problems of four kinds, half with a distracting quantity
that the answer does not use (:func:`make_problem`; answers computed exactly).

:class:`SimulatedTarget` answers a rendered prompt. Its hidden behaviour depends on features of
the instruction text (the prompt with the input removed), detected by keywords:

* ``steps`` ("step", "intermediate calculation") — shows its work; arithmetic slips ×0.4;
* ``check`` ("check", "verify", "substitut") — adds a check line; slips ×0.5;
* ``units`` ("not needed", "what each number counts", "unit") — distractors misused 10 % of the
  time instead of 60 %;
* ``format`` ("Answer: <", "final line") — ends with ``Answer: N``; without it, half the
  responses end by repeating a number from the question (so the last number is wrong);
* ``terse`` ("concise", "briefly", "do not show", "no explanation") — cancels ``steps``.

The base arithmetic-slip rate is 45 %. Randomness is a hash of (seed, instruction, input, choice):
the same prompt on the same input always gives the same answer at temperature 0.

:class:`ScriptedOptimizer` plays the optimiser LLM for every meta-prompt of :mod:`.prompts`
(meta-reasoning, input generation, reference programs, judges, edits, SPO and APE rewrites), by
rules that stand in for what a capable LLM would do: meta-reasoning proposes one new criterion
per round, the ``check`` and ``units`` ones only once retrieved notes (or, for ``check``, the
third round's own reasoning) support them; the pairwise judge prefers the response matching the
reference, then the one meeting more criteria, and breaks ties towards position A (a position
bias, which the harness's order swapping must cancel); without reference or criteria (SPO's and
APE's judge) it prefers the response with more visible reasoning and a stated final answer.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from mlx26.core.llm.base import Backend
from mlx26.core.llm.tokens import estimate_prompt_tokens, estimate_tokens, truncate_estimated
from mlx26.core.llm.types import Capabilities, ChatRequest, ChatResult, Choice, TokenCallback, Usage
from mlx26.core.optimize_prompt import scoring
from mlx26.core.optimize_prompt.tasks import DEFAULT_TEMPLATE, Labelled, Task

TARGET_MODEL = "simulated-target"
OPTIMIZER_MODEL = "scripted-optimizer"
# Assumed rates (USD per 1M tokens) for the demo's $ figures: a small hosted model's list price class.
DEMO_PRICES = {"*": {"prompt": 0.15, "completion": 0.60}}
BASE_SLIP, DISTRACTOR_MISUSE, UNFORMATTED_WRONG = 0.45, 0.6, 0.5

NAMES = ("Ana", "Ben", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana")
FEATURES = {
    "steps": re.compile(r"step|intermediate calculation", re.I),
    "check": re.compile(r"check|verif|substitut", re.I),
    "units": re.compile(r"not needed|what each number counts|\bunits?\b", re.I),
    "format": re.compile(r"answer:\s*<|final line", re.I),
    "terse": re.compile(r"concise|briefly|do not show|no explanation", re.I),
}


# --------------------------------------------------------------------------- the task family

@dataclass(frozen=True)
class Problem:
    text: str
    steps: tuple[tuple[str, int], ...]  # ("3 × 4", 12), … in order; the last value is the answer
    distractor: int | None

    @property
    def answer(self) -> int:
        return self.steps[-1][1]

    @property
    def expr(self) -> str:
        return _EXPRS[self.kind_of()](*self.numbers)

    numbers: tuple[int, ...] = ()

    def kind_of(self) -> int:
        return next(i for i, p in enumerate(_PATTERNS) if p.search(self.text))


_PATTERNS = (
    re.compile(r"has (\d+) boxes of (\d+) pencils and gives away (\d+) pencils"),
    re.compile(r"travels (\d+) km per hour for (\d+) hours, then (\d+) km more"),
    re.compile(r"buys (\d+) books at (\d+) dollars each and pays with (\d+) dollars"),
    re.compile(r"has (\d+) rows of (\d+) trees; (\d+) trees are cut down and (\d+) are planted"),
)
_EXPRS = (
    lambda a, b, c: f"{a} * {b} - {c}",
    lambda a, b, c: f"{a} * {b} + {c}",
    lambda a, b, c: f"{c} - {a} * {b}",
    lambda a, b, c, d: f"{a} * {b} - {c} + {d}",
)
_DISTRACTOR = re.compile(r"(?:also owns|also has|is also carrying) (\d+)")


def _steps(kind: int, nums: tuple[int, ...]) -> tuple[tuple[str, int], ...]:
    a, b, c = nums[:3]
    if kind == 0:
        return ((f"{a} × {b}", a * b), (f"{a * b} − {c}", a * b - c))
    if kind == 1:
        return ((f"{a} × {b}", a * b), (f"{a * b} + {c}", a * b + c))
    if kind == 2:
        return ((f"{a} × {b}", a * b), (f"{c} − {a * b}", c - a * b))
    d = nums[3]
    return ((f"{a} × {b}", a * b), (f"{a * b} − {c}", a * b - c), (f"{a * b - c} + {d}", a * b - c + d))


def make_problem(rng: random.Random, kind: int | None = None) -> Problem:
    kind = rng.randrange(4) if kind is None else kind % 4
    name = rng.choice(NAMES)
    a, b = rng.randint(2, 9), rng.randint(3, 12)
    nums: tuple[int, ...]
    if kind == 0:
        c = rng.randint(1, a * b - 1)
        text = f"{name} has {a} boxes of {b} pencils and gives away {c} pencils. How many pencils are left?"
        nums = (a, b, c)
    elif kind == 1:
        c = rng.randint(5, 60)
        text = f"A train travels {a} km per hour for {b} hours, then {c} km more. How far does it travel in total?"
        nums = (a, b, c)
    elif kind == 2:
        c = a * b + rng.randint(1, 40)
        text = f"{name} buys {a} books at {b} dollars each and pays with {c} dollars. How much change is there?"
        nums = (a, b, c)
    else:
        c, d = rng.randint(1, a * b - 1), rng.randint(1, 20)
        text = (f"A farm has {a} rows of {b} trees; {c} trees are cut down and {d} are planted. "
                "How many trees are there now?")
        nums = (a, b, c, d)
    steps = _steps(kind, nums)
    distractor = None
    if rng.random() < 0.5:
        distractor = rng.randint(2, 15)
        extra = rng.choice(("also owns", "also has", "is also carrying"))
        who = name if kind in (0, 2) else "The driver" if kind == 1 else "The farmer"
        head, _, question = text.rpartition(". ")
        text = f"{head}. {who} {extra} {distractor} bags. {question}"
    return Problem(text, steps, distractor, nums)


def parse_problem(text: str) -> Problem | None:
    """The problem a text states (None when it is not of the family)."""
    for kind, pattern in enumerate(_PATTERNS):
        m = pattern.search(text)
        if m:
            nums = tuple(int(g) for g in m.groups())
            steps = _steps(kind, nums)
            dm = _DISTRACTOR.search(text)
            return Problem(m.group(0), steps, int(dm.group(1)) if dm else None, nums)
    return None


def demo_task(n_inputs: int = 8, seed: int = 0) -> Task:
    rng = random.Random(f"demo-task-{seed}")
    inputs = tuple(make_problem(rng, i).text for i in range(n_inputs))
    return Task("demo-arithmetic (SIMULATED)", DEFAULT_TEMPLATE, inputs, "number",
                "grade-school word problems with distracting quantities", source="embedded demo")


def demo_eval(n: int = 60, seed: int = 0) -> list[Labelled]:
    """Held-out labelled problems for ``eval`` of the demo (a different seed stream from the task)."""
    rng = random.Random(f"demo-eval-{seed}")
    return [Labelled(p.text, str(p.answer)) for p in (make_problem(rng, i) for i in range(n))]


# --------------------------------------------------------------------------- shared backend plumbing

def _rng(*parts: Any) -> random.Random:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _last_user(request: ChatRequest) -> str:
    if request.kind == "completion":
        return request.prompt
    return next((m["content"] for m in reversed(request.messages) if m["role"] == "user"), "")


class _RuleBackend(Backend):
    """A deterministic backend whose replies come from :meth:`reply`; usage is a labelled estimate."""

    def __init__(self, model: str, label: str, seed: int = 0):
        super().__init__(model, label)
        self.seed = seed
        self.calls = 0

    def capabilities(self) -> Capabilities:
        return Capabilities("simulated", self.model, streaming=False, native_n=True, seed=True, stop=False,
                            completions=True, usage_source="estimated", deterministic=True,
                            notes="SIMULATED: rule-based stand-in, see core/optimize_prompt/simulator.py")

    def reply(self, text: str, index: int, temperature: float, seed: int | None = None) -> str:
        raise NotImplementedError

    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        start = time.perf_counter()
        self.calls += 1
        text = _last_user(request)
        params = request.params
        choices = []
        for index in range(params.n):
            out, cut = truncate_estimated(self.reply(text, index, params.temperature, params.seed), params.max_tokens)
            choices.append(Choice(out, "length" if cut else "stop"))
            if on_token is not None and index == 0:
                on_token(out)
        prompt = (estimate_tokens(request.prompt) if request.kind == "completion"
                  else estimate_prompt_tokens(request.messages))
        usage = Usage(prompt, sum(estimate_tokens(c.text) for c in choices), "estimated")
        return ChatResult(tuple(choices), usage, time.perf_counter() - start, self.model, "simulated")

    def prompt_token_bound(self, request: ChatRequest) -> int:
        if request.kind == "completion":
            return estimate_tokens(request.prompt)
        return estimate_prompt_tokens(request.messages)


# --------------------------------------------------------------------------- the SIMULATED target

def features(instruction: str) -> set[str]:
    found = {name for name, pattern in FEATURES.items() if pattern.search(instruction)}
    if "terse" in found:
        found.discard("steps")
    return found


class SimulatedTarget(_RuleBackend):
    """A SIMULATED target model whose accuracy depends on prompt features (see the module docstring)."""

    kind = "simulated"

    def __init__(self, seed: int = 0):
        super().__init__(TARGET_MODEL, "simulated:target", seed)

    def reply(self, text: str, index: int, temperature: float, seed: int | None = None) -> str:
        problem = parse_problem(text)
        if problem is None:
            return "I am not sure what is being asked."
        instruction = text.replace(problem.text, " ")
        dm = _DISTRACTOR.search(text)
        if dm:
            instruction = instruction.replace(dm.group(0), " ")
        f = features(instruction)
        rng = _rng(self.seed, instruction, problem.text, (index, seed) if temperature > 0 else 0)
        slip = BASE_SLIP * (0.4 if "steps" in f else 1.0) * (0.5 if "check" in f else 1.0)
        misuse = problem.distractor is not None and rng.random() < (0.1 if "units" in f else DISTRACTOR_MISUSE)
        slipped = rng.random() < slip
        steps = list(problem.steps)
        if misuse and problem.distractor is not None:
            last_expr, last = steps[-1]
            steps.append((f"{last} + {problem.distractor}", last + problem.distractor))
        if slipped:
            expr, value = steps[-1]
            steps[-1] = (expr, value + rng.choice((-10, -2, -1, 1, 2, 10)))
        answer = steps[-1][1]
        lines = []
        if "steps" in f:
            lines += [f"Step {i}: {expr} = {value}" for i, (expr, value) in enumerate(steps, 1)]
        else:
            lines.append(f"That makes {answer}.")
        if "units" in f and problem.distractor is not None and not misuse:
            lines.append(f"The {problem.distractor} bags are not needed.")
        if "check" in f:
            lines.append(f"Check: the result {answer} is consistent with the question.")
        if "format" in f:
            lines.append(f"Answer: {answer}")
        elif rng.random() < UNFORMATTED_WRONG:
            lines.append(f"(There were {problem.steps[0][0].split(' × ')[0]} at the start.)")
        return "\n".join(lines)


# --------------------------------------------------------------------------- the scripted optimiser

# (criterion name, description, strategy, pitfall, what must be in the knowledge first)
INSIGHTS = (
    ("steps", "the response shows each intermediate calculation on its own line",
     "Break the problem into one calculation per step.", "Skipping steps hides slips in multi-step problems.", None),
    ("check", "the response checks the result against the question before the final line",
     "Check the result by substituting it back into the question.", "Stopping at the first number computed.",
     "substitut"),
    ("units", "the response says which quantities are not needed and tracks what each number counts",
     "Track what each number counts and drop the quantities that are not needed.",
     "Using a quantity the question does not ask about.", "not needed"),
)
QUERIES = {"check": "how to check an arithmetic answer by substituting back",
           "units": "word problems quantities not needed units"}
CHECK_WITHOUT_NOTES_FROM_VERSION = 3
SPO_EDITS = ("Think step by step.", "Be concise.", "State the final answer on the last line as 'Answer: <number>'.",
             "Explain your reasoning in detail.", "Double-check the arithmetic.")
APE_VARIANTS = ("Question: {input}\nAnswer:", "Solve the problem.\n{input}", "Let's think step by step.\n{input}",
                "Read carefully and answer.\n{input}", "Problem: {input}\nSolution:")
_HEAD = re.compile(r"^### ([A-Z -]+)$", re.M)
_VERSION = re.compile(r"KNOWLEDGE \(version (\d+)\)")
_CRIT_LINE = re.compile(r"^- ([a-z0-9-]+): (.+)$", re.M)
_BLOCK = re.compile(r"<<<\n(.*?)\n>>>", re.S)
_RESP = re.compile(r"RESPONSE A:\n<<<\n(.*?)\n>>>\nRESPONSE B:\n<<<\n(.*?)\n>>>", re.S)


def _section(text: str, title: str) -> str:
    m = re.search(rf"^{title}:(.*?)(?=^[A-Z][A-Z ]+:|\Z)", text, re.S | re.M)
    return m.group(1) if m else ""


def criteria_in(text: str) -> list[tuple[str, str]]:
    return _CRIT_LINE.findall(_section(text, "CRITERIA"))


def meets(criterion: str, description: str, response: str, value: str = "") -> bool:
    """The scripted judge's reading of one criterion on ``response`` to input ``value`` (unknown ones pass)."""
    lines = [line for line in response.splitlines() if line.strip()]
    d = description.lower()
    kind = criterion if criterion in ("format", "steps", "check", "units") else (
        "units" if "not needed" in d else "check" if "check" in d else "format" if "final line" in d
        else "steps" if "intermediate calculation" in d or "step" in d else "")
    if kind == "format":
        return bool(lines) and re.match(r"^answer:\s*-?\d", lines[-1].strip(), re.I) is not None
    if kind == "steps":
        return sum("=" in line for line in lines) >= 2
    if kind == "check":
        return any(line.lower().startswith("check") for line in lines)
    if kind == "units":
        return _DISTRACTOR.search(value) is None or "not needed" in response
    return True


class ScriptedOptimizer(_RuleBackend):
    """The optimiser LLM of the demo: answers every meta-prompt kind by rule (see the module docstring)."""

    kind = "scripted-optimizer"

    def __init__(self, seed: int = 0):
        super().__init__(OPTIMIZER_MODEL, "simulated:optimizer", seed)

    def reply(self, text: str, index: int, temperature: float, seed: int | None = None) -> str:
        head = _HEAD.search(text)
        kind = head.group(1).strip() if head else ""
        handler = {"META-REASONING": self._meta, "GENERATE INPUTS": self._generate,
                   "REFERENCE PROGRAM": self._program, "SOLVE": self._solve, "JUDGE POINTWISE": self._pointwise,
                   "JUDGE PAIRWISE": self._pairwise, "EDIT PROMPT": self._edit, "SPO OPTIMIZE": self._spo,
                   "APE PROPOSE": self._ape}.get(kind)
        # sampled calls (temperature > 0) vary with the choice index and the request's seed
        draw = (index, seed) if temperature > 0 else 0
        return handler(text, draw) if handler else "I cannot help with that."

    def _meta(self, text: str, index: Any) -> str:
        have = {name for name, _ in criteria_in(text)}
        m = _VERSION.search(text)
        version = int(m.group(1)) if m else 0
        notes = _section(text, "NOTES").lower()
        out: list[str] = []
        query: str | None = None
        for name, desc, strategy, pitfall, needs in INSIGHTS:
            if name in have:
                continue
            supported = needs is None or needs in notes or (
                name == "check" and version >= CHECK_WITHOUT_NOTES_FROM_VERSION)
            if supported and not out:
                out += [f"STRATEGY: {strategy}", f"CRITERION: {name}: {desc}", f"PITFALL: {pitfall}"]
            elif not supported and query is None:
                query = QUERIES.get(name)
        out.append(f"RETRIEVE: {query or 'NONE'}")
        return "\n".join(out)

    def _generate(self, text: str, index: Any) -> str:
        m = re.search(r"Write (\d+) new", text)
        n = int(m.group(1)) if m else 4
        rng = _rng(self.seed, "generate", text)
        start = rng.randrange(4)
        return "\n".join(f"INPUT: {make_problem(rng, start + i).text}" for i in range(n))

    def _program(self, text: str, index: Any) -> str:
        problem = parse_problem(text.split("INPUT:", 1)[-1])
        return f"EXPR: {problem.expr}" if problem else "EXPR: unknown"

    def _solve(self, text: str, index: Any) -> str:
        problem = parse_problem(text.split("INPUT:", 1)[-1])
        return f"Answer: {problem.answer}" if problem else "Answer: unknown"

    def _pointwise(self, text: str, index: Any) -> str:
        blocks = _BLOCK.findall(text)
        response = blocks[-1] if blocks else ""
        value = re.search(r"^INPUT: (.+)$", text, re.M)
        failed = [name for name, desc in criteria_in(text)
                  if not meets(name, desc, response, value.group(1) if value else "")]
        return f"FAILED: {', '.join(failed) if failed else 'none'}"

    def _pairwise(self, text: str, index: Any) -> str:
        m = _RESP.search(text)
        if not m:
            return "WINNER: A"
        a, b = m.group(1), m.group(2)
        ref = re.search(r"^REFERENCE: (.+)$", text, re.M)
        reference = ref.group(1).strip() if ref and ref.group(1).strip() != "none" else None
        crit = criteria_in(text)
        value_m = re.search(r"^INPUT: (.+)$", text, re.M)
        value = value_m.group(1) if value_m else ""
        if reference is not None:
            ok_a = scoring.correct(scoring.extract(a, "number"), reference, "number")
            ok_b = scoring.correct(scoring.extract(b, "number"), reference, "number")
            if ok_a != ok_b:
                return "WINNER: A" if ok_a else "WINNER: B"
        if crit:
            met_a = sum(meets(n, d, a, value) for n, d in crit)
            met_b = sum(meets(n, d, b, value) for n, d in crit)
            if met_a != met_b:
                return "WINNER: A" if met_a > met_b else "WINNER: B"
        else:
            # no reference, no criteria: visible reasoning and a stated answer look better
            look_a = len(a.splitlines()) + 2 * ("answer:" in a.lower())
            look_b = len(b.splitlines()) + 2 * ("answer:" in b.lower())
            if look_a != look_b:
                return "WINNER: A" if look_a > look_b else "WINNER: B"
        return "WINNER: A"  # position bias on ties

    def _edit(self, text: str, index: Any) -> str:
        blocks = _BLOCK.findall(text)
        prompt = blocks[0] if blocks else DEFAULT_TEMPLATE
        failed = [x.strip() for x in _section(text, "FAILED CRITERIA").split(",") if x.strip()]
        described = dict(criteria_in(text))
        added = [f"Make sure {described[name]}." for name in failed if name in described]
        added = [line for line in added if line not in prompt]
        return "PROMPT:\n<<<\n" + "\n".join([*added, prompt]) + "\n>>>"

    def _spo(self, text: str, index: Any) -> str:
        blocks = _BLOCK.findall(text)
        prompt = blocks[0] if blocks else DEFAULT_TEMPLATE
        missing = [edit for edit in SPO_EDITS if edit not in prompt]
        if not missing:
            return "PROMPT:\n<<<\n" + prompt + "\n>>>"
        edit = _rng(self.seed, "spo", text, index).choice(missing) if index else missing[0]
        return "PROMPT:\n<<<\n" + edit + "\n" + prompt + "\n>>>"

    def _ape(self, text: str, index: Any) -> str:
        rng = _rng(self.seed, "ape", text, index)
        return "PROMPT:\n<<<\n" + rng.choice(APE_VARIANTS) + "\n>>>"
