"""Registry, hyperparameter overrides and env resolution (core level)."""

from __future__ import annotations

import pytest

pytest.importorskip("gymnasium")

from mlx26.core.rl import envs, registry, runner  # noqa: E402
from mlx26.core.rl.hparams import apply_overrides, parse_assignments  # noqa: E402


def test_registry_lists_the_four_algorithms_without_importing_them():
    assert {"dqn", "ppo", "fql", "dfql"} <= set(registry.names())
    assert all(":" in target for target in registry.ALGORITHMS.values())


def test_unknown_algorithm_suggests():
    with pytest.raises(ValueError, match="Did you mean 'dfql'"):
        registry.module("dfq")


def test_a_later_algorithm_plugs_in(tmp_path):
    registry.register("fake", "tests.rl.fake_algo:train")
    try:
        cfg = runner.build_config("fake", "CartPole-v1", {"p": "0.5"}, steps=3, out=str(tmp_path))
        records = list(runner.run(cfg))
        assert [r["step"] for r in records] == [1, 2, 3] and records[0]["p"] == 0.5
        assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 3
        with pytest.raises(ValueError, match=r"p must be in \(0, 1\]"):
            runner.build_config("fake", "CartPole-v1", {"p": "2"})
    finally:
        registry.ALGORITHMS.pop("fake")
    with pytest.raises(ValueError):
        registry.register("bad", "no-colon")


def test_overrides_convert_types_and_refuse_unknown_keys():
    from mlx26.core.rl.algos.dqn import Hyperparams

    hp = apply_overrides(Hyperparams(), parse_assignments(["lr=1e-3", "batch-size=32", "hidden=64,64", "tau=1"]))
    assert hp.lr == 1e-3 and hp.batch_size == 32 and hp.hidden == (64, 64) and isinstance(hp.tau, float)
    with pytest.raises(ValueError, match="Did you mean 'gamma'"):
        apply_overrides(Hyperparams(), {"gama": "0.9"})
    with pytest.raises(ValueError, match="must be int"):
        apply_overrides(Hyperparams(), {"batch_size": "3.5"})
    with pytest.raises(ValueError, match="key=value"):
        parse_assignments(["lr"])


def test_flow_presets_and_bool_parsing():
    from mlx26.core.rl.algos.fql import Hyperparams

    ref = apply_overrides(Hyperparams(), {})
    assert ref.actor_hidden == (512,) * 4 and ref.batch_size == 256 and ref.lr == 3e-4 and ref.flow_steps == 10
    assert ref.discount == 0.99 and ref.tau == 0.005
    small = apply_overrides(Hyperparams(), {"preset": "small", "normalize_q_loss": "yes"})
    assert small.value_hidden == (256, 256) and small.normalize_q_loss is True
    with pytest.raises(ValueError, match="preset"):
        apply_overrides(Hyperparams(), {"preset": "huge"})


@pytest.mark.parametrize(("old", "new"), [("Taxi-v3", "Taxi-v4"), ("CliffWalking-v0", "CliffWalking-v1")])
def test_toy_text_ids_map_to_current_versions_with_a_notice(old, new):
    resolved, notice = envs.resolve_env_id(old)
    assert resolved == new and old in notice and new in notice


def test_env_resolution():
    assert envs.resolve_env_id("toy-modes") == ("mlx26/toy-modes", None)
    assert envs.resolve_env_id("CartPole-v1") == ("CartPole-v1", None)
    with pytest.raises(ValueError, match="Did you mean 'CartPole-v1'"):
        envs.resolve_env_id("CartPol-v1")
    with pytest.raises(ValueError, match="Unknown env 'mlx26/nope'"):
        envs.resolve_env_id("mlx26/nope")


def test_discrete_observations_become_one_hot():
    env = envs.make_env("Taxi-v3")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (500,) and obs.sum() == 1


def test_ogbench_ids_resolve_dataset_names():
    pytest.importorskip("ogbench")
    assert envs.resolve_env_id("ogbench:cube-single-play-singletask-task2-v0")[0] == \
        "ogbench:cube-single-singletask-task2-v0"
    with pytest.raises(ValueError, match="Did you mean"):
        envs.resolve_env_id("ogbench:cube-singel-singletask-task2-v0")


def test_reference_fql_alpha_table_applies_per_env_and_yields_to_the_user(tmp_path):
    from mlx26.core.rl.algos import dfql, fql

    assert fql.env_defaults("ogbench:cube-single-singletask-task2-v0") == {"alpha": 300.0}
    assert fql.env_defaults("ogbench:puzzle-4x4-singletask-task1-v0") == {"alpha": 1000.0}
    assert fql.env_defaults("ogbench:visual-cube-double-singletask-task1-v0") == {"alpha": 100.0}
    assert fql.env_defaults("ogbench:antmaze-giant-singletask-v0") == {"alpha": 10.0, "q_agg": "min",
                                                                      "discount": 0.995}
    assert fql.env_defaults("mlx26/toy-modes") == {} and not hasattr(dfql, "env_defaults")
    pytest.importorskip("ogbench")
    from mlx26.core.rl import datagen, datasets

    train, val, meta = datagen.generate("ogbench:cube-single-singletask-task2-v0", "oracle", steps=40, seed=0,
                                         episode_length=20)
    path = tmp_path / "c.npz"
    datasets.save(path, train, meta)
    env = "ogbench:cube-single-singletask-task2-v0"
    cfg = runner.build_config("fql", env, {}, dataset=str(path))
    assert cfg.hp.alpha == 300.0 and cfg.to_dict()["env_defaults"] == {"alpha": 300.0} and cfg.eval_episodes == 50
    mine = runner.build_config("fql", env, {"alpha": "3"}, dataset=str(path))
    assert mine.hp.alpha == 3.0 and mine.env_defaults == {}
