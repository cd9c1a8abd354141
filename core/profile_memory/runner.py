"""A hand-unrolled Llama forward with a preallocated KV cache, so the profiler can time inside it.

Infrastructure for the profiler of He, Ma, Sun, Cong (ICML 2026). It reuses the modules of a
transformers Llama-family causal LM (``embed_tokens``, each layer's ``q/k/v/o_proj``,
``input_layernorm``, ``mlp``, ``post_attention_layernorm``, the final ``norm``, ``rotary_emb``,
``lm_head``) and runs them step by step:

* :meth:`prefill` — dense causal attention (``scaled_dot_product_attention``) over the prompt,
  filling the cache; ``tests/profile_memory`` checks its logits against the model's own forward.
* :meth:`decode` — one token; at each layer the attention is delegated to a pipeline's
  ``attend(layer, q, k_cache, v_cache, n)`` hook (Quest / indexer sparse attention, or dense),
  and every other instant is charged to the "other" stage of a :class:`LapClock`.

Other architectures (no ``model.model.layers[i].self_attn.q_proj``) are refused with a message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.clock import LapClock
from mlx26.core.profile_memory.costs import CostBook, attention_cost, linear_cost


class LlamaRunner:
    def __init__(self, model: Any, capacity: int):
        inner: Any = getattr(model, "model", None)
        layers = getattr(inner, "layers", None)
        if layers is None or not hasattr(layers[0], "self_attn") or not hasattr(layers[0].self_attn, "q_proj"):
            raise InputError(f"model class {type(model).__name__} is not supported: profile-memory needs a "
                             "Llama-family causal LM (layers with self_attn.q_proj/k_proj/v_proj/o_proj).")
        import torch

        cfg = model.config
        self.model, self.inner, self.layers = model, inner, layers
        self.n_heads = cfg.num_attention_heads
        self.n_kv = getattr(cfg, "num_key_value_heads", None) or self.n_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.n_heads
        self.hidden = cfg.hidden_size
        self.max_positions = int(getattr(cfg, "max_position_embeddings", 0) or 0)
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.itemsize = torch.empty((), dtype=self.dtype).element_size()
        self.capacity = capacity
        shape = (self.n_kv, capacity, self.head_dim)
        self.k_cache = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in layers]
        self.v_cache = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in layers]
        self.length = 0
        self.layer_params = sum(p.numel() for n, p in layers[0].named_parameters() if "norm" not in n)
        self.head_params = model.lm_head.weight.numel()

    def reset(self) -> None:
        self.length = 0

    def _rope(self, x: Any, positions: Any) -> tuple[Any, Any]:
        return self.inner.rotary_emb(x, positions[None, :])

    def _qkv(self, layer: Any, h: Any, cos: Any, sin: Any) -> tuple[Any, Any, Any]:
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        attn = layer.self_attn
        t = h.shape[1]
        q = attn.q_proj(h).view(1, t, self.n_heads, self.head_dim).transpose(1, 2)
        k = attn.k_proj(h).view(1, t, self.n_kv, self.head_dim).transpose(1, 2)
        v = attn.v_proj(h).view(1, t, self.n_kv, self.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        return q[0], k[0], v[0]

    def prefill(self, ids: Any = None, embeds: Any = None, capture: Callable[[int, Any], None] | None = None,
                costs: CostBook | None = None, stage: str = "other") -> Any:
        """Run the prompt (token ids [T] or input embeddings [T, d]) densely; return the last logits
        and the final hidden states. ``capture(layer, normed_hidden [T, d])`` sees each layer's input."""
        import torch
        import torch.nn.functional as F

        with torch.no_grad():
            x = self.inner.embed_tokens(ids.to(self.device))[None] if embeds is None else embeds[None]
            t = x.shape[1]
            start = self.length
            if start + t > self.capacity:
                raise InputError(f"prompt of {t} tokens does not fit the cache ({self.capacity - start} left).")
            positions = torch.arange(start, start + t, device=self.device)
            cos, sin = self._rope(x, positions)
            for i, layer in enumerate(self.layers):
                h = layer.input_layernorm(x)
                if capture is not None:
                    capture(i, h[0])
                q, k, v = self._qkv(layer, h, cos, sin)
                self.k_cache[i][:, start:start + t] = k
                self.v_cache[i][:, start:start + t] = v
                keys = self.k_cache[i][:, :start + t]
                vals = self.v_cache[i][:, :start + t]
                if self.n_kv != self.n_heads:
                    rep = self.n_heads // self.n_kv
                    keys, vals = keys.repeat_interleave(rep, 0), vals.repeat_interleave(rep, 0)
                if start == 0:
                    o = F.scaled_dot_product_attention(q[None], keys[None], vals[None], is_causal=True)[0]
                else:
                    mask = torch.ones(t, start + t, dtype=torch.bool, device=self.device).tril(start)
                    o = F.scaled_dot_product_attention(q[None], keys[None], vals[None], attn_mask=mask)[0]
                x = x + layer.self_attn.o_proj(o.transpose(0, 1).reshape(1, t, -1))
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            hidden = self.inner.norm(x)[0]
            logits = self.model.lm_head(hidden[-1:])[0]
        self.length = start + t
        if costs is not None:
            f, b = linear_cost(t, self.layer_params * len(self.layers), self.hidden, self.hidden, self.itemsize)
            fh, bh = linear_cost(1, self.head_params, self.hidden, self.head_params // self.hidden, self.itemsize)
            f, b = f + fh, b + bh
            fa, ba = attention_cost(t, start + t, self.n_heads, self.head_dim, self.itemsize, causal=start == 0)
            costs[stage].add(f + fa * len(self.layers), b + ba * len(self.layers),
                             launches=len(self.layers) * 14 + 2, in_bytes=self.itemsize * t * self.hidden,
                             out_bytes=self.itemsize * self.hidden, pinned=True)
        return logits, hidden

    def decode(self, token: Any, attend: Callable[..., Any], clock: LapClock, costs: CostBook) -> Any:
        """One decode step of token id ``token`` (a 1-element tensor); returns the greedy next id
        (the logits are kept in ``last_logits``).

        ``attend(layer, q [H, D], k_new [Hkv, D], v_new [Hkv, D], pos, h [d])`` (``h``: the layer's
        normed input) appends to the cache, returns [H, D] and laps its own stages; all the rest is
        lapped here as "other".
        """
        import torch

        with torch.no_grad():
            pos = self.length
            if pos + 1 > self.capacity:
                raise InputError("KV cache full: raise the capacity.")
            x = self.inner.embed_tokens(token.to(self.device))[None]
            cos, sin = self._rope(x, torch.tensor([pos], device=self.device))
            for i, layer in enumerate(self.layers):
                h = layer.input_layernorm(x)
                q, k, v = self._qkv(layer, h, cos, sin)
                clock.lap("other")
                o = attend(i, q[:, 0], k[:, 0], v[:, 0], pos, h[0, 0])
                x = x + layer.self_attn.o_proj(o.reshape(1, 1, -1))
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            logits = self.model.lm_head(self.inner.norm(x)[0])[0]
            nxt = int(torch.argmax(logits))
        self.last_logits = logits
        self.length = pos + 1
        clock.lap("other")
        f, b = linear_cost(1, self.layer_params * len(self.layers) + self.head_params, self.hidden, self.hidden,
                           self.itemsize)
        costs["other"].add(f, b, launches=len(self.layers) * 12 + 3)
        return nxt
