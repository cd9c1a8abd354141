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
* :meth:`prefill_batch` / :meth:`decode_batch` — the same over ``batch`` sequences of equal length:
  the cache has a batch dim, the non-attention work is one forward over B rows (the weights are
  read once per step for all of them), and attention goes to one hook per sequence, each seeing
  its own cache through :meth:`sequence` (a :class:`SequenceView`).

Other architectures (no ``model.model.layers[i].self_attn.q_proj``) are refused with a message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.clock import LapClock
from mlx26.core.profile_memory.costs import CostBook, attention_cost, linear_cost


class SequenceView:
    """One sequence of a batched runner, shaped like a batch-1 runner: its own ``k_cache`` / ``v_cache``
    ([Hkv, capacity, D] views of the batched store), everything else read from the runner, so the
    pipelines need not know about the batch."""

    def __init__(self, runner: LlamaRunner, b: int):
        self._runner = runner
        self.k_cache = [store[b] for store in runner.k_store]
        self.v_cache = [store[b] for store in runner.v_store]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner, name)


class LlamaRunner:
    def __init__(self, model: Any, capacity: int, batch: int = 1):
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
        if batch < 1:
            raise InputError(f"--batch must be ≥ 1, got {batch}.")
        self.capacity, self.batch = capacity, batch
        # Batch outermost: each sequence's [Hkv, capacity, D] cache is one contiguous block, so its views are
        # exactly what a batch-1 cache looks like (the FPGA kernels read them in place).
        shape = (batch, self.n_kv, capacity, self.head_dim)
        self.k_store = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in layers]
        self.v_store = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in layers]
        self.k_cache = [store[0] for store in self.k_store]
        self.v_cache = [store[0] for store in self.v_store]
        self.length = 0
        self.layer_params = sum(p.numel() for n, p in layers[0].named_parameters() if "norm" not in n)
        self.head_params = model.lm_head.weight.numel()

    def reset(self) -> None:
        self.length = 0

    def sequence(self, b: int) -> SequenceView:
        return SequenceView(self, b)

    def _rope(self, x: Any, positions: Any) -> tuple[Any, Any]:
        return self.inner.rotary_emb(x, positions[None, :])

    def _qkv(self, layer: Any, h: Any, cos: Any, sin: Any) -> tuple[Any, Any, Any]:
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        attn = layer.self_attn
        b, t = h.shape[:2]
        q = attn.q_proj(h).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)
        k = attn.k_proj(h).view(b, t, self.n_kv, self.head_dim).transpose(1, 2)
        v = attn.v_proj(h).view(b, t, self.n_kv, self.head_dim).transpose(1, 2)
        return (*apply_rotary_pos_emb(q, k, cos, sin), v)

    def prefill(self, ids: Any = None, embeds: Any = None, capture: Callable[[int, Any], None] | None = None,
                costs: CostBook | None = None, stage: str = "other") -> Any:
        """Run the prompt (token ids [T] or input embeddings [T, d]) densely; return the last logits
        and the final hidden states. ``capture(layer, normed_hidden [T, d])`` sees each layer's input."""
        if self.batch != 1:
            raise InputError(f"prefill runs one sequence; this runner holds {self.batch}: use prefill_batch.")
        batched = capture if capture is None else (lambda i, h: capture(i, h[0]))
        logits, hidden = self.prefill_batch(None if ids is None else ids[None],
                                            None if embeds is None else embeds[None], batched, costs, stage)
        return logits[0], hidden[0]

    def prefill_batch(self, ids: Any = None, embeds: Any = None, capture: Callable[[int, Any], None] | None = None,
                      costs: CostBook | None = None, stage: str = "other") -> Any:
        """:meth:`prefill` of B prompts of equal length (ids [B, T] or embeds [B, T, d]): last logits [B, V],
        hidden [B, T, d]; ``capture`` sees [B, T, d]."""
        import torch
        import torch.nn.functional as F

        with torch.no_grad():
            x = self.inner.embed_tokens(ids.to(self.device)) if embeds is None else embeds
            b, t = x.shape[:2]
            if b != self.batch:
                raise InputError(f"{b} prompts for a runner of batch {self.batch}.")
            start = self.length
            if start + t > self.capacity:
                raise InputError(f"prompt of {t} tokens does not fit the cache ({self.capacity - start} left).")
            positions = torch.arange(start, start + t, device=self.device)
            cos, sin = self._rope(x, positions)
            for i, layer in enumerate(self.layers):
                h = layer.input_layernorm(x)
                if capture is not None:
                    capture(i, h)
                q, k, v = self._qkv(layer, h, cos, sin)
                self.k_store[i][:, :, start:start + t] = k
                self.v_store[i][:, :, start:start + t] = v
                keys = self.k_store[i][:, :, :start + t]
                vals = self.v_store[i][:, :, :start + t]
                if self.n_kv != self.n_heads:
                    rep = self.n_heads // self.n_kv
                    keys, vals = keys.repeat_interleave(rep, 1), vals.repeat_interleave(rep, 1)
                if start == 0:
                    o = F.scaled_dot_product_attention(q, keys, vals, is_causal=True)
                else:
                    mask = torch.ones(t, start + t, dtype=torch.bool, device=self.device).tril(start)
                    o = F.scaled_dot_product_attention(q, keys, vals, attn_mask=mask)
                x = x + layer.self_attn.o_proj(o.transpose(1, 2).reshape(b, t, -1))
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            hidden = self.inner.norm(x)
            logits = self.model.lm_head(hidden[:, -1])
        self.length = start + t
        if costs is not None:
            self._charge_prefill(costs, stage, b, t, start)
        return logits, hidden

    def _charge_prefill(self, costs: CostBook, stage: str, b: int, t: int, start: int) -> None:
        # Weights are read once for all B·t rows; attention is per sequence.
        f, by = linear_cost(b * t, self.layer_params * len(self.layers), self.hidden, self.hidden, self.itemsize)
        fh, bh = linear_cost(b, self.head_params, self.hidden, self.head_params // self.hidden, self.itemsize)
        fa, ba = attention_cost(t, start + t, self.n_heads, self.head_dim, self.itemsize, causal=start == 0)
        costs[stage].add(f + fh + b * fa * len(self.layers), by + bh + b * ba * len(self.layers),
                         launches=len(self.layers) * 14 + 2, in_bytes=self.itemsize * b * t * self.hidden,
                         out_bytes=self.itemsize * b * self.hidden, pinned=True)

    def decode(self, token: Any, attend: Callable[..., Any], clock: LapClock, costs: CostBook) -> Any:
        """One decode step of token id ``token`` (a 1-element tensor); returns the greedy next id
        (the logits are kept in ``last_logits``).

        ``attend(layer, q [H, D], k_new [Hkv, D], v_new [Hkv, D], pos, h [d])`` (``h``: the layer's
        normed input) appends to the cache, returns [H, D] and laps its own stages; all the rest is
        lapped here as "other".
        """
        nxt = self.decode_batch(token, [attend], clock, costs)[0]
        self.last_logits = self.last_logits[0]
        return nxt

    def decode_batch(self, tokens: Any, attends: Sequence[Callable[..., Any]], clock: LapClock,
                     costs: CostBook) -> list[int]:
        """:meth:`decode` of B sequences at once: ``tokens`` [B], ``attends[b]`` the hook of sequence b
        (it sees that sequence's q/k/v/h; the hooks run one after another, each lapping its own stages).
        Returns the B greedy next ids; ``last_logits`` is [B, V]."""
        import torch

        b = len(attends)
        if b != self.batch or tokens.shape[0] != b:
            raise InputError(f"{tokens.shape[0]} tokens and {b} attention hooks for a runner of batch {self.batch}.")
        with torch.no_grad():
            pos = self.length
            if pos + 1 > self.capacity:
                raise InputError("KV cache full: raise the capacity.")
            x = self.inner.embed_tokens(tokens.to(self.device))[:, None]
            cos, sin = self._rope(x, torch.tensor([pos], device=self.device))
            for i, layer in enumerate(self.layers):
                h = layer.input_layernorm(x)
                q, k, v = self._qkv(layer, h, cos, sin)
                clock.lap("other")
                o = torch.stack([attend(i, q[s, :, 0], k[s, :, 0], v[s, :, 0], pos, h[s, 0])
                                 for s, attend in enumerate(attends)])
                x = x + layer.self_attn.o_proj(o.reshape(b, 1, -1))
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            logits = self.model.lm_head(self.inner.norm(x)[:, 0])
            nxt = torch.argmax(logits, dim=-1).tolist()
        self.last_logits = logits
        self.length = pos + 1
        clock.lap("other")
        # One batched forward: the weights are read once per step, the activations and FLOPs scale with B.
        f, by = linear_cost(b, self.layer_params * len(self.layers) + self.head_params, self.hidden, self.hidden,
                            self.itemsize)
        costs["other"].add(f, by, launches=len(self.layers) * 12 + 3)
        return nxt
