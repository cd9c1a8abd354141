"""Data-parallel training under ``torchrun`` (DDP): one place for what every training loop needs.

``torchrun --nproc-per-node N -m mlx26.cli …`` (or ``accelerate launch``) starts N copies of the
command with ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT`` in the
environment. :func:`env` reads them; without them (a plain ``mlx26 …``) the world is one process
and every helper here is a no-op, so a single-process run is unchanged: no process group, the
same seeds, the same outputs.

- :func:`session` initialises the process group (``gloo`` on CPU, ``nccl`` when CUDA is present,
  after binding the process to ``cuda:LOCAL_RANK``), and on a clean exit waits for every rank at a
  barrier before destroying it.
- :func:`check_divisible` checks, before any work, that the global batch splits evenly over the
  ranks (a typed ``InputError``, exit 2), and :func:`shard` gives a rank its block of a global batch,
  so N processes at global batch B take the same optimisation steps as one process at batch B.
- :func:`rank_seed` derives a per-rank seed (rank 0 keeps the seed itself).
- :func:`is_main` gates the rank-0-only work: stdout records, notices, progress bars, manifests,
  checkpoints, plots.
- :func:`all_reduce_mean`, :func:`any_rank`, :func:`broadcast`, :func:`all_gather` are thin wrappers
  over ``torch.distributed`` that return their input unchanged in a one-process world.
- :func:`wrap_ddp` wraps a model in ``DistributedDataParallel`` (gradients all-reduced, averaged);
  :func:`average_gradients` does the same by hand for a loop whose networks are not one module called
  once per step (the RL flow agents: several losses, several optimisers), and :func:`barrier` waits for
  every rank (rank 0 evaluating or writing a checkpoint).

Only the standard library is imported at module level (the CLI calls :func:`env` and
:func:`check_divisible` before torch loads); torch is imported inside the functions that need it.
Our own infrastructure, no paper.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from mlx26.core.common.errors import BackendMissing, InputError

TIMEOUT_S = 1800  # a collective that waits longer than this fails (torch's own default for gloo)


@dataclass(frozen=True)
class World:
    """This process's place among the data-parallel ranks (1 process, rank 0, outside torchrun)."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def active(self) -> bool:
        return self.size > 1

    @property
    def main(self) -> bool:
        return self.rank == 0


def env() -> World:
    """The world torchrun (or accelerate, or a hand-set environment) describes; 1 process when unset."""
    values: dict[str, int | None] = {}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        raw = os.environ.get(name, "").strip()
        if not raw:
            values[name] = None
            continue
        try:
            values[name] = int(raw)
        except ValueError:
            raise InputError(f"environment variable {name}='{raw}' is not an integer",
                             "launch with torchrun, which sets RANK, WORLD_SIZE and LOCAL_RANK") from None
    size = values["WORLD_SIZE"] or 1
    rank = values["RANK"] or 0
    local = values["LOCAL_RANK"] if values["LOCAL_RANK"] is not None else rank
    if size < 1 or not 0 <= rank < size or local < 0:
        raise InputError(f"inconsistent torchrun environment: RANK={rank}, WORLD_SIZE={size}, LOCAL_RANK={local}",
                         "launch with torchrun, which sets them consistently")
    return World(rank, size, local)


def is_main() -> bool:
    """True on rank 0 (and in every single-process run): the rank that writes files and prints."""
    return env().main


def world_size() -> int:
    return env().size


def check_divisible(global_batch: int, label: str = "--batch-size", world: World | None = None) -> int:
    """The per-rank batch; an ``InputError`` (exit 2) when ``global_batch`` does not split over the ranks."""
    world = world or env()
    if global_batch % world.size:
        multiple = world.size * max(1, round(global_batch / world.size))
        raise InputError(f"{label} {global_batch} does not divide by the world size {world.size} "
                         "(torchrun --nnodes × --nproc-per-node)",
                         f"use a {label} that is a multiple of {world.size} (e.g. {multiple}), or change "
                         "--nproc-per-node")
    return global_batch // world.size


def shard(n: int, world: World | None = None) -> slice:
    """This rank's contiguous block of ``n`` items (blocks differ by at most one item; all of them in a 1-process world)."""
    world = world or env()
    return slice(world.rank * n // world.size, (world.rank + 1) * n // world.size)


def rank_seed(seed: int, world: World | None = None) -> int:
    """``seed`` on rank 0 (so a 1-process run keeps its seed); a hash of (seed, rank) below 2**31 elsewhere."""
    world = world or env()
    if world.rank == 0:
        return seed
    digest = hashlib.sha256(f"mlx26-rank-seed:{seed}:{world.rank}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def backend() -> str:
    """``nccl`` when CUDA is present, else ``gloo``."""
    import torch

    return "nccl" if torch.cuda.is_available() else "gloo"


@contextlib.contextmanager
def session(world: World | None = None, device: str = "auto") -> Iterator[World]:
    """Initialise the process group for the ranks torchrun started (a no-op for one process).

    ``device="cpu"``: the loop trains on the CPU, so the group is ``gloo`` even where CUDA is present
    (``nccl`` reduces CUDA tensors only); ``"auto"``: :func:`backend`.

    On a clean exit every rank waits at a barrier (rank 0 may still be writing the model), then the
    group is destroyed; on an exception it is destroyed at once (torchrun stops the other ranks)."""
    world = world or env()
    if not world.active:
        yield world
        return
    import torch
    import torch.distributed as dist

    if not dist.is_available():
        raise BackendMissing("this torch build has no torch.distributed", "install a torch build with distributed")
    owned = not dist.is_initialized()
    if owned:
        if not os.environ.get("MASTER_ADDR") or not os.environ.get("MASTER_PORT"):
            raise InputError(f"WORLD_SIZE={world.size} but MASTER_ADDR/MASTER_PORT are not set",
                             "launch with torchrun (it sets them), or unset WORLD_SIZE")
        name = "gloo" if device == "cpu" else backend()
        if name == "nccl":
            torch.cuda.set_device(world.local_rank)
        dist.init_process_group(name, rank=world.rank, world_size=world.size, timeout=timedelta(seconds=TIMEOUT_S))
    ok = False
    try:
        yield world
        ok = True
    finally:
        if owned:
            import gc

            gc.collect()  # a DistributedDataParallel wrapper left in a cycle must not outlive its group
            if ok:
                dist.barrier()
            dist.destroy_process_group()


def _active() -> bool:
    import sys

    dist = sys.modules.get("torch.distributed")
    return dist is not None and dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def _device() -> Any:
    import torch
    import torch.distributed as dist

    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce_mean(values: Sequence[float]) -> list[float]:
    """The mean over ranks of each value (float64); the values themselves in a 1-process world."""
    if not _active():
        return [float(v) for v in values]
    import torch
    import torch.distributed as dist

    t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=_device())
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (t / dist.get_world_size()).cpu().tolist()


def all_reduce_sum(values: Sequence[float]) -> list[float]:
    """The sum over ranks of each value; the values themselves in a 1-process world."""
    if not _active():
        return [float(v) for v in values]
    import torch
    import torch.distributed as dist

    t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=_device())
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.cpu().tolist()


def any_rank(flag: bool) -> bool:
    """True when ``flag`` is true on any rank (e.g. a stop request), so that every rank stops at the same step."""
    if not _active():
        return bool(flag)
    return all_reduce_sum([1.0 if flag else 0.0])[0] > 0


def broadcast(obj: Any, src: int = 0) -> Any:
    """``src``'s ``obj`` on every rank (pickled; small objects: options, step counts, selections)."""
    if not _active():
        return obj
    import torch.distributed as dist

    box = [obj]
    dist.broadcast_object_list(box, src=src, device=_device() if dist.get_backend() == "nccl" else None)
    return box[0]


def all_gather(obj: Any) -> list[Any]:
    """Every rank's ``obj``, in rank order, on every rank (``[obj]`` in a 1-process world)."""
    if not _active():
        return [obj]
    import torch.distributed as dist

    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def barrier() -> None:
    """Wait for every rank (a no-op in a 1-process world)."""
    if not _active():
        return
    import torch.distributed as dist

    dist.barrier()


def average_gradients(params: Any) -> None:
    """Replace each parameter's ``.grad`` by its mean over the ranks, in one flat all-reduce (a no-op in a
    1-process world). Parameters without a gradient are skipped; every rank must have the same ones."""
    if not _active():
        return
    import torch
    import torch.distributed as dist

    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    flat /= dist.get_world_size()
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def wrap_ddp(model: Any, find_unused_parameters: bool = False) -> Any:
    """``DistributedDataParallel(model)`` under torchrun (rank 0's weights broadcast, gradients averaged);
    ``model`` itself in a 1-process world."""
    if not _active():
        return model
    import torch
    from torch.nn.parallel import DistributedDataParallel

    device_ids = [torch.cuda.current_device()] if torch.cuda.is_available() and _device().type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids, find_unused_parameters=find_unused_parameters)


def refuse(command: str, why: str, world: World | None = None) -> None:
    """An ``InputError`` (exit 2) for a command that does not run data-parallel, when started with WORLD_SIZE > 1:
    better than N copies silently overwriting each other's files."""
    world = world or env()
    if world.active:
        raise InputError(f"{command} does not run under torchrun (WORLD_SIZE={world.size}): {why}",
                         "run it as one process (without torchrun); see docs/scale-out.md")
