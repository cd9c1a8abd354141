"""The ReAct agent: one LLM call per step over any mlx26 LLM backend, with token accounting.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper's
baseline and fallback is a ReAct agent (Yao et al., 2023) reading the page and emitting one
action per step; the prompt wording below is our own. Every call's usage (prompt and
completion tokens, and whether the backend counted them or estimated them) is kept, so the
token cost of the agent and of the distilled function's fallbacks can be compared.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import RunFailure
from mlx26.core.rpa_distill.actions import format_action, parse_action
from mlx26.core.rpa_distill.dom import render

SYSTEM_PROMPT = (
    "You are a web automation agent. You see the task, the page's elements (one per line, "
    "[ref] tag \"text\" attributes) and the actions taken so far. Reply with one short line "
    "'Thought: …' and then exactly one line, one of:\n"
    "Action: click(REF)\nAction: type(REF, \"text\")\nAction: select(REF, \"option\")\n"
    "Use only refs shown in the current element list."
)


def build_prompt(obs: dict[str, Any], history: list[dict[str, Any]], examples: str = "") -> list[dict[str, str]]:
    """The chat messages for one step (the same text the scripted rules are written against)."""
    done = "\n".join(f"{i}. {format_action(a)}" for i, a in enumerate(history, 1)) or "(none)"
    user = (f"Task: {obs['instruction']}\nElements:\n{render(obs['elements'])}\n"
            f"Previous actions:\n{done}\nWhat is the next action?")
    if examples:
        user = f"Similar solved tasks (for reference):\n{examples}\n\n{user}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


class ReactAgent:
    """``act(obs, history) → action`` with one LLM call; ``tokens`` accumulates usage."""

    kind = "react"

    def __init__(self, backend: Any, *, max_tokens: int = 64, examples: str = ""):
        self.backend = backend
        self.max_tokens = max_tokens
        self.examples = examples
        self.tokens = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
        self.last_usage: dict[str, Any] = {}

    def start(self, obs: dict[str, Any]) -> None:
        """New episode (the history is passed to every call; nothing to reset)."""

    def act(self, obs: dict[str, Any], history: list[dict[str, Any]]) -> dict[str, Any]:
        messages = build_prompt(obs, history, self.examples)
        result = self.backend.chat(messages, temperature=0.0, max_tokens=self.max_tokens, seed=0)
        usage = result.usage
        self.tokens["prompt_tokens"] += usage.prompt_tokens
        self.tokens["completion_tokens"] += usage.completion_tokens
        self.tokens["calls"] += 1
        self.last_usage = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                           "source": usage.source}
        try:
            return parse_action(result.text)
        except ValueError as exc:
            raise AgentError(str(exc)) from None


class AgentError(RunFailure):
    """The agent's reply held no usable action."""


def total(tokens: dict[str, int]) -> int:
    return int(tokens["prompt_tokens"] + tokens["completion_tokens"])
