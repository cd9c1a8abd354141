"""The Flash-ANSR network, CPU-sized (``mlx26 sr train``; Saegert & Köthe, ICML 2026, arXiv 2602.08885).

* **Encoding**: every value of a point (x1..x3, y) is cast to float32 and written as its 32
  IEEE-754 bits (sign, exponent, mantissa) in {-1, +1}, the "multi-hot" bit pre-encoding
  of Flash-ANSR / NeSymReS; absent variables are all-zero columns. A linear layer maps the
  128 bits of a point to the model width.
* **Encoder**: a Set Transformer (Lee et al., ICML 2019): ``n_isab`` induced set attention
  blocks (ISAB, ``n_inducing`` inducing points), then pooling by multihead attention (PMA,
  ``n_seeds`` seeds) — permutation invariant in the points, any number of points.
* **Decoder**: a causal transformer decoder over prefix tokens with cross-attention to the
  PMA seeds.

Reconstructed: the sizes (the paper's models are ~10^8 parameters trained on GPUs for days;
``tiny`` is ~0.2 M parameters trained for minutes on one CPU thread) and the exact layer
details (pre-norm, GELU); the bit encoding and the ISAB/PMA/decoder structure follow the paper.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

SPECIALS = ("<pad>", "<bos>", "<eos>")
PAD, BOS, EOS = 0, 1, 2


@dataclass
class ModelConfig:
    d_model: int = 64
    n_heads: int = 4
    n_isab: int = 2
    n_inducing: int = 16
    n_seeds: int = 4
    n_dec: int = 2
    max_len: int = 26  # <bos> + 24 tokens + <eos>
    n_vars: int = 3
    vocab: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        d = asdict(self)
        d["vocab"] = list(self.vocab)
        return d


def encode_bits(X: np.ndarray, y: np.ndarray, n_vars: int) -> np.ndarray:
    """(n, (n_vars + 1) * 32) float32 array of ±1 IEEE-754 bits; absent variable columns are 0."""
    n = X.shape[0]
    V = np.zeros((n, n_vars + 1), dtype=np.float32)
    V[:, : X.shape[1]] = X.astype(np.float32)
    V[:, n_vars] = y.astype(np.float32)
    u = V.view(np.uint32)
    shifts = np.arange(31, -1, -1, dtype=np.uint32)
    bits = ((u[..., None] >> shifts) & 1).astype(np.float32) * 2.0 - 1.0
    bits[:, X.shape[1]:n_vars, :] = 0.0
    return bits.reshape(n, -1)


class MAB(nn.Module):
    def __init__(self, d: int, h: int):
        super().__init__()
        self.att = nn.MultiheadAttention(d, h, batch_first=True)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, q, kv, kv_pad=None):
        h = q + self.att(self.n1(q), kv, kv, key_padding_mask=kv_pad, need_weights=False)[0]
        return h + self.ff(self.n2(h))


class ISAB(nn.Module):
    def __init__(self, d: int, h: int, m: int):
        super().__init__()
        self.I = nn.Parameter(torch.randn(1, m, d) * 0.1)
        self.m1, self.m2 = MAB(d, h), MAB(d, h)

    def forward(self, x, pad=None):
        hmid = self.m1(self.I.expand(x.shape[0], -1, -1), x, pad)
        return self.m2(x, hmid)


class PMA(nn.Module):
    def __init__(self, d: int, h: int, k: int):
        super().__init__()
        self.S = nn.Parameter(torch.randn(1, k, d) * 0.1)
        self.m = MAB(d, h)

    def forward(self, x, pad=None):
        return self.m(self.S.expand(x.shape[0], -1, -1), x, pad)


class FlashANSR(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.inp = nn.Sequential(nn.Linear((cfg.n_vars + 1) * 32, d), nn.GELU(), nn.Linear(d, d))
        self.isabs = nn.ModuleList(ISAB(d, cfg.n_heads, cfg.n_inducing) for _ in range(cfg.n_isab))
        self.pma = PMA(d, cfg.n_heads, cfg.n_seeds)
        self.tok = nn.Embedding(len(SPECIALS) + len(cfg.vocab), d)
        self.pos = nn.Embedding(cfg.max_len, d)
        layer = nn.TransformerDecoderLayer(d, cfg.n_heads, 2 * d, dropout=0.0, batch_first=True, norm_first=True,
                                           activation="gelu")
        self.dec = nn.TransformerDecoder(layer, cfg.n_dec)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, len(SPECIALS) + len(cfg.vocab))

    def encode(self, bits: torch.Tensor, pad: torch.Tensor | None = None) -> torch.Tensor:
        h = self.inp(bits)
        for blk in self.isabs:
            h = blk(h, pad)
        return self.pma(h, pad)

    def decode(self, memory: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        T = tokens.shape[1]
        x = self.tok(tokens) + self.pos(torch.arange(T, device=tokens.device))[None]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=tokens.device), 1)
        h = self.dec(x, memory, tgt_mask=causal, tgt_key_padding_mask=tokens == PAD)
        return self.head(self.norm(h))

    def forward(self, bits, tokens, pad=None):
        return self.decode(self.encode(bits, pad), tokens)


def n_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
