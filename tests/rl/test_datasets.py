"""OGBench-schema dataset generation, OGBench's own loader on our files, and validation errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from mlx26.core.rl import datagen, datasets, toy_modes  # noqa: E402


@pytest.fixture(scope="module")
def toy_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("toy") / "toy.npz"
    train, val, meta = datagen.generate("mlx26/toy-modes", "oracle", steps=400, seed=3)
    datasets.save(path, train, meta)
    datasets.save(datasets.val_path(path), val, meta)
    return path


def _write(path, **arrays):
    np.savez(path, **arrays)
    return str(path)


def test_toy_dataset_schema_and_label(toy_file):
    with np.load(toy_file) as f:
        assert set(datasets.REQUIRED_KEYS) <= set(f.files)
        meta = json.loads(str(f["meta"]))
        r, a = f["rewards"], f["actions"]
        assert np.allclose(r, toy_modes.reward(a), atol=1e-6)  # the env's own reward, recomputed
        assert f["terminals"].all() and not f["masks"].any()  # one-step episodes end by termination
    assert meta["label"] == "local-oracle-v0" and meta["policy"] == "oracle" and meta["seed"] == 3
    assert datasets.val_path(toy_file).is_file()
    shares = toy_modes.mode_shares(a)
    assert all(abs(s - 0.25) < 0.07 for s in shares)


def test_generation_is_deterministic_per_seed():
    a, _, _ = datagen.generate("Pendulum-v1", "random", steps=60, seed=1, episode_length=20)
    b, _, _ = datagen.generate("Pendulum-v1", "random", steps=60, seed=1, episode_length=20)
    c, _, _ = datagen.generate("Pendulum-v1", "random", steps=60, seed=2, episode_length=20)
    assert all(np.array_equal(a[k], b[k]) for k in a) and not np.array_equal(a["actions"], c["actions"])
    assert a["terminals"].sum() == 3 and len(a["actions"]) == 60


def test_ogbench_loader_reads_our_layout(tmp_path):
    utils = pytest.importorskip("ogbench.utils")
    train, val, meta = datagen.generate("Pendulum-v1", "noisy", noise=0.3, steps=100, seed=0, episode_length=25)
    path = tmp_path / "p.npz"
    datasets.save(path, train, meta)
    loaded = utils.load_dataset(str(path))
    keep = train["terminals"] == 0  # OGBench drops each episode's last row and shifts observations
    assert np.allclose(loaded["observations"], train["observations"][keep])
    assert np.allclose(loaded["next_observations"], train["next_observations"][keep])


def test_cube_single_oracle_data_loads_through_ogbench(tmp_path):
    ogbench = pytest.importorskip("ogbench")
    train, val, meta = datagen.generate("ogbench:cube-single-singletask-task2-v0", "oracle", steps=200,
                                         seed=0, episode_length=100)
    assert {"qpos", "qvel"} <= set(train) and meta["data_env"] == "cube-single-v0" and meta["oracle"] == "plan"
    assert np.abs(train["actions"]).max() <= 1 and train["terminals"].sum() == 2
    path = tmp_path / "cube-single-play-v0.npz"
    datasets.save(path, train, meta)
    datasets.save(datasets.val_path(path), val, meta)
    env, tr, va = ogbench.make_env_and_datasets("cube-single-play-singletask-task2-v0", dataset_path=str(path))
    assert {"rewards", "masks"} <= set(tr) and len(tr["observations"]) == 198
    ours = datasets.load(path, obs_dim=28, env=env)
    keep = train["terminals"] == 0
    assert np.array_equal(ours.rewards[keep], tr["rewards"]) and np.array_equal(ours.masks[keep], tr["masks"])


def test_singletask_relabel_refuses_data_without_qpos(tmp_path):
    ogbench = pytest.importorskip("ogbench")
    train, val, meta = datagen.generate("ogbench:cube-single-singletask-task2-v0", "oracle", steps=60,
                                         seed=0, episode_length=30)
    stripped = {k: v for k, v in train.items() if k not in ("qpos", "qvel")}
    path = tmp_path / "noqpos.npz"
    datasets.save(path, stripped, meta)
    env = ogbench.make_env_and_datasets("cube-single-play-singletask-task2-v0", env_only=True)
    with pytest.raises(ValueError, match="no qpos/qvel"):
        datasets.load(path, obs_dim=28, env=env)


def test_missing_keys_are_listed(tmp_path):
    path = _write(tmp_path / "m.npz", observations=np.zeros((3, 2)), actions=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="missing required key.*terminals, next_observations, rewards, masks"):
        datasets.load(path)


def _good(n=6, d=2):
    return {"observations": np.zeros((n, d)), "actions": np.zeros((n, 2)), "terminals": np.ones(n),
            "next_observations": np.zeros((n, d)), "rewards": np.zeros(n), "masks": np.zeros(n)}


def test_observation_dimension_must_match(tmp_path):
    path = _write(tmp_path / "d.npz", **_good(d=3))
    with pytest.raises(ValueError, match="dimension 3 but the env's is 2"):
        datasets.load(path, obs_dim=2)


def test_nan_rows_are_reported_by_index(tmp_path):
    arrays = _good()
    arrays["rewards"][4] = np.nan
    arrays["observations"][1, 0] = np.inf
    with pytest.raises(ValueError, match=r"2 row\(s\) contain NaN or inf: rows 1, 4"):
        datasets.load(_write(tmp_path / "n.npz", **arrays))


def test_actions_outside_the_box_need_rescale(tmp_path):
    arrays = _good()
    arrays["actions"][:, 0] = np.linspace(-2, 2, 6)
    path = _write(tmp_path / "a.npz", **arrays)
    with pytest.raises(ValueError, match=r"outside \[-1, 1\]") as err:
        datasets.load(path)
    assert "--rescale" in err.value.hint
    data = datasets.load(path, rescale=True, action_low=[-2, -2], action_high=[2, 2])
    assert data.actions[:, 0].min() == -1 and data.actions[:, 0].max() == 1
    assert np.allclose(data.actions * data.action_scale + data.action_offset, arrays["actions"])


def test_cli_make_info_and_errors(run_cli, tmp_path):
    out = str(tmp_path / "t.npz")
    made = run_cli("rl", "data", "make", "--env", "mlx26/toy-modes", "--steps", "50", "--out", out,
                   "--format", "json", "--quiet")
    assert made.code == 0, made.stderr
    assert json.loads(made.stdout)["rows"] == 50
    again = run_cli("rl", "data", "make", "--env", "mlx26/toy-modes", "--steps", "50", "--out", out)
    assert again.code == 2 and "--force" in again.stderr
    info = json.loads(run_cli("rl", "data", "info", out, "--format", "json").stdout)
    assert info["label"] == "local-oracle-v0" and info["missing_keys"] == [] and info["val_file"]
    oracle = run_cli("rl", "data", "make", "--env", "Pendulum-v1", "--policy", "oracle", "--steps", "5",
                     "--out", str(tmp_path / "p.npz"))
    assert oracle.code == 2 and "--policy random" in oracle.stderr
    bad = run_cli("rl", "data", "make", "--env", "mlx26/toy-modes", "--policy", "orcale", "--steps", "5",
                  "--out", str(tmp_path / "q.npz"))
    assert bad.code == 2 and "Did you mean 'oracle'" in bad.stderr


def test_training_refuses_bad_datasets_through_the_cli(run_cli, tmp_path):
    arrays = _good(d=3)
    path = _write(tmp_path / "bad.npz", **arrays)
    result = run_cli("train", "rl", "--algo", "dfql", "--env", "mlx26/toy-modes", "--dataset", path,
                     "--out", str(tmp_path / "r"))
    assert result.code == 2 and "dimension 3" in result.stderr and "Traceback" not in result.stderr
    missing = _write(tmp_path / "m.npz", observations=np.zeros((3, 2)))
    result = run_cli("train", "rl", "--algo", "fql", "--env", "mlx26/toy-modes", "--dataset", missing,
                     "--out", str(tmp_path / "r"))
    assert result.code == 2 and "actions, terminals" in result.stderr


def test_evaluation_of_an_env_without_time_limit_is_capped_not_endless():
    import gymnasium as gym
    from mlx26.core.rl.evaluation import UNLIMITED_EPISODE_CAP, evaluate

    class Up:  # CliffWalking's "up" from the start never reaches the goal
        def reset(self, seed):
            pass

        def __call__(self, obs):
            return 0

    env = gym.make("CliffWalking-v1")
    assert env.spec.max_episode_steps is None
    result = evaluate(env, Up(), episodes=2, seed=0)
    assert result["eval_capped"] == 2 and result["eval_length"] == UNLIMITED_EPISODE_CAP
    assert result["eval_return"] == -UNLIMITED_EPISODE_CAP  # −1 a step, no cliff
    limited = evaluate(gym.make("CartPole-v1"), Up(), episodes=1, seed=0)
    assert limited["eval_capped"] == 0
