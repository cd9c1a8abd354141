"""Execution: fallback from the failing step, token accounting, repair, per-step timeouts, NeedsLLM."""

from __future__ import annotations

import copy
import time

import pytest
from mlx26.core.rpa_distill import compile_function, distill, make_env, record_episode, verify
from mlx26.core.rpa_distill.oracle import OracleAgent
from mlx26.core.rpa_distill.react import ReactAgent
from mlx26.core.rpa_distill.runtime import run_function


def _no_banner_demos():
    env = make_env("synthetic/login-user")
    return [record_episode(env, OracleAgent("login-user"), s, params={"banner": False}) for s in range(3)]


def test_fallback_completes_from_the_failing_step_and_repair_learns_the_condition(react_backend):
    demos = _no_banner_demos()
    source, _, _ = distill(demos)
    assert "Accept cookies" not in source
    env = make_env("synthetic/login-user")
    _, rpa, _ = compile_function(source)
    alone = run_function(env, rpa, 7, params={"banner": True})
    assert not alone["success"] and "no element match" in alone["failure"] and "step 1" in alone["failure"]
    hybrid = run_function(env, rpa, 7, params={"banner": True}, agent=ReactAgent(react_backend))
    assert hybrid["success"] and hybrid["fallback"]
    assert [s["agent"] for s in hybrid["steps"]] == ["fallback"] * 4
    assert hybrid["tokens"]["calls"] == 4 and hybrid["tokens"]["prompt_tokens"] > 0
    rounds, _, final = verify(env, source, 40, agent=ReactAgent(react_backend), fallback=True, demos=demos,
                              repair_rounds=2)
    assert rounds[0]["fallbacks"] > 0 and rounds[0]["success_rate"] == 1.0
    assert rounds[-1]["fallbacks"] == 0 and rounds[-1]["tokens"] == 0
    assert 'if api.exists({"tag": "button", "text": "Accept cookies"}):' in final


def test_fallback_after_some_rpa_steps_keeps_them(react_backend):
    demos = _no_banner_demos()
    source = distill(demos)[0].replace('"Login"', '"Sign in"')  # the last step now misses
    _, rpa, _ = compile_function(source)
    result = run_function(make_env("synthetic/login-user"), rpa, 3, params={"banner": False},
                          agent=ReactAgent(react_backend))
    assert result["success"] and [s["agent"] for s in result["steps"]] == ["rpa", "rpa", "fallback"]
    assert result["tokens"]["calls"] == 1


def test_needs_llm_defers_one_step_and_counts_tokens(oracle_demos, react_backend):
    demos = copy.deepcopy(oracle_demos["click-button"])
    for traj in demos:
        traj["fields"] = {}
    source, _, _ = distill(demos)
    env = make_env("synthetic/click-button")
    rounds, runs, _ = verify(env, source, 10, agent=ReactAgent(react_backend), fallback=False)
    assert rounds[0]["success_rate"] == 1.0 and rounds[0]["needs_llm_steps"] == 10 and rounds[0]["fallbacks"] == 0
    assert rounds[0]["tokens"] > 0
    rounds, _, _ = verify(env, source, 5, agent=None, fallback=False)
    assert rounds[0]["success_rate"] == 0.0


class _SlowEnv:
    """Wraps an env; every step sleeps (a page that hangs)."""

    def __init__(self, inner, delay):
        self.inner, self.delay, self.name = inner, delay, inner.name

    def reset(self, seed, params=None):
        return self.inner.reset(seed, params)

    def observe(self):
        return self.inner.observe()

    def step(self, action):
        time.sleep(self.delay)
        return self.inner.step(action)

    def close(self):
        self.inner.close()


def test_per_step_timeout(oracle_demos):
    source, _, _ = distill(oracle_demos["enter-text"])
    _, rpa, _ = compile_function(source)
    env = _SlowEnv(make_env("synthetic/enter-text"), 0.05)
    result = run_function(env, rpa, 1, step_timeout=0.01)
    assert not result["success"] and "step timeout" in result["failure"] and len(result["steps"]) == 1


def test_element_wait_times_out_when_polling(oracle_demos):
    source = distill(oracle_demos["enter-text"])[0].replace('"Submit"', '"Never"')
    _, rpa, _ = compile_function(source)
    start = time.monotonic()
    result = run_function(make_env("synthetic/enter-text"), rpa, 1, step_timeout=0.2, poll=True)
    assert 0.2 <= time.monotonic() - start < 5 and "no element match" in result["failure"]


@pytest.mark.parametrize("family", ["login-user", "click-checkboxes", "click-tab"])
def test_token_reduction_vs_react_on_100_instances(family, react_backend):
    from mlx26.core.rpa_distill.pipeline import compare

    rows = {r["mode"]: r for r in compare(f"synthetic/{family}", react_backend, episodes=100)}
    assert rows["react"]["success_rate"] == 1.0 and rows["react"]["tokens_per_solved"] > 100
    assert rows["distilled+fallback"]["success_rate"] >= 0.95
    assert rows["distilled+fallback"]["token_reduction_vs_react"] >= 0.8
