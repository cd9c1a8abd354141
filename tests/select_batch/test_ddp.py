"""`select-batch train` under torchrun (issue 41): PartitionSel gathered on rank 0 and broadcast makes the
selections of one process; 2 gloo ranks log the same losses, once, from rank 0."""

from __future__ import annotations

import json

import pytest

from tests._ddp import torchrun

pytest.importorskip("transformers")
pytest.importorskip("torch.distributed")

ARGS = ["select-batch", "train", "--steps", "2", "--batch", "4", "--buffer", "2"]


def test_two_gloo_ranks_select_and_train_like_one_process(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("MLX26_THREADS", "1")
    one = run_cli(*ARGS, "-q")
    assert one.code == 0, one.stderr
    done = torchrun(*ARGS, "-o", "log.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl"]  # rank 0 alone writes
    ref = [json.loads(line) for line in one.stdout.splitlines()]
    got = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in got] == [0, 1, 2]  # one set of records
    for a, b in zip(ref, got, strict=True):
        assert b.get("counts") == a.get("counts")  # the same selection
        for key in ("val_loss", "train_loss", "utility"):
            assert (b.get(key) is None) == (a.get(key) is None)
            if a.get(key) is not None:
                assert b[key] == pytest.approx(a[key], rel=1e-4, abs=1e-5)
    assert done.stderr.count("select-batch train: partitionsel, 2 steps") == 1  # rank-0-only notice


def test_a_batch_the_world_size_does_not_divide_is_refused(run_cli, monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "3")
    result = run_cli(*ARGS)
    assert result.code == 2
    assert result.stderr.splitlines()[0] == ("Error: --batch 4 does not divide by the world size 3 "
                                             "(torchrun --nnodes × --nproc-per-node)")
