"""core/common/distributed.py (issue 41): no-ops in one process; commands that do not run data-parallel refuse
to start under torchrun instead of running N copies that overwrite each other's files."""

from __future__ import annotations

import pytest


def test_distributed_helpers_are_no_ops_in_one_process(monkeypatch):
    from mlx26.core.common import distributed as d

    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    world = d.env()
    assert (world.rank, world.size, world.active, world.main) == (0, 1, False, True)
    assert d.shard(10) == slice(0, 10) and d.rank_seed(7) == 7 and d.check_divisible(5) == 5
    assert d.all_reduce_mean([1.5]) == [1.5] and d.broadcast({"a": 1}) == {"a": 1} and d.all_gather(3) == [3]
    assert d.any_rank(False) is False
    with d.session() as inside:
        assert inside == world
    w = d.World(rank=1, size=3)
    assert [d.shard(10, d.World(r, 3)) for r in range(3)] == [slice(0, 3), slice(3, 6), slice(6, 10)]
    assert d.rank_seed(7, w) != 7 and d.rank_seed(7, w) == d.rank_seed(7, w) < 2**31
    d.refuse("x", "why")  # one process: nothing to refuse
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(d.InputError, match="does not run under torchrun"):
        d.refuse("mlx26 train grpo", "why")
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(d.InputError, match="not an integer"):
        d.env()


@pytest.mark.parametrize("args", [["train", "rl", "--algo", "dqn", "--steps", "8"],
                                  ["train", "grpo", "--preset", "micro"]])
@pytest.mark.parametrize("rank", ["0", "1"])
def test_training_commands_without_ddp_refuse_under_torchrun(run_cli, tmp_path, monkeypatch, args, rank):
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", "2")
    result = run_cli(*args, "--out", tmp_path / "run")
    assert result.code == 2
    if rank == "0":
        first = result.stderr.splitlines()[0]
        assert first.startswith(("Error: mlx26 train rl does not run under torchrun (WORLD_SIZE=2)",
                                 "Error: train grpo runs in one process (WORLD_SIZE=2)")), first
    else:
        assert result.stderr == ""  # rank 0 says it once
    assert not (tmp_path / "run").exists()
