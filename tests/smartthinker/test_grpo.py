"""`train grpo` end to end on the micro preset (TRL GRPOTrainer on CPU), and the reward adapter."""

import json

import pytest
from mlx26.core.common.errors import RunFailure


def test_length_reward_adapter_regroups_and_checks_groups():
    from mlx26.core.smartthinker.grpo import LengthReward

    fn = LengthReward("smartthinker", 2)
    logged = {}
    completions = ["Answer: 3", "x\nAnswer: 4", "Answer: 5", "nothing"]
    rewards = fn(prompts=[""] * 4, completions=completions, completion_ids=[[1] * 3, [1] * 9, [1] * 4, [1] * 2],
                 answer=[3, 3, 5, 5], group=["a", "b", "a", "b"], log_metric=logged.__setitem__)
    # groups by id, not by position: a = (3 tokens, right), (4 tokens, right) → all correct, no penalty
    assert rewards == [1.0, 0.0, 1.0, 0.0]
    assert logged["accuracy"] == 0.5 and logged["length"] == 4.5
    with pytest.raises(RunFailure, match="whole groups"):
        fn(prompts=[""] * 3, completions=completions[:3], completion_ids=[[1]] * 3, answer=[3, 3, 5],
           group=["a", "b", "a"])


def test_train_grpo_micro_smoke(run_cli, tmp_path):
    pytest.importorskip("trl")
    out = tmp_path / "run"
    r = run_cli("train", "grpo", "--preset", "micro", "--out", str(out), "--quiet")
    assert r.code == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    phases = [rec["phase"] for rec in records]
    assert phases.count("grpo") == 2 and phases.count("eval") == 4 and "warmup" in phases
    grpo = [rec for rec in records if rec["phase"] == "grpo"]
    assert all("accuracy" in rec and "length" in rec and "reward" in rec for rec in grpo)
    assert (out / "metrics.jsonl").read_text().splitlines() == r.stdout.splitlines()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["length_reward"] == "smartthinker" and set(summary["after"]) == {"greedy", "sample"}
    # the checkpoint loads through the llm group's hf: backend
    r = run_cli("llm", "chat", "--llm", f"hf:{out / 'model'}", "--raw", "Question: 2 + 2?", "--max-tokens", "4",
                "--format", "json")
    assert r.code == 0, r.stderr
    # an existing non-empty --out needs --force
    r = run_cli("train", "grpo", "--preset", "micro", "--out", str(out), "--quiet")
    assert r.code == 2 and "--force" in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("method", ["kimi", "none"])
def test_train_grpo_other_rewards(run_cli, tmp_path, method):
    pytest.importorskip("trl")
    r = run_cli("train", "grpo", "--preset", "micro", "--length-reward", method, "--out", str(tmp_path / method),
                "--quiet")
    assert r.code == 0, r.stderr
