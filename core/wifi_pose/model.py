"""WiFi-Mamba (RECONSTRUCTION: the abstract names the parts, the design of each is ours) and the
PiW3D-style transformer baseline, both mapping sanitised CSI of one frame to a set of 3D poses.

Input: amplitude and phase of one frame, each (B, T packets, F = links·antennas·subcarriers); per-feature
normalisation is stored as buffers so a checkpoint or an ONNX file needs no side file.

WiFi-Mamba
* **Dual-stream selective SSM**: amplitude and phase each get a linear embedding and a stack of selective
  SSM layers (Mamba's S6 with input-dependent Δ, B, C; expand 1 and no depthwise conv — CPU-sized),
  scanned forward and backward with shared parameters (bidirectional).
* **Cross-stream state coupling**: stream a reads out y_a = C_a·(h_a + κ ⊙ h_p) + D_a x_a (and symmetrically),
  κ = tanh θ per channel with θ = 0 at init, so at init the two streams are independent SSMs.
* **Persistent SSM memory**, two parts, both constant-size (no memory growth with the number of frames):
  the packet scan of frame k starts from g ⊙ h_T(k−1), g = sigmoid(γ) per channel (``gate=False`` means g = 1,
  no forgetting), and a frame-level selective SSM over the decoded pose queries (``query_memory``):
  m_k = r_k ⊙ m_{k−1} + (1 − r_k) ⊙ q_k with r_k = exp(−softplus(W q_k + b)) chosen from the current frame
  (input-dependent, as Mamba's Δ), read out normalised, y_k = m_k / w_k with w_k = r_k ⊙ w_{k−1} + (1 − r_k),
  so the first frame (zero state) reads its own queries exactly. The packet scan alone carries feature-level
  state, which a person moving a few centimetres (the wavelength is 5.6 cm) decorrelates; the query memory
  carries what is stable from frame to frame, the poses. exp(ΔA) < 1 and r < 1 keep every state bounded
  however long it runs; training back-propagates through windows of K frames (truncated BPTT). The query
  memory travels in one extra slot of the state tensor (layers + 1, 2, B, D, N): slot ``layers`` holds m
  and w in its first Q state columns (so Q ≤ N).
* **Selective State Attention**: Q pose queries, offset by a projection of the final SSM states of both
  streams (the sequential context), cross-attend to the 2T output tokens with an additive bias β·(log Δ̄_t −
  mean) from each token's mean step size Δ̄_t (tokens the SSM "selected" weigh more; β learned).
* Heads: per query 14×3 joints (added to the training mean pose) and a person logit; Hungarian set loss.

Baseline (PiW3D-style, Yan et al. CVPR 2024, in outline): one linear embedding of [amplitude, phase] per
packet + learned positions, a pre-norm transformer encoder and a DETR-style query decoder, same width.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from mlx26.core.common.errors import InputError
from mlx26.core.wifi_pose import ssm as S
from mlx26.core.wifi_pose.spec import JOINTS
from torch import nn

PRESETS = {"tiny": {"dim": 32, "state": 8, "layers": 2, "dec_layers": 1, "heads": 4, "queries": 4},
           "small": {"dim": 64, "state": 16, "layers": 3, "dec_layers": 1, "heads": 4, "queries": 4}}


class SelectiveSSM(nn.Module):
    """One stream's S6 parameters: x, gate z, Δ, A, B, C, D from the normalised input."""

    def __init__(self, d: int, n: int):
        super().__init__()
        self.rank = max(1, math.ceil(d / 16))
        self.n = n
        self.in_proj = nn.Linear(d, 2 * d)
        self.x_proj = nn.Linear(d, self.rank + 2 * n, bias=False)
        self.dt_proj = nn.Linear(self.rank, d)
        dt = torch.exp(torch.rand(d) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        with torch.no_grad():  # Mamba's Δ init: softplus(bias) ∈ [1e-3, 0.1]
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(d, 1))
        self.D = nn.Parameter(torch.ones(d))
        self.out_proj = nn.Linear(d, d)

    def params(self, u):
        x, z = self.in_proj(u).chunk(2, dim=-1)
        x = F.silu(x)
        dt, b, c = torch.split(self.x_proj(x), [self.rank, self.n, self.n], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        return x, z, delta, -torch.exp(self.A_log), b, c


class DualLayer(nn.Module):
    def __init__(self, d: int, n: int, bidirectional: bool = True):
        super().__init__()
        self.norm_a, self.norm_p = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ssm_a, self.ssm_p = SelectiveSSM(d, n), SelectiveSSM(d, n)
        self.theta = nn.Parameter(torch.zeros(d))  # κ = tanh θ
        self.bidirectional = bidirectional

    @property
    def kappa(self):
        return torch.tanh(self.theta)

    def forward(self, ua, up, h0a=None, h0p=None, scan=S.scan_chunked):
        xa, za, da, aa, ba, ca = self.ssm_a.params(self.norm_a(ua))
        xp, zp, dp, ap, bp, cp = self.ssm_p.params(self.norm_p(up))
        ha, hta = scan(xa, da, aa, ba, h0a)
        hp, htp = scan(xp, dp, ap, bp, h0p)
        if self.bidirectional:
            hb, _ = scan(xa.flip(1), da.flip(1), aa, ba.flip(1))
            ha = ha + hb.flip(1)
            hb, _ = scan(xp.flip(1), dp.flip(1), ap, bp.flip(1))
            hp = hp + hb.flip(1)
        k = self.kappa.view(1, 1, -1, 1)
        ya = torch.einsum("btdn,btn->btd", ha + k * hp, ca) + self.ssm_a.D * xa
        yp = torch.einsum("btdn,btn->btd", hp + k * ha, cp) + self.ssm_p.D * xp
        oa = ua + self.ssm_a.out_proj(ya * F.silu(za))
        op = up + self.ssm_p.out_proj(yp * F.silu(zp))
        return oa, op, hta, htp, da.mean(-1), dp.mean(-1)


class Attention(nn.Module):
    """Multi-head cross-attention with an additive per-key bias (written out so it exports to ONNX plainly)."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.h = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, q, kv, bias=None):
        b, nq, d = q.shape
        dh = d // self.h
        qh = self.q(q).view(b, nq, self.h, dh).transpose(1, 2)
        kh = self.k(kv).view(b, -1, self.h, dh).transpose(1, 2)
        vh = self.v(kv).view(b, -1, self.h, dh).transpose(1, 2)
        logits = qh @ kh.transpose(-1, -2) / math.sqrt(dh)
        if bias is not None:
            logits = logits + bias[:, None, None, :]
        out = torch.softmax(logits, -1) @ vh
        return self.o(out.transpose(1, 2).reshape(b, nq, d))


class _Base(nn.Module):
    def __init__(self, features: int, packets: int, d: int, queries: int):
        super().__init__()
        self.features, self.packets, self.dim, self.n_queries = features, packets, d, queries
        self.register_buffer("amp_mean", torch.zeros(features))
        self.register_buffer("amp_std", torch.ones(features))
        self.register_buffer("ph_mean", torch.zeros(features))
        self.register_buffer("ph_std", torch.ones(features))
        self.register_buffer("pose_mean", torch.zeros(JOINTS, 3))
        self.kp_head = nn.Linear(d, JOINTS * 3)
        self.cls_head = nn.Linear(d, 1)
        self.queries = nn.Parameter(torch.randn(queries, d) * 0.1)

    def _buf(self, name: str) -> torch.Tensor:
        return self.get_buffer(name)

    def set_normalisation(self, amp, ph, poses) -> None:
        """Per-feature mean/std of the training inputs and the mean pose (absolute, metres)."""
        with torch.no_grad():
            self._buf("amp_mean").copy_(torch.as_tensor(amp.mean((0, 1))))
            self._buf("amp_std").copy_(torch.as_tensor(amp.std((0, 1)) + 1e-6))
            self._buf("ph_mean").copy_(torch.as_tensor(ph.mean((0, 1))))
            self._buf("ph_std").copy_(torch.as_tensor(ph.std((0, 1)) + 1e-6))
            self._buf("pose_mean").copy_(torch.as_tensor(np.nanmean(poses.reshape(-1, JOINTS, 3), 0)))

    def _norm(self, amp, ph):
        return (amp - self.amp_mean) / self.amp_std, (ph - self.ph_mean) / self.ph_std

    def _heads(self, q):
        kp = self.kp_head(q).view(q.shape[0], q.shape[1], JOINTS, 3) + self.pose_mean
        return kp, self.cls_head(q).squeeze(-1)


class WiFiMamba(_Base):
    kind = "mamba"

    def __init__(self, features: int, packets: int = 20, dim: int = 32, state: int = 8, layers: int = 2,
                 dec_layers: int = 1, heads: int = 4, queries: int = 4, gate: bool = True, chunk: int = 16,
                 query_memory: bool = True):
        super().__init__(features, packets, dim, queries)
        if query_memory and queries > state:
            raise InputError(f"query memory needs queries ({queries}) ≤ state size ({state})",
                             "raise the state size or pass query_memory=False")
        self.config = {"features": features, "packets": packets, "dim": dim, "state": state, "layers": layers,
                       "dec_layers": dec_layers, "heads": heads, "queries": queries, "gate": gate, "chunk": chunk,
                       "query_memory": query_memory}
        self.query_memory = query_memory
        # Δ through a rank-⌈D/16⌉ bottleneck as in Mamba's dt projection (few parameters); bias 0: r = 1/2 at init
        self.mem_delta = nn.Sequential(nn.Linear(dim, max(1, math.ceil(dim / 16)), bias=False),
                                       nn.Linear(max(1, math.ceil(dim / 16)), dim)) if query_memory else None
        self.emb_a, self.emb_p = nn.Linear(features, dim), nn.Linear(features, dim)
        self.layers = nn.ModuleList(DualLayer(dim, state) for _ in range(layers))
        self.gamma = nn.Parameter(torch.full((layers, 2, dim, 1), 3.0)) if gate else None
        self.ctx = nn.Linear(2 * dim, dim)
        self.beta = nn.Parameter(torch.ones(()))
        self.dec = nn.ModuleList(nn.ModuleDict({"n1": nn.LayerNorm(dim), "att": Attention(dim, heads),
                                                "n2": nn.LayerNorm(dim), "ff": nn.Sequential(
                                                    nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))})
                                 for _ in range(dec_layers))
        if self.mem_delta is not None:
            nn.init.zeros_(self.mem_delta[1].bias)
        self.n_state = state
        self.chunk = chunk
        self.scan_name = "sequential"  # fastest on CPU at T = 20; "chunked" gives the same result (tested)

    def zero_state(self, batch: int) -> torch.Tensor:
        return torch.zeros(len(self.layers) + int(self.query_memory), 2, batch, self.dim, self.n_state)

    def carry(self, h_t: torch.Tensor) -> torch.Tensor:
        """The next frame's initial scan state: g ⊙ h_T (g = 1 without a gate: no forgetting); the query-memory
        slot, which forgets through its own r, passes unchanged."""
        if self.gamma is None:
            return h_t
        n = len(self.layers)
        scans = torch.sigmoid(self.gamma).unsqueeze(2) * h_t[:n]
        return torch.cat([scans, h_t[n:]]) if self.query_memory else scans

    def remember(self, q: torch.Tensor, state: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """The frame-level query memory: (read-out queries (B, Q, D), next slot (1, 2, B, D, N))."""
        nq = q.shape[1]
        assert self.mem_delta is not None
        r = torch.exp(-F.softplus(self.mem_delta(q)))
        if state is None:
            m, w = (1 - r) * q, 1 - r
        else:
            slot = state[len(self.layers)]  # (2, B, D, N)
            m_prev, w_prev = slot[0, :, :, :nq].transpose(1, 2), slot[1, :, :, :nq].transpose(1, 2)
            m, w = r * m_prev + (1 - r) * q, r * w_prev + (1 - r)
        pad = q.new_zeros(q.shape[0], self.dim, self.n_state - nq)
        nxt = torch.stack([torch.cat([m.transpose(1, 2), pad], -1), torch.cat([w.transpose(1, 2), pad], -1)])
        return m / w, nxt.unsqueeze(0)

    def forward(self, amp, ph, state=None):
        """amp, ph (B, T, F); state (layers [+ 1], 2, B, D, N) or None → (joints (B,Q,14,3), logits (B,Q), next state)."""
        a, p = self._norm(amp, ph)
        ua, up = self.emb_a(a), self.emb_p(p)
        scan = S.SCANS[self.scan_name]
        if self.scan_name == "chunked":
            def scan(x, d, aa, b, h0=None):
                return S.scan_chunked(x, d, aa, b, h0, chunk=self.chunk)
        finals = []
        da = dp = None
        for i, layer in enumerate(self.layers):
            h0a = h0p = None
            if state is not None:
                h0a, h0p = state[i, 0], state[i, 1]
            ua, up, hta, htp, da, dp = layer(ua, up, h0a, h0p, scan=scan)
            finals.append(torch.stack([hta, htp]))
        h_t = torch.stack(finals)  # (layers, 2, B, D, N)
        tokens = torch.cat([ua, up], 1)
        logd = torch.log(torch.cat([da, dp], 1) + 1e-6)
        bias = self.beta * (logd - logd.mean(1, keepdim=True))
        ctx = self.ctx(torch.cat([h_t[-1, 0].mean(-1), h_t[-1, 1].mean(-1)], -1))
        q = self.queries.unsqueeze(0) + ctx.unsqueeze(1)
        for blk in self.dec:
            assert isinstance(blk, nn.ModuleDict)
            q = q + blk["att"](blk["n1"](q), tokens, bias)
            q = q + blk["ff"](blk["n2"](q))
        if self.query_memory:
            q, slot = self.remember(q, state)
            h_t = torch.cat([h_t, slot])
        kp, logits = self._heads(q)
        return kp, logits, self.carry(h_t)


class PiW3DTransformer(_Base):
    kind = "transformer"

    def __init__(self, features: int, packets: int = 20, dim: int = 32, layers: int = 2, dec_layers: int = 2,
                 heads: int = 4, queries: int = 4, ffn: int = 4, **_):
        super().__init__(features, packets, dim, queries)
        self.config = {"features": features, "packets": packets, "dim": dim, "layers": layers,
                       "dec_layers": dec_layers, "heads": heads, "queries": queries, "ffn": ffn}
        self.emb = nn.Linear(2 * features, dim)
        self.pos = nn.Parameter(torch.randn(packets, dim) * 0.02)
        enc = nn.TransformerEncoderLayer(dim, heads, ffn * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(enc, layers, enable_nested_tensor=False)
        dec = nn.TransformerDecoderLayer(dim, heads, ffn * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.dec = nn.TransformerDecoder(dec, dec_layers)

    def forward(self, amp, ph, state=None):
        a, p = self._norm(amp, ph)
        mem = self.enc(self.emb(torch.cat([a, p], -1)) + self.pos[: a.shape[1]])
        q = self.dec(self.queries.unsqueeze(0).expand(a.shape[0], -1, -1), mem)
        kp, logits = self._heads(q)
        return kp, logits, None


def build(kind: str, features: int, packets: int, preset: str = "tiny", **over) -> nn.Module:
    cfg = {**PRESETS[preset], **over}
    if kind == "mamba":
        return WiFiMamba(features, packets, **cfg)
    cfg = {k: v for k, v in cfg.items() if k not in ("state", "gate", "chunk")}
    cfg["dec_layers"] = over.get("dec_layers", max(2, PRESETS[preset]["dec_layers"]))
    return PiW3DTransformer(features, packets, **cfg)


def n_params(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def set_loss(kp, logits, gt, cls_weight: float = 1.0):
    """Hungarian-matched set loss: L1 on matched joints (metres) + BCE on the person logits.

    gt (B, P, 14, 3) with NaN rows for absent persons. Matching cost = mean L1 − 0.1·sigmoid(logit) (scipy).
    """
    from scipy.optimize import linear_sum_assignment

    b, q = logits.shape
    valid = torch.isfinite(gt[..., 0, 0])  # (B, P)
    g = torch.nan_to_num(gt)
    cost = (kp.unsqueeze(2) - g.unsqueeze(1)).abs().mean((-1, -2))  # (B, Q, P)
    cost = cost - 0.1 * torch.sigmoid(logits).unsqueeze(-1)
    c = cost.detach().numpy()
    vm = valid.numpy()
    target = torch.zeros(b, q)
    kp_terms = []
    for i in range(b):
        cols = np.flatnonzero(vm[i])
        if not len(cols):
            continue
        r, cidx = linear_sum_assignment(c[i][:, cols])
        target[i, r] = 1.0
        kp_terms.append((kp[i, r] - g[i, cols[cidx]]).abs().mean((-1, -2)))
    kp_loss = torch.cat(kp_terms).mean() if kp_terms else kp.sum() * 0
    cls = F.binary_cross_entropy_with_logits(logits, target)
    return kp_loss + cls_weight * cls, {"kp_l1_m": float(kp_loss.detach()), "cls": float(cls.detach())}


def analytic_flops(model) -> int:
    """Multiply-accumulates ×2 of one frame (batch 1): the linear layers, the scans and the attention."""
    cfg: dict = getattr(model, "config")  # noqa: B009 - set by WiFiMamba / PiW3DTransformer
    t, d, f = cfg["packets"], cfg["dim"], cfg["features"]
    q = cfg["queries"]
    if isinstance(model, WiFiMamba):
        n, layers = cfg["state"], cfg["layers"]
        rank = max(1, math.ceil(d / 16))
        per_stream = t * (d * 2 * d + d * (rank + 2 * n) + rank * d + d * d) + 2 * t * d * n * 4  # projections + 2 scans
        macs = 2 * t * f * d + layers * 2 * per_stream
        macs += cfg["dec_layers"] * (q * d * d * 2 + 2 * t * d * d * 2 + q * 2 * t * d * 2 + q * 4 * d * d) + 2 * d * d
        if cfg.get("query_memory"):  # Δ through the rank bottleneck, then the two-term update of m and w
            macs += q * 2 * d * rank + q * d * 4
    else:
        layers, ffn = cfg["layers"], cfg["ffn"]
        macs = t * 2 * f * d + layers * (4 * t * d * d + 2 * t * t * d + 2 * t * ffn * d * d)
        macs += cfg["dec_layers"] * (4 * q * d * d + 2 * q * q * d + 2 * q * d * d + 2 * t * d * d + 2 * q * t * d
                                     + 2 * q * ffn * d * d)
    macs += q * d * (JOINTS * 3 + 1)
    return int(2 * macs)
