"""Closed-form ("ghost") LM-head gradient features for PartitionSel (Agrawal et al., ICML 2026).

For the ``last-layer`` feature the per-example gradient needs no backward pass. With hidden
states h_t (after the final norm), logits z_t = W h_t, softmax p_t and next token y_t, the
gradient of example i's token-mean loss w.r.t. the head W (V × D) is

    G_i = Σ_t w_t (p_t − e_{y_t}) h_tᵀ,      w_t = mask_{t+1} / Σ mask,

a sum of T rank-one terms, available from one no-grad forward. (Upstream computes the same
"delta" = softmax − one-hot in ``tunix/sft/subsel/grads.py`` next to a vmap'd backward; the
closed form and the projection below are our own.)

Projection without materialising G_i (V·D values per example): a seeded **TensorSketch**
(Pham & Pagh, KDD 2013) of vec(G_i), i.e. the CountSketch with bucket (b₁(v) + b₂(d)) mod k
and sign s₁(v)s₂(d). It is linear, and for a rank-one term TS(x yᵀ) = CS₁(x) ⊛ CS₂(y) (circular
convolution), so TS(G_i) = irfft(Σ_t w_t · rfft(CS₁ δ_t) ⊙ rfft(CS₂ h_t)): O(T·(V + D + k log k))
per example instead of O(V·D). :func:`sketch_full` applies the very same linear map to a
materialised gradient (used by the exact ``vmap(grad)`` path and by the tests), so the two
paths give the same features up to float32 rounding. Our reconstruction: the choice of
TensorSketch (upstream uses an FFT sketch of the materialised gradient).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlx26.core.common.errors import InputError


@dataclass(frozen=True)
class TensorSketch:
    """Seeded TensorSketch of V × D matrices to ``dim`` values."""

    b1: Any  # (V,) buckets of the vocabulary axis
    s1: Any  # (V,) ±1
    b2: Any  # (D,) buckets of the hidden axis
    s2: Any  # (D,) ±1
    dim: int

    @classmethod
    def make(cls, vocab: int, hidden: int, dim: int, seed: int) -> TensorSketch:
        import torch

        if dim < 2:
            raise InputError(f"the sketch dimension must be ≥ 2, got {dim}.")
        gen = torch.Generator().manual_seed(int(seed) + 7919)  # not the CountSketch stream of the same seed
        b1 = torch.randint(0, dim, (vocab,), generator=gen)
        s1 = torch.randint(0, 2, (vocab,), generator=gen).float() * 2 - 1
        b2 = torch.randint(0, dim, (hidden,), generator=gen)
        s2 = torch.randint(0, 2, (hidden,), generator=gen).float() * 2 - 1
        return cls(b1, s1, b2, s2, int(dim))

    def _hidden_matrix(self, dtype: Any) -> Any:
        """D × dim matrix of CS₂ (one signed 1 a row)."""
        import torch

        M = torch.zeros(self.b2.shape[0], self.dim, dtype=dtype)
        M[torch.arange(self.b2.shape[0]), self.b2] = self.s2.to(dtype)
        return M

    def of_outer_sums(self, delta: Any, hidden: Any, rows: Any, n: int) -> Any:
        """TS(Σ_{t: rows[t] = i} delta[t] hidden[t]ᵀ) for i < n: delta N × V, hidden N × D (tokens) → n × dim."""
        import torch

        x = torch.zeros(delta.shape[0], self.dim, dtype=delta.dtype)
        x.index_add_(1, self.b1, delta * self.s1.to(delta.dtype))
        y = hidden @ self._hidden_matrix(hidden.dtype)
        prod = torch.fft.rfft(x, dim=1) * torch.fft.rfft(y, dim=1)
        per_row = torch.zeros(n, prod.shape[1], dtype=prod.dtype).index_add_(0, rows, prod)
        return torch.fft.irfft(per_row, n=self.dim, dim=1)

    def sketch_full(self, G: Any) -> Any:
        """The same map applied to materialised gradients G (n × V × D) → n × dim."""
        import torch

        n, V, D = G.shape
        A = torch.zeros(n, self.dim, D, dtype=G.dtype).index_add_(1, self.b1, G * self.s1.to(G.dtype)[None, :, None])
        FA = torch.fft.rfft(A, dim=1)  # n × F × D
        FB = torch.fft.rfft(self._hidden_matrix(G.dtype), dim=1)  # D × F
        return torch.fft.irfft(torch.einsum("nfd,df->nf", FA, FB), n=self.dim, dim=1)


def head_deltas(hidden: Any, weight: Any, ids: Any, mask: Any) -> tuple[Any, Any, Any]:
    """(delta, h, rows) over the predicting tokens only (position t < T−1 whose target t+1 is not
    padding): delta = w_t (softmax(W h_t) − e_{y_{t+1}}) (N × V), h = h_t (N × D), rows = example index."""
    import torch

    target_mask = mask[:, 1:].bool()
    rows, cols = target_mask.nonzero(as_tuple=True)
    h = hidden[:, :-1][rows, cols]
    delta = torch.softmax(h @ weight.T, dim=-1)
    delta[torch.arange(rows.shape[0]), ids[:, 1:][rows, cols]] -= 1
    counts = target_mask.sum(dim=1).clamp_min(1).to(delta.dtype)
    delta *= (1.0 / counts)[rows][:, None]
    return delta, h, rows


def ghost_head_features(hidden: Any, weight: Any, ids: Any, mask: Any, sketch: TensorSketch | None) -> Any:
    """LM-head gradient features of every row from one forward's last hidden states (n × T × D).

    With ``sketch`` None the full gradients are returned (n × V·D, materialised); else their
    TensorSketch (n × sketch.dim), computed without materialising them."""
    import torch

    n = hidden.shape[0]
    delta, h, rows = head_deltas(hidden, weight, ids, mask)
    if sketch is None:
        outer = torch.zeros(n, weight.shape[0], weight.shape[1], dtype=hidden.dtype)
        for i in range(n):  # one V × D product per example (the full gradients are materialised anyway)
            sel = rows == i
            outer[i] = delta[sel].T @ h[sel]
        return outer.reshape(n, -1)
    return sketch.of_outer_sums(delta, h, rows, n)
