"""Experiments on ``mlx26/toy-modes`` shared by the tests and ``benchmarks/rl.py``.

* :func:`train_toy` — BC-only, FQL or DFQL on fresh behaviour batches; returns mode shares;
* :func:`gradient_cosine` — cosine between the DFQL surrogate gradient and the BPTT gradient;
* :func:`stress` — gradient-norm mean/variance of DFQL vs BPTT over batches (K = 64, deep nets).

Our own diagnostics for the DFQL reconstruction (not from the paper).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
from mlx26.core.rl import toy_modes
from mlx26.core.rl.algos import dfql, flow, fql
from mlx26.core.rl.hparams import set_threads

TOY_NET = (128, 128)


def batch(rng: np.random.Generator, n: int = 128) -> dict[str, torch.Tensor]:
    a, _ = toy_modes.behaviour_actions(n, rng)
    obs = torch.zeros(n, 2)
    return {"observations": obs, "actions": torch.as_tensor(a), "next_observations": obs,
            "rewards": torch.as_tensor(toy_modes.reward(a), dtype=torch.float32), "masks": torch.zeros(n)}


def shares(agent: flow.FlowAgent, n: int = 2000, seed: int = 0) -> tuple[list[float], bool]:
    """(mode shares of ``n`` policy samples, all finite)."""
    z = torch.randn(n, agent.act_dim, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        a = agent.policy_actions(torch.zeros(n, 2), z).numpy()
    return toy_modes.mode_shares(a), bool(np.isfinite(a).all())


def make_agent(algo: str, seed: int = 0, hidden: tuple = TOY_NET, **hp: Any) -> flow.FlowAgent:
    set_threads()
    torch.manual_seed(seed)
    mod, cls = (dfql, dfql.DFQLAgent) if algo in ("dfql", "bc") else (fql, fql.FQLAgent)
    params = mod.Hyperparams(preset="small", actor_hidden=hidden, value_hidden=hidden, batch_size=128, **hp)
    agent = cls(2, 2, params.resolve())
    agent.make_optimizers()
    return agent


def pretrain_bc(agent: flow.FlowAgent, steps: int, rng: np.random.Generator, critic: bool = True) -> None:
    """Flow-matching BC (and the critic on the same batches) only."""
    for _ in range(steps):
        b = batch(rng, agent.hp.batch_size)
        if critic:
            closs, _ = agent.critic_loss(b)
            agent.critic_opt.zero_grad()
            closs.backward()
            agent.critic_opt.step()
        loss = flow.bc_flow_loss(agent.flow, b["observations"], b["actions"])
        agent.actor_opt.zero_grad()
        loss.backward()
        agent.actor_opt.step()


def train_toy(algo: str, steps: int, seed: int = 0, bc_steps: int = 0, **hp: Any) -> dict[str, Any]:
    """``algo`` = bc | fql | dfql; returns shares, best-mode share and the final losses."""
    rng = np.random.default_rng(seed)
    agent = make_agent(algo, seed, **hp)
    pretrain_bc(agent, bc_steps if algo != "bc" else steps, rng)
    info: dict[str, float] = {}
    if algo != "bc":
        for _ in range(steps):
            info = agent.update(batch(rng, agent.hp.batch_size))
    s, finite = shares(agent, seed=seed)
    return {"algo": algo, "steps": steps, "shares": [round(x, 4) for x in s], "best_share": s[toy_modes.BEST],
            "finite": finite and all(np.isfinite(v) for v in info.values()), "agent": agent, **info}


def gradient_cosine(agent: flow.FlowAgent, seed: int = 0, n: int = 256, clip: bool = False) -> float:
    g = torch.Generator().manual_seed(seed)
    sur, bptt = dfql.surrogate_and_bptt_grads(agent.flow, agent.critic, torch.zeros(n, 2),
                                              torch.randn(n, 2, generator=g), agent.hp.flow_steps, clip=clip)
    return float(torch.nn.functional.cosine_similarity(sur, bptt, dim=0))


def stress(K: int = 64, depth: int = 6, width: int = 128, batches: int = 16, bc_steps: int = 200,
           seed: int = 0) -> dict[str, Any]:
    """Gradient-norm statistics of the DFQL surrogate vs BPTT on a deeper net with many flow steps."""
    rng = np.random.default_rng(seed)
    agent = make_agent("dfql", seed, hidden=(width,) * depth, flow_steps=K)
    pretrain_bc(agent, bc_steps, rng)
    norms: dict[str, list[float]] = {"dfql": [], "bptt": []}
    cos = []
    for i in range(batches):
        z = torch.randn(agent.hp.batch_size, 2, generator=torch.Generator().manual_seed(seed * 1000 + i))
        sur, bptt = dfql.surrogate_and_bptt_grads(agent.flow, agent.critic, torch.zeros(len(z), 2), z, K)
        norms["dfql"].append(float(sur.norm()))
        norms["bptt"].append(float(bptt.norm()))
        cos.append(float(torch.nn.functional.cosine_similarity(sur, bptt, dim=0)))
    out = {"K": K, "depth": depth, "width": width, "batches": batches, "cosine_mean": float(np.mean(cos))}
    for name, v in norms.items():
        arr = np.asarray(v)
        out[f"{name}_grad_norm_mean"] = float(arr.mean())
        out[f"{name}_grad_norm_var"] = float(arr.var())
        out[f"{name}_grad_norm_cv"] = float(arr.std() / max(arr.mean(), 1e-12))
    out["var_ratio_dfql_over_bptt"] = out["dfql_grad_norm_var"] / max(out["bptt_grad_norm_var"], 1e-30)
    return out


def replace_hp(agent: flow.FlowAgent, **changes: Any) -> None:
    agent.hp = dataclasses.replace(agent.hp, **changes)
