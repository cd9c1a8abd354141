"""Running a distilled RPA function, with per-step timeouts and the hybrid ReAct fallback.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The function
acts through :class:`Api`, which resolves each selector against the live observation (it must
match exactly one element; on a browser it polls until ``step_timeout`` seconds), performs the
action and records the step as a trajectory step. ``NeedsLLM`` hands one step to the agent.
On any failure (missing or ambiguous element, timeout, a NeedsLLM without an agent, or a
function that returns before the episode ends) the agent, if given, takes over from the
current state — the paper's hybrid execution — and the whole run is recorded as a trajectory
that repair can learn from. LLM tokens are counted only for agent calls.
"""

from __future__ import annotations

import time
from typing import Any

from mlx26.core.common.errors import RunFailure
from mlx26.core.rpa_distill.actions import make
from mlx26.core.rpa_distill.env import Env, InvalidAction
from mlx26.core.rpa_distill.record import run_agent
from mlx26.core.rpa_distill.selectors import describe, find


class StepFailure(RunFailure):
    """A step of the function could not be carried out."""


class _EpisodeOver(Exception):
    pass


class Api:
    """The action API the generated code sees (``click``/``type``/``select``/``exists``)."""

    def __init__(self, env: Env, obs: dict[str, Any], *, step_timeout: float, agent: Any = None,
                 max_steps: int = 30, poll: bool = False):
        self.env, self.obs, self.agent = env, obs, agent
        self.step_timeout, self.max_steps, self.poll = step_timeout, max_steps, poll
        self.steps: list[dict[str, Any]] = []
        self.reward, self.done = 0.0, False

    def _resolve(self, selector: dict[str, Any], label: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.step_timeout
        while True:
            hits = find(self.obs["elements"], selector)
            if len(hits) == 1:
                return hits[0]
            if time.monotonic() >= deadline or not self.poll:
                break
            time.sleep(0.05)
            self.obs = self.env.observe()
        what = "no element matches" if not hits else f"{len(hits)} elements match"
        raise StepFailure(f"step {len(self.steps) + 1} ({label}): {what} {{{describe(selector)}}}.")

    def _act(self, action: dict[str, Any], selector: dict[str, Any] | None, source: str = "rpa",
             usage: dict[str, int] | None = None) -> None:
        if len(self.steps) >= self.max_steps:
            raise StepFailure(f"more than {self.max_steps} steps.")
        record = {"elements": self.obs["elements"], "action": action, "agent": source,
                  "usage": usage or {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}}
        if selector is not None:
            record["selector"] = selector
        start = time.monotonic()
        try:
            self.obs, self.reward, self.done = self.env.step(action)
        except InvalidAction as exc:
            raise StepFailure(f"step {len(self.steps) + 1}: {exc}") from None
        self.steps.append(record)
        if time.monotonic() - start > self.step_timeout:
            raise StepFailure(f"step {len(self.steps)} took longer than the {self.step_timeout:g} s step timeout.")
        if self.done:
            raise _EpisodeOver()

    def click(self, selector: dict[str, Any]) -> None:
        self._act(make("click", self._resolve(selector, "click")["ref"]), selector)

    def type(self, selector: dict[str, Any], text: Any) -> None:
        self._act(make("type", self._resolve(selector, "type")["ref"], str(text)), selector)

    def select(self, selector: dict[str, Any], text: Any) -> None:
        self._act(make("select", self._resolve(selector, "select")["ref"], str(text)), selector)

    def exists(self, selector: dict[str, Any]) -> bool:
        if self.poll:
            self.obs = self.env.observe()
        return len(find(self.obs["elements"], selector)) == 1

    def needs_llm(self, slot: str, reason: str) -> None:
        if self.agent is None:
            raise StepFailure(f"NeedsLLM({slot!r}): {reason}; no agent to defer to.")
        before = dict(self.agent.tokens)
        action = self.agent.act(self.obs, [s["action"] for s in self.steps])
        used = {k: self.agent.tokens[k] - before.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "calls")}
        self._act(action, None, "needs-llm", used)


def run_function(env: Env, rpa: Any, seed: int, *, agent: Any = None, fallback: bool = True,
                 params: dict[str, Any] | None = None, step_timeout: float = 10.0, max_steps: int = 30,
                 poll: bool = False) -> dict[str, Any]:
    """One episode driven by ``rpa(api, fields)``; the record is a trajectory plus run statistics."""
    start = time.perf_counter()
    obs = env.reset(seed, params)
    api = Api(env, obs, step_timeout=step_timeout, agent=agent, max_steps=max_steps, poll=poll)
    failure = None
    try:
        rpa(api, obs["fields"])
        failure = "the function returned before the episode ended"
    except _EpisodeOver:
        pass
    except StepFailure as exc:
        failure = str(exc)
    except Exception as exc:  # an agent or env error inside NeedsLLM: recorded, then fallback
        failure = f"{type(exc).__name__}: {exc}"
    used_fallback = False
    if not api.done and fallback and agent is not None:
        used_fallback = True
        agent.start(api.obs)
        budget = max(1, max_steps - len(api.steps))
        api.reward, api.done, _ = run_agent(env, agent, api.obs, max_steps=min(budget, 12), steps=api.steps,
                                            source="fallback")
    tokens = {k: sum(s["usage"][k] for s in api.steps) for k in ("prompt_tokens", "completion_tokens", "calls")}
    success = bool(api.done and api.reward > 0)
    return {"task": env.name, "seed": seed, "instruction": obs["instruction"], "fields": obs["fields"],
            "agent": "rpa", "steps": api.steps, "reward": api.reward, "success": success,
            "fallback": used_fallback, "failure": failure,
            "tokens": tokens, "seconds": round(time.perf_counter() - start, 4)}
