"""`zoo train` under torchrun (issue 41): 2 gloo processes on CPU take the steps of one process at the same
global batch, only rank 0 prints and writes, and a batch the world size does not divide fails up front."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._ddp import refused_by_every_rank, torchrun

pytest.importorskip("transformers")
pytest.importorskip("torch.distributed")

ARGS = ["zoo", "train", "micro-llama", "--steps", "8", "--max-train-bytes", "20000", "--eval-bytes", "2000",
        "--format", "json"]


def _curve(out: Path) -> tuple[list, float]:
    manifest = json.loads((out / "manifest.json").read_text())
    return [(h["step"], h["train_loss"]) for h in manifest["training"]["history"]], manifest["eval"]["bits_per_byte"]


def test_two_gloo_ranks_match_one_process_at_equal_global_batch(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("MLX26_THREADS", "1")
    ref = run_cli(*ARGS, "-q", "--out", tmp_path / "one")
    assert ref.code == 0, ref.stderr
    work = tmp_path / "ddp"
    work.mkdir()
    done = torchrun(*ARGS, "--out", "m", cwd=work)
    assert done.returncode == 0, done.stderr[-3000:]
    # one set of records on stdout (rank 0's), one model folder, nothing rank-suffixed or left over
    summary = json.loads(done.stdout)
    assert summary["steps"] == 8 and summary["out"] == "m"
    assert sorted(p.name for p in work.iterdir()) == ["m"]
    assert sorted(p.name for p in (work / "m").iterdir()) == sorted(p.name for p in (tmp_path / "one").iterdir())
    assert done.stderr.count("final held-out evaluation") == 1  # rank-0-only notices
    one_curve, one_bpb = _curve(tmp_path / "one")
    two_curve, two_bpb = _curve(work / "m")
    assert [s for s, _ in one_curve] == [s for s, _ in two_curve]
    for (_, a), (_, b) in zip(one_curve[1:], two_curve[1:], strict=True):
        assert b == pytest.approx(a, abs=2e-3)  # the mean over ranks of the block losses = the global-batch loss
    assert two_bpb == pytest.approx(one_bpb, abs=1e-3)
    assert summary["bits_per_byte"] == pytest.approx(two_bpb)
    dist = json.loads((work / "m" / "manifest.json").read_text())["training"]["distributed"]
    assert dist == {"world_size": 2, "backend": "gloo", "per_rank_batch": 4, "times": "rank 0's (wall_time_s, cpu_time_s)"}
    assert "distributed" not in json.loads((tmp_path / "one" / "manifest.json").read_text())["training"]


def test_a_world_size_that_does_not_divide_the_batch_fails_up_front(tmp_path):
    done = torchrun(*ARGS, "--batch-size", "3", "--out", "m", cwd=tmp_path, module=False)  # the console script
    errors = refused_by_every_rank(done)
    assert errors == ["Error: --batch-size 3 does not divide by the world size 2 (torchrun --nnodes × "
                      "--nproc-per-node)"]
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("rank", ["0", "1"])
def test_the_divisibility_check_needs_no_process_group(run_cli, tmp_path, monkeypatch, rank):
    """Checked from WORLD_SIZE alone, before torch loads: one Error line on rank 0, silence elsewhere, exit 2."""
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", "3")
    result = run_cli(*ARGS, "--out", tmp_path / "m")  # micro-llama's batch is 8
    assert result.code == 2
    if rank == "0":
        assert result.stderr.splitlines()[0] == ("Error: --batch-size 8 does not divide by the world size 3 "
                                              "(torchrun --nnodes × --nproc-per-node)")
    else:
        assert result.stderr == ""
    assert not (tmp_path / "m").exists()
