"""DFQL — Direct Flow Q-Learning (ICML 2026). No public code: this is a **reconstruction**
from the method's summary; the loss below is ours, not the authors'.

The K-step flow policy itself is improved, without back-propagation through the Euler steps
(BPTT) and without a distilled one-step policy. With a_{k+1} = a_k + v_θ(s, a_k, t_k)/K
(t_k = k/K, a₀ ~ N(0, I)), the terminal action-value gradient g = stopgrad(∇_a Q(s, a_K))
is injected as guidance into every step's velocity:

    L_DF(θ) = −(1/K) Σ_k ⟨g, v_θ(s, stopgrad(a_k), t_k)⟩ / max(mean|Q(s, a_K)|, 1)     (+ α·L_FM(θ))

(equivalently: regress v toward stopgrad(v + η g)). When v does not depend on a, ∂a_K/∂θ =
(1/K) Σ_k ∂v_k/∂θ, so ∇_θ L_DF equals the BPTT gradient of −Q(s, a_K) exactly
(:func:`surrogate_and_bptt_grads` checks this); otherwise it drops the Jacobian products
∂a_{k+1}/∂a_k. All K velocity evaluations run as one batched forward pass. The critic's target
actions and the evaluation policy are the K-step flow (no grad). Offline-to-online:
``--online-steps N`` with the same losses.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch
from mlx26.core.rl.algos import flow
from mlx26.core.rl.hparams import TrainConfig, doc
from mlx26.core.rl.nets import QEnsemble, VectorField

check_config = flow.check_config


@dataclass
class Hyperparams(flow.FlowHyperparams):
    alpha: float = doc(10.0, "BC (flow-matching) coefficient α (reconstruction default; 1 diverged on cube-single)")
    normalize_q_loss: bool = doc(True, "divide L_DF by mean |Q(s, a_K)| (stop-gradient)")


def rollout(v: VectorField, obs: torch.Tensor, noise: torch.Tensor, K: int):
    """No-grad Euler rollout → (a_K, stacked a_k for k < K as [K, B, d])."""
    with torch.no_grad():
        a_k, path = flow.euler(v, obs, noise, K, keep=True)
    return a_k, torch.stack(path)


def direct_flow_loss(v: VectorField, critic: QEnsemble, obs: torch.Tensor, noise: torch.Tensor, K: int,
                     *, clip: bool = True, normalize: bool = True,
                     mean=None) -> tuple[torch.Tensor, torch.Tensor]:
    """(L_DF, Q(s, a_K)) with all K velocity evaluations in one batched forward pass; ``mean`` (under
    torchrun: the mean over the ranks) turns the batch's mean |Q| into the global batch's."""
    a_K, path = rollout(v, obs, noise, K)
    a_eval = (a_K.clamp(-1, 1) if clip else a_K).detach().requires_grad_(True)
    q = critic(obs, a_eval).mean(0)
    (g,) = torch.autograd.grad(q.sum(), a_eval)  # per-sample ∇_a Q(s, a_K), stop-gradient
    B, d = noise.shape
    t = (torch.arange(K, dtype=obs.dtype, device=obs.device) / K).repeat_interleave(B)[:, None]
    vel = v(obs.repeat(K, 1), path.reshape(K * B, d), t).reshape(K, B, d)
    loss = -(vel * g.detach()[None]).sum(-1).mean()
    if normalize:
        # max(mean|Q|, 1): Q crosses 0 early in training (rewards < 0), and 1/mean|Q| would explode there.
        scale = q.detach().abs().mean()
        loss = loss / (mean(scale) if mean is not None else scale).clamp_min(1.0)
    return loss, q.detach()


def bptt_loss(v: VectorField, critic: QEnsemble, obs: torch.Tensor, noise: torch.Tensor, K: int,
              *, clip: bool = True) -> torch.Tensor:
    """−mean Q(s, a_K) with autograd through all K Euler steps (the BPTT reference)."""
    a_K = flow.euler(v, obs, noise, K)
    return -critic(obs, a_K.clamp(-1, 1) if clip else a_K).mean(0).mean()


def _flat_grad(loss: torch.Tensor, params) -> torch.Tensor:
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    return torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(grads, params,
                                                                                                strict=True)])


def surrogate_and_bptt_grads(v: VectorField, critic: QEnsemble, obs: torch.Tensor, noise: torch.Tensor,
                             K: int, clip: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat ∇_θ of L_DF (unnormalised) and of the BPTT loss, for comparisons."""
    params = [p for p in v.parameters() if p.requires_grad]
    sur, _ = direct_flow_loss(v, critic, obs, noise, K, clip=clip, normalize=False)
    return _flat_grad(sur, params), _flat_grad(bptt_loss(v, critic, obs, noise, K, clip=clip), params)


class DFQLAgent(flow.FlowAgent):
    def policy_actions(self, obs: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        return self.flow_actions(obs, noise)

    def target_actions(self, next_obs: torch.Tensor) -> torch.Tensor:
        return self.flow_actions(next_obs, self.noise(next_obs))

    def actor_loss(self, b):
        obs = b["observations"]
        fm = flow.bc_flow_loss(self.flow, obs, b["actions"], self.rows)
        self.critic.requires_grad_(False)
        try:
            df, q = direct_flow_loss(self.flow, self.critic, obs, self.noise(b["actions"]), self.hp.flow_steps,
                                     normalize=self.hp.normalize_q_loss,
                                     mean=self.global_mean if self.rows is not None else None)
        finally:
            self.critic.requires_grad_(True)
        loss = df + self.hp.alpha * fm
        return loss, {"bc_flow_loss": fm.item(), "df_loss": df.item(), "q_pi": q.mean().item()}


def load_policy(state: dict, env) -> flow.FlowPolicy:
    return flow.load_flow_policy(DFQLAgent, Hyperparams, state)


def train(cfg: TrainConfig) -> Iterator[dict]:
    yield from flow.train_loop(cfg, DFQLAgent)


HANDLES_STOP = True  # flow.train_loop polls cfg.stop and writes its own checkpoint
