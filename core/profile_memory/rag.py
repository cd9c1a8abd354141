"""Retrieval-augmented generation as a four-stage memory pipeline (He, Ma, Sun, Cong, ICML 2026).

The long context is the document store; its last ``QUERY_TOKENS`` tokens are the question.

* Prepare Memory — split the store into chunks of ``CHUNK`` tokens, embed each (mean of the
  model's input embeddings, L2-normalised: a bag-of-embeddings encoder) and build a flat
  inner-product index (a [n_chunks, d] matrix).
* Compute Relevancy — embed the query the same way; scores = index · query.
* Retrieval — top-k chunks, k = budget // CHUNK (at most the number of chunks); fetch their tokens.
* Apply — prefill of the augmented prompt (retrieved chunks, then the query), then decoding.

Reconstruction: a real RAG system uses a trained embedding model; ours reuses the LM's embedding
table so nothing is downloaded. The exact search is checked against faiss ``IndexFlatIP`` when
faiss-cpu is installed (numpy otherwise) — :func:`exact_search`.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.costs import topk_ops

CHUNK = 64
QUERY_TOKENS = 32


def chunk_ids(ids: Any, chunk: int = CHUNK) -> Any:
    """Token ids [N] → [n_chunks, chunk] (a ragged tail is dropped)."""
    n = ids.shape[0] // chunk
    if n < 1:
        raise InputError(f"the RAG store needs at least {chunk} tokens, got {ids.shape[0]}.",
                         "raise --context")
    return ids[: n * chunk].view(n, chunk)


def embed(embedding: Any, ids: Any) -> Any:
    """Mean of the token embeddings along the last axis of ids, L2-normalised: [..., d]."""
    import torch

    e = embedding(ids).mean(dim=-2)
    return torch.nn.functional.normalize(e, dim=-1)


def exact_search(index: Any, query: Any, k: int) -> tuple[Any, str]:
    """Exact inner-product top-k (ids, anchor name) by faiss IndexFlatIP when installed, else numpy."""
    import numpy as np

    xb = np.ascontiguousarray(np.asarray(index, dtype=np.float32))
    xq = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
    try:
        import faiss
    except ImportError:
        scores = xb @ xq[0]
        order = np.argsort(-scores, kind="stable")[:k]
        return order.astype(np.int64), "numpy"
    flat = faiss.IndexFlatIP(xb.shape[1])
    flat.add(xb)
    _, ids = flat.search(xq, k)
    return ids[0].astype(np.int64), "faiss.IndexFlatIP"


def n_chunks_for_budget(budget: int, n_chunks: int, chunk: int = CHUNK) -> tuple[int, bool]:
    if budget <= 0:
        raise InputError(f"--budget must be a positive number of tokens, got {budget}.")
    k = max(1, budget // chunk)
    return (n_chunks, True) if k > n_chunks else (k, False)


def rag_costs(n_chunks: int, k: int, d: int, chunk: int, itemsize: int) -> dict[str, tuple[float, float, float]]:
    """(flops, bytes, irregular bytes) of prepare / relevancy / retrieval (apply is the model prefill)."""
    store = n_chunks * chunk
    return {
        "prepare": (store * d + 2.0 * n_chunks * d, itemsize * (store * d + n_chunks * d) + 8 * store, 0.0),
        "relevancy": (QUERY_TOKENS * d + 2.0 * n_chunks * d, itemsize * (n_chunks * d + QUERY_TOKENS * d + n_chunks),
                      0.0),
        "retrieval": (topk_ops(n_chunks, k), itemsize * n_chunks + 8 * k * chunk * 2, 8.0 * k * chunk),
    }
