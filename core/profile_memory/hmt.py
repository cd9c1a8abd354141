"""Compressed contextual memory in the style of HMT (Hierarchical Memory Transformer, He et al.,
NAACL 2025) as a four-stage memory pipeline (He, Ma, Sun, Cong, ICML 2026).

The context is cut into segments of ``SEGMENT`` tokens; the last one is the current segment.

* Prepare Memory — each earlier segment is run through the model on its own and summarised as
  the mean of its final hidden states: one memory embedding per segment.
* Compute Relevancy — cross-attention scores of the current segment's summary query (mean of its
  input embeddings) against the memory bank: M·q / √d.
* Retrieval — top-k segments (k = budget // SEGMENT, at most the bank size), recalled as the
  softmax-weighted sum of their memory embeddings.
* Apply — the recalled embedding is prepended as a memory prompt to the current segment, which
  is prefilled, then decoding runs over this short cache.

Reconstruction: HMT trains its summary and recall projections; the zoo models have none, so the
base model's own hidden states and identity projections are used. Costs are real, recall
quality is not meaningful.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.costs import topk_ops
from mlx26.core.profile_memory.kernel_bw import topk_traffic

SEGMENT = 256


def segments_for_budget(budget: int, n_segments: int, segment: int = SEGMENT) -> tuple[int, bool]:
    if budget <= 0:
        raise InputError(f"--budget must be a positive number of tokens, got {budget}.")
    k = max(1, budget // segment)
    return (n_segments, True) if k > n_segments else (k, False)


def memory_scores(bank: Any, query: Any) -> Any:
    """Cross-attention scores M·q/√d of the memory bank [n, d] against the query [d]."""
    return (bank @ query) / bank.shape[1] ** 0.5


def recall(bank: Any, scores: Any, k: int, ops: Any) -> tuple[Any, Any]:
    """(recalled [d], selected indices [k]): softmax over the top-k scores, weighted sum of their rows."""
    import torch

    idx = ops.topk(scores[None], k)[0].to(bank.device)
    weights = torch.softmax(scores[idx], dim=0)
    chosen = ops.gather(bank[None], idx[None])[0].to(bank.device)
    return weights @ chosen, idx


def retrieval_kernels(n_segments: int, k: int, d: int, itemsize: int) -> dict[str, float]:
    """Traffic of the HLS kernels in recall: top-k over the scores, gather of k bank rows (read + write)."""
    return {"topk_select": topk_traffic(1, n_segments, k, itemsize), "gather_rows": 2.0 * itemsize * k * d}


def hmt_costs(n_segments: int, k: int, d: int, itemsize: int) -> dict[str, tuple[float, float, float]]:
    """(flops, bytes, irregular bytes) of relevancy and retrieval (prepare is the model forward)."""
    return {
        "relevancy": (2.0 * n_segments * d + SEGMENT * d, itemsize * (n_segments * d + SEGMENT * d + n_segments), 0.0),
        "retrieval": (topk_ops(n_segments, k) + 2.0 * k * d + 5 * k, itemsize * (n_segments + 2 * k * d + d),
                      itemsize * k * d),
    }
