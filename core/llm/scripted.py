"""``scripted:FILE`` — an LLM stand-in that answers from ordered regex → reply rules.

Our own test and demo device (no paper reconstructed). The rules file is JSON, JSONL or
YAML: a list of rules, or ``{"model": NAME, "rules": [...]}``. Each rule is

    {"match": "regex", "reply": "text"}            # or "replies": ["first", "second", …]
    optional: "on": "last_user" (default) | "conversation" | "system",
              "flags": "i" (ignore case), "finish_reason": "stop"

Rules are tried in order; the first whose regex is found (``re.search``, DOTALL) in the
chosen text answers. ``replies`` are used in turn (cycling). In a reply, ``$1``/``${name}``
insert regex groups (``$$`` is a literal ``$``; a ``$`` before a group that does not exist
is kept as is). No match is an error naming the file; add ``{"match": "", "reply": …}`` last
as a catch-all. Usage is a labelled estimate (``estimated``); ``max_tokens`` truncates by
that estimate (finish_reason ``length``), ``stop`` sequences cut the reply, temperature and
seed are ignored (replies are deterministic). ``scripted:demo`` is the shipped demo rule set.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.llm.base import Backend
from mlx26.core.llm.tokens import (
    cut_at_stop,
    estimate_prompt_tokens,
    estimate_tokens,
    pieces,
    truncate_estimated,
)
from mlx26.core.llm.types import Capabilities, ChatRequest, ChatResult, Choice, LLMError, TokenCallback, Usage

DATA_DIR = Path(__file__).resolve().parent / "data"
BUILTIN_RULES = {"demo": DATA_DIR / "demo-rules.json"}
TARGETS = ("last_user", "conversation", "system")
RULE_KEYS = {"match", "reply", "replies", "on", "flags", "finish_reason"}
_GROUP = re.compile(r"\$(\$|\d+|\{\w+\})")


@dataclass
class Rule:
    pattern: re.Pattern[str]
    replies: list[str]
    on: str
    finish_reason: str
    turn: int = 0


def _parse_rules(data: Any, name: str) -> tuple[list[Rule], str | None]:
    model = None
    if isinstance(data, dict):
        unknown = set(data) - {"model", "rules"}
        if unknown:
            raise InputError(f"{name}: unknown top-level key(s) {', '.join(sorted(unknown))}.",
                             "use a list of rules or {\"model\": …, \"rules\": [...]}")
        model = data.get("model")
        data = data.get("rules")
    if not isinstance(data, list) or not data:
        raise InputError(f"{name}: expected a non-empty list of rules.")
    rules = []
    for i, raw in enumerate(data, 1):
        if not isinstance(raw, dict) or "match" not in raw:
            raise InputError(f"{name} rule {i}: needs a 'match' regex and a 'reply'.")
        unknown = set(raw) - RULE_KEYS
        if unknown:
            raise InputError(f"{name} rule {i}: unknown key(s) {', '.join(sorted(unknown))}.",
                             "valid keys: " + ", ".join(sorted(RULE_KEYS)))
        replies = raw.get("replies", [raw["reply"]] if "reply" in raw else None)
        if not isinstance(replies, list) or not replies or not all(isinstance(r, str) for r in replies):
            raise InputError(f"{name} rule {i}: 'reply' must be a string ('replies' a non-empty list of strings).")
        on = raw.get("on", "last_user")
        if on not in TARGETS:
            raise InputError(f"{name} rule {i}: 'on' must be one of {', '.join(TARGETS)}, not {on!r}.")
        flags = re.DOTALL | (re.IGNORECASE if "i" in str(raw.get("flags", "")) else 0)
        try:
            pattern = re.compile(str(raw["match"]), flags)
        except re.error as exc:
            raise InputError(f"{name} rule {i}: invalid regex {raw['match']!r} ({exc}).") from None
        rules.append(Rule(pattern, replies, on, str(raw.get("finish_reason", "stop"))))
    return rules, model


def load_rules(path: str) -> tuple[list[Rule], str | None, str]:
    """(rules, model name from the file or None, display name); ValueError for a bad file."""
    p = Path(path)
    if not p.is_file() and path in BUILTIN_RULES:
        p = BUILTIN_RULES[path]
    if not p.is_file():
        raise InputError(f"scripted rules file not found: {path}",
                         "give a JSON/JSONL/YAML rules file, or use scripted:demo")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        elif p.suffix.lower() in (".jsonl", ".ndjson"):
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except Exception as exc:  # json and yaml raise different types; both mean a malformed file
        raise InputError(f"cannot parse scripted rules {path}: {' '.join(str(exc).split())}") from None
    rules, model = _parse_rules(data, path)
    return rules, model, path


def _expand(reply: str, match: re.Match[str]) -> str:
    def sub(m: re.Match[str]) -> str:
        token = m.group(1)
        if token == "$":
            return "$"
        name: int | str = int(token) if token.isdigit() else token[1:-1]
        try:
            return match.group(name) or ""
        except IndexError:  # re raises IndexError for unknown group numbers and names alike
            return m.group(0)

    return _GROUP.sub(sub, reply)


class ScriptedBackend(Backend):
    kind = "scripted"

    def __init__(self, path: str, model: str | None = None):
        rules, file_model, name = load_rules(path)
        model = model or file_model or f"scripted-{Path(path).stem}"
        super().__init__(model, f"scripted:{path}")
        self.rules = rules
        self.source = name
        self._lock = threading.Lock()

    def capabilities(self) -> Capabilities:
        return Capabilities(self.kind, self.model, streaming=True, native_n=True, seed=False, stop=True,
                            completions=True, usage_source="estimated", deterministic=True,
                            notes="regex rules; temperature and seed are ignored")

    def _target(self, request: ChatRequest, on: str) -> str:
        if request.kind == "completion":
            return request.prompt
        if on == "conversation":
            return "\n".join(f"{m['role']}: {m['content']}" for m in request.messages)
        role = "system" if on == "system" else "user"
        return next((m["content"] for m in reversed(request.messages) if m["role"] == role), "")

    def _reply(self, request: ChatRequest) -> tuple[str, str]:
        for rule in self.rules:
            match = rule.pattern.search(self._target(request, rule.on))
            if match:
                with self._lock:
                    reply = rule.replies[rule.turn % len(rule.replies)]
                    rule.turn += 1
                return _expand(reply, match), rule.finish_reason
        shown = " ".join(self._target(request, "last_user").split())[:60]
        raise LLMError(f"no scripted rule in {self.source} matches {shown!r}.",
                       "add a catch-all rule {\"match\": \"\", \"reply\": \"…\"} at the end")

    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        start = time.perf_counter()
        params = request.params
        choices = []
        for index in range(params.n):
            text, finish = self._reply(request)
            text, stopped = cut_at_stop(text, params.stop)
            text, cut = truncate_estimated(text, params.max_tokens)
            finish = "length" if cut else ("stop" if stopped else finish)
            if on_token is not None and index == 0:
                for piece in pieces(text):
                    on_token(piece)
            choices.append(Choice(text, finish))
        prompt = (estimate_tokens(request.prompt) if request.kind == "completion"
                  else estimate_prompt_tokens(request.messages))
        usage = Usage(prompt, sum(estimate_tokens(c.text) for c in choices), "estimated")
        return ChatResult(tuple(choices), usage, time.perf_counter() - start, self.model, self.kind)

    def prompt_token_bound(self, request: ChatRequest) -> int:
        # Exact: the scripted backend bills its own estimate.
        if request.kind == "completion":
            return estimate_tokens(request.prompt)
        return estimate_prompt_tokens(request.messages)
