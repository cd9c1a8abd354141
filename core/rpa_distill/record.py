"""Recording trajectories: run an agent in an environment and keep every step as JSON.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). A trajectory
holds what the paper's pipeline needs downstream: the instruction and its parsed fields, the
observation before every action, the action, the reward, and the token usage of every agent
call. The record layout (one JSON object per episode, JSONL on disk) is our own.
"""

from __future__ import annotations

import time
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.rpa_distill.env import Env, InvalidAction
from mlx26.core.rpa_distill.react import AgentError

TRAJECTORY_KEYS = ("task", "seed", "instruction", "fields", "steps", "reward", "success")


def run_agent(env: Env, agent: Any, obs: dict[str, Any], *, max_steps: int = 12,
              history: list[dict[str, Any]] | None = None, steps: list[dict[str, Any]] | None = None,
              source: str | None = None) -> tuple[float, bool, list[dict[str, Any]]]:
    """Let ``agent`` act from ``obs`` until the episode ends or ``max_steps`` actions were taken.

    Returns (reward, done, steps); ``steps`` (appended to when given) records each snapshot,
    action and usage. An unusable reply or an action on a missing element ends the run (reward 0).
    """
    steps = [] if steps is None else steps
    history = [s["action"] for s in steps] if history is None else history
    reward, done = 0.0, False
    for _ in range(max_steps):
        before = dict(agent.tokens)
        try:
            action = agent.act(obs, history)
        except AgentError as exc:
            steps.append(_step(obs, None, agent, before, source, error=str(exc)))
            break
        record = _step(obs, action, agent, before, source)
        try:
            obs, reward, done = env.step(action)
        except InvalidAction as exc:
            record["error"] = str(exc)
            steps.append(record)
            break
        record["reward"] = reward
        steps.append(record)
        history.append(action)
        if done:
            break
    return reward, done, steps


def _step(obs: dict[str, Any], action: dict[str, Any] | None, agent: Any, before: dict[str, int],
          source: str | None, error: str | None = None) -> dict[str, Any]:
    used = {k: agent.tokens[k] - before.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "calls")}
    step: dict[str, Any] = {"elements": obs["elements"], "action": action, "agent": source or agent.kind,
                            "usage": used}
    if error:
        step["error"] = error
    return step


def record_episode(env: Env, agent: Any, seed: int, *, params: dict[str, Any] | None = None,
                   max_steps: int = 12) -> dict[str, Any]:
    """One episode from ``seed`` as a trajectory record."""
    start = time.perf_counter()
    obs = env.reset(seed, params)
    agent.start(obs)
    reward, done, steps = run_agent(env, agent, obs, max_steps=max_steps)
    tokens = {k: sum(s["usage"][k] for s in steps) for k in ("prompt_tokens", "completion_tokens", "calls")}
    return {"task": env.name, "seed": seed, "instruction": obs["instruction"], "fields": obs["fields"],
            "agent": agent.kind, "steps": steps, "reward": reward, "success": bool(done and reward > 0),
            "tokens": tokens, "seconds": round(time.perf_counter() - start, 4)}


def check_trajectory(traj: Any, where: str) -> None:
    """ValueError naming ``where`` for a record that is not a trajectory."""
    if not isinstance(traj, dict):
        raise InputError(f"{where}: a trajectory must be a JSON object.")
    missing = [k for k in TRAJECTORY_KEYS if k not in traj]
    if missing:
        raise InputError(f"{where}: not a trajectory (missing {', '.join(missing)}).",
                         "record trajectories with `mlx26 rpa-distill record`")
    if not isinstance(traj["steps"], list) or not isinstance(traj["fields"], dict):
        raise InputError(f"{where}: 'steps' must be a list and 'fields' an object.")
    if not isinstance(traj["task"], str):
        raise InputError(f"{where}: 'task' must be an environment name string.")
