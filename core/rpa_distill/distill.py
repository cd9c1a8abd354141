"""The pipeline: demonstrations → translated → program → whitelisted source; verify and repair.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). ``distill``
runs translator and builder and checks the emitted code against the whitelist before anyone
can run it. ``verify`` runs the function on fresh task instances (seeds disjoint from the
demos'); with a fallback agent, every failed run is completed by the agent and, in repair
rounds, the completed successful runs join the demonstrations and the function is rebuilt —
the paper's iterate-until-robust loop, bounded by ``repair_rounds``.
"""

from __future__ import annotations

import time
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.rpa_distill.builder import Program, build, to_source
from mlx26.core.rpa_distill.env import Env, family
from mlx26.core.rpa_distill.runtime import run_function
from mlx26.core.rpa_distill.translate import check_unique, translate
from mlx26.core.rpa_distill.whitelist import load

HELD_OUT_SEED = 100_000  # verification seeds start here; recorded demos use small seeds


def distill(trajs: list[dict[str, Any]], resolver: Any = None) -> tuple[str, Program, list[str]]:
    """(source, program, warnings) for trajectories of one task."""
    demos, slots, warnings = translate(trajs)
    bad = check_unique(demos)
    if bad:  # the translator's contract; a failure here is a bug, not bad input
        raise RunFailure(f"selector not unique in its snapshot at {', '.join(bad[:3])}.")
    program = build(demos, slots, resolver)
    source = to_source(program)
    load(source, lambda slot, reason: None)  # whitelist check before the code is ever run
    return source, program, warnings


def compile_function(source: str) -> tuple[str, Any, list[Any]]:
    """(task, rpa, api-holder) — ``NeedsLLM`` is bound to the running Api through the holder."""
    holder: list[Any] = [None]

    def needs_llm(slot: str, reason: str) -> None:
        holder[0].needs_llm(slot, reason)

    task, fn = load(source, needs_llm)

    def rpa(api: Any, fields: dict[str, Any]) -> None:
        holder[0] = api
        fn(api, fields)

    return task, rpa, holder


def check_env(task: str, env_name: str) -> None:
    """A function runs on its own task, or the same family elsewhere (synthetic ↔ miniwob)."""
    if family(task) != family(env_name):
        raise InputError(f"the function was distilled for {task}, not {env_name}.", f"use --env {task}")


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(runs)
    solved = sum(r["success"] for r in runs)
    tokens = sum(r["tokens"]["prompt_tokens"] + r["tokens"]["completion_tokens"] for r in runs)
    return {"episodes": n, "success_rate": solved / n if n else 0.0, "solved": solved,
            "fallbacks": sum(bool(r.get("fallback")) for r in runs),
            "needs_llm_steps": sum(s["agent"] == "needs-llm" for r in runs for s in r["steps"]),
            "llm_calls": sum(r["tokens"]["calls"] for r in runs), "tokens": tokens,
            "tokens_per_solved": tokens / solved if solved else None,
            "seconds_per_episode": sum(r["seconds"] for r in runs) / n if n else 0.0}


def verify(env: Env, source: str, episodes: int, *, agent: Any = None, fallback: bool = True,
           demos: list[dict[str, Any]] | None = None, repair_rounds: int = 0, seed: int = 0,
           step_timeout: float = 10.0, poll: bool = False, params: dict[str, Any] | None = None,
           resolver: Any = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(rounds summary, runs of the last round, final source)."""
    rounds = []
    demos = list(demos or [])
    for rnd in range(repair_rounds + 1):
        task, rpa, _ = compile_function(source)
        check_env(task, env.name)
        start = time.perf_counter()
        runs = [run_function(env, rpa, HELD_OUT_SEED + seed + rnd * episodes + i, agent=agent, fallback=fallback,
                             params=params, step_timeout=step_timeout, poll=poll) for i in range(episodes)]
        summary = {"round": rnd, **summarize(runs), "wall_seconds": round(time.perf_counter() - start, 3),
                   "n_demos": len(demos) if demos else None}
        rounds.append(summary)
        repairs = [r for r in runs if r["fallback"] and r["success"]]
        if rnd == repair_rounds or not repairs or not demos:
            break
        demos = demos + repairs[:3]
        source, _, _ = distill(demos, resolver)
    return rounds, runs, source
