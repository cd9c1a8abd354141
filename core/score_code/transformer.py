"""A small causal transformer PRM with a 2-class head read at step separators (SecCodePRM reconstruction).

The paper's PRM is a code LLM (PURE-PRM recipe) whose token-classification head is read at
the step separators. Ours is the same shape at toy size, trained here on CPU: tokens are the
regex tokens of :mod:`features` hashed into ``vocab`` buckets plus NEWLINE and SEP; a SEP
closes each step; a causal transformer (pre-LN, learned positions) reads the whole prefix;
the head at each SEP gives p(vulnerable) and s_t = p(safe) − p(vulnerable).

Long inputs use a sliding window that keeps causality exactly: the SEP at position p is read
in window k = max(0, ⌊p/h⌋ − 1) starting at k·h (h = max_len / 2), which depends on p only,
so appending steps never changes earlier scores, and every step sees at least h tokens back.

``function_scope = 1`` (the models trained on real code since the third pass; ours): the token
stream restarts where a step opens a ``def``/``class`` at the previous one's depth or shallower —
the linear model's function scope (:class:`taint.ScopeTracker`, shared) — so a function's scores do
not depend on the code before it (a window of tokens would carry the previous functions in).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from mlx26.core.score_code.features import tokens
from mlx26.core.score_code.taint import ScopeTracker

PAD, NEWLINE, SEP = 0, 1, 2
N_SPECIAL = 3


@dataclass
class TransformerConfig:
    vocab: int = 2048
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128
    max_len: int = 512
    function_scope: int = 0  # 1: the token stream restarts at each function (models without the key: 0)


def encode_steps(texts: Sequence[str], vocab: int) -> tuple[list[int], list[int]]:
    """Token ids of all steps (a SEP after each) and the SEP positions."""
    ids: list[int] = []
    seps: list[int] = []
    for text in texts:
        for i, line in enumerate(text.split("\n")):
            if i:
                ids.append(NEWLINE)
            ids += [N_SPECIAL + zlib.crc32(t.encode("utf-8", "surrogateescape")) % vocab for t in tokens(line)]
        seps.append(len(ids))
        ids.append(SEP)
    return ids, seps


def scope_groups(texts: Sequence[str], function_scope: bool) -> list[list[int]]:
    """Step indices in runs that share a token stream: one run, or one per function scope."""
    if not function_scope:
        return [list(range(len(texts)))] if texts else []
    groups: list[list[int]] = []
    tracker = ScopeTracker()
    for i, text in enumerate(texts):
        if tracker.starts_scope(text) or not groups:
            groups.append([])
        groups[-1].append(i)
    return groups


def window_start(pos: int, max_len: int) -> int:
    h = max_len // 2
    return max(0, pos // h - 1) * h


def build(config: TransformerConfig):
    import torch
    from torch import nn

    class CausalPRM(nn.Module):
        def __init__(self, c: TransformerConfig):
            super().__init__()
            self.c = c
            self.tok = nn.Embedding(c.vocab + N_SPECIAL, c.d_model)
            self.pos = nn.Embedding(c.max_len, c.d_model)
            layer = nn.TransformerEncoderLayer(c.d_model, c.n_heads, c.d_ff, dropout=0.0, batch_first=True,
                                               norm_first=True)
            self.body = nn.TransformerEncoder(layer, c.n_layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(c.d_model)
            self.head = nn.Linear(c.d_model, 2)  # logits of (safe, vulnerable)

        def forward(self, ids):  # (B, L) → (B, L, 2)
            L = ids.shape[1]
            x = self.tok(ids) + self.pos(torch.arange(L, device=ids.device))
            mask = torch.triu(torch.full((L, L), float("-inf"), device=ids.device), diagonal=1)
            return self.head(self.norm(self.body(x, mask=mask, is_causal=True)))

    return CausalPRM(config)


def windows(n_tokens: int, seps: Sequence[int], max_len: int) -> list[tuple[int, list[int]]]:
    """(window start, SEP positions read in it) for a sequence."""
    groups: dict[int, list[int]] = {}
    for p in seps:
        groups.setdefault(window_start(p, max_len), []).append(p)
    return sorted(groups.items())


class TransformerPRM:
    kind = "transformer"

    def __init__(self, config: TransformerConfig, state: dict | None = None):
        import torch
        from mlx26.core.common.threads import apply_torch_threads

        apply_torch_threads(torch)
        self.config = config
        self.net = build(config)
        if state is not None:
            self.net.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})
        self.net.eval()

    def score_steps(self, texts: Sequence[str]) -> tuple[list[float], bool]:
        if not texts:
            return [], False
        return scores_by_scope(texts, self.config, self._window_scores_at)

    def _window_scores_at(self, ids: Sequence[int], positions: Sequence[int]) -> list[float]:
        import torch

        with torch.no_grad():
            p = torch.softmax(self.net(torch.tensor([list(ids)]))[0][list(positions)], dim=-1)
        return (p[:, 0] - p[:, 1]).tolist()

    def window_scores(self, ids: Sequence[int]) -> list[float]:
        """p(safe) − p(vulnerable) at every position of one window of token ids."""
        import torch

        with torch.no_grad():
            p = torch.softmax(self.net(torch.tensor([list(ids)]))[0], dim=-1)
        return (p[:, 0] - p[:, 1]).tolist()

    def stream(self):
        """Scores the steps of a growing file one at a time, rerunning only the current window."""
        from mlx26.core.score_code.runtime import transformer_stream

        return transformer_stream(self)

    def to_arrays(self) -> dict:
        import numpy as np

        arrays = {f"state/{k}": v.detach().numpy().astype(np.float32) for k, v in self.net.state_dict().items()}
        for k, v in asdict(self.config).items():
            if k == "function_scope" and not v:  # absent for window-only models, so earlier files keep their hashes
                continue
            arrays[f"config/{k}"] = np.int64(v)
        return arrays

    @classmethod
    def from_arrays(cls, arrays) -> TransformerPRM:
        config = TransformerConfig(**{k.split("/", 1)[1]: int(arrays[k]) for k in arrays if k.startswith("config/")})
        state = {k.split("/", 1)[1]: arrays[k] for k in arrays if k.startswith("state/")}
        return cls(config, state)


def scores_by_scope(texts: Sequence[str], c: TransformerConfig, window_scores_at) -> tuple[list[float], bool]:
    """Step scores: each scope's token stream in causal windows; ``window_scores_at(ids, positions)``
    gives p(safe) − p(vulnerable) at those positions of one window. Also whether a window was exceeded."""
    out: list[float] = [0.0] * len(texts)
    exceeded = False
    for members in scope_groups(texts, bool(c.function_scope)):
        ids, seps = encode_steps([texts[i] for i in members], c.vocab)
        scores: dict[int, float] = {}
        for start, group in windows(len(ids), seps, c.max_len):
            values = window_scores_at(ids[start:group[-1] + 1], [q - start for q in group])
            scores.update(zip(group, values, strict=True))
        for i, q in zip(members, seps, strict=True):
            out[i] = scores[q]
        exceeded = exceeded or len(ids) > c.max_len
    return out, exceeded


def train_transformer(step_texts: Sequence[Sequence[str]], labels: Sequence[Sequence[int]], *,
                      config: TransformerConfig | None = None, epochs: int = 6, batch_size: int = 16,
                      lr: float = 3e-3, seed: int = 0, progress=None) -> tuple[TransformerPRM, dict]:
    """Train on files given as step texts with 0/1 step labels; class-balanced cross-entropy at SEPs."""
    import random

    import torch
    from mlx26.core.common.threads import apply_torch_threads

    apply_torch_threads(torch)
    torch.manual_seed(seed)
    c = config or TransformerConfig()
    model = TransformerPRM(c)
    net = model.net
    items = []  # (ids window, target positions, target labels)
    for texts, ys in zip(step_texts, labels, strict=True):
        for members in scope_groups(texts, bool(c.function_scope)):  # the windows scoring will read
            ids, seps = encode_steps([texts[i] for i in members], c.vocab)
            label_at = dict(zip(seps, [ys[i] for i in members], strict=True))
            for start, group in windows(len(ids), seps, c.max_len):
                items.append((ids[start:group[-1] + 1], [q - start for q in group], [label_at[q] for q in group]))
    n_pos = sum(sum(t) for _, _, t in items)
    n_all = sum(len(t) for _, _, t in items)
    weight = torch.tensor([0.5 / (n_all - n_pos), 0.5 / n_pos]) * n_all
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=0.01)
    rng = random.Random(seed)
    total_steps = epochs * math.ceil(len(items) / batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total_steps, pct_start=0.1)
    net.train()
    losses = []
    for epoch in range(epochs):
        order = list(range(len(items)))
        rng.shuffle(order)
        order.sort(key=lambda i: len(items[i][0]) // 64)  # bucket by length, shuffled within buckets
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        rng.shuffle(batches)
        epoch_loss = 0.0
        for batch in batches:
            L = max(len(items[i][0]) for i in batch)
            x = torch.full((len(batch), L), PAD, dtype=torch.long)
            rows, cols, ys = [], [], []
            for r, i in enumerate(batch):
                ids, pos, t = items[i]
                x[r, :len(ids)] = torch.tensor(ids)
                rows += [r] * len(pos)
                cols += pos
                ys += t
            logits = net(x)[rows, cols]
            loss = torch.nn.functional.cross_entropy(logits, torch.tensor(ys), weight=weight)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            epoch_loss += float(loss.detach()) * len(batch)
        losses.append(epoch_loss / len(items))
        if progress:
            progress(f"transformer epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}")
    net.eval()
    params = sum(p.numel() for p in net.parameters())
    return model, {"windows": len(items), "steps": n_all, "vulnerable_steps": n_pos, "epoch_losses": losses,
                   "parameters": params, "config": asdict(c), "epochs": epochs, "lr": lr, "batch_size": batch_size}
