"""Ctrl-C keeps work in `select-batch train` (issue 31): with --checkpoint FILE, SIGINT saves the run after
the step in progress and exits 130; --resume continues it to the same losses and selections."""

from __future__ import annotations

import json
import signal

import pytest

pytest.importorskip("torch")

ARGS = ["select-batch", "train", "--steps", "4", "--batch", "4", "--buffer", "2", "--eval-every", "2",
        "--refresh", "2", "-q"]
TIMING = {"feature_s", "greedy_s", "select_s", "update_s", "select_fraction"}


@pytest.fixture
def sigint_at_update(monkeypatch):
    """A real SIGINT to this process during the k-th optimizer update (the CLI's handler catches it)."""
    from mlx26.core.select_batch.train import SelectTrainer

    real = SelectTrainer._update

    def arm(k: int) -> None:
        calls = {"n": 0}

        def update(self, *args, **kwargs):
            calls["n"] += 1
            if calls["n"] == k:
                signal.raise_signal(signal.SIGINT)
            return real(self, *args, **kwargs)

        monkeypatch.setattr(SelectTrainer, "_update", update)

    return arm


def _untimed(text: str) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k not in TIMING} for line in text.splitlines()]


RESERVOIR_ARGS = [*ARGS[:ARGS.index("--refresh")], "--reservoir", "2", "--anchor-every", "3", "-q"]
CURRICULUM_ARGS = [*ARGS[:ARGS.index("--refresh")], "--budget-mode", "curriculum", "-q"]


@pytest.mark.parametrize("args", [ARGS, RESERVOIR_ARGS, CURRICULUM_ARGS], ids=["refresh", "reservoir", "curriculum"])
def test_sigint_checkpoints_and_resume_matches_an_uninterrupted_run(run_cli, tmp_path, sigint_at_update, args):
    ARGS = args  # noqa: N806 - the same checks for both staleness schemes (the reservoir's waiting set is saved)
    ref = run_cli(*ARGS)
    assert ref.code == 0, ref.stderr
    ck = tmp_path / "run.ckpt"
    sigint_at_update(2)
    cut = run_cli(*ARGS, "--checkpoint", ck)
    assert cut.code == 130, cut.stderr
    assert f"interrupted at step 2 of 4; checkpoint saved at step 2 in {ck}" in cut.stderr
    assert f"--checkpoint {ck} --resume" in cut.error_lines[-1] and "Traceback" not in cut.stderr
    assert [json.loads(line)["step"] for line in cut.stdout.splitlines()] == [0, 1, 2]

    sigint_at_update(10**9)  # disarmed
    out = tmp_path / "log.jsonl"
    resumed = run_cli("select-batch", "train", "--checkpoint", ck, "--resume", "-o", out, "-q")
    assert resumed.code == 0, resumed.stderr
    assert _untimed(out.read_text()) == _untimed(ref.stdout)  # the whole log: losses, counts, utility, …


def test_sigint_without_checkpoint_says_so(run_cli, sigint_at_update):
    sigint_at_update(1)
    result = run_cli(*ARGS)
    assert result.code == 130 and "interrupted at step 1 of 4; no checkpoint was written" in result.stderr
    assert "--checkpoint FILE" in result.error_lines[-1]


@pytest.mark.parametrize(("extra", "needle"), [
    (["--resume"], "--resume needs --checkpoint FILE"),
    (["--resume", "--checkpoint", "missing.ckpt"], "nothing to resume: missing.ckpt does not exist"),
])
def test_resume_without_a_checkpoint_is_one_line_exit_2(run_cli, tmp_path, monkeypatch, extra, needle):
    monkeypatch.chdir(tmp_path)
    result = run_cli(*ARGS, *extra)
    assert result.code == 2 and result.stdout == "" and needle in result.error_lines[0]
    assert len(result.error_lines) <= 2
