"""The zoo's training loop: a plain, seeded torch loop that trains a preset on our corpora.

Standard recipe, our own code (no paper reconstructed): AdamW (β = 0.9/0.95, weight decay
0.1 on matrices only), linear warm-up then cosine decay to 10 % of the peak learning rate,
gradient clipping at 1.0, next-token cross-entropy on windows of ``context`` tokens drawn
uniformly from the tokenized training split (each window starts with ``<|bos|>``; MoE
presets add Mixtral's load-balancing loss). Periodic held-out evaluation in bits/byte;
the final evaluation, on the first corpus's held-out split, is what the manifest records,
next to xz / bz2 / gzip on the same bytes.

Budget: ``steps`` gives an exact, machine-independent run. Otherwise ``minutes`` is a
time budget for the whole run (data preparation, training, evaluations): after a short
calibration the loop fixes the step count that fits (re-estimated at each periodic
evaluation, so the cosine schedule ends when the time does); the step count reached is
recorded. The budget is measured in CPU time of this process by default (``clock="cpu"``):
on a shared machine, wall time depends on what else runs (here, contention stretched
steps 2.5×), while the CPU time a step needs does not, so a rebuild with the same budget
lands on about the same step count. On an idle machine with one thread CPU time equals
wall time; ``clock="wall"`` caps wall time instead. Threads: see
:mod:`mlx26.core.common.threads` (1 on 2-core machines unless ``MLX26_THREADS`` says otherwise).

Interruption: ``stop()`` (set by SIGINT/SIGTERM through :mod:`mlx26.core.common.interrupts`) is polled
after each step; the loop then writes ``<out>/checkpoint.pt`` (weights, optimiser, batch sampler and
torch RNG states, history, the step count and what the budget had used) and raises ``Interrupted``
(exit 130). ``resume=True`` reloads it with the options it stored and continues: a ``--steps`` run
ends with the same weights and held-out bits/byte as an uninterrupted one; a time-budget run gets
what was left of its budget. The finished model replaces the folder (checkpoint included).

Data-parallel (``torchrun --nproc-per-node N``, :mod:`mlx26.core.common.distributed`): every rank
builds the same model (same seed; DDP also broadcasts rank 0's weights) and draws the same global
batch of ``batch_size`` windows from the same seeded stream, then trains on its own block of
``batch_size / N`` rows; DDP averages the gradients, so N ranks take the optimisation steps of one
process at the same global batch (equal up to float summation order; MoE's load-balancing term is
computed per rank, so MoE presets match approximately). The loss reported is the mean over ranks;
rank 0 alone runs the held-out probes and the final evaluation, decides a time budget's step count
(broadcast to the others), and writes the checkpoint and the model. A stop request on any rank
stops every rank after the same step. ``batch_size`` must divide by N (checked in :func:`validate`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlx26.core.common import distributed
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.common.files import atomic_folder, atomic_path, check_creatable_folder
from mlx26.core.common.interrupts import interrupted
from mlx26.core.zoo.presets import Preset, get_preset

EVAL_BYTES = 262_144  # held-out bytes of the final evaluation (and of `mlx26 zoo eval` by default)
MAX_TRAIN_BYTES = 16_000_000
CHECKPOINT = "checkpoint.pt"  # an interrupted run's state inside its --out folder
MAX_STEP_TOKENS = 65_536  # 8–64 × the presets; bounds the (batch, context, vocab) logits to ~1 GB
EVALS = 4  # periodic evaluations during training (on EVAL_BYTES // 8)
CALIBRATION_STEPS = 8


@dataclass
class TrainOptions:
    preset: str
    out: str
    corpora: tuple[str, ...] = ()
    minutes: float | None = None
    steps: int | None = None
    seed: int = 0
    tokenizer: str | None = None
    batch_size: int | None = None
    context: int | None = None
    lr: float | None = None
    max_train_bytes: int = MAX_TRAIN_BYTES
    eval_bytes: int = EVAL_BYTES
    force: bool = False
    command: str = ""
    clock: str = "cpu"


@dataclass
class Resolved:
    preset: Preset
    out: Path
    corpora: tuple[str, ...]
    minutes: float
    steps: int | None
    tokenizer: str
    batch_size: int
    context: int
    lr: float


def stored_options(out: str | Path) -> TrainOptions:
    """The options of the interrupted run in ``out`` (an ``InputError`` saying what to do when there is none)."""
    folder = Path(out).expanduser()
    if not folder.is_dir():
        raise InputError(f"nothing to resume: {folder} does not exist.", "start the run without --resume")
    if not (folder / CHECKPOINT).is_file():
        finished = (folder / "manifest.json").is_file()
        raise InputError(f"nothing to resume in {folder}: " + ("it holds a finished model" if finished else
                                                              f"it has no {CHECKPOINT}") + ".",
                         "add --force (without --resume) to train it again from the start")
    stored = _load_checkpoint(folder)["options"]
    return TrainOptions(**{**stored, "corpora": tuple(stored["corpora"]), "out": str(out)})


def _load_checkpoint(folder: Path) -> dict[str, Any]:
    import torch

    try:
        state = torch.load(folder / CHECKPOINT, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for a bad file
        raise InputError(f"cannot read {folder / CHECKPOINT}: {' '.join(str(exc).split())[:200]}",
                         "add --force (without --resume) to start over") from None
    if not isinstance(state, dict) or "options" not in state or "model" not in state:
        raise InputError(f"{folder / CHECKPOINT} is not a `zoo train` checkpoint",
                         "add --force (without --resume) to start over")
    return state


def validate(opts: TrainOptions, resume: bool = False) -> Resolved:
    """Every check that can fail before work starts (ValueError → exit 2)."""
    from mlx26.core.zoo.corpora import SHAKESPEARE_HINT, available, corpus

    preset = get_preset(opts.preset)
    if preset.random_init:
        raise InputError(f"preset '{preset.name}' is random-init only (timing/memory profiles); it is not trained.",
                         "use it directly: load_model('tiny-llama-long') or `mlx26 zoo path tiny-llama-long`")
    corpora = tuple(opts.corpora) or preset.corpora
    for name in corpora:
        corpus(name)
        if not available(name):
            raise ModuleNotFoundError(f"the '{name}' corpus is not installed ({SHAKESPEARE_HINT})", name="shksprdata")
    minutes = preset.minutes if opts.minutes is None else opts.minutes
    if not (minutes > 0 and math.isfinite(minutes)):
        raise InputError(f"--minutes must be > 0, got {opts.minutes}.")
    if opts.steps is not None and opts.steps < 1:
        raise InputError(f"--steps must be ≥ 1, got {opts.steps}.")
    for label, value, low in (("--batch-size", opts.batch_size, 1), ("--context", opts.context, 2),
                              ("--max-train-bytes", opts.max_train_bytes, 1024), ("--eval-bytes", opts.eval_bytes, 256)):
        if value is not None and value < low:
            raise InputError(f"{label} must be ≥ {low}, got {value}.")
    if opts.lr is not None and not (opts.lr > 0 and math.isfinite(opts.lr)):
        raise InputError(f"--lr must be > 0, got {opts.lr}.")
    context = opts.context or preset.context
    max_pos = int(preset.arch.get("max_position_embeddings", 0))
    if context > max_pos:
        raise InputError(f"--context {context} exceeds the preset's {max_pos} positions.")
    batch_size = opts.batch_size or preset.batch_size
    distributed.check_divisible(batch_size, "--batch-size")  # under torchrun: every rank takes an equal block
    if batch_size * context > MAX_STEP_TOKENS:  # logits alone take batch × context × vocab floats
        raise InputError(f"--batch-size {batch_size} × --context {context} = {batch_size * context} tokens a step; "
                         f"at most {MAX_STEP_TOKENS} fit in memory on a CPU.",
                         f"use --batch-size ≤ {MAX_STEP_TOKENS // context}")
    out = Path(opts.out).expanduser()
    if out.exists() and not opts.force and not resume:
        if (out / CHECKPOINT).is_file():
            raise InputError(f"output directory {out} holds an interrupted run.",
                             "add --resume to continue it, or --force to start over")
        raise InputError(f"output directory {out} already exists.", "add --force (or set MLX26_FORCE=1) to replace it")
    if out.exists() and not out.is_dir():
        raise InputError(f"output path {out} exists and is not a directory.")
    check_creatable_folder(out)
    tokenizer = opts.tokenizer or preset.tokenizer
    if preset.continue_from and tokenizer != preset.tokenizer:  # the source's embeddings index its own vocabulary
        raise InputError(f"preset '{preset.name}' continues {preset.continue_from}'s weights, so it keeps its "
                         f"tokenizer ({preset.tokenizer}); --tokenizer cannot change it.")
    if tokenizer not in ("byte", "bpe", "bpe-4096") and not (Path(tokenizer) / "tokenizer.json").is_file():
        raise InputError(f"Unknown tokenizer '{tokenizer}'.", "use bpe-4096, byte, or a folder with tokenizer.json")
    if opts.clock not in ("cpu", "wall"):
        raise InputError(f"Unknown clock '{opts.clock}'.", "use cpu or wall")
    return Resolved(preset, out, corpora, float(minutes), opts.steps, tokenizer, batch_size, context,
                    opts.lr or preset.lr)


def tokenize_corpora(tokenizer: Any, corpora: tuple[str, ...], split: str, max_bytes: int) -> tuple[Any, list[dict]]:
    """One int32 array of token ids over the corpora (an equal byte share each), plus what was used."""
    import numpy as np
    from mlx26.core.zoo.corpora import corpus, describe
    from mlx26.core.zoo.tokenization import encode_many

    arrays, used = [], []
    for name in corpora:
        text = corpus(name).text(split, max_bytes // len(corpora))
        pieces = _pieces(text, 1 << 16)
        ids = [i for chunk in encode_many(tokenizer, pieces) for i in chunk]
        arrays.append(np.asarray(ids, dtype=np.int32))
        used.append({**describe(name, split), "bytes_used": len(text.encode("utf-8")), "tokens": len(ids)})
    return np.concatenate(arrays), used


def _pieces(text: str, size: int) -> list[str]:
    """Split at line ends into pieces of about ``size`` characters (batch tokenisation)."""
    out, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        out.append(text[start:end])
        start = end
    return out


def lr_at(step: int, total: int, peak: float) -> float:
    """Linear warm-up over min(100, 5 % of the steps), then cosine from ``peak`` to 0.1·peak."""
    warm = max(1, min(100, total // 20))
    if step < warm:
        return peak * (step + 1) / warm
    progress = min(1.0, (step - warm) / max(1, total - warm))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def _optimizer(model: Any, lr: float) -> Any:
    import torch

    params = {id(p): p for p in model.parameters() if p.requires_grad}.values()
    decay = [p for p in params if p.dim() >= 2]
    plain = [p for p in params if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": plain, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.95), eps=1e-8)


def _batch(tokens: Any, rng: Any, batch_size: int, context: int, bos: int,
           rows: slice | None = None) -> tuple[Any, Any]:
    """``batch_size`` windows drawn from ``rng`` (``rows``: this rank's block of them, the draw unchanged)."""
    import numpy as np
    import torch

    starts = rng.integers(0, len(tokens) - context, size=batch_size)
    if rows is not None:
        starts = starts[rows]
        batch_size = len(starts)
    targets = np.stack([tokens[s:s + context] for s in starts]).astype(np.int64)
    inputs = np.concatenate([np.full((batch_size, 1), bos, dtype=np.int64), targets[:, :-1]], axis=1)
    return torch.from_numpy(inputs), torch.from_numpy(targets)


def _loss(model: Any, inputs: Any, targets: Any, moe: bool, net: Any = None) -> tuple[Any, float]:
    """(loss to backpropagate, cross-entropy); ``net``: the DDP wrapper of ``model`` to run the forward through."""
    import torch

    net = model if net is None else net
    out = net(input_ids=inputs, output_router_logits=True) if moe else net(input_ids=inputs)
    ce = torch.nn.functional.cross_entropy(out.logits.reshape(-1, out.logits.shape[-1]), targets.reshape(-1))
    loss = ce
    if moe and getattr(out, "aux_loss", None) is not None:
        loss = ce + model.config.router_aux_loss_coef * out.aux_loss
    return loss, float(ce.detach())


def train(opts: TrainOptions, *, progress: Callable[[int, int, float], None] | None = None,
          log: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
          resume: bool = False) -> dict[str, Any]:
    """Train, evaluate and save ``opts.preset`` into ``opts.out``; return the manifest.

    ``stop()`` is polled after each step (see the module docstring); ``resume`` continues the
    interrupted run in ``opts.out`` (whose options are :func:`stored_options`). Under torchrun every
    rank calls this and gets rank 0's manifest; only rank 0 writes."""
    with distributed.session(device="cpu") as world:
        return _train(opts, world, progress=progress, log=log, stop=stop, resume=resume)


def _train(opts: TrainOptions, world: distributed.World, *, progress: Callable[[int, int, float], None] | None,
           log: Callable[[str], None] | None, stop: Callable[[], bool] | None, resume: bool) -> dict[str, Any]:
    import numpy as np
    import torch
    from mlx26.core.common.seeding import seed_everything
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.zoo import corpora as corpora_mod
    from mlx26.core.zoo.evaluate import bits_per_byte, compressor_bits_per_byte
    from mlx26.core.zoo.presets import build_model, count_parameters
    from mlx26.core.zoo.tokenization import get_tokenizer, tokenizer_hash

    if not world.main:  # rank-0-only notices and progress
        log = progress = None
    say = log or (lambda message: None)
    started_wall, cpu0 = time.monotonic(), time.process_time()
    r = validate(opts, resume)
    state = _load_checkpoint(r.out) if resume else None
    clock = time.process_time if opts.clock == "cpu" else time.monotonic
    started = clock()
    deadline = started + r.minutes * 60
    threads = apply_torch_threads(torch)
    seed_everything(opts.seed)
    tokenizer = get_tokenizer(r.tokenizer)
    bos = tokenizer.bos_token_id
    say(f"zoo train {r.preset.name}: tokenizing {', '.join(r.corpora)} (≤ {opts.max_train_bytes:,} bytes)")
    tokens, corpora_used = tokenize_corpora(tokenizer, r.corpora, "train", opts.max_train_bytes)
    if len(tokens) <= r.context + 1:
        raise RunFailure(f"only {len(tokens)} training tokens; need more than the context ({r.context}).")
    eval_corpus = r.corpora[0]
    eval_text = corpora_mod.corpus(eval_corpus).text("heldout", opts.eval_bytes)
    probe_text = corpora_mod.corpus(eval_corpus).text("heldout", max(256, opts.eval_bytes // 8))
    model = build_model(r.preset, tokenizer, opts.seed)
    moe = r.preset.family == "mixtral"
    rows = distributed.shard(r.batch_size, world) if world.active else None
    net = model
    if world.active:  # same weights on every rank; routed experts a rank's block skips get no gradient there
        net = distributed.wrap_ddp(model, find_unused_parameters=moe)
        if not world.main:
            torch.manual_seed(distributed.rank_seed(opts.seed, world))
    optimizer = _optimizer(model, r.lr)
    rng = np.random.default_rng(opts.seed)

    def probe() -> float:
        value = bits_per_byte(model, tokenizer, probe_text, context=r.context, routing=False)["bits_per_byte"]
        model.train()
        return value

    fixed = r.steps is not None
    if state is None:
        t0 = clock()
        history = [{"step": 0, "train_loss": None, "heldout_bpb_probe": probe()}] if world.main else []
        t_eval = clock() - t0
        total = r.steps if r.steps is not None else 10**9  # a time budget: fixed after calibration
        eval_at = _evenly(0, total, EVALS) if fixed else set()
        step, last_loss, step_seconds, resumed_at, used = 0, float("nan"), 0.0, list[int](), {"wall": 0.0, "cpu": 0.0}
    else:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        history, t_eval, total, eval_at = list(state["history"]), state["t_eval"], state["total"], set(state["eval_at"])
        step, last_loss, step_seconds = state["step"], state["last_loss"], state["step_seconds"]
        resumed_at, used = [*state["resumed_at"], step], dict(state["used"])
        deadline = clock() + max(0.0, r.minutes * 60 - state["budget_used"])  # what was left of the budget
        started = clock() - state["budget_used"]
        say(f"zoo train {r.preset.name}: resuming at step {step}/{total}")
    final_eval_cost = t_eval * len(eval_text) / max(1, len(probe_text))

    def checkpoint() -> None:
        import dataclasses

        data = {"options": {**dataclasses.asdict(opts), "corpora": list(opts.corpora), "force": False},
                "model": model.state_dict(), "optimizer": optimizer.state_dict(), "rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(), "history": history, "t_eval": t_eval, "total": total,
                "eval_at": sorted(eval_at), "step": step, "last_loss": last_loss, "step_seconds": step_seconds,
                "budget_used": clock() - started, "resumed_at": resumed_at,
                "used": {"wall": used["wall"] + time.monotonic() - started_wall,
                         "cpu": used["cpu"] + time.process_time() - cpu0}}
        r.out.mkdir(parents=True, exist_ok=True)
        with atomic_path(r.out / CHECKPOINT) as tmp:
            torch.save(data, tmp)

    model.train()
    while step < total:
        t0 = clock()
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, total, r.lr)
        inputs, targets = _batch(tokens, rng, r.batch_size, r.context, bos, rows)
        loss, last_loss = _loss(model, inputs, targets, moe, net)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # under DDP: the gradients are averaged over the ranks here
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        stopping = False
        if world.active:  # the loss over the global batch, and one stop decision for every rank
            last_loss, flag = distributed.all_reduce_mean([last_loss, float(stop is not None and stop())])
            stopping = flag > 0
        if step > 2:  # the first steps carry one-off start-up costs
            step_seconds += clock() - t0
        if not math.isfinite(last_loss):
            raise RunFailure(f"training diverged at step {step} (loss {last_loss}); try a smaller --lr")
        if not fixed and (step == 2 + CALIBRATION_STEPS or step in eval_at):
            per_step = step_seconds / (step - 2)
            evals_left = EVALS if step == 2 + CALIBRATION_STEPS else sum(s > step for s in eval_at)
            left = deadline - clock() - final_eval_cost - evals_left * t_eval - 1.0
            total = max(step + 1, step + int(left / per_step))
            if step == 2 + CALIBRATION_STEPS:
                eval_at = _evenly(step, total, EVALS)
            if world.active:  # rank 0's clock decides for every rank
                total, eval_at = distributed.broadcast((total, eval_at))
        if progress:
            progress(step, total, last_loss)
        if step in eval_at and step < total and world.main:
            t0 = clock()
            history.append({"step": step, "train_loss": round(last_loss, 4), "heldout_bpb_probe": probe()})
            t_eval = clock() - t0
            say(f"  step {step}/{total}  loss {last_loss:.3f}  "
                f"held-out probe {history[-1]['heldout_bpb_probe']:.3f} bits/byte")
        if step < total and (stopping if world.active else stop is not None and stop()):  # SIGINT/SIGTERM: exit 130
            if world.main:
                checkpoint()
            raise interrupted(step, total, step, str(r.out), f"mlx26 zoo train {r.preset.name} --out {opts.out} --resume")
    if not world.main:  # rank 0 evaluates and saves; the others wait for its manifest
        return distributed.broadcast(None)
    say(f"zoo train {r.preset.name}: {step} steps in {clock() - started:.0f} s ({opts.clock} time); "
        "final held-out evaluation")
    final = bits_per_byte(model, tokenizer, eval_text, context=r.context)
    baselines = compressor_bits_per_byte(eval_text)
    wall = used["wall"] + time.monotonic() - started_wall
    manifest = _manifest(opts, r, model, tokenizer, corpora_used, eval_corpus, eval_text, final, baselines, history,
                         step, wall, used["cpu"] + time.process_time() - cpu0, threads, count_parameters(model),
                         tokenizer_hash(tokenizer))
    if resumed_at:
        manifest["training"]["resumed_at_steps"] = resumed_at  # interrupted there and continued (--resume)
    if world.active:
        manifest["training"]["distributed"] = {"world_size": world.size, "backend": "gloo",
                                               "per_rank_batch": r.batch_size // world.size,
                                               "times": "rank 0's (wall_time_s, cpu_time_s)"}
    _save(model, tokenizer, manifest, r.out, opts.force or resume)
    return distributed.broadcast(manifest) if world.active else manifest


def _evenly(start: int, end: int, n: int) -> set[int]:
    """``n`` steps spread evenly strictly between ``start`` and ``end``."""
    return {start + (end - start) * k // (n + 1) for k in range(1, n + 1)} - {start, end}


def _versions() -> dict[str, str]:
    import importlib.metadata
    import platform

    from mlx26.core._version import __version__

    out = {"mlx26": __version__, "python": platform.python_version()}
    for dist in ("torch", "transformers", "tokenizers", "safetensors"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out



def _upcycled_from(preset: Any) -> dict[str, Any]:
    """The manifest's record of how an upcycled preset's experts were built from its dense source."""
    g = preset.upcycle_segments
    if g > 1:
        return {"model": preset.upcycle_from, "noise": preset.upcycle_noise, "segments": g,
                "method": f"fine-grained upcycling (expert e = jittered copy of MLP segment e mod {g}, down_proj × {g})"}
    return {"model": preset.upcycle_from, "noise": preset.upcycle_noise,
            "method": "sparse upcycling (experts = jittered copies of the dense MLP)"}

def _continued_from(r: Resolved) -> dict[str, Any]:
    """Which weights a continued preset started from: the source's name alone would not pin them (a rebuilt
    source, whose step count follows the machine's speed, would silently change the recipe)."""
    from mlx26.core.zoo.registry import resolve_model_path

    weights = Path(resolve_model_path(r.preset.continue_from)) / "model.safetensors"
    return {"model": r.preset.continue_from, "weights_sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
            "method": f"continued pre-training of every weight at a {r.context}-token context"}


def _manifest(opts: TrainOptions, r: Resolved, model: Any, tokenizer: Any, used: list[dict], eval_corpus: str,
              eval_text: str, final: dict[str, Any], baselines: dict[str, float], history: list[dict[str, Any]],
              steps: int, wall: float, cpu: float, threads: int, params: int, tok_hash: str) -> dict[str, Any]:
    eval_bytes = eval_text.encode("utf-8")
    ev = {"corpus": eval_corpus, "split": "heldout", "bytes": len(eval_bytes),
          "text_hash": "sha256:" + hashlib.sha256(eval_bytes).hexdigest(), "context": r.context, **final,
          "baselines": baselines}
    return {
        "name": r.out.name, "preset": r.preset.name, "description": r.preset.description,
        "architecture": type(model).__name__, "family": r.preset.family, "random_init": False,
        "parameters": params, "config": {k: v for k, v in r.preset.arch.items()},
        "tokenizer": {"name": r.tokenizer if r.tokenizer in ("byte", "bpe-4096") else Path(r.tokenizer).name,
                      "vocab_size": len(tokenizer), "hash": tok_hash},
        "corpora": used, "eval": ev,
        **({"upcycled_from": _upcycled_from(r.preset)} if r.preset.upcycle_from else {}),
        **({"continued_from": _continued_from(r)} if r.preset.continue_from else {}),
        "training": {"command": opts.command, "seed": opts.seed, "steps": steps,
                     "tokens_seen": steps * r.batch_size * r.context, "batch_size": r.batch_size,
                     "context": r.context, "lr": r.lr, "minutes_budget": None if r.steps else r.minutes,
                     "budget_clock": None if r.steps else opts.clock,
                     "fixed_steps": r.steps, "optimizer": "AdamW(betas=(0.9, 0.95), weight_decay=0.1 on matrices)",
                     "schedule": "linear warm-up min(100, 5%), cosine to 10% of lr", "grad_clip": 1.0,
                     "wall_time_s": round(wall, 1), "cpu_time_s": round(cpu, 1), "torch_threads": threads, "cpu_count": os.cpu_count(),
                     "history": history},
        "versions": _versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _save(model: Any, tokenizer: Any, manifest: dict[str, Any], out: Path, force: bool) -> None:
    """save_pretrained (safetensors) + tokenizer + manifest + card into a temp folder, then rename onto ``out``."""
    from mlx26.core.zoo.card import model_card
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # stderr belongs to our own progress and notices
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_folder(out) as tmp:  # the old folder, or the new one complete; a failure leaves no temp folder
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (tmp / "MODEL_CARD.md").write_text(model_card(manifest), encoding="utf-8")
        for f in tmp.iterdir():
            f.chmod(0o644)
        if out.exists() and not force:
            raise InputError(f"output directory {out} already exists.", "add --force (or set MLX26_FORCE=1) to replace it")
