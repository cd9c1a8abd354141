"""Benchmark of `mlx26 rpa-distill`: ReAct vs distilled vs distilled + ReAct fallback, in one run.

Usage:  python benchmarks/rpa_distill.py [--episodes 100] [--miniwob-episodes 20] [--no-miniwob]
        [--demo-agent oracle|react] [--json]

Anchor: the ReAct agent (mlx26's scripted ReAct policy over the real prompts: its token
counts are the scripted backend's labelled estimates, not a real model's). For every synthetic
family (and, where Chromium is installed, the MiniWoB++ tasks) it distils a function from 3
demonstrations and runs ReAct, the function alone, and the function with fallback on the same
held-out instances, printing success rate, LLM tokens per solved task, wall seconds per
episode and the ratios to ReAct side by side, plus the core count. Absolute times on a shared
machine are noise; the ratios are the figure. Synthetic results are labelled as such.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from _results import record
from mlx26.core.llm import get_backend
from mlx26.core.rpa_distill.miniwob_env import TASKS, browser_problem
from mlx26.core.rpa_distill.pipeline import compare
from mlx26.core.rpa_distill.rules import default_spec
from mlx26.core.rpa_distill.synthetic import FAMILIES

MINIWOB = TASKS  # every MiniWoB++ task with a scripted oracle (demos) and scripted ReAct rules (the anchor)


def run(episodes: int, miniwob_episodes: int, with_miniwob: bool, demo_agent: str) -> list[dict]:
    backend = get_backend(default_spec())
    envs = [(f"synthetic/{f}", episodes) for f in FAMILIES]
    if with_miniwob:
        envs += [(f"miniwob/{t}", miniwob_episodes) for t in MINIWOB if t in TASKS]
    rows = []
    for name, n in envs:
        by_mode = {r["mode"]: r for r in compare(name, backend, episodes=n, demo_agent=demo_agent,
                                                 step_timeout=2.0)}
        react = by_mode["react"]
        for mode in ("react", "distilled", "distilled+fallback"):
            r = by_mode[mode]
            speed = react["seconds_per_episode"] / r["seconds_per_episode"] if r["seconds_per_episode"] else None
            rows.append({"env": name, "mode": mode, "n": r["episodes"], "success": r["success_rate"],
                         "fallbacks": r["fallbacks"], "tokens/solved": r["tokens_per_solved"],
                         "tokens/solved(+demos)": r["tokens_per_solved_incl_demos"],
                         "token_reduction": r["token_reduction_vs_react"],
                         "reduction(+demos)": r["token_reduction_incl_demos"],
                         "s/episode": r["seconds_per_episode"], "speedup_vs_react": speed,
                         "needs_llm_slots": r["needs_llm_slots"], "tokens_are": r["tokens_are"]})
    return rows


def _record(rows: list[dict], args, with_miniwob: bool, problem: str | None) -> None:
    figures: dict = {"episodes": args.episodes, "miniwob_episodes": args.miniwob_episodes, "demo_agent": args.demo_agent,
                     "miniwob": with_miniwob, "miniwob_skipped_because": None if with_miniwob else
                     (problem or "--no-miniwob"), "envs": {}}
    for r in rows:
        figures["envs"].setdefault(r["env"], {})[r["mode"]] = r
    for prefix in ("synthetic", "miniwob"):
        envs = {k: v for k, v in figures["envs"].items() if k.startswith(prefix + "/")}
        if not envs:
            continue
        agg: dict = {"families": len(envs)}
        for mode in ("react", "distilled", "distilled+fallback"):
            agg[f"{mode}_success_min"] = min(e[mode]["success"] for e in envs.values())
        for key in ("token_reduction", "reduction(+demos)"):
            vals = [e["distilled+fallback"][key] for e in envs.values() if e["distilled+fallback"][key] is not None]
            agg[f"{key}_min"], agg[f"{key}_max"] = (min(vals), max(vals)) if vals else (None, None)
        tok = [e["distilled"]["tokens/solved"] for e in envs.values()]
        agg["distilled_tokens_per_solved_max"] = max(tok) if all(v is not None for v in tok) else None
        agg["fallbacks"] = sum(e["distilled+fallback"]["fallbacks"] or 0 for e in envs.values())
        agg["needs_llm_slots"] = sum(e["distilled"]["needs_llm_slots"] or 0 for e in envs.values())
        agg["hybrid_at_least_react"] = sum(e["distilled+fallback"]["success"] >= e["react"]["success"]
                                           for e in envs.values())
        agg["function_alone_at_least_react"] = sum(e["distilled"]["success"] >= e["react"]["success"]
                                                   for e in envs.values())
        agg["function_alone_solves"] = sum(e["distilled"]["success"] >= 0.9 for e in envs.values())
        # One line per task: success function / with fallback / ReAct, and ReAct's tokens per solved task
        # (the scripted policy's ESTIMATES, marked "est.").
        agg["per_task"] = [f"{k.split('/', 1)[1]} {e['distilled']['success']:.2f}/{e['distilled+fallback']['success']:.2f}/"
                           f"{e['react']['success']:.2f} ("
                           + (f"{e['react']['tokens/solved']:.0f} est. tokens" if e["react"]["tokens/solved"] else
                              "ReAct unsolved") + ")" for k, e in envs.items()]
        figures[prefix] = agg
    data = [{"name": "synthetic families", "source": "SYNTHETIC: our in-process MiniWoB-style simulator (10 families), "
             f"{args.episodes} held-out instances each; the anchor is a scripted ReAct policy (estimated tokens)"}]
    if with_miniwob:
        data.append({"name": "MiniWoB++", "source": f"the miniwob package's HTML tasks in headless Chromium, "
                     f"{args.miniwob_episodes} held-out seeds each"})
    record("rpa_distill" if args.demo_agent == "oracle" else f"rpa_distill_{args.demo_agent}", figures, data=data)


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--miniwob-episodes", type=int, default=20)
    parser.add_argument("--no-miniwob", action="store_true")
    parser.add_argument("--demo-agent", choices=("oracle", "react"), default="oracle")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    problem = browser_problem()
    with_miniwob = not args.no_miniwob and problem is None
    rows = run(args.episodes, args.miniwob_episodes, with_miniwob, args.demo_agent)
    _record(rows, args, with_miniwob, problem)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"rpa-distill benchmark — cores: {os.cpu_count()}; anchor: ReAct (scripted policy, ESTIMATED tokens: "
          f"every tokens column is an estimate); "
          f"demos: 3 by {args.demo_agent}; synthetic/* = our simulator")
    if not with_miniwob:
        print(f"miniwob/* skipped: {problem or '--no-miniwob'}")
    cols = list(rows[0])
    widths = [max(len(c), *(len(_fmt(r[c])) for r in rows)) for c in cols]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    for r in rows:
        print("  ".join(_fmt(r[c]).ljust(w) for c, w in zip(cols, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
