"""A spiking transformer encoder classifier (softmax / Spike2Max / softmax-free attention) and its ANN twin.

Our design, reconstructed from Spikformer's spike self-attention and SpikeLM's spiking BERT (SpikingLM's own
architecture is not public). Time steps use direct encoding: the token + position embedding is the input
current at every one of T steps. One block, with ``x`` the real-valued residual stream (T, B, N, D):

    s = n_in(LN1(x));  q, k, v = n_q(DAS(W_q s)), n_k(DAS(W_k s)), n_v(DAS(W_v s))      (binary spikes)
    A = norm(q kᵀ) over the valid keys;  x ← x + W_o n_a(A v)
    u = n_f1(DAS(W_1 n_f0(LN2(x))));  x ← x + W_2 u

so every matrix product in a block takes spikes as one operand (its energy is accumulates, not MACs). DAS
sits after each linear that feeds a neuron (W_q, W_k, W_v, W_1) and folds into it for inference. ``norm``:

* ``softmax``: softmax(q kᵀ / √d_h);
* ``spike2max``: 2^(q kᵀ − max) over the row, exact or power-of-two normalised — on binary spikes q kᵀ is an
  integer, so 2^(s − max) is a shift (:mod:`.spike2max`);
* ``linear`` (softmax-free, Spikformer): q kᵀ / d_h.

The ANN twin (``arch="ann"``) is the same network at equal width with every neuron removed (GELU in the FFN)
and T = 1. The pooled output is the mean over valid tokens and time steps of LN_f(x); a linear head reads it.

Passing an :class:`~mlx26.core.spike.energy.OpCounter` to ``forward`` counts every operation of that forward
on the valid (non-padding) tokens, from the spikes actually fired.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.spike import energy as E
from mlx26.core.spike.das import DASLinear
from mlx26.core.spike.neurons import SpikingNeuron
from mlx26.core.spike.spec import ARCHS, ATTNS, NORMS
from mlx26.core.spike.spike2max import softmax as masked_softmax
from mlx26.core.spike.spike2max import spike2max

# Operations per element that are not matrix products, in both ANN and SNN (our accounting, documented on the
# docs page): LayerNorm = 3 FP32 MACs per element (mean/variance accumulation, normalise, affine); GELU = one
# exp (tanh) + 3 MACs; the residual add = one FP32 add.
LN_MACS = 3
GELU_OPS = {"fp32_exp": 1, "fp32_mac": 3}


@dataclass
class SpikeConfig:
    vocab: int
    classes: int
    max_len: int = 64
    d_model: int = 64
    heads: int = 4
    layers: int = 2
    ffn: int = 4
    arch: str = "spikinglm"
    attn: str = "spike2max"
    das: bool = True
    T: int = 4
    neuron: str = "if"
    theta: float = 1.0
    surrogate: str = "atan"
    ternary: bool = False
    norm: str = "pow2"
    pad_id: int = 0

    def validate(self) -> SpikeConfig:
        if self.arch not in ARCHS:
            raise unknown_name("arch", self.arch, ARCHS)
        if self.attn not in ATTNS:
            raise unknown_name("attention", self.attn, ATTNS)
        if self.norm not in NORMS:
            raise unknown_name("normalisation", self.norm, NORMS)
        if self.T < 1:
            raise InputError(f"time steps T must be ≥ 1, got {self.T}", "pass e.g. --T 4")
        if not (self.theta > 0 and math.isfinite(self.theta)):
            raise InputError(f"threshold θ must be > 0, got {self.theta}", "pass e.g. --theta 1.0")
        if self.d_model % self.heads:
            raise InputError(f"--d-model {self.d_model} is not divisible by --heads {self.heads}")
        if self.arch == "ann" and self.das:
            raise InputError("DAS rescales inputs of spiking neurons; the ANN has none", "drop --das for --arch ann")
        if self.vocab < 2 or self.classes < 2 or self.max_len < 1 or self.layers < 1:
            raise InputError("vocab and classes must be ≥ 2, max length and layers ≥ 1")
        return self

    @property
    def spiking(self) -> bool:
        return self.arch != "ann"

    @property
    def steps(self) -> int:
        return self.T if self.spiking else 1

    def to_dict(self) -> dict:
        return asdict(self)


class _Gelu(torch.nn.Module):
    def forward(self, x, valid=None):
        return torch.nn.functional.gelu(x)


class _Identity(torch.nn.Module):
    def forward(self, x, valid=None):
        return x


def _nnz(x: torch.Tensor, w: torch.Tensor) -> float:
    """Non-zero entries of ``x`` (T, B, N, C) on valid tokens ``w`` (B, N)."""
    return float((x != 0).to(x.dtype).mul(w[None, :, :, None]).sum())


class Block(torch.nn.Module):
    def __init__(self, c: SpikeConfig):
        super().__init__()
        self.c = c
        d, f = c.d_model, c.d_model * c.ffn
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        das = c.das and c.spiking
        self.q, self.k, self.v = (DASLinear(d, d, das, c.theta) for _ in range(3))
        self.o = torch.nn.Linear(d, d)
        self.fc1, self.fc2 = DASLinear(d, f, das, c.theta), torch.nn.Linear(f, d)
        if c.spiking:
            def neuron():
                return SpikingNeuron(c.neuron, c.theta, c.surrogate, ternary=c.ternary)

            self.n_in, self.n_q, self.n_k, self.n_v, self.n_a, self.n_f0, self.n_f1 = (neuron() for _ in range(7))
        else:
            self.n_in = self.n_q = self.n_k = self.n_v = self.n_a = self.n_f0 = _Identity()  # type: ignore[assignment]
            self.n_f1 = _Gelu()  # type: ignore[assignment]

    def _linear(self, lin, x, w, counter, spike_input: bool):
        y = lin(x)
        if counter is not None:
            tokens = float(w.sum()) * x.shape[0]
            layer = lin.linear if isinstance(lin, DASLinear) else lin
            d_in, d_out = layer.in_features, layer.out_features
            if spike_input:
                counter.add("fp32_ac", _nnz(x, w) * d_out)
                counter.add("fp32_add", tokens * d_out)  # bias (DAS folded into it)
            else:
                counter.add("fp32_mac", tokens * d_in * d_out)
        return y

    def _attention(self, q, k, v, key_mask, w, counter):
        c = self.c
        T, B, N, D = q.shape
        dh = D // c.heads

        def split(t):
            return t.reshape(T, B, N, c.heads, dh).permute(0, 1, 3, 2, 4)  # (T, B, H, N, dh)

        qh, kh, vh = split(q), split(k), split(v)
        scores = qh @ kh.transpose(-1, -2)  # (T, B, H, N, N)
        m = key_mask[None, :, None, None, :]
        if c.attn == "softmax":
            a = masked_softmax(scores / math.sqrt(dh), m.expand_as(scores))
        elif c.attn == "spike2max":
            a = spike2max(scores, c.norm, m.expand_as(scores))
        else:
            a = scores / dh * m.to(scores.dtype)
        out = (a @ vh).permute(0, 1, 3, 2, 4).reshape(T, B, N, D)
        if counter is not None:
            n_valid = w.sum(1)  # valid tokens per sequence
            if c.spiking:
                # QKᵀ of spikes: one accumulate per (query spike, key spike) pair in the same channel.
                wq = w[None, :, None, :, None].to(qh.dtype)
                counter.add("int32_add", float(((qh != 0).to(qh.dtype) * wq).sum(3).mul(
                    ((kh != 0).to(kh.dtype) * wq).sum(3)).sum()))
                # A V with spiking V: every V spike adds one row-entry of A into each valid query row.
                per_seq = ((vh != 0).to(vh.dtype) * wq).sum((0, 2, 3, 4))  # V spikes per sequence
                counter.add("fp32_ac" if c.attn != "linear" else "int32_add", float((per_seq * n_valid).sum()))
            else:
                pairs = float((n_valid ** 2).sum()) * T * c.heads * dh
                counter.add("fp32_mac", 2 * pairs)  # QKᵀ and A V
            for n, cnt in zip(*torch.unique(n_valid, return_counts=True), strict=True):
                r = float(cnt) * float(n) * T * c.heads
                if c.attn == "softmax":
                    ops = E.softmax_norm_ops(r, int(n))
                    ops["fp32_mult"] += r * int(n)  # the 1/√d_h scale
                elif c.attn == "spike2max":
                    ops = E.spike2max_norm_ops(r, int(n), c.norm)
                else:
                    ops = E.linear_attn_norm_ops(r, int(n))
                for op, val in ops.items():
                    counter.add(op, val)
        return out

    def forward(self, x, key_mask, counter=None):
        """x (T, B, N, D); key_mask (B, N) bool."""
        c = self.c
        w = key_mask.to(x.dtype)
        sp = c.spiking
        if counter is not None:
            self._count_pointwise(x, w, counter)
        s = self.n_in(self.ln1(x), key_mask)
        q = self.n_q(self._linear(self.q, s, w, counter, sp), key_mask)
        k = self.n_k(self._linear(self.k, s, w, counter, sp), key_mask)
        v = self.n_v(self._linear(self.v, s, w, counter, sp), key_mask)
        a = self.n_a(self._attention(q, k, v, key_mask, w, counter), key_mask)
        x = x + self._linear(self.o, a, w, counter, sp)
        s = self.n_f0(self.ln2(x), key_mask)
        u = self.n_f1(self._linear(self.fc1, s, w, counter, sp), key_mask)
        return x + self._linear(self.fc2, u, w, counter, sp)

    def _count_pointwise(self, x, w, counter):
        """LayerNorms, residual adds, neuron updates (or GELU) of this block on the valid tokens."""
        c = self.c
        el = float(w.sum()) * x.shape[0] * c.d_model  # elements of the residual stream
        f = el * c.ffn
        counter.add("fp32_mac", 2 * LN_MACS * el)
        counter.add("fp32_add", 2 * el)
        if c.spiking:
            # Each neuron-step integrates (one add; LIF one more multiply) and compares; spikes' soft
            # resets are not counted separately (they are ≤ one add per step and bounded by the compare).
            neuron_steps = 6 * el + f  # n_in, n_q, n_k, n_v, n_a, n_f0 at width D; n_f1 at the FFN width
            counter.add("fp32_add", neuron_steps)
            counter.add("fp32_cmp", neuron_steps * (2 if c.ternary else 1))
            if c.neuron == "lif":
                counter.add("fp32_mult", neuron_steps)
        else:
            for op, n in GELU_OPS.items():
                counter.add(op, n * f)


class SpikeClassifier(torch.nn.Module):
    def __init__(self, c: SpikeConfig):
        super().__init__()
        self.config = c.validate()
        self.embed = torch.nn.Embedding(c.vocab, c.d_model)
        self.pos = torch.nn.Parameter(torch.randn(c.max_len, c.d_model) * 0.02)
        self.blocks = torch.nn.ModuleList(Block(c) for _ in range(c.layers))
        self.ln_f = torch.nn.LayerNorm(c.d_model)
        self.head = torch.nn.Linear(c.d_model, c.classes)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor | None = None, counter: E.OpCounter | None = None):
        """ids (B, N) int64, mask (B, N) bool (True = token) → logits (B, classes)."""
        c = self.config
        if mask is None:
            mask = ids != c.pad_id
        mask = mask.bool()
        n = ids.shape[1]
        h = self.embed(ids) + self.pos[:n]
        x = h.unsqueeze(0).expand(c.steps, *h.shape)
        for blk in self.blocks:
            x = blk(x, mask, counter)
        w = mask.to(x.dtype)
        y = self.ln_f(x)
        pooled = (y * w[None, :, :, None]).sum((0, 2)) / (w.sum(1, keepdim=True).clamp_min(1) * c.steps)
        if counter is not None:
            el = float(w.sum()) * c.steps * c.d_model
            counter.add("fp32_mac", LN_MACS * el)
            counter.add("fp32_add", el)  # pooling
            counter.add("fp32_mac", float(ids.shape[0]) * c.d_model * c.classes)
        return self.head(pooled)


def n_params(model: torch.nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))
