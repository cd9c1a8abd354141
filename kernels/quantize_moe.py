"""Fused single-pass MoE experts forward with low-rank (LQER / TileQ) compensation, and its loop reference.

Part of our reconstruction of TileQ (Gu, Chen, Hu, Liu, ICML 2026, arXiv 2605.09281); the paper's
kernels are not public, so this is our own CPU/torch design. Both functions follow transformers'
experts interface ``fn(experts_module, hidden_states (T,H), top_k_index (T,k), top_k_weights (T,k))``
and are registered as ``"tileq"`` (fused) and ``"tileq_loop"`` (reference) through
``ExpertsInterface.register``; select them with ``model.set_experts_implementation("tileq")``.

The module's ``gate_up_proj`` / ``down_proj`` hold the (dequantized) base weights; the optional
attribute ``tileq_factors = {"gate_up_proj": Factors | None, "down_proj": Factors | None}`` holds the
corrections ``ΔW_e = U[p(e)] · C_e · V[q(e)]``.

* fused: no Python loop over experts. The (token, slot) assignments are sorted by expert once;
  every per-expert or per-group product is one ``torch.nn.functional.grouped_mm`` call over
  contiguous segments (base weights per expert, cores per expert, ``U`` per row group, ``V`` per
  column group; a group map that is not monotone in the expert index costs one permutation).
  For ``gate_up_proj`` the input is shared by all experts, so all ``V_q`` are applied with ONE GEMM
  over the T tokens. For ``down_proj`` the expert outputs are summed, so the routing-weighted core
  outputs are summed per (token, row group) first and each ``U_p`` is applied once per token and
  row group (one GEMM) rather than once per (token, expert) — when P ≤ top-k, else per assignment.
  Corrections are accumulated in place (``addmm_`` when one ``U`` is shared, ``add_`` otherwise) and the
  routing weights are applied in place, so no extra (T·k, 2I) buffer is allocated. Ranks are
  zero-padded to a multiple of 4 (grouped_mm needs 16-byte strides); shapes it cannot take fall back
  to a loop over segments. On CPU the base GEMMs are the same arithmetic as in the loop, so for large
  T the fused path cannot beat the loop by more than the loop's per-expert overhead (measured in
  ``benchmarks/quantize_moe.py`` as "gemm floor").
* loop: for each expert that was hit, its routed tokens through ``W_e`` and then ``V_q``, ``C_e``, ``U_p``
  — the plain reference the fused path is tested against.
* ``"tileq"`` dispatches: with fewer (token, slot) assignments than experts (decode sizes) it runs the
  loop, whose few per-expert products cost less than sorting and E grouped segments; otherwise the single
  pass (``single_pass_forward``). Both work in the activations' dtype (fp32 or bf16: the factors are cast
  once and cached per dtype), so "fused vs loop" is always compared at one precision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F


def _gmm(x: torch.Tensor, W: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """Rows of segment i (ends ``offs``) times W[i] (G, in, out) → (N, out)."""
    try:
        return F.grouped_mm(x, W, offs=offs)
    except RuntimeError:  # odd strides / alignment: plain segments
        out = x.new_zeros(x.shape[0], W.shape[2])
        start = 0
        for i, end in enumerate(offs.tolist()):
            if end > start:
                out[start:end] = x[start:end] @ W[i]
            start = end
        return out


def _pad_rank(f: Any, dtype: torch.dtype = torch.float32) -> Any:
    """(U (P,m,r4), Vᵀ (Q,n,r4), coreᵀ (E,r4,r4) | None): factors transposed for x @ W, rank padded to 4k,
    in ``dtype`` (the activations'; cached per dtype on the factors object)."""
    cache = getattr(f, "_padded", None)
    if not isinstance(cache, dict):
        cache = f._padded = {}
    if dtype in cache:
        return cache[dtype]
    U, V, core = _in_dtype(f, dtype)
    r = U.shape[-1]
    r4 = -(-r // 4) * 4
    pad = r4 - r
    Ut = F.pad(U, (0, pad)).transpose(1, 2).contiguous()  # (P, r4, m)
    Vt = F.pad(V, (0, 0, 0, pad)).transpose(1, 2).contiguous()  # (Q, n, r4)
    Ct = None if core is None else F.pad(core, (0, pad, 0, pad)).transpose(1, 2).contiguous()
    cache[dtype] = (Ut, Vt, Ct, r4)
    return cache[dtype]


def _segments(groups_sorted: torch.Tensor, G: int) -> torch.Tensor:
    return torch.cumsum(torch.bincount(groups_sorted, minlength=G), 0).to(torch.int32)


def _by_group(x: torch.Tensor, gmap: torch.Tensor, e_sorted: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """x rows in expert order; apply W[gmap[e]] (one grouped_mm, permuting only if gmap is not monotone)."""
    g = gmap[e_sorted]
    G = W.shape[0]
    if bool((gmap[1:] >= gmap[:-1]).all()):
        return _gmm(x, W, _segments(g, G))
    perm = torch.argsort(g, stable=True)
    y = _gmm(x[perm].contiguous(), W, _segments(g[perm], G))
    out = torch.empty_like(y)
    out[perm] = y
    return out


def _add_lowrank(out: torch.Tensor, f: Any, z: torch.Tensor, e_sorted: torch.Tensor, offs_e: torch.Tensor) -> None:
    """out += (z · C_eᵀ) · U_pᵀ per row, in place (one accumulating GEMM when a single U is shared)."""
    Ut, _, Ct, _ = _pad_rank(f, z.dtype)
    if Ct is not None:
        z = _gmm(z, Ct, offs_e)
    if Ut.shape[0] == 1:
        out.addmm_(z, Ut[0])
    else:
        out.add_(_by_group(z, f.rows, e_sorted, Ut))


def fused_experts_forward(self: Any, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
                          top_k_weights: torch.Tensor) -> torch.Tensor:
    """The ``"tileq"`` forward: the single pass, or the loop when there are fewer (token, slot) assignments
    than experts (decode sizes: sorting and E grouped segments then cost more than a few per-expert
    products; the loop visits only the experts that were hit)."""
    if top_k_index.numel() < self.gate_up_proj.shape[0]:
        return loop_experts_forward(self, hidden_states, top_k_index, top_k_weights)
    return single_pass_forward(self, hidden_states, top_k_index, top_k_weights)


def single_pass_forward(self: Any, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
                        top_k_weights: torch.Tensor) -> torch.Tensor:
    """Experts forward in one pass over all (token, slot) assignments (see the module docstring)."""
    T, H = hidden_states.shape
    k = top_k_index.shape[1]
    E = self.gate_up_proj.shape[0]
    factors = getattr(self, "tileq_factors", None) or {}
    flat = top_k_index.reshape(-1)
    order = torch.argsort(flat, stable=True)
    e_s = flat[order]
    tok_s = torch.div(order, k, rounding_mode="floor")
    offs_e = _segments(e_s, E)
    x_s = hidden_states.index_select(0, tok_s)
    gate_up = _gmm(x_s, self.gate_up_proj.transpose(1, 2), offs_e)
    f = factors.get("gate_up_proj")
    if f is not None:  # shared input: every V_q with one GEMM over the T tokens, then pick q(e)
        _, Vt, _, r4 = _pad_rank(f, hidden_states.dtype)
        Q = Vt.shape[0]
        z_all = hidden_states @ Vt.transpose(0, 1).reshape(H, Q * r4)  # (T, Q·r4)
        z = z_all.index_select(0, tok_s) if Q == 1 else z_all.view(T * Q, r4).index_select(0, tok_s * Q + f.cols[e_s])
        _add_lowrank(gate_up, f, z, e_s, offs_e)  # in place: no fresh (T·k, 2I) buffer
    gate, up = gate_up.chunk(2, dim=-1)
    h = self.act_fn(gate)
    h = h.mul_(up) if h.data_ptr() != gate.data_ptr() else h * up
    out = _gmm(h, self.down_proj.transpose(1, 2), offs_e)
    weights = top_k_weights.reshape(-1).index_select(0, order).unsqueeze(1).to(out.dtype)
    out.mul_(weights)
    f = factors.get("down_proj")
    acc = None
    if f is not None:
        Ut, Vt, Ct, r4 = _pad_rank(f, h.dtype)
        z = _by_group(h, f.cols, e_s, Vt)
        if Ct is not None:
            z = _gmm(z, Ct, offs_e)
        z.mul_(weights)
        P = Ut.shape[0]
        if P <= k:  # outputs are summed over experts: apply U once per (token, row group)
            acc = z.new_zeros(T * P, r4).index_add_(0, tok_s * P + f.rows[e_s] if P > 1 else tok_s, z)
        else:
            out.add_(_by_group(z, f.rows, e_s, Ut))
    final = torch.zeros(T, out.shape[1], dtype=out.dtype, device=out.device).index_add_(0, tok_s, out)
    if acc is not None:
        final.addmm_(acc.view(T, -1), Ut.reshape(-1, Ut.shape[-1]))
    return final.to(hidden_states.dtype)


def _in_dtype(f: Any, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(U, V, core) in ``dtype``, converted once and cached on the factors object."""
    if f.U.dtype == dtype:
        return f.U, f.V, f.core
    cache = getattr(f, "_cast", None)
    if not isinstance(cache, dict):
        cache = f._cast = {}
    if dtype not in cache:
        cache[dtype] = (f.U.to(dtype), f.V.to(dtype), None if f.core is None else f.core.to(dtype))
    return cache[dtype]


def lowrank_correction(f: Any, e: int, x: torch.Tensor) -> torch.Tensor:
    """x · ΔW_eᵀ for expert e: x through V_q(e), the core C_e (when there is one) and U_p(e), in x's dtype."""
    U, V, core = _in_dtype(f, x.dtype)
    z = x @ V[f.cols[e]].T
    if core is not None:
        z = z @ core[e].T
    return z @ U[f.rows[e]].T


def loop_experts_forward(self: Any, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
                         top_k_weights: torch.Tensor) -> torch.Tensor:
    """Reference: a Python loop over experts, each applying W_e and then V_q, C_e, U_p explicitly."""
    return expert_loop(self, hidden_states, top_k_index, top_k_weights,
                       lambda proj, e, x: x @ getattr(self, proj)[e].T)


def expert_loop(self: Any, hidden_states: torch.Tensor, top_k_index: torch.Tensor, top_k_weights: torch.Tensor,
                base: Callable[[str, int, torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """The per-expert loop over the experts that were hit; ``base(projection, e, x)`` is x · W_eᵀ (dense
    weights here, packed int4 codes in :mod:`.quantize_moe_int4`), the low-rank corrections are added to it."""
    out = torch.zeros_like(hidden_states)
    factors = getattr(self, "tileq_factors", None) or {}
    fg, fd = factors.get("gate_up_proj"), factors.get("down_proj")
    for e in torch.unique(top_k_index).tolist():
        token_idx, slot = torch.where(top_k_index == e)
        x = hidden_states[token_idx]
        gate_up = base("gate_up_proj", e, x)
        if fg is not None:
            gate_up = gate_up + lowrank_correction(fg, e, x)
        gate, up = gate_up.chunk(2, dim=-1)
        h = self.act_fn(gate) * up
        o = base("down_proj", e, h)
        if fd is not None:
            o = o + lowrank_correction(fd, e, h)
        out.index_add_(0, token_idx, o * top_k_weights[token_idx, slot, None].to(o.dtype))
    return out


def register() -> None:
    """Make ``"tileq"`` and ``"tileq_loop"`` valid for ``model.set_experts_implementation``."""
    from transformers.integrations.moe import ExpertsInterface

    ExpertsInterface.register("tileq", fused_experts_forward)
    ExpertsInterface.register("tileq_loop", loop_experts_forward)
