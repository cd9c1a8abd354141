"""A tiny dual-path masked autoencoder after Omni-fMRI (arXiv 2601.23090, Sec. "Model"; public code
``src/models/patch_embed_3d.py`` / ``mae_model.py`` read for the structure, not copied).

* fine tokens: a linear map of the (T, 4, 4, 4) patch (= ``Conv3d(T, D, 4, stride=4)`` on one patch);
* coarse tokens: the same map on the 2x-downsampled (T, 8, 8, 8) patch, plus a zero-initialised MLP over
  the embeddings of its 2x2x2 fine sub-grid (so training starts from the downsampled path alone);
* learned scale embeddings, fixed 3D sinusoidal position of the patch centre;
* MAE: encoder on the 25 % visible tokens (mask ratio 0.75), a light decoder with mask tokens and one
  head per scale that predicts the token's voxels at its own resolution (T*4^3 or T*8^3 values).

Reconstructed at CPU scale: the paper's ViT-B (768 wide, 12 deep) with varlen flash attention becomes a
plain padded ``nn.TransformerEncoder`` of a few layers; the loss is the voxel-averaged MSE on masked tokens.
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
        self.heads = nn.ModuleList(nn.Linear(dec_dim, frames * (patch * 2 ** s) ** 3) for s in range(scales))
        nn.init.normal_(self.mask_token, std=0.02)

    def sub_grid(self, full: torch.Tensor) -> torch.Tensor:
        """(…, T*(2p)^3) coarse patches → (…, 8, T*p^3) fine sub-patches at full resolution."""
        t, p = self.config["frames"], self.config["patch"]
        lead = full.shape[:-1]
        a = full.reshape(*lead, t, 2, p, 2, p, 2, p)
        n = len(lead)
        a = a.permute(*range(n), n + 1, n + 3, n + 5, n, n + 2, n + 4, n + 6)
        return a.reshape(*lead, 8, t * p ** 3)

    def tokens(self, batch: dict) -> torch.Tensor:
        x = self.embed(batch["inp"])  # (B, N, D)
        cv = batch["coarse_valid"]
        if cv.any():
            sub = self.embed(self.sub_grid(batch["coarse"][cv]))  # (n, 8, D)
            extra = torch.zeros_like(x)
            b_idx = torch.arange(x.shape[0]).unsqueeze(1).expand_as(cv)[cv]
            extra[b_idx, batch["coarse_index"][cv]] = self.sub_mlp(sub.flatten(1))
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
        sel = masked & (batch["scale"] == 0)
        pred = self.heads[0](dec[sel])
        target = batch["inp"][sel]
        sse = ((pred - target) ** 2).sum()
        base = ((target - batch["mean"]) ** 2).sum()
        count = target.numel()
        cv = batch["coarse_valid"]
        if len(self.heads) > 1 and cv.any():
            cm = masked.gather(1, batch["coarse_index"]) & cv
            if cm.any():
                b_idx = torch.arange(B).unsqueeze(1).expand_as(cm)[cm]
                pred = self.heads[1](dec[b_idx, batch["coarse_index"][cm]])
                target = batch["coarse"][cm]
                sse = sse + ((pred - target) ** 2).sum()
                base = base + ((target - batch["mean"]) ** 2).sum()
                count += target.numel()
        return sse / max(count, 1), base / max(count, 1), count
