"""RAPC on a user's gymnasium env: --goal/--unsafe/--cost as box constraints or module:function entry points."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("torch")

from mlx26.core.rl.reach_avoid import user_sets  # noqa: E402

TINY = ["--set", "num_envs=2", "--set", "num_steps=16", "--set", "num_minibatches=2", "--set", "update_epochs=1",
        "--set", "hidden=16"]


def test_box_sets_are_unions_of_intervals():
    import gymnasium as gym

    env = user_sets.wrap(gym.make("CartPole-v1"), {"goal": "box:0=2.0..inf", "unsafe":
                                                   "box:2=0.15..inf;box:2=-inf..-0.15", "cost": "0.5"})
    goal, unsafe = env._goal, env._unsafe
    assert goal([2.1, 0, 0, 0]) and not goal([1.9, 0, 0, 0])
    assert unsafe([0, 0, 0.2, 0]) and unsafe([0, 0, -0.2, 0]) and not unsafe([0, 0, 0.1, 0])
    env.reset(seed=0)
    _, _, _, _, info = env.step(0)
    assert info["cost"] == 0.5 and {"reached", "unsafe", "success"} <= set(info)


@pytest.mark.parametrize(("spec", "match"), [
    ({"goal": "box:0=1..0", "unsafe": "box:1=0..1"}, "empty interval"),
    ({"goal": "box:9=0..1", "unsafe": "box:1=0..1"}, "index 9 ≥ the env's dimension 4"),
    ({"goal": "box:0=a..1", "unsafe": "box:1=0..1"}, "'a' is not a number"),
    ({"goal": "near the cart", "unsafe": "box:1=0..1"}, "neither module:function nor box"),
    ({"goal": "no_such_module_xyz:f", "unsafe": "box:1=0..1"}, "cannot import module 'no_such_module_xyz'"),
    ({"goal": "box:0=0..1", "unsafe": "box:1=0..1", "cost": "-1"}, "--cost must be a finite number ≥ 0"),
])
def test_bad_specs_are_named(spec, match):
    import gymnasium as gym

    with pytest.raises(ValueError, match=match):
        user_sets.wrap(gym.make("CartPole-v1"), user_sets.normalize(spec))


def test_goal_without_unsafe_is_refused():
    with pytest.raises(ValueError, match="give both"):
        user_sets.normalize({"goal": "box:0=0..1", "unsafe": None, "cost": None})


def test_rapc_trains_and_evaluates_on_a_user_env_with_entry_points(run_cli, tmp_path, monkeypatch):
    (tmp_path / "my_sets.py").write_text(
        "def goal(obs):\n    return abs(obs[0]) >= 0.05\n\n"
        "def unsafe(obs):\n    return abs(obs[2]) > 0.1\n\n"
        "def cost(obs, action):\n    return 0.1 + float(action)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = str(tmp_path / "run")
    run = run_cli("train", "rl", "--algo", "rapc", "--env", "CartPole-v1", "--goal", "my_sets:goal",
                  "--unsafe", "my_sets:unsafe", "--cost", "my_sets:cost", "--steps", "64", *TINY,
                  "--eval-episodes", "2", "--out", out, "--quiet")
    assert run.code == 0, run.stderr
    stored = json.loads((tmp_path / "run" / "config.json").read_text())["reach_avoid"]
    assert stored == {"goal": "my_sets:goal", "unsafe": "my_sets:unsafe", "cost": "my_sets:cost"}
    ev = run_cli("rl", "eval", "--checkpoint", out, "--format", "json", "--quiet")
    assert ev.code == 0, ev.stderr
    report = json.loads(ev.stdout)
    assert report["matches_training_eval"] is True and 0 <= report["ra_unsafe"] <= 1 and report["ra_cost"] > 0


def test_rapc_on_a_plain_env_without_sets_names_the_options(run_cli, tmp_path):
    run = run_cli("train", "rl", "--algo", "rapc", "--env", "CartPole-v1", "--steps", "32", *TINY,
                  "--out", str(tmp_path / "r"))
    assert run.code == 2 and "does not report info" in run.stderr
    box = run_cli("train", "rl", "--algo", "rapc", "--env", "CartPole-v1", "--unsafe", "box:2=0.15..inf",
                  "--steps", "32", *TINY, "--out", str(tmp_path / "r"))
    assert box.code == 2 and "give both" in box.stderr
