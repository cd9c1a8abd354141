"""The synthetic simulator, the action syntax, the oracle and the scripted ReAct agent."""

from __future__ import annotations

import math

import pytest
from mlx26.core.rpa_distill import make_env, record_episode
from mlx26.core.rpa_distill.actions import format_action, make, parse_action
from mlx26.core.rpa_distill.env import InvalidAction
from mlx26.core.rpa_distill.oracle import OracleAgent
from mlx26.core.rpa_distill.react import ReactAgent, build_prompt
from mlx26.core.rpa_distill.synthetic import FAMILIES


@pytest.mark.parametrize("action", [make("click", "e1"), make("type", "e7", 'say "hi"\\'), make("select", "3", "Red")])
def test_action_text_round_trip(action):
    assert parse_action(f"Thought: x\nAction: {format_action(action)}") == action


@pytest.mark.parametrize("reply", ["no action here", "Action: hover(e1)", "Action: type(e1)"])
def test_unparsable_replies(reply):
    with pytest.raises(ValueError):
        parse_action(reply)


def test_unknown_env_suggests():
    with pytest.raises(ValueError, match="Did you mean 'synthetic/login-user'"):
        make_env("synthetic/login-usr")


def test_reset_is_deterministic_and_layouts_shuffle():
    env = make_env("synthetic/login-user")
    a, b = env.reset(3), env.reset(3)
    assert a == b
    c = env.reset(4)
    refs = lambda o: [e["ref"] for e in o["elements"]]  # noqa: E731
    ids = lambda o: {e["attrs"].get("id") for e in o["elements"]}  # noqa: E731
    assert refs(a) != refs(c) and not ids(a) & ids(c)
    assert all(len(e["bbox"]) == 4 for e in a["elements"])


def test_params_override_and_invalid_action():
    env = make_env("synthetic/click-button")
    obs = env.reset(0, {"target": "Share"})
    assert obs["fields"] == {"target": "Share"} and 'Click on the "Share" button.' == obs["instruction"]
    with pytest.raises(InvalidAction, match="no visible element e0"):
        env.step(make("click", "e0"))


def test_modal_hides_the_form():
    env = make_env("synthetic/login-user")
    obs = env.reset(0, {"banner": True})
    assert [e["text"] for e in obs["elements"] if e["tag"] == "button"] == ["Accept cookies"]
    accept = next(e for e in obs["elements"] if e["text"] == "Accept cookies")
    obs, reward, done = env.step(make("click", accept["ref"]))
    assert (reward, done) == (0.0, False) and any(e["text"] == "Login" for e in obs["elements"])


@pytest.mark.parametrize("family", FAMILIES)
def test_oracle_and_scripted_react_solve_every_family(family, react_backend):
    env = make_env(f"synthetic/{family}")
    oracle = [record_episode(env, OracleAgent(family), s) for s in range(20)]
    react = [record_episode(env, ReactAgent(react_backend), s) for s in range(20)]
    assert all(t["success"] for t in oracle) and all(t["success"] for t in react)
    assert all(t["tokens"]["calls"] == 0 for t in oracle)
    assert all(t["tokens"]["calls"] == len(t["steps"]) for t in react)


def test_wrong_action_fails_the_episode():
    env = make_env("synthetic/click-button")
    obs = env.reset(1)
    wrong = next(e for e in obs["elements"] if e["tag"] == "button" and e["text"] != obs["fields"]["target"])
    _, reward, done = env.step(make("click", wrong["ref"]))
    assert done and reward == -1.0


def test_react_tokens_are_the_estimate_of_the_real_prompt(react_backend):
    # Independent recomputation of the scripted backend's documented estimate: ceil(bytes / 4) + 4 per message.
    env = make_env("synthetic/enter-text")
    traj = record_episode(env, ReactAgent(react_backend), 5)
    first = traj["steps"][0]
    obs = {"instruction": traj["instruction"], "elements": first["elements"]}
    messages = build_prompt(obs, [])
    expected = sum(math.ceil(len(m["content"].encode()) / 4) + 4 for m in messages)
    assert first["usage"]["prompt_tokens"] == expected
    assert first["usage"]["completion_tokens"] > 0


def test_shipped_rules_file_is_current():
    import json

    from mlx26.core.rpa_distill.rules import RULES_FILE, rules

    assert json.loads(RULES_FILE.read_text())["rules"] == rules(), "regenerate: python -m mlx26.core.rpa_distill.rules"
