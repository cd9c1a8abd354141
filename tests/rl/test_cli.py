"""`mlx26 train rl` / `mlx26 rl eval` through the CLI: run folder, resume, config, errors."""

from __future__ import annotations

import json
import subprocess

import pytest

pytest.importorskip("gymnasium")

TINY_DQN = ["train", "rl", "--algo", "dqn", "--env", "CartPole-v1", "--set", "learning_starts=100",
            "--set", "train_freq=50", "--set", "gradient_steps=8", "--set", "log_every=100",
            "--eval-episodes", "3", "--quiet"]


def _records(result):
    assert result.code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("path", [["train", "rl"], ["rl", "data", "make"], ["rl", "data", "info"], ["rl", "eval"]])
def test_help(run_cli, path):
    result = run_cli(*path, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


def test_show_hparams_lists_documented_fields(run_cli):
    rows = _records(run_cli("train", "rl", "--algo", "dfql", "--show-hparams"))
    by_name = {r["name"]: r for r in rows}
    assert by_name["flow_steps"]["default"] == 10 and by_name["alpha"]["doc"]


def test_run_folder_resume_and_eval_reproduce(run_cli, tmp_path):
    out = str(tmp_path / "run")
    first = _records(run_cli(*TINY_DQN, "--steps", "200", "--eval-every", "100", "--out", out))
    assert [r["step"] for r in first if r["phase"] == "eval"] == [100, 200]
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    assert cfg["algo"] == "dqn" and cfg["hp"]["gradient_steps"] == 8 and cfg["mlx26_version"]
    assert (tmp_path / "run" / "checkpoint.pt").is_file()

    refused = run_cli(*TINY_DQN, "--steps", "200", "--out", out)
    assert refused.code == 2 and "--force" in refused.stderr and refused.stdout == ""

    resumed = _records(run_cli("train", "rl", "--steps", "300", "--out", out, "--resume", "--quiet"))
    assert resumed[0]["step"] > 200 and resumed[-1] == {**resumed[-1], "step": 300, "phase": "eval"}
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == len(first) + len(resumed)

    ev = json.loads(run_cli("rl", "eval", "--checkpoint", out, "--format", "json", "--quiet").stdout)
    assert ev["step"] == 300 and ev["eval_returns"] == resumed[-1]["eval_returns"]
    assert ev["matches_training_eval"] is True
    other = json.loads(run_cli("rl", "eval", "--checkpoint", out, "--episodes", "2", "--seed", "7",
                               "--format", "json").stdout)
    assert other["eval_episodes"] == 2 and "matches_training_eval" not in other

    forced = _records(run_cli(*TINY_DQN, "--steps", "100", "--out", out, "--force"))
    assert forced[-1]["step"] == 100
    assert len((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()) == len(forced)


def test_config_file_and_print_config(run_cli, tmp_path):
    conf = tmp_path / "c.json"
    conf.write_text(json.dumps({"algo": "dqn", "steps": 120, "set": ["learning_starts=100", "train_freq=20",
                                                                     "gradient_steps=2"], "eval-episodes": 1}))
    printed = run_cli("train", "rl", "--config", str(conf), "--print-config")
    assert printed.code == 0 and "steps: 120" in printed.stdout and "learning_starts=100" in printed.stdout
    recs = _records(run_cli("train", "rl", "--config", str(conf), "--out", str(tmp_path / "r"), "--quiet"))
    assert recs[-1]["step"] == 120 and recs[-1]["eval_episodes"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"stepz": 3}))
    result = run_cli("train", "rl", "--config", str(bad))
    assert result.code == 2 and "Did you mean 'steps'" in result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--algo", "dqm"], "Did you mean 'dqn'"),
        (["--env", "CartPol-v1"], "Did you mean 'CartPole-v1'"),
        (["--set", "lrr=1"], "Did you mean 'lr'"),
        (["--set", "lr=fast"], "must be float"),
        (["--set", "lr"], "key=value"),
        (["--env", "Pendulum-v1"], "discrete action space"),
        (["--algo", "fql", "--env", "mlx26/toy-modes"], "--dataset"),
        (["--algo", "dfql", "--env", "Pendulum-v1", "--dataset", "x.npz"], "not found"),
        (["--algo", "dfql", "--env", "CartPole-v1", "--dataset", "x.npz"], "continuous (Box) action space"),
        (["--steps", "0"], "--steps"),
        (["--device", "tpu"], "Unknown device"),
        (["--alpha", "3"], "Unknown hyperparameter 'alpha' for dqn"),
    ],
)
def test_bad_input_exits_2(run_cli, tmp_path, args, needle):
    result = run_cli("train", "rl", *args, "--out", str(tmp_path / "r"))
    assert result.code == 2, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_cuda_absent_exits_3(run_cli, tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    result = run_cli("train", "rl", "--device", "cuda", "--out", str(tmp_path / "r"))
    assert result.code == 3 and "Hint:" in result.stderr


def test_divergence_stops_cleanly_keeping_the_last_good_checkpoint(run_cli, tmp_path):
    import torch

    out = tmp_path / "div"
    result = run_cli(*TINY_DQN, "--steps", "400", "--eval-every", "100", "--set", "lr=1e12", "--out", str(out))
    assert result.code == 1, result.stderr
    assert "diverged" in result.stderr and "step 100" in result.stderr and "Traceback" not in result.stderr
    state = torch.load(out / "checkpoint.pt", weights_only=False)
    assert state["step"] == 100
    assert all(torch.isfinite(t).all() for t in state["models"]["q"].values())


def test_eval_errors(run_cli, tmp_path):
    result = run_cli("rl", "eval", "--checkpoint", str(tmp_path))
    assert result.code == 2 and "no checkpoint" in result.stderr


class _RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):  # what a malicious checkpoint does on unpickling
        return (open, (str(self.marker), "w"))


def test_checkpoint_loading_never_runs_code(run_cli, tmp_path):
    import torch

    folder = tmp_path / "evil"
    folder.mkdir()
    marker = tmp_path / "ran"
    torch.save({"algo": "ppo", "models": {}, "payload": _RunsCode(marker)}, folder / "checkpoint.pt")
    result = run_cli("rl", "eval", "--checkpoint", folder)
    assert result.code == 2 and "holds Python objects, which are never loaded" in result.stderr
    assert not marker.exists() and "weights_only" not in result.stderr


def test_subprocess_entry_point_streams_jsonl(mlx26_exe, subprocess_env, tmp_path):
    proc = subprocess.run([mlx26_exe, *TINY_DQN, "--steps", "100", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1])["phase"] == "eval"


def test_data_info_flags_length_mismatch_and_refuses_non_npz(run_cli, tmp_path):
    import numpy as np

    np.savez(tmp_path / "mis.npz", observations=np.zeros((12, 3)), actions=np.zeros((3, 1)),
             next_observations=np.zeros((12, 3)), rewards=np.zeros(12), masks=np.ones(12), terminals=np.zeros(12))
    info = json.loads(run_cli("rl", "data", "info", tmp_path / "mis.npz", "--format", "json").stdout)
    assert info["rows"] == 3 and "observations" in info["length_mismatch"]
    (tmp_path / "junk.npz").write_bytes(bytes(range(256)) * 8)
    result = run_cli("rl", "data", "info", tmp_path / "junk.npz")
    assert result.code == 2 and "allow_pickle" not in result.stderr
