import json

import pytest

pytest.importorskip("gymnasium")


def test_help(run_cli):
    r = run_cli("rationality", "--help")
    assert r.code == 0 and "risk" in r.stdout and "sweep" in r.stdout


def test_mdp_defaults_and_values(run_cli):
    r = run_cli("rationality", "mdp", "--eps", "0.1", "--format", "json")
    assert r.code == 0
    assert json.loads(r.stdout)["v_star_start"] == pytest.approx(-20.708, abs=5e-4)
    r = run_cli("rationality", "mdp", "--states", "--format", "json")
    assert len(json.loads(r.stdout)["states"]) == 48


def test_risk_default_and_json_policy(run_cli, tmp_path):
    r = run_cli("rationality", "risk", "--format", "json")
    out = json.loads(r.stdout)
    assert r.code == 0 and out["expected_risk"] > 0 and out["extrinsic_bound_holds"]
    policy = tmp_path / "p.json"
    policy.write_text(json.dumps({str(s): 0 for s in range(48)}))
    r = run_cli("rationality", "risk", "--policy", str(policy), "--format", "json")
    assert r.code == 0 and json.loads(r.stdout)["expected_risk"] > 0


def test_bound_default(run_cli):
    r = run_cli("rationality", "bound", "--format", "json")
    assert r.code == 0 and json.loads(r.stdout)["w1_kernel_per_delta_eps"] > 0


def test_callable_policy(run_cli, tmp_path):
    f = tmp_path / "pol.py"
    f.write_text("def act(s):\n    return 1\n")
    r = run_cli("rationality", "risk", "--policy", f"{f}:act", "--format", "json")
    assert r.code == 0, r.stderr


@pytest.mark.parametrize("args, needle", [
    (["mdp", "--env", "CliffWalkin-v1"], "Did you mean"),
    (["risk", "--env", "CartPole-v1"], "exact risk needs a discrete env with a transition table"),
    (["mdp", "--eps", "1.5"], "[0, 1]"),
    (["risk", "--eps-deploy", "-0.1"], "[0, 1]"),
    (["mdp", "--horizon", "0"], "positive"),
    (["sweep", "--hypothesis", "shiftt"], "Did you mean"),
])
def test_errors(run_cli, args, needle):
    r = run_cli("rationality", *args)
    assert r.code == 2 and needle in r.stderr, r.stderr


def test_policy_json_missing_states(run_cli, tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps({str(s): 0 for s in range(40)}))
    r = run_cli("rationality", "risk", "--policy", str(p))
    assert r.code == 2 and "40, 41" in r.stderr


def test_checkpoint_and_wrong_env(run_cli, tmp_path):
    pytest.importorskip("torch")
    run = tmp_path / "run"
    r = run_cli("train", "rl", "--algo", "dqn", "--env", "FrozenLake-v1", "--steps", "50", "--out", str(run),
                "--set", "learning_starts=10", "--set", "train_freq=10", "--set", "gradient_steps=1",
                "--set", "hidden=8", "--set", "layer_norm=true", "--set", "weight_norm=true", "--quiet")
    assert r.code == 0, r.stderr
    r = run_cli("rationality", "risk", "--env", "FrozenLake-v1", "--policy", str(run), "--metric", "discrete",
                "--format", "json")
    assert r.code == 0, r.stderr
    scored = json.loads(r.stdout)
    assert scored["expected_risk"] >= 0
    # the size proxy of the (weight-normalised) Q-net: positive, and absent for a policy without weights
    assert scored["q_net_norm_bound"] > 0
    assert json.loads(run_cli("rationality", "risk", "--format", "json").stdout)["q_net_norm_bound"] is None
    r = run_cli("rationality", "risk", "--policy", str(run))
    assert r.code == 2 and "checkpoint of FrozenLake-v1" in r.stderr


def test_sweep_tiny(run_cli, tmp_path):
    pytest.importorskip("torch")
    r = run_cli("rationality", "sweep", "--seeds", "2", "--steps", "300", "--regularizer", "none",
                "--regularizer", "l2", "--hypothesis", "regularizer", "--hypothesis", "shift", "--quiet")
    assert r.code == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    runs = [x for x in lines if not x.get("summary")]
    summary = [x for x in lines if x.get("summary")]
    assert len(runs) == 4 and {s["hypothesis"] for s in summary} == {"regularizer", "shift"}
    assert all(x["extrinsic_bound_holds"] for x in runs)


def test_policy_json_of_another_env_is_refused(run_cli, tmp_path):
    policy = tmp_path / "cliff.json"
    policy.write_text(json.dumps({str(s): 1 for s in range(48)}))  # a CliffWalking-sized table
    r = run_cli("rationality", "risk", "--env", "FrozenLake-v1", "--policy", str(policy), "--metric", "discrete")
    assert r.code == 2 and "FrozenLake-v1 does not have" in r.stderr and "16, 17" in r.stderr


def test_csv_output_holds_plain_numbers(run_cli):
    r = run_cli("rationality", "risk", "--format", "csv")
    assert r.code == 0, r.stderr
    assert "np.float" not in r.stdout
    header, row = r.stdout.splitlines()[:2]
    value = dict(zip(header.split(","), row.split(","), strict=True))["extrinsic_bound"]
    assert float(value) >= 0
