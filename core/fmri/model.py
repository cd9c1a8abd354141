"""A tiny dual-path masked autoencoder after Omni-fMRI (arXiv 2601.23090, Sec. "Model"; public code
``src/models/patch_embed_3d.py`` / ``mae_model.py`` read for the structure, not copied).

Every clip is a set of foreground fine cells (the (T, 4, 4, 4) patches uniform patching would make);
a token is one cell (fine) or an 8^3 coarse patch grouping up to 8 of them.

* fine tokens: a linear map of the (T, 4, 4, 4) patch (= ``Conv3d(T, D, 4, stride=4)`` on one patch);
* coarse tokens: the same map on the 2x-downsampled (T, 8, 8, 8) patch, plus a zero-initialised MLP over
  the embeddings of its 2x2x2 fine sub-grid (so training starts from the downsampled path alone); a
  background sub-cell (dropped by the tokeniser) enters as zero input, i.e. the embedding's bias;
* learned scale embeddings, fixed 3D sinusoidal position of the patch centre;
* MAE: encoder on the 25 % visible tokens (mask ratio 0.75), a light decoder with mask tokens; masked tokens
  are reconstructed at full resolution on their foreground fine cells: a fine token through a shared
  ``D -> T*4^3`` head, a coarse token first split into its 2x2x2 sub-cells (the transpose of the embedding's
  2x2x2 merge: one zero-initialised ``D x D`` map per sub-position, added to the token) and then the same head.

Reconstructed: the public code's coarse head is a separate ``D -> T*8^3`` linear layer over the whole coarse
patch, background included; here the coarse head is factored through the fine head and only foreground cells
are targets, so every patching reconstructs the same voxels and the voxel work (embedding + head) is the same
for every patching; only the transformer's work depends on the token count, which is the paper's point.
At CPU scale the paper's ViT-B (768 wide, 12 deep) with varlen flash attention becomes a plain padded
``nn.TransformerEncoder`` of a few layers; the loss is the voxel-averaged MSE on masked tokens' cells.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def sincos(pos: torch.Tensor, dim: int) -> torch.Tensor:
    """(…, 3) voxel coordinates → (…, dim) sinusoidal features (dim split over the three axes)."""
    per = max(2, (dim // 6) * 2)
    freqs = torch.exp(torch.arange(0, per, 2, dtype=torch.float32) * (-math.log(100.0) / per))
    ang = pos.unsqueeze(-1) * freqs  # (…, 3, per/2)
    feat = torch.cat([ang.sin(), ang.cos()], -1).flatten(-2)
    if feat.shape[-1] < dim:
        feat = torch.nn.functional.pad(feat, (0, dim - feat.shape[-1]))
    return feat[..., :dim]


def _stack(dim: int, depth: int, heads: int) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, batch_first=True, norm_first=True)
    return nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)


class DualPathMAE(nn.Module):
    """Batches (``train.collate``): ``inp`` (B, N, T p^3) token inputs, ``pos`` (B, N, 3), ``scale`` (B, N)
    (-1 = padding), ``cells`` (B, M, T p^3) the foreground fine cells, ``cell_tok`` (B, M) the token of each cell
    (-1 = padding) and ``cell_sub`` (B, M) its sub-position 0..7 inside a coarse token (-1 for a fine token)."""

    def __init__(self, frames: int, patch: int = 4, dim: int = 64, depth: int = 2, heads: int = 4,
                 dec_dim: int = 64, dec_depth: int = 1, scales: int = 2):
        super().__init__()
        self.config = dict(frames=frames, patch=patch, dim=dim, depth=depth, heads=heads, dec_dim=dec_dim,
                           dec_depth=dec_depth, scales=scales)
        n_in = frames * patch ** 3
        self.embed = nn.Linear(n_in, dim)
        last = nn.Linear(dim, dim)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.sub_mlp = nn.Sequential(nn.Linear(8 * dim, dim), nn.GELU(), last)
        self.scale_embed = nn.Parameter(torch.zeros(scales, dim))
        self.encoder = _stack(dim, depth, heads)
        self.norm = nn.LayerNorm(dim)
        self.dec_embed = nn.Linear(dim, dec_dim)
        self.mask_token = nn.Parameter(torch.zeros(dec_dim))
        self.dec_scale = nn.Parameter(torch.zeros(scales, dec_dim))
        self.decoder = _stack(dec_dim, dec_depth, heads)
        self.split = nn.Parameter(torch.zeros(8, dec_dim, dec_dim))  # coarse token -> its 8 sub-cells
        self.head = nn.Linear(dec_dim, n_in)
        nn.init.normal_(self.mask_token, std=0.02)

    def tokens(self, batch: dict) -> torch.Tensor:
        x = self.embed(batch["inp"])  # (B, N, D)
        coarse = batch["scale"] == 1
        if coarse.any():
            cid = torch.full(coarse.shape, -1, dtype=torch.long)
            cid[coarse] = torch.arange(int(coarse.sum()))
            sub = self.embed.bias.expand(int(coarse.sum()), 8, x.shape[-1]).clone()
            cc = batch["cell_sub"] >= 0
            b_idx = torch.arange(x.shape[0]).unsqueeze(1).expand_as(cc)[cc]
            sub[cid[b_idx, batch["cell_tok"][cc]], batch["cell_sub"][cc]] = self.embed(batch["cells"][cc])
            extra = torch.zeros_like(x)
            extra[coarse] = self.sub_mlp(sub.flatten(1))
            x = x + extra
        scale = batch["scale"].clamp(min=0)
        return x + self.scale_embed[scale] + sincos(batch["pos"], x.shape[-1])

    def encode(self, batch: dict) -> torch.Tensor:
        """Mean-pooled encoder output over every valid token (no masking): (B, D)."""
        x = self.norm(self.encoder(self.tokens(batch), src_key_padding_mask=~batch["valid"]))
        w = batch["valid"].unsqueeze(-1).float()
        return (x * w).sum(1) / w.sum(1).clamp(min=1)

    def forward(self, batch: dict, mask_ratio: float = 0.75, generator: torch.Generator | None = None):
        """(loss, mean-predictor loss on the same voxels, masked voxel count)."""
        valid = batch["valid"]
        B, N = valid.shape
        noise = torch.rand(B, N, generator=generator).masked_fill(~valid, 2.0)
        order = noise.argsort(1)
        n_valid = valid.sum(1)
        n_keep = (n_valid.float() * (1 - mask_ratio)).round().long().clamp(min=1)
        k_max = int(n_keep.max())
        keep_idx = order[:, :k_max]
        keep_ok = torch.arange(k_max).unsqueeze(0) < n_keep.unsqueeze(1)
        x = self.tokens(batch)
        vis = torch.gather(x, 1, keep_idx.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
        lat = self.dec_embed(self.norm(self.encoder(vis, src_key_padding_mask=~keep_ok)))
        full = self.mask_token.expand(B, N, -1).clone()
        full = full.scatter(1, keep_idx.unsqueeze(-1).expand(-1, -1, lat.shape[-1]),
                            torch.where(keep_ok.unsqueeze(-1), lat, full.gather(
                                1, keep_idx.unsqueeze(-1).expand(-1, -1, lat.shape[-1]))))
        scale = batch["scale"].clamp(min=0)
        full = full + self.dec_scale[scale] + sincos(batch["pos"], full.shape[-1])
        dec = self.decoder(full, src_key_padding_mask=~valid)
        masked = valid.clone()
        masked.scatter_(1, keep_idx, ~keep_ok & masked.gather(1, keep_idx))
        tok = batch["cell_tok"]
        sel = (tok >= 0) & masked.gather(1, tok.clamp(min=0))
        b_idx = torch.arange(B).unsqueeze(1).expand_as(tok)[sel]
        h = dec[b_idx, tok[sel]]
        sub = batch["cell_sub"][sel]
        co = sub >= 0
        if co.any():  # split each masked coarse token once (few tokens), then pick each cell's sub-position
            ct = (batch["scale"] == 1) & masked
            cid = torch.full((B, N), -1, dtype=torch.long)
            cid[ct] = torch.arange(int(ct.sum()))
            parts = torch.einsum("kd,jde->kje", dec[ct], self.split)  # (K, 8, D)
            delta = torch.zeros_like(h)
            delta[co] = parts[cid[b_idx[co], tok[sel][co]], sub[co]]
            h = h + delta
        pred = self.head(h)
        target = batch["cells"][sel]
        diff = pred - target
        sse = (diff * diff).sum()
        with torch.no_grad():
            ref = target - batch["mean"]
            base = (ref * ref).sum()
        count = target.numel()
        return sse / max(count, 1), base / max(count, 1), count
