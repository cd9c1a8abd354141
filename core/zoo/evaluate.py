"""Held-out bits per byte of a causal LM, next to general-purpose compressors on the same bytes.

Standard measures (no paper reconstructed). The text is tokenized once (lossless
byte-level tokenizers only), cut into consecutive chunks of ``context`` tokens (the last,
partial chunk scored at the end of a full-length window), and every token is predicted
exactly once, each window starting from ``<|bos|>`` (the layout the training loop uses). bits/byte = Σ −log₂ p(token) / UTF-8 bytes of the text: the code
length of the text under the model, comparable to a compressor's output size × 8 / bytes.
The baselines are Python's ``lzma`` (preset 9 | extreme = ``xz -9e``), ``bz2`` level 9 and
``gzip`` level 9, each compressing the whole text in one stream (headers included).

For mixture-of-experts models a forward hook on every router records which experts each
token's top-k picks, giving the per-layer load histogram.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure

COMPRESSORS = {
    "xz -9e": lambda b: lzma.compress(b, preset=9 | lzma.PRESET_EXTREME),
    "bz2 -9": lambda b: bz2.compress(b, 9),
    "gzip -9": lambda b: gzip.compress(b, 9, mtime=0),
}


def compressor_bits_per_byte(text: str) -> dict[str, float]:
    """bits/byte of each baseline compressor on the UTF-8 bytes of ``text``."""
    data = text.encode("utf-8")
    if not data:
        raise InputError("cannot measure bits/byte of empty text.")
    return {name: 8 * len(fn(data)) / len(data) for name, fn in COMPRESSORS.items()}


class ExpertLoad:
    """Counts of top-k expert selections per MoE layer, collected by forward hooks on the routers."""

    def __init__(self, model: Any):
        self.top_k = int(getattr(model.config, "num_experts_per_tok", 0) or 0)
        self.n_experts = int(getattr(model.config, "num_local_experts", 0) or getattr(model.config, "num_experts", 0))
        # v5: ``model.layers.N.mlp.gate`` (a TopKRouter); v4: ``….block_sparse_moe.gate`` (a Linear)
        self.routers = [m for name, m in model.named_modules() if name.rsplit(".", 1)[-1] == "gate"] if self.top_k else []
        self.counts = [[0] * self.n_experts for _ in self.routers]
        self._handles: list[Any] = []

    @property
    def active(self) -> bool:
        return bool(self.routers)

    def __enter__(self) -> ExpertLoad:
        for layer, router in enumerate(self.routers):
            self._handles.append(router.register_forward_hook(self._hook(layer)))
        return self

    def __exit__(self, *exc: object) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def _hook(self, layer: int):
        import torch

        def record(module: Any, inputs: Any, output: Any) -> None:
            logits = output[0] if isinstance(output, tuple) else output  # v5 router → (logits, …); v4 Linear
            picks = torch.topk(logits.reshape(-1, logits.shape[-1]), self.top_k, dim=-1).indices
            hist = torch.bincount(picks.reshape(-1), minlength=self.n_experts).tolist()
            self.counts[layer] = [a + b for a, b in zip(self.counts[layer], hist, strict=True)]

        return record

    def summary(self) -> dict[str, Any]:
        dead = sum(c == 0 for layer in self.counts for c in layer)
        shares = [[c / max(1, sum(layer)) for c in layer] for layer in self.counts]
        routed = sum(self.counts[0]) // max(1, self.top_k) if self.counts else 0
        return {"expert_load": self.counts, "routed_positions": routed, "dead_experts": dead,
                "min_expert_share": min((min(s) for s in shares), default=None),
                "max_expert_share": max((max(s) for s in shares), default=None)}


def windows(n: int, context: int, stride: int) -> list[tuple[int, int, int]]:
    """(start, end, first scored) index triples covering tokens 0..n-1, each scored exactly once.

    Window ``[start, end)`` has at most ``context`` tokens; it scores ``[first, end)``. With
    ``stride == context`` (the default) the windows are disjoint chunks, except that the last,
    partial chunk is scored inside a full-length window (its tokens keep a full context); with
    a smaller stride each scored token after the first window sees at least ``context - stride``
    earlier tokens (a sliding-window evaluation, ``context/stride`` × the cost).
    """
    if context < 2:
        raise InputError(f"context must be ≥ 2 tokens, got {context}.")
    if not 1 <= stride <= context:
        raise InputError(f"stride must be in [1, context={context}], got {stride}.")
    out, end = [], min(n, context)
    if n:
        out.append((0, end, 0))
    while end < n:
        new_end = min(n, end + stride)
        out.append((max(0, new_end - context), new_end, end))
        end = new_end
    return out


def token_nll(model: Any, ids: list[int], bos_id: int, context: int, batch_size: int = 8,
              stride: int | None = None) -> tuple[float, int]:
    """(Σ −ln p(token), number of tokens) over ``ids``; every window starts from ``<|bos|>``."""
    import torch

    spans = windows(len(ids), context, stride or context)
    total, count = 0.0, 0
    model.eval()
    with torch.inference_mode():
        # equal-length windows batched; any shorter one on its own
        by_len: dict[int, list[tuple[int, int, int]]] = {}
        for span in spans:
            by_len.setdefault(span[1] - span[0], []).append(span)
        for group_spans in by_len.values():
            for i in range(0, len(group_spans), batch_size):
                group = group_spans[i:i + batch_size]
                targets = torch.tensor([ids[s:e] for s, e, _ in group], dtype=torch.long)
                bos = torch.full((targets.shape[0], 1), bos_id, dtype=torch.long)
                logits = model(input_ids=torch.cat([bos, targets[:, :-1]], 1)).logits.float()
                nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
                for row, (s, _, first) in enumerate(group):
                    total += float(nll[row, first - s:].sum())
                    count += int(nll.shape[1] - (first - s))
    return total, count


def bits_per_byte(model: Any, tokenizer: Any, text: str, *, context: int = 256, batch_size: int = 8,
                  routing: bool = True, stride: int | None = None) -> dict[str, Any]:
    """Model bits/byte on ``text`` (+ tokens, bytes, and the expert histogram for MoE models)."""
    from mlx26.core.zoo.tokenization import encode_plain

    data_len = len(text.encode("utf-8"))
    if data_len == 0:
        raise InputError("cannot measure bits/byte of empty text.")
    ids = encode_plain(tokenizer, text)
    if tokenizer.decode(ids) != text:
        raise RunFailure("the tokenizer does not round-trip this text; bits/byte would not be a code length")
    load = ExpertLoad(model) if routing else None
    if load is not None and load.active:
        with load:
            nats, n = token_nll(model, ids, tokenizer.bos_token_id, context, batch_size, stride)
    else:
        nats, n = token_nll(model, ids, tokenizer.bos_token_id, context, batch_size, stride)
    result: dict[str, Any] = {"bits_per_byte": nats / math.log(2) / data_len, "bytes": data_len, "tokens": n,
                              "bytes_per_token": data_len / n}
    if load is not None and load.active:
        result.update(load.summary())
    return result
