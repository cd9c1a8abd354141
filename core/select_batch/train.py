"""Fine-tuning with a selected minibatch every step (the ``select-batch train`` loop).

Our own loop around PartitionSel (Agrawal et al., ICML 2026); the upstream loop is Tunix SFT
in JAX, which we did not port. Every step draws ``batch × buffer`` candidates from the pool
(a seeded stream, identical for every method with the same seed), computes their gradient
features and the validation anchors under the current model, selects ``batch`` of them with
the chosen method and takes one AdamW step on the causal-LM loss of the selected examples
(the mean of per-example token-mean losses; uniform weights unless ``weighted``). The
validation loss (same per-example mean over the validation set) is logged every
``eval_every`` steps.

Features: ``features`` picks the path (``auto``/``ghost``: closed-form LM-head gradients from
one no-grad forward, :mod:`.ghost`; ``vmap``: the exact per-example backward). ``refresh`` R
(default 1 = fresh features every step) is an explicit staleness option, GradMatch-style: a
candidate's features are reused when they were computed fewer than R steps ago (under the
model of that step), and the validation anchors are recomputed every R steps; each record
says how many feature rows were computed (``fresh``).

Amortised selection (``reservoir`` K ≥ 1, ours; the second-pass issue's design): candidates the
selector passes over are not thrown away but wait, with the features computed when they joined, for
up to K steps; each step's window is the waiting candidates topped up with new draws from a seeded
stream of pool indices (``item_stream``), so in steady state a step featurises about ``batch`` new
rows (plus those that aged out) instead of ``batch × buffer``. The anchors are recomputed every
``anchor_every`` steps (0: every K). ``feature_len`` T computes the features (candidates and anchors)
on the first T tokens only; training and the losses keep ``seq_len``. Staleness is bounded: no
feature row is ever older than K steps. The waiting set and the draw count are in the checkpoint.

Timing: ``feature_s`` (everything the step would not otherwise pay for the features: the
forward over candidates and anchors, the per-example gradients, the projection, the cache),
``greedy_s`` (budgets and greedy), ``select_s`` = their sum, ``update_s`` (forward, backward
and optimizer step on the batch); ``select_fraction`` = select_s / (select_s + update_s).
Evaluation is not timed into either. ``random`` computes no features.

Interruption: :meth:`SelectTrainer.run` polls ``stop()`` after each step; with a ``checkpoint`` path
it saves the model, AdamW state, torch RNG, feature cache and anchors, the records so far and a hash
of the pool/validation/test rows there, then raises ``Interrupted`` (exit 130). ``resume=`` that
checkpoint (:func:`load_checkpoint`) re-yields the stored records and continues from the next step
of the same seeded candidate stream, so the log's losses and selections equal an uninterrupted
run's (the timing fields are measured again).

Data-parallel (``torchrun``, :mod:`mlx26.core.common.distributed`), PartitionSel *gathered on rank 0 and
broadcast*: every rank draws the same candidate window, computes the gradient features of its block
of the rows that need them (and of its block of the validation anchors), and all-gathers them, so every
rank holds the same feature cache; rank 0 alone runs budgets + greedy on all ``batch × buffer``
candidates and broadcasts the selection (indices, weights, its timings); each rank then takes its block
of the ``batch`` selected examples and DDP averages the gradients (each rank's weighted loss is scaled
by the world size, so the average is the single-process weighted sum). The selection is therefore the
one a single process makes on the same window, the features cost 1/N per rank, and only the greedy
(a few % of a step) is serial. The alternative, selection per rank on its own shard of the window
with per-rank budgets, needs no gather but solves N smaller problems that ignore the conflicts
between shards and change the result with N; docs/scale-out.md compares the two. Validation losses,
records, checkpoints and the summary are rank 0's; ``batch`` must divide by the world size.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from mlx26.core.common import distributed
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.common.interrupts import Interrupted, interrupted
from mlx26.core.select_batch.budgets import allocate_budgets, curriculum_weights, domain_counts, water_fill
from mlx26.core.select_batch.data import PoolItem
from mlx26.core.select_batch.features import GRAD_PARAMS, clean_rows
from mlx26.core.select_batch.greedy import BUDGETED, METHODS, select, select_random
from mlx26.core.select_batch.utility import QuadraticUtility


@dataclass
class TrainConfig:
    model: str = "tiny-llama"
    method: str = "partitionsel"
    steps: int = 20
    batch: int = 8
    buffer: int = 8
    lr: float = 3e-4
    seq_len: int = 64
    grad_params: str = "last-layer"
    proj_dim: int = 512
    eta: float = 0.1
    budget_mode: str | Mapping[str, int] = "proportional"
    randomized: bool = False
    weighted: bool = False
    eval_every: int = 1
    seed: int = 0
    features: str = "auto"
    refresh: int = 1
    reservoir: int = 0
    anchor_every: int = 0
    feature_len: int = 0
    curriculum_lambda: float = 1.0

    def validate(self, pool_size: int) -> None:
        if self.method not in METHODS:
            raise InputError(f"Unknown method '{self.method}'.", "choose one of: " + ", ".join(METHODS))
        if self.grad_params not in GRAD_PARAMS:
            raise InputError(f"Unknown gradient parameters '{self.grad_params}'.",
                             "choose one of: " + ", ".join(GRAD_PARAMS))
        for name in ("steps", "batch", "buffer", "eval_every", "refresh"):
            if getattr(self, name) < 1:
                raise InputError(f"--{name.replace('_', '-')} must be ≥ 1, got {getattr(self, name)}.")
        for name in ("reservoir", "anchor_every", "feature_len"):
            if getattr(self, name) < 0:
                raise InputError(f"--{name.replace('_', '-')} must be ≥ 0 (0 = off), got {getattr(self, name)}.")
        if self.reservoir and self.refresh > 1:
            raise InputError("--reservoir K already reuses a candidate's features while it waits (≤ K steps); "
                             "--refresh R > 1 is the other staleness scheme.", "give one of the two")
        if not (np.isfinite(self.curriculum_lambda) and self.curriculum_lambda > 0):
            raise InputError(f"--curriculum-lambda must be a positive number, got {self.curriculum_lambda}.")
        if self.budget_mode == "curriculum" and (self.method not in BUDGETED or self.method == "random"):
            raise InputError(f"--budget-mode curriculum follows the selection's per-domain utilities; "
                             f"'{self.method}' computes none.", "use partitionsel or independent")
        if self.feature_len == 1:
            raise InputError("--feature-len must be 0 (the whole --seq-len) or ≥ 2 tokens.")
        if not (self.lr > 0 and np.isfinite(self.lr)):
            raise InputError(f"--lr must be a positive number, got {self.lr}.")
        if not (np.isfinite(self.eta) and 0 < self.eta <= 1e6):
            raise InputError(f"--eta must be a positive number ≤ 1e6, got {self.eta}.")
        if self.proj_dim == 1 or self.proj_dim < 0:
            raise InputError(f"--proj-dim must be 0 (no projection) or ≥ 2, got {self.proj_dim}.")
        distributed.check_divisible(self.batch, "--batch")  # under torchrun: each rank trains on a block
        if self.batch * self.buffer > pool_size:
            raise InputError(f"batch × buffer = {self.batch * self.buffer} candidates a step, but the pool has only "
                             f"{pool_size} rows.", "lower --batch/--buffer or give a larger pool")
        if not isinstance(self.budget_mode, str) and sum(self.budget_mode.values()) != self.batch:
            raise InputError(f"the per-domain budgets sum to {sum(self.budget_mode.values())}, not to --batch "
                             f"{self.batch}.")


class SelectTrainer:
    """Run :class:`TrainConfig` on pool and validation items; iterate :meth:`run` for per-step records."""

    def __init__(self, items: Sequence[PoolItem], val_items: Sequence[PoolItem], config: TrainConfig,
                 test_items: Sequence[PoolItem] = ()):
        config.validate(len(items))
        if not isinstance(config.budget_mode, str):
            missing = sorted(set(config.budget_mode) - {it.domain for it in items})
            if missing:
                raise InputError(f"budget domain '{missing[0]}' is not in the pool.")
            # The candidate stream is fixed by the seed: find an infeasible buffer now, not mid-run.
            stream = candidate_stream(len(items), config.batch * config.buffer, config.seed)
            for step in range(1, config.steps + 1):
                try:
                    _budget_mode(config.budget_mode, [items[i].domain for i in next(stream)])
                except ValueError as exc:
                    raise InputError(f"step {step}: {exc}", "the per-domain budgets need every budget domain in "
                                     "every buffer: raise --buffer, or lower that domain's budget to 0") from None
        import torch
        from mlx26.core.common.seeding import seed_everything
        from mlx26.core.common.threads import apply_torch_threads
        from mlx26.core.select_batch.features import Featurizer
        from mlx26.core.zoo import load_model, load_tokenizer

        self.threads = apply_torch_threads(torch)
        seed_everything(config.seed)
        self.items, self.val_items, self.config = list(items), list(val_items), config
        self.test_items = list(test_items)
        self.torch = torch
        self.feat = Featurizer(load_model(config.model), load_tokenizer(config.model), config.grad_params,
                               config.proj_dim, config.seed, config.seq_len, path=config.features)
        self.model = self.feat.model
        self.world = distributed.env()
        self.net = distributed.wrap_ddp(self.model)  # the model itself in one process
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=config.lr)
        self.records: list[dict[str, Any]] = []
        self._cache: dict[int, tuple[int, np.ndarray]] = {}  # pool index -> (step computed, feature row)
        self._anchors: tuple[int, np.ndarray] | None = None
        self._trained: Counter[int] = Counter()  # pool index -> times it was in a trained minibatch
        self._gains: dict[str, float] | None = None  # curriculum: per-domain utility of the last selection
        self._waiting: dict[int, int] = {}  # reservoir: pool index -> the step it joined (its features' age)
        self._drawn = 0  # reservoir: new pool indices drawn so far (resume skips as many)


    def val_loss(self, items: Sequence[PoolItem] | None = None) -> float:
        """Mean per-example loss over the validation items (or ``items``)."""
        return float(self._example_losses(self.val_items if items is None else items).mean())

    def _example_losses(self, items: Sequence[PoolItem]) -> np.ndarray:
        from mlx26.core.select_batch.features import per_example_loss

        self.model.eval()
        losses = []
        with self.torch.no_grad():
            for start in range(0, len(items), 32):
                ids, mask = self.feat.encode([it.text for it in items[start:start + 32]])
                losses.append(per_example_loss(self.model, ids, mask))
        return self.torch.cat(losses).numpy()

    def _losses(self) -> dict[str, Any]:
        """Mean loss and per-domain mean loss of the validation (and test) items."""
        out: dict[str, Any] = {}
        for split, items in (("val", self.val_items), ("test", self.test_items)):
            if not items:
                continue
            losses = self._example_losses(items)
            domains = np.array([it.domain for it in items])
            out[f"{split}_loss"] = float(losses.mean())
            out[f"{split}_loss_by_domain"] = {d: float(losses[domains == d].mean()) for d in sorted(set(domains))}
        return out

    def _select(self, cand: list[int], step: int) -> tuple[list[int], list[float], dict[str, Any], float, float]:
        cfg = self.config
        domains = [self.items[i].domain for i in cand]
        seed = cfg.seed * 1_000_003 + step
        t0 = time.perf_counter()
        if cfg.method == "random":
            budgets = self._budgets(domains)
            picked = select_random(domains, budgets, np.random.default_rng(seed))
            return [cand[i] for i in picked], [1.0] * len(picked), {"dropped": 0}, 0.0, time.perf_counter() - t0
        self.model.eval()
        G, V, fresh = self._features(cand, step)
        t1 = time.perf_counter()
        if self.world.active:  # rank 0 selects on the gathered features, every rank gets its choice
            return distributed.broadcast(self._greedy(cand, step, G, V, fresh, t0, t1) if self.world.main else None)
        return self._greedy(cand, step, G, V, fresh, t0, t1)

    def _greedy(self, cand: list[int], step: int, G: np.ndarray, V: np.ndarray, fresh: int, t0: float,
                t1: float) -> tuple[list[int], list[float], dict[str, Any], float, float]:
        cfg = self.config
        seed = cfg.seed * 1_000_003 + step
        Gc, keep, dropped = clean_rows(G, "candidate")
        Vc, vkeep, _ = clean_rows(V, "validation")
        kept = [c for c, k in zip(cand, keep, strict=True) if k]
        kept_domains = [self.items[i].domain for i in kept]
        if len(kept) < cfg.batch:
            raise RunFailure(f"step {step}: only {len(kept)} of {len(cand)} candidates have usable gradients.")
        budgets = None
        if cfg.method in BUDGETED:
            try:
                budgets = self._budgets(kept_domains)
            except ValueError as exc:
                raise RunFailure(f"step {step}: {exc.args[0]}") from None
        util = QuadraticUtility.from_features(Gc, Vc, cfg.eta)
        sel = select(util, kept_domains, cfg.batch, cfg.method, budgets, randomized=cfg.randomized, seed=seed)
        info = {"utility": sel.utility, "conflicting_pairs": sel.conflicting_pairs, "dropped": dropped,
                "fresh": fresh}
        if cfg.budget_mode == "curriculum":
            val_domains = [it.domain for it, k in zip(self.val_items, vkeep, strict=True) if k]
            self._gains = self._domain_gains(Gc, Vc, val_domains, sel.indices, sel.weights)
            info = {**info, "budgets": dict(budgets or {}), "domain_gains": dict(self._gains)}
        return [kept[i] for i in sel.indices], sel.weights, info, t1 - t0, time.perf_counter() - t1

    def _budgets(self, domains: list[str]) -> dict[str, int]:
        """This step's per-domain budgets; ``curriculum`` starts proportional and then follows the gains."""
        cfg = self.config
        counts = domain_counts(domains)
        if cfg.budget_mode != "curriculum":
            return allocate_budgets(counts, cfg.batch, _budget_mode(cfg.budget_mode, domains))
        if self._gains is None:
            return allocate_budgets(counts, cfg.batch, "proportional")
        if cfg.batch > sum(counts.values()):
            raise InputError(f"the budget {cfg.batch} exceeds the window ({sum(counts.values())} usable items).")
        return water_fill(dict(counts), cfg.batch,
                          curriculum_weights(counts, self._gains, cfg.batch, cfg.curriculum_lambda))

    def _domain_gains(self, G: np.ndarray, V: np.ndarray, val_domains: Sequence[str], indices: Sequence[int],
                      weights: Sequence[float]) -> dict[str, float]:
        """U_c(w) of the selection on each domain's anchors alone (upstream's per-class utilities)."""
        w = np.zeros(G.shape[0])
        w[list(indices)] = weights
        labels = np.array(val_domains)
        return {d: float(QuadraticUtility.from_features(G, V[labels == d], self.config.eta).value(w))
                for d in sorted(set(val_domains))}

    def _features(self, cand: list[int], step: int) -> tuple[np.ndarray, np.ndarray, int]:
        """(candidate features, anchor features, rows computed now). Rows younger than ``refresh`` steps (with
        ``reservoir`` K: a waiting candidate's, ≤ K steps old) are reused; the anchors are recomputed every
        ``anchor_every`` steps (0: every ``refresh`` / K steps)."""
        cfg = self.config
        R = cfg.reservoir or cfg.refresh
        stale = [i for i in cand if i not in self._cache or step - self._cache[i][0] >= R]
        if stale:
            rows = self._sharded_features([self.items[i].text for i in stale])
            self._cache.update({i: (step, row) for i, row in zip(stale, rows, strict=True)})
        fresh = len(stale)
        if self._anchors is None or step - self._anchors[0] >= (cfg.anchor_every or R):
            self._anchors = (step, self._sharded_features([it.text for it in self.val_items]))
            fresh += len(self.val_items)
        G = np.stack([self._cache[i][1] for i in cand])
        if R == 1:
            self._cache.clear()  # nothing is ever reused: do not hold the whole pool's features
        return G, self._anchors[1], fresh

    def _sharded_features(self, texts: list[str]) -> np.ndarray:
        """``feat.features(texts)`` on the first ``feature_len`` tokens; under torchrun each rank computes its block
        and all ranks get every row."""
        full = self.feat.seq_len
        if self.config.feature_len:  # a shorter prefix for the features only; training and losses keep seq_len
            self.feat.seq_len = min(full, self.config.feature_len)
        try:
            if not self.world.active:
                return self.feat.features(texts)
            block = texts[distributed.shard(len(texts), self.world)]
            mine = list(self.feat.features(block)) if block else []
            return np.stack([row for part in distributed.all_gather(mine) for row in part])
        finally:
            self.feat.seq_len = full

    def _reservoir_window(self, step: int, draw: Iterator[int]) -> list[int]:
        """This step's candidates: those still waiting (joined < K steps ago), topped up with new draws."""
        k, size = self.config.reservoir, self.config.batch * self.config.buffer
        self._waiting = {i: s for i, s in self._waiting.items() if step - s < k}
        cand = list(self._waiting)
        taken = set(cand)
        while len(cand) < size:
            i = next(draw)
            self._drawn += 1
            if i not in taken:
                cand.append(i)
                taken.add(i)
        return cand

    def _reservoir_keep(self, cand: list[int], chosen: list[int], step: int) -> None:
        """Unselected candidates wait (new ones from this step on); selected ones leave; features of items
        no longer waiting are dropped, so memory stays at one window."""
        picked = set(chosen)
        for i in cand:
            if i in picked:
                self._waiting.pop(i, None)
            elif i not in self._waiting:
                self._waiting[i] = step
        self._cache = {i: v for i, v in self._cache.items() if i in self._waiting}

    def _update(self, chosen: list[int], weights: list[float]) -> float:
        from mlx26.core.select_batch.features import per_example_loss

        torch = self.torch
        if self.world.active:
            return self._update_ddp(chosen, weights)
        self.model.train()
        ids, mask = self.feat.encode([self.items[i].text for i in chosen])
        losses = per_example_loss(self.model, ids, mask)
        w = torch.tensor(weights, dtype=losses.dtype) if self.config.weighted else torch.ones_like(losses)
        w = w / w.sum() if float(w.sum()) > 0 else torch.full_like(losses, 1.0 / len(chosen))
        loss = (losses * w).sum()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in self.model.parameters() if p.requires_grad], 1.0)
        self.optimizer.step()
        return float(loss.detach())

    def _update_ddp(self, chosen: list[int], weights: list[float]) -> float:
        """This rank's block of the minibatch; DDP's gradient mean × world size = the single-process weighted sum."""
        from mlx26.core.select_batch.features import per_example_loss

        torch = self.torch
        self.model.train()
        # Fewer chosen rows than ranks (cleaning can drop candidates) would leave a rank an empty block,
        # alone outside DDP's all-reduce: then every rank takes the whole minibatch (same mean gradient).
        # `chosen` is the same on every rank (broadcast by rank 0), so all of them take the same branch.
        whole = len(chosen) < self.world.size
        rows = slice(0, len(chosen)) if whole else distributed.shard(len(chosen), self.world)
        w = torch.tensor(weights, dtype=torch.float32) if self.config.weighted else torch.ones(len(chosen))
        w = w / w.sum() if float(w.sum()) > 0 else torch.full((len(chosen),), 1.0 / len(chosen))
        ids, mask = self.feat.encode([self.items[i].text for i in chosen[rows]])
        losses = per_example_loss(self.net, ids, mask)
        local = (losses * w[rows].to(losses.dtype)).sum()
        self.optimizer.zero_grad(set_to_none=True)
        (local if whole else local * self.world.size).backward()
        torch.nn.utils.clip_grad_norm_([p for p in self.model.parameters() if p.requires_grad], 1.0)
        self.optimizer.step()
        total = distributed.all_reduce_sum([float(local.detach())])[0]
        return total / self.world.size if whole else total

    def inputs_hash(self) -> str:
        h = hashlib.sha256()
        for split in (self.items, self.val_items, self.test_items):
            for it in split:
                h.update(f"{it.domain}\x00{it.text}\x01".encode())
            h.update(b"\x02")
        return h.hexdigest()[:16]

    def _save(self, path: str, step: int, resume_command: str) -> None:
        from mlx26.core.common.files import atomic_path

        torch = self.torch
        cfg = asdict(self.config)
        cfg["budget_mode"] = dict(cfg["budget_mode"]) if not isinstance(cfg["budget_mode"], str) else cfg["budget_mode"]
        state = {"kind": "select-batch train", "step": step, "config": cfg, "inputs": self.inputs_hash(),
                 "resume_command": resume_command, "model": self.model.state_dict(),
                 "optimizer": self.optimizer.state_dict(), "torch_rng": torch.get_rng_state(),
                 "records": _plain(self.records), "trained": {int(k): int(v) for k, v in self._trained.items()},
                 "cache": {i: (k, torch.from_numpy(np.asarray(row))) for i, (k, row) in self._cache.items()},
                 "anchors": None if self._anchors is None else (self._anchors[0], torch.from_numpy(self._anchors[1])),
                 "waiting": {int(i): int(s) for i, s in self._waiting.items()}, "drawn": self._drawn,
                 "gains": self._gains}
        with atomic_path(path) as tmp:
            torch.save(state, tmp)

    def _load(self, state: dict[str, Any]) -> int:
        if state["inputs"] != self.inputs_hash():
            raise InputError("the pool, validation or test rows differ from the interrupted run's",
                             "give the same --data, --val and --test as that run")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.torch.set_rng_state(state["torch_rng"])
        self.records = list(state["records"])
        self._trained = Counter({int(k): v for k, v in state["trained"].items()})
        self._cache = {int(i): (k, row.numpy()) for i, (k, row) in state["cache"].items()}
        self._anchors = None if state["anchors"] is None else (state["anchors"][0], state["anchors"][1].numpy())
        self._waiting = {int(i): int(s) for i, s in state.get("waiting", {}).items()}
        self._drawn = int(state.get("drawn", 0))
        self._gains = state.get("gains")
        return int(state["step"])

    def run(self, stop: Callable[[], bool] | None = None, checkpoint: str | None = None,
            resume: dict[str, Any] | None = None, resume_command: str = "") -> Iterator[dict[str, Any]]:
        """Per-step records (step 0 = the initial losses). ``stop``/``checkpoint``/``resume``: see the module docstring."""
        cfg = self.config
        stream = candidate_stream(len(self.items), cfg.batch * cfg.buffer, cfg.seed)
        draw = item_stream(len(self.items), cfg.seed)  # the reservoir's top-ups
        start = 0
        if resume is None:
            first = {"step": 0, "method": cfg.method, "seed": cfg.seed, **(self._losses() if self.world.main else {})}
            self.records.append(first)
            yield first
        else:
            start = self._load(resume)
            yield from list(self.records)
            for _ in range(start):
                next(stream)
            for _ in range(self._drawn):
                next(draw)
        for step in range(start + 1, cfg.steps + 1):
            cand = self._reservoir_window(step, draw) if cfg.reservoir else next(stream)
            chosen, weights, info, feature_s, greedy_s = self._select(cand, step)
            if cfg.reservoir:
                self._reservoir_keep(cand, chosen, step)
                info = {**info, "waiting": len(self._waiting)}
            t0 = time.perf_counter()
            train_loss = self._update(chosen, weights)
            update_s = time.perf_counter() - t0
            self._trained.update(chosen)
            select_s = feature_s + greedy_s
            evaluate = step % cfg.eval_every == 0 or step == cfg.steps
            losses = self._losses() if evaluate and self.world.main else {}  # rank 0 evaluates
            record = {"step": step, "method": cfg.method, "seed": cfg.seed, "val_loss": None,
                      **({"test_loss": None} if self.test_items else {}), **losses, "train_loss": train_loss,
                      "counts": dict(sorted(Counter(self.items[i].domain for i in chosen).items())),
                      **info, "feature_s": feature_s, "greedy_s": greedy_s, "select_s": select_s,
                      "update_s": update_s, "select_fraction": select_s / (select_s + update_s)}
            self.records.append(record)
            yield record
            if self.world.active:  # one decision for every rank (a signal may reach them at different steps)
                stopping = distributed.any_rank(step < cfg.steps and stop is not None and stop())
            else:
                stopping = stop is not None and step < cfg.steps and stop()
            if stopping:  # SIGINT/SIGTERM after a finished step
                if checkpoint:
                    if self.world.main:
                        self._save(checkpoint, step, resume_command)
                    raise interrupted(step, cfg.steps, step, checkpoint, resume_command)
                raise Interrupted(f"interrupted at step {step} of {cfg.steps}; no checkpoint was written "
                                  "(no --checkpoint FILE)", "give --checkpoint FILE to keep the work on Ctrl-C "
                                  "and continue it with --resume")

    def summary(self) -> dict[str, Any]:
        steps = [r for r in self.records if r["step"] > 0]
        evals = [r for r in self.records if r.get("val_loss") is not None]
        select_s = sum(r["select_s"] for r in steps)
        greedy_s = sum(r["greedy_s"] for r in steps)
        update_s = sum(r["update_s"] for r in steps)
        totals: Counter[str] = Counter()
        for r in steps:
            totals.update(r["counts"])
        cfg = asdict(self.config)
        return {**cfg, "steps_done": len(steps), "initial_val_loss": evals[0]["val_loss"] if evals else None,
                "final_val_loss": evals[-1]["val_loss"] if evals else None,
                "initial_test_loss": evals[0].get("test_loss") if evals else None,
                "final_test_loss": evals[-1].get("test_loss") if evals else None,
                "final_val_loss_by_domain": evals[-1].get("val_loss_by_domain") if evals else None,
                "final_test_loss_by_domain": evals[-1].get("test_loss_by_domain") if evals else None,
                "select_fraction": select_s / (select_s + update_s) if steps else None,
                "greedy_fraction": greedy_s / (select_s + update_s) if steps else None,
                "select_s_mean": select_s / max(len(steps), 1), "update_s_mean": update_s / max(len(steps), 1),
                "counts_total": dict(sorted(totals.items())),
                "unique_trained": len(self._trained),
                "max_repeats": max(self._trained.values(), default=0),
                "conflicting_pairs_mean": (float(np.mean([r["conflicting_pairs"] for r in steps]))
                                           if steps and "conflicting_pairs" in steps[0] else None),
                "dropped_total": sum(r.get("dropped", 0) for r in steps),
                "fresh_rows_mean": float(np.mean([r.get("fresh", 0) for r in steps])) if steps else None,
                "feature_path": self.feat.resolved_path if self.config.method != "random" else None,
                "threads": self.threads}


def _plain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with numpy scalars made Python numbers (a checkpoint holds plain containers only)."""
    import json

    return json.loads(json.dumps(records, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def load_checkpoint(path: str) -> dict[str, Any]:
    """A ``select-batch train`` checkpoint (tensors and plain containers only: no code is loaded)."""
    from pathlib import Path

    import torch

    if not Path(path).is_file():
        raise InputError(f"nothing to resume: {path} does not exist",
                         "start the run without --resume (with --checkpoint FILE to keep its work on Ctrl-C)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for a bad file
        if "Weights only load failed" in str(exc):  # torch's text would suggest the unsafe way round it
            raise InputError(f"{path} is not a `select-batch train` checkpoint: it holds Python objects, which "
                             "are never loaded (they could run code)") from None
        raise InputError(f"cannot read checkpoint {path}: {' '.join(str(exc).split())[:200]}") from None
    if not isinstance(state, dict) or state.get("kind") != "select-batch train":
        raise InputError(f"{path} is not a `select-batch train` checkpoint")
    return state


def candidate_stream(n: int, size: int, seed: int) -> Iterator[list[int]]:
    """Windows of ``size`` distinct pool indices: consecutive slices of seeded permutations (an
    epoch's tail shorter than ``size`` is skipped, so no window repeats an item)."""
    if not 1 <= size <= n:
        raise InputError(f"cannot draw {size} distinct candidates from a pool of {n}.")
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(n).tolist()
        for start in range(0, n - size + 1, size):
            yield order[start:start + size]


def item_stream(n: int, seed: int) -> Iterator[int]:
    """Pool indices one at a time: consecutive seeded permutations (a stream of its own, seeded apart from the
    window stream)."""
    rng = np.random.default_rng([seed, 1])
    while True:
        yield from rng.permutation(n).tolist()


def _budget_mode(mode: str | Mapping[str, int], domains: Sequence[str]) -> str | Mapping[str, int]:
    if isinstance(mode, str):
        return mode
    present = set(domains)
    missing = [d for d, k in mode.items() if d not in present and k > 0]
    if missing:
        raise InputError(f"budget domain '{missing[0]}' has no candidate in this buffer.")
    return {d: k for d, k in mode.items() if d in present}
