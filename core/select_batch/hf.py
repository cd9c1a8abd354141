"""PartitionSel inside a Hugging Face ``transformers.Trainer``: a batch sampler that selects every minibatch.

Our integration (Agrawal et al., ICML 2026, describe the selection, not a Trainer hook): the
:class:`SelectionBatchSampler` is the Trainer's ``batch_sampler``. For each optimizer step it takes the
next window of ``batch × buffer`` candidates from a seeded stream of dataset indices (the same stream
``select-batch train`` uses), computes their gradient features under the model *as it is at that
step* (the sampler holds the Trainer's own model object, so it sees every update), and yields the
``batch`` indices the greedy picks under the per-domain budgets. The validation anchors' features are
recomputed every ``anchor_every`` steps. Each yielded batch's selection weights join the queue
``weights`` (in order: a prefetching loader reads one batch ahead, so "the last batch" would be the
wrong one); :class:`SelectBatchTrainer` with ``weighted=True`` takes them off the queue to weight the
loss, otherwise the Trainer's loss is unweighted.

    sampler = SelectionBatchSampler(model, tokenizer, texts, domains, val_texts, batch=8, buffer=8, steps=200)
    trainer = SelectBatchTrainer(model=model, args=TrainingArguments(..., max_steps=200), train_dataset=ds,
                                 data_collator=collator, batch_sampler=sampler)
    trainer.train()

Works in one process (the sampler and the model must be the same object, not a DDP replica); under
``torchrun`` use ``mlx26 select-batch train``, which gathers features across ranks.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.select_batch.budgets import allocate_budgets, domain_counts
from mlx26.core.select_batch.features import Featurizer
from mlx26.core.select_batch.greedy import METHODS, select_random
from mlx26.core.select_batch.pipeline import select_from_features
from mlx26.core.select_batch.train import candidate_stream


class SelectionBatchSampler:
    """Yields ``steps`` minibatches of dataset indices, each selected from a fresh candidate window."""

    def __init__(self, model: Any, tokenizer: Any, texts: Sequence[str], domains: Sequence[str],
                 val_texts: Sequence[str], *, batch: int = 8, buffer: int = 8, steps: int = 100,
                 method: str = "partitionsel", budget_mode: str = "proportional", eta: float = 0.1,
                 proj_dim: int = 512, seq_len: int = 64, anchor_every: int = 1, seed: int = 0):
        if method not in METHODS:
            raise InputError(f"Unknown method '{method}'.", "choose one of: " + ", ".join(METHODS))
        if len(texts) != len(domains):
            raise InputError(f"{len(texts)} texts but {len(domains)} domain labels.")
        if not val_texts and method != "random":
            raise InputError("selection needs validation texts (the anchors).")
        for name, value in (("batch", batch), ("buffer", buffer), ("steps", steps), ("anchor_every", anchor_every)):
            if value < 1:
                raise InputError(f"{name} must be ≥ 1, got {value}.")
        if batch * buffer > len(texts):
            raise InputError(f"batch × buffer = {batch * buffer} candidates a step, but the dataset has {len(texts)}.")
        self.texts, self.domains, self.val_texts = list(texts), list(domains), list(val_texts)
        self.batch, self.buffer, self.steps, self.method = batch, buffer, steps, method
        self.budget_mode, self.eta, self.anchor_every, self.seed = budget_mode, eta, anchor_every, seed
        self.feat = Featurizer(model, tokenizer, "last-layer", proj_dim, seed, seq_len)
        self.weights: deque[list[float]] = deque()
        self.log: list[dict[str, Any]] = []  # per step: window, chosen, budgets, select seconds

    def __len__(self) -> int:
        return self.steps

    def __iter__(self) -> Iterator[list[int]]:
        stream = candidate_stream(len(self.texts), self.batch * self.buffer, self.seed)
        anchors: np.ndarray | None = None
        for step in range(1, self.steps + 1):
            window = next(stream)
            start = time.perf_counter()
            domains = [self.domains[i] for i in window]
            if self.method == "random":
                budgets = allocate_budgets(domain_counts(domains), self.batch, self.budget_mode)
                picked = select_random(domains, budgets, np.random.default_rng(self.seed * 1_000_003 + step))
                chosen, weights = [window[i] for i in picked], [1.0] * len(picked)
            else:
                model = self.feat.model
                was_training = model.training
                model.eval()
                G = self.feat.features([self.texts[i] for i in window])
                if anchors is None or (step - 1) % self.anchor_every == 0:
                    anchors = self.feat.features(self.val_texts)
                model.train(was_training)
                # the one-shot selection's own path: bad rows dropped, budgets over what remains, the greedy
                records, summary, _ = select_from_features(G, domains, [str(i) for i in window], anchors, self.batch,
                                                           self.budget_mode, self.method, eta=self.eta,
                                                           seed=self.seed * 1_000_003 + step)
                chosen, weights = [int(r["id"]) for r in records], [float(r["weight"]) for r in records]
                budgets = summary["budgets"] or {}
            self.weights.append(weights)
            self.log.append({"step": step, "window": window, "chosen": chosen, "budgets": dict(budgets),
                             "select_s": time.perf_counter() - start})
            yield chosen


def _trainer_class() -> Any:
    """``SelectBatchTrainer``, defined on first use (transformers is imported only then)."""
    import torch
    from transformers import Trainer

    class SelectBatchTrainer(Trainer):
        """A ``Trainer`` whose training batches come from a :class:`SelectionBatchSampler`; with
        ``weighted=True`` each example's loss is weighted by its selection weight (normalised)."""

        def __init__(self, *args: Any, batch_sampler: SelectionBatchSampler, weighted: bool = False, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.batch_sampler = batch_sampler
            self.weighted = weighted

        def get_train_dataloader(self) -> Any:
            return torch.utils.data.DataLoader(self.train_dataset, batch_sampler=self.batch_sampler,  # type: ignore[arg-type]
                                               collate_fn=self.data_collator)

        def compute_loss(self, model: Any, inputs: Any, return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            if not self.weighted:
                return super().compute_loss(model, inputs, return_outputs=return_outputs,
                                            num_items_in_batch=num_items_in_batch)
            from mlx26.core.select_batch.features import per_example_loss

            losses = per_example_loss(model, inputs["input_ids"], inputs["attention_mask"])
            if not model.training or not self.batch_sampler.weights:  # evaluation: no selection behind the batch
                return (losses.mean(), None) if return_outputs else losses.mean()
            w = torch.tensor(self.batch_sampler.weights.popleft(), dtype=losses.dtype)
            w = w / w.sum() if float(w.sum()) > 0 else torch.full_like(losses, 1.0 / len(losses))
            loss = (losses * w).sum()
            return (loss, None) if return_outputs else loss

    return SelectBatchTrainer


def __getattr__(name: str) -> Any:
    if name == "SelectBatchTrainer":
        return _trainer_class()
    raise AttributeError(name)
