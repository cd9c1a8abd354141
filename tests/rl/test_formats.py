"""Released dataset formats (OGBench, D4RL, Minari): the sources' own rules, conversion, equal training, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("torch")

from mlx26.core.rl import datagen, datasets, formats, runner  # noqa: E402

CAR = "MountainCarContinuous-v0"  # Box(2) observations, Box(1) actions in [-1, 1]: no extra needed
TINY = {"preset": "small", "actor_hidden": (16, 16), "value_hidden": (16, 16), "batch_size": 16,
        "log_every": 50}


def _episodes(steps=150, seed=0, length=30):
    train, val, _ = datagen.generate(CAR, "noisy", noise=0.5, steps=steps, seed=seed, episode_length=length)
    return train, val


def _d4rl_rows(rows):
    """Our rows as D4RL stores them: every episode cut by a time limit ends with a ``timeouts = 1`` row."""
    timeouts = ((rows["terminals"] == 1) & (rows["masks"] == 1)).astype(np.float32)
    return {"observations": rows["observations"], "actions": rows["actions"], "rewards": rows["rewards"],
            "terminals": (rows["masks"] == 0).astype(np.float32), "timeouts": timeouts}


def _qlearning_dataset_reference(d):
    """d4rl.qlearning_dataset(terminate_on_end=False), written out as its loop."""
    out = {k: [] for k in ("observations", "actions", "next_observations", "rewards", "terminals")}
    for i in range(len(d["rewards"]) - 1):
        if d["timeouts"][i]:
            continue
        out["observations"].append(d["observations"][i])
        out["next_observations"].append(d["observations"][i + 1])
        out["actions"].append(d["actions"][i])
        out["rewards"].append(d["rewards"][i])
        out["terminals"].append(bool(d["terminals"][i]))
    return {k: np.asarray(v) for k, v in out.items()}


def _write_hdf5(path, arrays):
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "w") as f:
        for k, v in arrays.items():
            f.create_dataset(k, data=v)
    return str(path)


def _train_losses(dataset, env=CAR, algo="fql", steps=100, seed=3):
    cfg = runner.build_config(algo, env, TINY, steps=steps, seed=seed, eval_episodes=1, dataset=str(dataset))
    losses = {}
    for r in runner.run(cfg):  # stop before the final evaluation: the losses are what is compared
        losses[r["step"]] = {k: v for k, v in r.items() if k.endswith("loss")}
        if r["step"] == steps:
            break
    return losses


def test_d4rl_rule_matches_the_qlearning_dataset_loop(tmp_path):
    train, _ = _episodes()
    raw = _d4rl_rows(train)
    assert raw["timeouts"].sum() >= 3
    got, _, fmt = formats.read(_write_hdf5(tmp_path / "car.hdf5", raw))
    ref = _qlearning_dataset_reference(raw)
    assert fmt == "d4rl" and len(got["actions"]) == len(ref["actions"]) == len(train["actions"]) - raw["timeouts"].sum()
    for k in ("observations", "actions", "next_observations", "rewards"):
        assert np.array_equal(got[k], ref[k].astype(np.float32)), k
    assert np.array_equal(got["masks"], 1.0 - ref["terminals"])  # masks from true terminations only
    # every kept transition is a real one: its next observation is the env's
    keep = raw["timeouts"][:-1] == 0
    assert np.allclose(got["next_observations"], train["next_observations"][:-1][keep])


def test_ogbench_official_layout_matches_ogbench_load_dataset(tmp_path):
    utils = pytest.importorskip("ogbench.utils")
    train, _ = _episodes()
    official = {k: train[k] for k in ("observations", "actions", "terminals")}
    official["qpos"] = np.arange(len(train["actions"]), dtype=np.float64)[:, None].repeat(3, 1)
    path = tmp_path / "car-play-v0.npz"
    np.savez(path, **official)
    ref = utils.load_dataset(str(path), add_info=True)
    got, _, fmt = formats.read(path)
    assert fmt == "ogbench" and "rewards" not in got
    for k in ("observations", "actions", "next_observations", "terminals", "qpos"):
        assert np.array_equal(got[k], ref[k]), k
    assert len(got["actions"]) == len(train["actions"]) - train["terminals"].sum()


def test_ogbench_file_without_rewards_needs_a_singletask_env(tmp_path):
    train, _ = _episodes(steps=60)
    path = tmp_path / "o.npz"
    np.savez(path, **{k: train[k] for k in ("observations", "actions", "terminals")})
    with pytest.raises(ValueError, match="OGBench file without rewards") as err:
        datasets.load(path)
    assert "singletask" in err.value.hint


def test_training_on_d4rl_equals_training_on_the_converted_file(tmp_path):
    train, val = _episodes()
    src = tmp_path / "car.hdf5"
    _write_hdf5(src, _d4rl_rows(train))
    _write_hdf5(tmp_path / "car-val.hdf5", _d4rl_rows(val))
    np.savez(tmp_path / "car-npz.npz", **_d4rl_rows(train))  # the same D4RL layout as .npz reads the same
    as_npz, _, fmt = formats.read(tmp_path / "car-npz.npz")
    assert fmt == "d4rl" and all(np.array_equal(v, formats.read(src)[0][k]) for k, v in as_npz.items())
    out = tmp_path / "converted.npz"
    written = datasets.convert(src, out)["written"]
    assert [w["source_format"] for w in written] == ["d4rl", "d4rl"] and datasets.val_path(out).is_file()
    direct, converted = _train_losses(src), _train_losses(out)
    assert direct[100] == converted[100] and "val_critic_loss" in direct[100]
    assert set(direct) == {50, 100} and direct[100]["critic_loss"] > 0


def test_validation_split_gives_validation_losses_and_leaves_training_unchanged(tmp_path):
    train, val = _episodes()
    path = tmp_path / "car.npz"
    datasets.save(path, train, {})
    alone = _train_losses(path, steps=50)
    datasets.save(datasets.val_path(path), val, {})
    cfg = runner.build_config("fql", CAR, TINY, steps=50, seed=3, eval_episodes=1, dataset=str(path))
    rec = next(iter(runner.run(cfg)))
    assert {"val_critic_loss", "val_actor_loss", "val_bc_flow_loss"} <= set(rec)
    assert {k: v for k, v in rec.items() if k.endswith("loss") and not k.startswith("val_")} == alone[50]


@pytest.mark.slow
def test_training_on_official_ogbench_equals_training_on_converted(tmp_path):
    pytest.importorskip("ogbench")
    env_id = "ogbench:cube-single-singletask-task2-v0"
    train, val, meta = datagen.generate(env_id, "oracle", steps=300, seed=0, episode_length=100)
    official = tmp_path / "cube-single-play-v0.npz"
    keys = ("observations", "actions", "terminals", "qpos", "qvel")
    np.savez(official, **{k: train[k] for k in keys})
    np.savez(tmp_path / "cube-single-play-v0-val.npz", **{k: val[k] for k in keys})
    from mlx26.core.rl.envs import make_env

    out = tmp_path / "cube.npz"
    datasets.convert(official, out, env=make_env(env_id))
    info = datasets.info(out)
    assert info["format"] == "mlx26" and info["rows"] == 300 - 3 and info["val_file"]
    direct, converted = _train_losses(official, env=env_id), _train_losses(out, env=env_id)
    assert direct[100] == converted[100]


def test_d4rl_missing_key_is_named_and_mismatched_lengths_refused(tmp_path):
    train, _ = _episodes(steps=60)
    raw = _d4rl_rows(train)
    no_timeouts = {k: v for k, v in raw.items() if k != "timeouts"}
    with pytest.raises(ValueError, match="missing required key\\(s\\): timeouts"):
        datasets.load(_write_hdf5(tmp_path / "a.hdf5", no_timeouts))
    short = {**raw, "rewards": raw["rewards"][:-5]}
    with pytest.raises(ValueError, match="'rewards' has 55 rows but 'observations' has 60"):
        datasets.load(_write_hdf5(tmp_path / "b.hdf5", short))
    (tmp_path / "c.hdf5").write_bytes(b"\x89HDF\r\n\x1a\nnot really")
    with pytest.raises(ValueError, match="cannot read .* as HDF5"):
        datasets.load(tmp_path / "c.hdf5")


def _minari_folder(tmp_path, monkeypatch, episodes=4):
    """A local Minari dataset written with minari's own create_dataset_from_buffers (no download)."""
    minari = pytest.importorskip("minari")
    import gymnasium as gym
    from minari.data_collector import EpisodeBuffer

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    env = gym.make(CAR, max_episode_steps=25)
    env.action_space.seed(0)
    buffers = []
    for i in range(episodes):
        obs, _ = env.reset(seed=i)
        o, a, r, te, tr = [obs], [], [], [], []
        while True:
            action = env.action_space.sample()
            obs, reward, term, trunc, _ = env.step(action)
            o.append(obs), a.append(action), r.append(reward), te.append(term), tr.append(trunc)
            if term or trunc:
                break
        buffers.append(EpisodeBuffer(id=i, seed=i, observations=np.asarray(o), actions=np.asarray(a),
                                     rewards=r, terminations=te, truncations=tr, infos={}))
    minari.create_dataset_from_buffers("car/noisy-v0", buffers, env=env, algorithm_name="random")
    return tmp_path / "minari" / "car" / "noisy-v0", minari


def test_minari_folder_reads_as_transitions_and_converts(tmp_path, monkeypatch):
    folder, minari = _minari_folder(tmp_path, monkeypatch)
    got, meta, fmt = formats.read(folder)
    ref = minari.load_dataset("car/noisy-v0")
    eps = list(ref.iterate_episodes())
    assert fmt == "minari" and meta["env"] == CAR and len(got["actions"]) == sum(len(e.actions) for e in eps) == 100
    first = eps[0]
    assert np.array_equal(got["next_observations"][:25], first.observations[1:].astype(np.float32))
    assert np.array_equal(got["masks"][:25], 1.0 - first.terminations.astype(np.float32))
    assert got["terminals"].sum() == 4
    out = tmp_path / "m.npz"
    datasets.convert(folder, out)
    assert _train_losses(folder, steps=50)[50] == _train_losses(out, steps=50)[50]


def test_minari_folder_of_another_version_is_refused(tmp_path, monkeypatch):
    folder, _ = _minari_folder(tmp_path, monkeypatch, episodes=1)
    meta_file = folder / "data" / "metadata.json"
    metadata = json.loads(meta_file.read_text())
    metadata["minari_version"] = "0.1.0"
    meta_file.write_text(json.dumps(metadata))
    with pytest.raises(ValueError, match="written by minari 0.1.0"):
        formats.read(folder)
    with pytest.raises(ValueError, match="not a Minari dataset folder"):
        formats.read(tmp_path)


def test_cli_convert_info_and_direct_dataset(run_cli, tmp_path):
    train, val = _episodes()
    src = _write_hdf5(tmp_path / "car.hdf5", _d4rl_rows(train))
    info = json.loads(run_cli("rl", "data", "info", src, "--format", "json").stdout)
    assert info["format"] == "d4rl" and info["rows"] == len(train["actions"]) - _d4rl_rows(train)["timeouts"].sum()
    out = str(tmp_path / "c.npz")
    done = run_cli("rl", "data", "convert", src, "--to", "mlx26", "--out", out, "--format", "json")
    assert done.code == 0, done.stderr
    again = run_cli("rl", "data", "convert", src, "--out", out)
    assert again.code == 2 and "--force" in again.stderr
    bad = run_cli("rl", "data", "convert", src, "--to", "d4rl", "--out", str(tmp_path / "x.npz"))
    assert bad.code == 2 and "only mlx26" in bad.stderr
    pend, _, _ = datagen.generate("Pendulum-v1", "random", steps=60, seed=0, episode_length=20)
    src = _write_hdf5(tmp_path / "pend.hdf5", _d4rl_rows(pend))  # actions in [-2, 2]: --rescale
    run = run_cli("train", "rl", "--algo", "fql", "--env", "Pendulum-v1", "--dataset", src, "--rescale",
                  "--steps", "5", "--set", "preset=small", "--set", "log_every=5", "--eval-episodes", "1",
                  "--out", str(tmp_path / "r"), "--quiet")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout.splitlines()[-1])["phase"] == "eval"


def test_reward_warning_counts_successes(run_cli, tmp_path):
    train, _ = _episodes(steps=60)
    flat = {**train, "rewards": np.full_like(train["rewards"], -1.0)}
    path = tmp_path / "flat.npz"
    datasets.save(path, flat, {})
    result = run_cli("rl", "data", "info", str(path), "--format", "json")
    assert "all 60 rewards equal -1" in result.stderr
    assert json.loads(result.stdout)["warning"].startswith(str(path))
    t = datasets.load(path)
    t.masks[:] = 1.0
    assert "leaves 0 successes in 60 rows" in datasets.reward_warning(t, path, relabelled=True)


def test_not_a_dataset_file_is_named_as_such(run_cli, tmp_path):
    bad = tmp_path / "notes.npz"
    bad.write_text("just some text\n")
    result = run_cli("rl", "data", "info", str(bad))
    assert result.code == 2 and "not an HDF5 or .npz dataset" in result.stderr and "pickled" not in result.stderr
    pickled = tmp_path / "obj.npz"
    np.savez(pickled, observations=np.array([{"a": 1}], dtype=object))
    result = run_cli("rl", "data", "info", str(pickled))
    assert result.code == 2 and "pickled" in result.stderr


def test_info_names_missing_keys_and_checks_the_val_shapes(run_cli, tmp_path):
    odd = tmp_path / "odd.npz"
    np.savez(odd, foo=np.zeros(3))
    result = run_cli("rl", "data", "info", str(odd))
    assert result.code == 2 and "missing required key(s)" in result.stderr and "observations" in result.stderr
    train, val, meta = datagen.generate("mlx26/toy-modes", "oracle", steps=40, seed=0)
    datasets.save(tmp_path / "d.npz", train, meta)
    val = {**val, "observations": np.zeros((len(val["actions"]), 5), np.float32)}
    datasets.save(tmp_path / "d-val.npz", val, meta)
    result = run_cli("rl", "data", "info", str(tmp_path / "d.npz"))
    assert result.code == 2 and "d-val.npz" in result.stderr and "observations" in result.stderr


def test_corrupt_minari_folder_names_the_bad_file(run_cli, tmp_path, monkeypatch):
    folder, _ = _minari_folder(tmp_path, monkeypatch, episodes=1)
    (folder / "data" / "main_data.hdf5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"garbage" * 20)
    result = run_cli("rl", "data", "info", str(folder))
    assert result.code == 2 and "main_data.hdf5" in result.stderr


def test_minari_env_default_comes_from_metadata(tmp_path, monkeypatch):
    folder, _ = _minari_folder(tmp_path, monkeypatch, episodes=1)
    assert formats.minari_env_id(folder) == CAR
    assert formats.minari_env_id(tmp_path / "nowhere") is None


def test_train_rl_takes_the_env_from_a_minari_dataset(run_cli, tmp_path, monkeypatch):
    folder, _ = _minari_folder(tmp_path, monkeypatch, episodes=2)
    result = run_cli("train", "rl", "--algo", "fql", "--dataset", str(folder), "--steps", "3", "--set", "preset=small",
                     "--set", "batch_size=8", "--eval-episodes", "1", "--out", str(tmp_path / "r"))
    assert result.code == 0, result.stderr
    assert f"--env {CAR}" in result.stderr
    assert json.loads((tmp_path / "r" / "config.json").read_text())["env"] == CAR
