"""Per-example gradient features for PartitionSel (Agrawal et al., ICML 2026).

g_i is the gradient of example i's causal-LM loss (mean over its predicted tokens) with
respect to one parameter subset, computed for a whole batch at once with
``torch.func.vmap(grad(...))``:

* ``last-layer`` — the LM head weight (for tied embeddings: the gradient through the output
  use only); the frozen trunk runs once without autograd;
* ``last-block`` — every parameter of the last decoder layer; the layers below run once
  without autograd, the last layer, final norm and head run under ``vmap(grad)``;
* ``lora`` — peft LoRA adapters (rank 4, q_proj and v_proj) on the last decoder layer. LoRA's
  B matrices start at zero, so at initialisation only the B gradients are non-zero.

Two ways to compute them (``path``): ``vmap`` — the exact per-example backward above, for
every parameter set; ``ghost`` — for ``last-layer`` only, the closed form of :mod:`.ghost`
(G_i = Σ_t w_t (softmax_t − onehot_t) h_tᵀ from one no-grad forward, sketched without
materialising G_i). ``auto`` (default) takes ``ghost`` for ``last-layer`` and ``vmap``
otherwise. Both paths give the same ``last-layer`` features (the tests check 1e-5).

Then an optional seeded sketch to ``proj_dim`` dimensions (our reconstruction: a sparse
JL sketch, O(p) per example, where a dense Gaussian projection would be O(p·d)) — a
TensorSketch for ``last-layer`` (the same linear map on both paths), a CountSketch of the
flattened gradient for the other sets — and L2 normalisation. :func:`clean_rows` drops NaN/Inf and all-zero rows and says how many.
The functions that need torch import it inside.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.select_batch.spec import FEATURE_PATHS, GRAD_PARAMS

ZERO_NORM = 1e-12
FEATURE_CHUNK = 64  # texts per vmap(grad) call (bounds the per-example gradients held at once)
TOKEN_CACHE_MAX = 200_000  # texts whose token ids Featurizer.encode keeps (per sequence length)


def clean_rows(G: np.ndarray, what: str = "pool") -> tuple[np.ndarray, np.ndarray, int]:
    """(L2-normalised finite non-zero rows, boolean keep mask, number dropped)."""
    if np.iscomplexobj(G):
        raise InputError(f"{what} gradients must be real numbers, got a complex array.")
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 2 or G.shape[0] == 0 or G.shape[1] == 0:
        raise InputError(f"{what} gradients must be a non-empty 2-D array (rows × dims), got shape {G.shape}.")
    finite = np.all(np.isfinite(G), axis=1)
    G = np.where(finite[:, None], G, 0.0)
    # Scale by the row's largest |value| first: a plain norm overflows to inf for huge (finite)
    # rows, and dividing by inf would turn them into silent all-zero features.
    peak = np.max(np.abs(G), axis=1)
    safe = np.where(peak > 0, peak, 1.0)
    norms = peak * np.linalg.norm(G / safe[:, None], axis=1)
    keep = finite & (norms > ZERO_NORM)
    if not keep.any():
        raise InputError(f"every {what} gradient row is NaN, infinite or zero.")
    return G[keep] / norms[keep, None], keep, int((~keep).sum())


def check_dims(pool: np.ndarray, val: np.ndarray) -> None:
    if np.ndim(pool) != 2 or np.ndim(val) != 2 or pool.shape[1] != val.shape[1]:
        raise InputError(f"pool gradients have dimension {np.shape(pool)[-1]} but validation gradients have "
                         f"{np.shape(val)[-1]}.", "compute both with the same model, parameters and projection")


def count_sketch(X: Any, dim: int, seed: int) -> Any:
    """Seeded CountSketch of the rows of a torch tensor X (n × p) to n × dim."""
    import torch

    n, p = X.shape
    gen = torch.Generator().manual_seed(int(seed))
    buckets = torch.randint(0, dim, (p,), generator=gen)
    signs = torch.randint(0, 2, (p,), generator=gen, dtype=torch.int8).to(X.dtype) * 2 - 1
    return torch.zeros(n, dim, dtype=X.dtype).index_add_(1, buckets, X * signs)


@dataclass
class Featurizer:
    """Gradient features of texts under ``model`` (a transformers Llama-style causal LM)."""

    model: Any
    tokenizer: Any
    grad_params: str = "last-layer"
    proj_dim: int = 512
    seed: int = 0
    seq_len: int = 64
    lora_rank: int = 4
    path: str = "auto"
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.grad_params not in GRAD_PARAMS:
            raise InputError(f"Unknown gradient parameters '{self.grad_params}'.",
                             "choose one of: " + ", ".join(GRAD_PARAMS))
        if self.proj_dim < 0:
            raise InputError(f"--proj-dim must be ≥ 0 (0 = no projection), got {self.proj_dim}.")
        if self.path not in FEATURE_PATHS:
            raise InputError(f"Unknown feature path '{self.path}'.", "choose one of: " + ", ".join(FEATURE_PATHS))
        if self.path == "ghost" and self.grad_params != "last-layer":
            raise InputError(f"the ghost (closed-form) features exist for --grad-params last-layer only, not "
                             f"'{self.grad_params}'.", "use --features vmap or auto")
        if self.seq_len < 2:
            raise InputError(f"the sequence length must be ≥ 2, got {self.seq_len}.")
        if self.grad_params == "lora":
            self.model = add_lora(self.model, self.lora_rank)

    @property
    def resolved_path(self) -> str:
        """``ghost`` or ``vmap``: what ``auto`` means for this parameter set."""
        if self.path == "auto":
            return "ghost" if self.grad_params == "last-layer" else "vmap"
        return self.path

    def head_sketch(self) -> Any:
        """The seeded TensorSketch of the LM-head gradient (built once)."""
        from mlx26.core.select_batch.ghost import TensorSketch

        if "sketch" not in self._cache:
            V, D = inner_llama(self.model).lm_head.weight.shape
            self._cache["sketch"] = TensorSketch.make(V, D, self.proj_dim, self.seed)
        return self._cache["sketch"]

    # ---- batching helpers
    def encode(self, texts: list[str]) -> tuple[Any, Any]:
        """(ids, attention mask) of ``texts`` cut to ``seq_len`` tokens and padded as the tokenizer pads, from a
        cache of each text's token ids: a training run tokenises the same pool rows again and again (window,
        reservoir, update), and the tokenizer's per-call overhead was ~8 % of an amortised selection step."""
        import torch

        texts = list(texts)
        if self.tokenizer.pad_token_id is None:  # the tokenizer's own call says what is missing
            enc = self.tokenizer(texts, return_tensors="pt", padding=True, truncation=True, max_length=self.seq_len)
            return enc["input_ids"], enc["attention_mask"]
        cache = self._cache.setdefault(("tokens", self.seq_len), {})
        if len(cache) > TOKEN_CACHE_MAX:  # a one-pass featurisation of a large pool gains nothing from it
            cache.clear()
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
        if missing:
            enc = self.tokenizer(missing, truncation=True, max_length=self.seq_len)
            cache.update(zip(missing, enc["input_ids"], strict=True))
        rows = [cache[t] for t in texts]
        width = max((len(r) for r in rows), default=0)
        ids = torch.full((len(rows), width), int(self.tokenizer.pad_token_id), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        left = getattr(self.tokenizer, "padding_side", "right") == "left"
        for i, row in enumerate(rows):
            span = slice(width - len(row), width) if left else slice(0, len(row))
            ids[i, span] = torch.tensor(row, dtype=torch.long)
            mask[i, span] = 1
        return ids, mask

    def features(self, texts: list[str]) -> np.ndarray:
        """n × d float64 features (projected when proj_dim > 0; not yet normalised).

        Computed FEATURE_CHUNK texts at a time: vmap materialises one full parameter gradient
        per example, so a pool of thousands of texts in one call would exhaust the memory."""
        texts = list(texts)
        parts = [self._features(texts[i:i + FEATURE_CHUNK]) for i in range(0, len(texts), FEATURE_CHUNK)]
        return np.concatenate(parts) if parts else np.zeros((0, self.proj_dim or 0))

    def _features(self, texts: list[str]) -> np.ndarray:
        import torch

        ids, mask = self.encode(texts)
        head = inner_llama(self.model).lm_head.weight
        sketch = self.head_sketch() if self.proj_dim and self.proj_dim < head.numel() else None
        if self.grad_params == "last-layer" and self.resolved_path == "ghost":
            from mlx26.core.select_batch.ghost import ghost_head_features

            with torch.no_grad():
                hidden = inner_llama(self.model).model(input_ids=ids, attention_mask=mask).last_hidden_state
                return ghost_head_features(hidden, head.detach(), ids, mask, sketch).double().numpy()
        with torch.no_grad():
            grads = self._grads(ids, mask)
        if self.grad_params == "last-layer" and sketch is not None:
            return sketch.sketch_full(grads["weight"]).double().numpy()
        flat = torch.cat([g.reshape(g.shape[0], -1) for g in grads.values()], dim=1)
        if self.proj_dim and flat.shape[1] > self.proj_dim:
            flat = count_sketch(flat, self.proj_dim, self.seed)
        return flat.double().numpy()

    def _grads(self, ids: Any, mask: Any) -> dict[str, Any]:
        import torch
        from torch.func import functional_call, grad, vmap

        base = inner_llama(self.model)
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        out = base.model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        head = base.lm_head

        def token_loss(logits: Any, y: Any, m: Any) -> Any:
            losses = torch.nn.functional.cross_entropy(logits[:-1], y[1:], reduction="none")
            weight = m[1:].to(logits.dtype)
            return (losses * weight).sum() / weight.sum()

        if self.grad_params == "last-layer":
            params = {"weight": head.weight.detach()}

            def loss(p: dict[str, Any], h: Any, y: Any, m: Any) -> Any:
                return token_loss(h @ p["weight"].T, y, m)

            return vmap(grad(loss), in_dims=(None, 0, 0, 0))(params, out.hidden_states[-1], ids, mask)
        layer = base.model.layers[-1]
        if self.grad_params == "lora":
            params = {k: v.detach() for k, v in layer.named_parameters() if "lora_" in k}
        else:
            params = {k: v.detach() for k, v in layer.named_parameters()}

        def block_loss(p: dict[str, Any], h: Any, y: Any, m: Any) -> Any:
            h = h.unsqueeze(0)
            rope = base.model.rotary_emb(h, positions)
            o = functional_call(layer, p, (h,), {"position_embeddings": rope, "position_ids": positions,
                                                 "attention_mask": None})
            o = o[0] if isinstance(o, tuple) else o
            return token_loss(head(base.model.norm(o))[0], y, m)

        with warnings.catch_warnings():  # sdpa has no vmap batching rule on CPU: a loop, still correct
            warnings.filterwarnings("ignore", message=".*performance drop.*")
            return vmap(grad(block_loss), in_dims=(None, 0, 0, 0))(params, out.hidden_states[-2], ids, mask)


def inner_llama(model: Any) -> Any:
    """The transformers causal LM inside a peft wrapper (or the model itself)."""
    if hasattr(model, "base_model") and hasattr(model.base_model, "model") and hasattr(model, "peft_config"):
        return model.base_model.model
    return model


def add_lora(model: Any, rank: int = 4) -> Any:
    """Wrap ``model`` with peft LoRA adapters on the last decoder layer's q_proj and v_proj."""
    if hasattr(model, "peft_config"):
        return model
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise ModuleNotFoundError("--grad-params lora needs peft (pip install 'mlx26[select]')",
                                  name="peft") from exc
    last = len(model.model.layers) - 1
    config = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0, target_modules=["q_proj", "v_proj"],
                        layers_to_transform=[last], init_lora_weights=True)
    with warnings.catch_warnings():  # peft calls a transformers API that is deprecated in v5
        warnings.simplefilter("ignore", FutureWarning)
        return get_peft_model(model, config)


def per_example_loss(model: Any, ids: Any, mask: Any) -> Any:
    """Token-mean causal-LM loss of every row (right padding ignored), shape (n,)."""
    import torch

    logits = model(input_ids=ids, attention_mask=mask).logits
    losses = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                                               ids[:, 1:].reshape(-1), reduction="none").view(ids.shape[0], -1)
    weight = mask[:, 1:].to(losses.dtype)
    return (losses * weight).sum(dim=1) / weight.sum(dim=1)
