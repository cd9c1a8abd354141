"""Supervised warm-up before GRPO: a zoo model learns both concise and verbose arithmetic chains.

Part of the SmartThinker reconstruction (ICML 2026, arXiv 2603.08000). The paper starts GRPO from a
reasoning model that already writes long chains; our 1.4M-parameter ``tiny-llama`` was trained on
Python source, so a short SFT on mixed-verbosity worked solutions (:mod:`.data`, synthetic) gives it
a policy with both styles, whose length GRPO can then calibrate. Our own plain loop: next-token
cross-entropy on the completion tokens only (prompt tokens masked), AdamW, linear warm-up then
cosine decay, gradient clipping 1.0; batches are drawn from a seeded stream of problems.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mlx26.core.common.errors import InputError


@dataclass(frozen=True)
class WarmupConfig:
    steps: int = 200
    batch_size: int = 16
    lr: float = 3e-3
    seed: int = 0
    style: str = "mixed"
    kinds: tuple[str, ...] | None = None
    log_every: int = 25


def encode(tokenizer: Any, prompt: str, completion: str) -> tuple[list[int], list[int]]:
    """(input ids, labels) of prompt + completion + EOS; prompt positions get label -100."""
    p = tokenizer(prompt)["input_ids"]  # with BOS, as TRL's GRPOTrainer tokenizes plain prompts
    c = tokenizer(completion, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return p + c, [-100] * len(p) + c


def _batches(tokenizer: Any, cfg: WarmupConfig) -> Iterator[list[tuple[list[int], list[int]]]]:
    from mlx26.core.smartthinker.data import records

    stream = records(cfg.steps * cfg.batch_size, seed=cfg.seed, split="train", kinds=cfg.kinds, style=cfg.style)
    batch = []
    for row in stream:
        batch.append(encode(tokenizer, row["prompt"], row["completion"]))
        if len(batch) == cfg.batch_size:
            yield batch
            batch = []


def collate(batch: Sequence[tuple[list[int], list[int]]], pad_id: int):
    import torch

    width = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, (x, y) in enumerate(batch):
        ids[row, : len(x)] = torch.tensor(x)
        labels[row, : len(y)] = torch.tensor(y)
        mask[row, : len(x)] = 1
    return ids, labels, mask


def sft(model: Any, tokenizer: Any, cfg: WarmupConfig) -> Iterator[dict[str, Any]]:
    """Train ``model`` in place; yields ``{phase: warmup, step, loss, lr}`` every ``log_every`` steps."""
    import torch

    if cfg.steps < 0 or cfg.batch_size < 1 or not cfg.lr > 0:
        raise InputError("warm-up needs steps ≥ 0, batch size ≥ 1 and a positive learning rate.")
    if cfg.steps == 0:
        return
    torch.manual_seed(cfg.seed)
    model.train()
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    other = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": other, "weight_decay": 0.0}],
                            lr=cfg.lr, betas=(0.9, 0.95))
    warm = max(1, min(20, cfg.steps // 10))

    def lr_at(step: int) -> float:
        if step < warm:
            return cfg.lr * (step + 1) / warm
        t = (step - warm) / max(1, cfg.steps - warm)
        return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))

    running = 0.0
    for step, batch in enumerate(_batches(tokenizer, cfg)):
        ids, labels, mask = collate(batch, tokenizer.pad_token_id)
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running += float(loss.detach())
        if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
            n = (step % cfg.log_every) + 1
            yield {"phase": "warmup", "step": step + 1, "loss": running / n, "lr": lr_at(step)}
            running = 0.0
    model.eval()
