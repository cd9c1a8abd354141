"""End-to-end runs used by the CLI, the demo and the benchmark: record, compare, demo.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). ``compare``
is the paper's headline measurement on our environments: ReAct alone vs the distilled
function alone vs the function with ReAct fallback, on the same held-out instances, with
success, LLM tokens per solved task and wall time per episode (tokens of the scripted policy
are the scripted backend's labelled estimates of the real prompts).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.rpa_distill.distill import HELD_OUT_SEED, distill, summarize, verify
from mlx26.core.rpa_distill.env import Env, family, make_env
from mlx26.core.rpa_distill.oracle import OracleAgent
from mlx26.core.rpa_distill.react import ReactAgent
from mlx26.core.rpa_distill.record import record_episode
from mlx26.core.rpa_distill.spec import AGENTS


@contextlib.contextmanager
def opened(name: str, step_timeout: float = 10.0) -> Iterator[Env]:
    """An environment that is always closed (a browser never outlives the command)."""
    env = make_env(name, step_timeout=step_timeout)
    try:
        yield env
    finally:
        env.close()


def make_agent(kind: str, env_name: str, backend: Any = None) -> Any:
    if kind == "oracle":
        return OracleAgent(family(env_name), miniwob=env_name.startswith("miniwob/"))
    if kind == "react":
        if backend is None:
            raise InputError("the react agent needs an LLM backend.", "give --llm SPEC")
        return ReactAgent(backend)
    raise InputError(f"Unknown agent '{kind}'.", "choose one of: " + ", ".join(AGENTS))


def record(env: Env, agent: Any, episodes: int, seed: int = 0, max_steps: int = 12) -> Iterator[dict[str, Any]]:
    for i in range(episodes):
        yield record_episode(env, agent, seed + i, max_steps=max_steps)


def compare(env_name: str, backend: Any, *, demos: int = 3, episodes: int = 100, demo_agent: str = "oracle",
            seed: int = 0, step_timeout: float = 10.0) -> list[dict[str, Any]]:
    """Rows for ReAct, distilled (no fallback) and distilled + ReAct fallback on the same instances."""
    poll = env_name.startswith(("miniwob/", "html/"))
    with opened(env_name, step_timeout) as env:
        start = time.perf_counter()
        recorded = list(record(env, make_agent(demo_agent, env_name, backend), demos, seed))
        source, program, _ = distill(recorded)
        build_seconds = time.perf_counter() - start
        demo_tokens = sum(t["tokens"]["prompt_tokens"] + t["tokens"]["completion_tokens"] for t in recorded)
        react_runs = [record_episode(env, ReactAgent(backend), HELD_OUT_SEED + seed + i) for i in range(episodes)]
        plain, _, _ = verify(env, source, episodes, agent=None, fallback=False, seed=seed,
                             step_timeout=step_timeout, poll=poll)
        hybrid, _, _ = verify(env, source, episodes, agent=ReactAgent(backend), fallback=True, seed=seed,
                              step_timeout=step_timeout, poll=poll)
    react = summarize(react_runs)
    # Where every token figure of these rows comes from: "estimated" (the scripted policy, ⌈bytes/4⌉),
    # "server" (an OpenAI-compatible server's usage fields), "local" (the model's tokenizer), "recorded".
    source = _usage_source(backend)
    rows = []
    for mode, stats in (("react", react), ("distilled", plain[0]), ("distilled+fallback", hybrid[0])):
        solved = stats["solved"]
        amortized = stats["tokens"] + (demo_tokens if mode != "react" else 0)
        rows.append({"env": env_name, "mode": mode, "episodes": stats["episodes"],
                     "success_rate": stats["success_rate"], "fallbacks": stats["fallbacks"],
                     "tokens_per_solved": stats["tokens_per_solved"] if solved else None,
                     "tokens_per_solved_incl_demos": amortized / solved if solved else None,
                     "seconds_per_episode": round(stats["seconds_per_episode"], 5),
                     "needs_llm_slots": program.needs_llm() if mode != "react" else None,
                     "demo_agent": demo_agent, "build_seconds": round(build_seconds, 3), "tokens_are": source})
    base = rows[0]["tokens_per_solved"]
    for row in rows:
        mine = row["tokens_per_solved"]
        row["token_reduction_vs_react"] = (1 - mine / base) if base and mine is not None else None
        amortized = row["tokens_per_solved_incl_demos"]
        row["token_reduction_incl_demos"] = (1 - amortized / base) if base and amortized is not None else None
    return rows


def _usage_source(backend: Any) -> str:
    try:
        return str(backend.capabilities().usage_source)
    except (AttributeError, NotImplementedError):
        return "unknown"
