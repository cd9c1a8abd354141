"""Ctrl-C keeps work in `zoo train` (issue 31): SIGINT saves <out>/checkpoint.pt after the step in progress,
exits 130, and `--resume` ends with the same weights and held-out bits/byte as an uninterrupted run."""

from __future__ import annotations

import json
import signal

import pytest

pytest.importorskip("transformers")

ARGS = ["zoo", "train", "micro-llama", "--steps", "12", "--max-train-bytes", "20000", "--eval-bytes", "2000",
        "--format", "json", "-q"]


@pytest.fixture
def sigint_at_batch(monkeypatch):
    """A real SIGINT to this process while the k-th training batch is drawn (the CLI's handler catches it)."""
    from mlx26.core.zoo import train as zoo_train

    real = zoo_train._batch

    def arm(k: int) -> None:
        calls = {"n": 0}

        def batch(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == k:
                signal.raise_signal(signal.SIGINT)
            return real(*args, **kwargs)

        monkeypatch.setattr(zoo_train, "_batch", batch)

    yield arm
    monkeypatch.setattr(zoo_train, "_batch", real)


def test_sigint_checkpoints_and_resume_matches_an_uninterrupted_run(run_cli, tmp_path, sigint_at_batch):
    ref = run_cli(*ARGS, "--out", tmp_path / "ref")
    assert ref.code == 0, ref.stderr
    sigint_at_batch(5)
    cut = run_cli(*ARGS, "--out", tmp_path / "cut")
    assert cut.code == 130 and cut.stdout == ""
    assert f"interrupted at step 5 of 12; checkpoint saved at step 5 in {tmp_path / 'cut'}" in cut.stderr
    assert "--resume" in cut.error_lines[-1] and "Traceback" not in cut.stderr
    assert (tmp_path / "cut" / "checkpoint.pt").is_file() and not (tmp_path / "cut" / "manifest.json").exists()

    again = run_cli(*ARGS, "--out", tmp_path / "cut")  # without --resume: says what to do
    assert again.code == 2 and "interrupted run" in again.stderr and "--resume" in again.stderr

    sigint_at_batch(10**9)  # disarmed
    resumed = run_cli(*ARGS, "--out", tmp_path / "cut", "--resume")
    assert resumed.code == 0, resumed.stderr
    a, b = json.loads(ref.stdout), json.loads(resumed.stdout)
    assert b["steps"] == 12 and b["bits_per_byte"] == a["bits_per_byte"]
    assert (tmp_path / "cut" / "model.safetensors").read_bytes() == (tmp_path / "ref" / "model.safetensors").read_bytes()
    manifest = json.loads((tmp_path / "cut" / "manifest.json").read_text())
    assert manifest["training"]["resumed_at_steps"] == [5] and not (tmp_path / "cut" / "checkpoint.pt").exists()
    history = json.loads((tmp_path / "ref" / "manifest.json").read_text())["training"]["history"]
    assert manifest["training"]["history"] == history


@pytest.mark.parametrize(("setup", "needle", "hint"), [
    ("missing", "does not exist", "without --resume"),
    ("finished", "holds a finished model", "--force"),
    ("empty", "has no checkpoint.pt", "--force"),
])
def test_resume_without_an_interrupted_run_is_one_line_exit_2(run_cli, tmp_path, setup, needle, hint):
    out = tmp_path / "m"
    if setup != "missing":
        out.mkdir()
    if setup == "finished":
        (out / "manifest.json").write_text("{}")
    result = run_cli(*ARGS, "--out", out, "--resume")
    assert result.code == 2 and result.stdout == "" and needle in result.error_lines[0]
    assert len(result.error_lines) == 2 and hint in result.error_lines[1]


def test_resume_and_force_together_is_an_input_error(run_cli, tmp_path):
    result = run_cli(*ARGS, "--out", tmp_path / "m", "--resume", "--force")
    assert result.code == 2 and "give one of them" in result.stderr
