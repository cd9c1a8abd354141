"""`train rl --algo fql|dfql` under torchrun (issue 41): 2 gloo processes on CPU take the optimisation steps of one
process at the same global batch (every random draw is made for the global batch, gradients and |Q| normalisers
are averaged), only rank 0 prints and writes, a batch the world size does not divide fails up front, the online
algorithms still refuse, and a run stopped on any rank resumes from rank 0's checkpoint."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._ddp import free_port, refused_by_every_rank, torchrun

pytest.importorskip("gymnasium")
pytest.importorskip("torch.distributed")

TINY = ["--env", "mlx26/toy-modes", "--dataset", "toy.npz", "--set", "preset=small", "--set", "actor_hidden=32,32",
        "--set", "value_hidden=32,32", "--set", "batch_size=32", "--set", "log_every=1", "--flow-steps", "4",
        "--eval-episodes", "2"]


@pytest.fixture
def work(run_cli, tmp_path, monkeypatch) -> Path:
    """A folder holding toy.npz (and its validation split toy-val.npz); the tests run in it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLX26_THREADS", "1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    made = run_cli("rl", "data", "make", "--env", "mlx26/toy-modes", "--policy", "oracle", "--steps", "256",
                   "--out", "toy.npz", "--quiet")
    assert made.code == 0, made.stderr
    return tmp_path


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _assert_close(one: list[dict], two: list[dict], tol: float = 1e-4) -> None:
    assert [(r["step"], r["phase"]) for r in one] == [(r["step"], r["phase"]) for r in two]
    for a, b in zip(one, two, strict=True):
        assert a.keys() == b.keys()
        for key, value in a.items():
            if isinstance(value, float):
                assert b[key] == pytest.approx(value, abs=tol), (a["step"], key)


@pytest.mark.parametrize("algo", ["fql", "dfql"])
def test_two_gloo_ranks_match_one_process_at_equal_global_batch(run_cli, work, algo):
    args = ["train", "rl", "--algo", algo, *TINY, "--steps", "12", "--eval-every", "6"]
    one = run_cli(*args, "--out", "one", "--quiet")
    assert one.code == 0, one.stderr
    before = sorted(p.name for p in work.iterdir())
    done = torchrun(*args, "--out", "two", cwd=work)
    assert done.returncode == 0, done.stderr[-3000:]
    # one record stream (rank 0's), one run folder with the files of a one-process run, nothing else
    assert sorted(p.name for p in work.iterdir()) == sorted([*before, "two"])
    assert sorted(p.name for p in (work / "two").iterdir()) == sorted(p.name for p in (work / "one").iterdir())
    assert done.stderr.count("run folder: two") == 1
    streamed = _records(done.stdout)
    assert streamed == _records((work / "two" / "metrics.jsonl").read_text())
    assert [r["phase"] for r in streamed].count("eval") == 2  # evaluated by rank 0 alone
    assert {"val_critic_loss", "val_actor_loss"} <= set(streamed[0])  # validation losses, rank 0
    _assert_close(_records(one.stdout), streamed)  # measured: within 2e-6
    config = json.loads((work / "two" / "config.json").read_text())
    assert config["hp"]["batch_size"] == 32


def test_a_world_size_that_does_not_divide_the_batch_fails_up_front(work):
    done = torchrun("train", "rl", "--algo", "fql", *TINY, "--set", "batch_size=33", "--steps", "4", "--out", "r",
                    cwd=work)
    errors = refused_by_every_rank(done)
    assert errors == ["Error: batch_size 33 does not divide by the world size 2 (torchrun --nnodes × "
                      "--nproc-per-node)"]
    assert not (work / "r").exists()


@pytest.mark.parametrize("rank", ["0", "1"])
def test_bad_set_ups_are_refused_before_a_process_group(run_cli, work, monkeypatch, rank):
    """From WORLD_SIZE alone: one Error line on rank 0, silence elsewhere, exit 2, no run folder."""
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", "2")
    cases = {  # the online algorithms, an online phase, an odd batch
        "Error: mlx26 train rl does not run under torchrun (WORLD_SIZE=2): --algo dqn steps environments with "
        "per-process replay buffers; only the offline algorithms (fql, dfql) train data-parallel":
            ["--algo", "dqn", "--env", "CartPole-v1"],
        "Error: dfql with online_steps=10 does not run under torchrun (WORLD_SIZE=2): the offline-to-online phase "
        "steps an env, in one process": ["--algo", "dfql", *TINY, "--online-steps", "10"],
        "Error: batch_size 255 does not divide by the world size 2 (torchrun --nnodes × --nproc-per-node)":
            ["--algo", "fql", *TINY, "--set", "batch_size=255"],
    }
    for message, args in cases.items():
        result = run_cli("train", "rl", *args, "--steps", "4", "--out", "r")
        assert result.code == 2
        assert result.stderr.splitlines()[:1] == ([message] if rank == "0" else [])
        assert result.stdout == "" and not (work / "r").exists()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _rank_of(pid: int) -> int | None:
    try:
        env = (Path("/proc") / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for item in env:
        if item.startswith(b"RANK="):
            return int(item[5:])
    return None


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds the rank-1 process through /proc")
def test_a_stop_on_one_rank_stops_all_and_resume_under_torchrun_matches_one_process(run_cli, work):
    args = ["train", "rl", "--algo", "dfql", *TINY, "--steps", "400", "--eval-every", "200"]
    ref = run_cli(*args, "--out", "ref", "--quiet")
    assert ref.code == 0, ref.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(OMP_NUM_THREADS="1", MLX26_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
           "--master-port", str(free_port()), "-m", "mlx26.cli", *args, "--out", "cut"]
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = work / "cut" / "metrics.jsonl"
    end = time.monotonic() + 120
    while not (log.is_file() and len(log.read_text().splitlines()) >= 20):  # mid-run, before the evaluation
        assert proc.poll() is None and time.monotonic() < end, "the run ended or stalled before step 20"
        time.sleep(0.02)
    rank1 = [pid for pid in _children(proc.pid) if _rank_of(pid) == 1]
    assert len(rank1) == 1
    os.kill(rank1[0], signal.SIGTERM)  # a stop request on rank 1 alone
    out, err = proc.communicate(timeout=120)
    assert "exitcode  : 130" in err
    from mlx26.core.rl import checkpoint

    stopped = checkpoint.load(work / "cut")["step"]
    assert 20 <= stopped < 400
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: interrupted at step {stopped} of 400; checkpoint saved at step {stopped} in cut"]
    resumed = torchrun("train", "rl", "--out", "cut", "--resume", cwd=work)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.stderr.count(f"resuming dfql on mlx26/toy-modes from step {stopped} to 400") == 1
    _assert_close(_records(ref.stdout), _records(out) + _records(resumed.stdout))
    _assert_close(_records(ref.stdout), _records(log.read_text()))
