"""RAPC learner (``mlx26 train rl --algo rapc``) — a **reconstruction** of Pan, Wu, Xue & Xue,
"Stochastic minimum-cost reach-avoid RL" (ICML 2026, no public code), from the paper's summary,
Hsu et al. 2021 (reach-avoid Bellman equation) and RC-PPO (So et al. 2024).

Minimise expected cost subject to P(RA) ≥ p. PPO-clip (actor and cost critic = the PPO
:class:`~mlx26.core.rl.nets.ActorCritic`) plus a reach-avoid critic V_RA ∈ [0, 1] (sigmoid head)
trained on the reach-avoid GAE targets (:func:`~.operator.ra_gae`). Per minibatch the two
policy-loss gradients g_c (cost surrogate) and g_ra (reach-avoid surrogate) are computed
separately, projected symmetrically when they conflict (:mod:`.projection`) and combined as
(g_c' + λ g_ra') / (1 + λ). The multiplier follows λ ← max(0, λ + η_λ (p − Ĵ_RA)), Ĵ_RA the
rollout's reach-avoid λ-returns at the steps where episodes start (``j_estimate=returns``, default)
or the critic's V_RA at the start states (``critic``: it is trained on earlier rollouts and lags an
improving policy, which kept λ growing in our runs), compensated for the γ^τ decay by ``compensation``:
``none`` (conservative: V_γ ≤ P(RA)), ``adaptive`` (÷ γ^τ̄, τ̄ = mean steps to reach G in the
rollout), ``horizon`` (÷ γ^T̄, T̄ = mean episode length); both capped at 1. The compensation
rules, the combination and all defaults are our choices.

Environments must provide ``info["reached"]``, ``info["unsafe"]`` and ``info["cost"]``
(:class:`~.wrappers.ReachAvoidInfo` adds them).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from mlx26.core.common.errors import InputError
from mlx26.core.rl.algos import common
from mlx26.core.rl.algos.ppo import check_rollout_shape, log_prob, log_prob_entropy
from mlx26.core.rl.hparams import TrainConfig, doc
from mlx26.core.rl.nets import ActorCritic, DeterministicPolicy, load_actor_critic_policy, tanh_mlp
from mlx26.core.rl.reach_avoid.operator import ra_gae
from mlx26.core.rl.reach_avoid.projection import project_conflicting
from mlx26.core.rl.reach_avoid.wrappers import REQUIRED_KEYS
from torch import nn

HANDLES_STOP = True  # constrained_ppo() polls cfg.stop at update boundaries and writes its own checkpoint
COMPENSATIONS = ("none", "horizon", "adaptive")
J_ESTIMATES = ("critic", "returns")


@dataclass
class ConstrainedHyperparams:
    """What RAPC and the PPO-Lagrangian baseline (:mod:`.ppo_lag`) share."""

    p: float = doc(0.9, "required reach-avoid probability, in (0, 1]")
    gamma_ra: float = doc(0.99, "reach-avoid discount γ_RA, in (0, 1)")
    gamma: float = doc(0.99, "cost discount")
    gae_lambda: float = doc(0.95, "GAE λ for both critics")
    lr: float = doc(3e-4, "Adam learning rate")
    lambda_lr: float = doc(0.5, "step size of the Lagrange multiplier")
    lambda_init: float = doc(1.0, "initial Lagrange multiplier")
    num_envs: int = doc(4, "parallel environments")
    num_steps: int = doc(128, "steps per env per rollout")
    num_minibatches: int = doc(4, "minibatches per epoch")
    update_epochs: int = doc(4, "epochs per rollout")
    clip_coef: float = doc(0.2, "surrogate clipping ε")
    ent_coef: float = doc(0.01, "entropy bonus")
    max_grad_norm: float = doc(0.5, "gradient-norm clip")
    hidden: tuple = doc((64, 64), "actor and critic hidden sizes")

    def check_common(self, algo: str) -> None:
        if not 0 < self.p <= 1:
            raise InputError(f"{algo}: p must be in (0, 1], got {self.p}")
        if not 0 < self.gamma_ra < 1:
            raise InputError(f"{algo}: gamma_ra must be in (0, 1), got {self.gamma_ra}",
                             "γ_RA = 1 loses the contraction; use e.g. 0.99")
        if not 0 < self.gamma <= 1:
            raise InputError(f"{algo}: gamma must be in (0, 1], got {self.gamma}")
        if not 0 <= self.gae_lambda <= 1:
            raise InputError(f"{algo}: gae_lambda must be in [0, 1], got {self.gae_lambda}")
        if not (self.lambda_init >= 0 and self.lambda_lr >= 0):
            raise InputError(f"{algo}: lambda_init and lambda_lr must be ≥ 0, got {self.lambda_init} and "
                             f"{self.lambda_lr}", "a Lagrange multiplier is never negative")
        check_rollout_shape(algo, self.num_envs, self.num_steps, self.num_minibatches)


@dataclass
class Hyperparams(ConstrainedHyperparams):
    compensation: str = doc("none", "γ^τ compensation of Ĵ_RA: none | horizon | adaptive")
    project: bool = doc(True, "symmetric projection of conflicting gradients")
    j_estimate: str = doc("returns", "Ĵ_RA source: critic (V_RA at the episodes' start states) | returns "
                                    "(the rollout's reach-avoid λ-returns at the steps where episodes start)")

    def validate(self) -> None:
        self.check_common("rapc")
        if self.j_estimate not in J_ESTIMATES:
            raise InputError(f"rapc: j_estimate must be one of {', '.join(J_ESTIMATES)}, got '{self.j_estimate}'")
        if self.compensation not in COMPENSATIONS:
            raise InputError(f"rapc: compensation must be one of {', '.join(COMPENSATIONS)}, got '{self.compensation}'")


def check_config(cfg: TrainConfig) -> None:
    if cfg.dataset:
        raise InputError("rapc is an online algorithm and takes no --dataset")
    env = common.env_for(cfg)
    env.reset(seed=cfg.seed)
    _, _, _, _, info = env.step(env.action_space.sample())
    missing = [k for k in REQUIRED_KEYS if k not in info]
    if missing:
        raise InputError(f"env '{cfg.env}' does not report info[{', '.join(map(repr, missing))}] needed by {cfg.algo}",
                         "wrap it with mlx26.core.rl.reach_avoid.wrappers.ReachAvoidInfo(env, goal, unsafe, cost)")


def load_policy(state: dict, env) -> DeterministicPolicy:
    return load_actor_critic_policy(state)


def _obs(x, device) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.float32), device=device).reshape(1, -1)


def _flat_grad(loss: torch.Tensor, params: list, retain: bool = False) -> torch.Tensor:
    # allow_unused: a Gaussian's entropy depends on log_std only, not on the actor network
    grads = torch.autograd.grad(loss, params, retain_graph=retain, allow_unused=True)
    return torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1) for g, p in zip(grads, params, strict=True)])


def _surrogate(ratio: torch.Tensor, adv: torch.Tensor, clip: float) -> torch.Tensor:
    a = (adv - adv.mean()) / (adv.std() + 1e-8)
    return torch.max(-a * ratio, -a * ratio.clamp(1 - clip, 1 + clip)).mean()


def train(cfg: TrainConfig) -> Iterator[dict]:
    return constrained_ppo(cfg, lagrangian=False)


def constrained_ppo(cfg: TrainConfig, lagrangian: bool) -> Iterator[dict]:
    """The shared loop of RAPC (``lagrangian=False``) and the PPO-Lagrangian baseline
    (:mod:`.ppo_lag`): same rollouts, critics and multiplier schedule; they differ in the
    constraint estimate (certificate value at the start states vs the empirical success rate)
    and the projection of conflicting gradients (RAPC only)."""
    from mlx26.core.rl.envs import space_info

    hp: Hyperparams = cfg.hp
    device = common.setup(cfg)
    envs = [common.env_for(cfg) for _ in range(hp.num_envs)]
    eval_env = common.env_for(cfg)
    space = space_info(eval_env)
    obs_dim = int(np.prod(eval_env.observation_space.shape))
    agent = ActorCritic(obs_dim, space, hp.hidden).to(device)  # actor + cost critic
    ra_critic = tanh_mlp(obs_dim, hp.hidden, 1, 1.0).to(device)
    actor_params = list(agent.actor.parameters()) + ([agent.log_std] if not space["discrete"] else [])
    params = list(agent.parameters()) + list(ra_critic.parameters())
    opt = torch.optim.Adam(params, lr=hp.lr, eps=1e-5)
    batch = hp.num_envs * hp.num_steps
    n_updates = max(1, cfg.steps // batch)
    lam, start = float(hp.lambda_init), 0
    if cfg.resume_state:
        s = cfg.resume_state
        agent.load_state_dict(s["models"]["agent"])
        ra_critic.load_state_dict(s["models"]["ra_critic"])
        opt.load_state_dict(s["optim"])
        common.set_rng_state(s["rng"])
        start, lam = s["update"], float(s["lambda"])
    due = common.eval_points(cfg, n_updates * batch)
    obs = [e.reset(seed=cfg.seed + start * hp.num_envs + i)[0] for i, e in enumerate(envs)]
    episode_starts = [o.copy() for o in obs]
    act_shape = () if space["discrete"] else (space["action_dim"],)
    ep_len, ep_cost = np.zeros(hp.num_envs), np.zeros(hp.num_envs)
    warned_negative = False

    def v_ra(x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(ra_critic(x).squeeze(-1))

    def snapshot(update: int, lam: float) -> dict:
        return {**common.base_state(cfg, update * batch, eval_env), "update": update, "lambda": lam,
                "models": {"agent": agent.state_dict(), "ra_critic": ra_critic.state_dict()},
                "optim": opt.state_dict(), "rng": common.rng_state()}

    if start < n_updates and common.stop_now(cfg):  # a signal during start-up
        common.interrupt(cfg, start * batch, n_updates * batch, snapshot(start, lam))

    for update in range(start + 1, n_updates + 1):
        T, E = hp.num_steps, hp.num_envs
        obs_b = torch.zeros((T, E, obs_dim), device=device)
        act_b = torch.zeros((T, E, *act_shape), device=device)
        logp_b, vc_b, vra_b = (torch.zeros((T, E), device=device) for _ in range(3))
        cost_b, term_b, trunc_b, termval_b, vnext_ra, vnext_c = (np.zeros((T, E)) for _ in range(6))
        finished: list[dict] = []
        starts_in_rollout: list[tuple[int, int]] = []  # (t, env) where an episode begins in this rollout
        for t in range(T):
            x = torch.as_tensor(np.stack(obs).astype(np.float32), device=device).reshape(E, -1)
            if not torch.isfinite(x).all():
                raise common.checkpoint.Divergence(f"non-finite observation at update {update}, rollout step {t}"
                                                   "; the last good checkpoint (if any) is kept")
            obs_b[t] = x
            with torch.no_grad():
                d = agent.dist(x)
                action = d.sample()
                logp_b[t] = log_prob(d, action, space["discrete"])
                vc_b[t], vra_b[t] = agent.value(x), v_ra(x)
            act_b[t] = action
            acts = action.cpu().numpy()
            for i, env in enumerate(envs):
                a = int(acts[i]) if space["discrete"] else np.clip(acts[i], space["action_low"], space["action_high"])
                nxt, _, term, trunc, info = env.step(a)
                c = float(info["cost"])
                if c < 0 and not warned_negative:
                    warnings.warn(f"rapc: negative cost {c} from the env; the method assumes costs ≥ 0", stacklevel=2)
                    warned_negative = True
                cost_b[t, i], term_b[t, i], trunc_b[t, i] = c, float(term), float(trunc and not term)
                termval_b[t, i] = 1.0 if info["reached"] else 0.0
                ep_len[i] += 1
                ep_cost[i] += c
                with torch.no_grad():
                    xn = _obs(nxt, device)
                    vnext_ra[t, i], vnext_c[t, i] = float(v_ra(xn)), float(agent.value(xn))
                if term or trunc:
                    with torch.no_grad():
                        j0 = float(v_ra(_obs(episode_starts[i], device)))
                    finished.append({"reached": bool(info["reached"]), "unsafe": bool(info["unsafe"]),
                                     "len": ep_len[i], "cost": ep_cost[i], "v_start": j0})
                    ep_len[i] = ep_cost[i] = 0.0
                    nxt, _ = env.reset()
                    episode_starts[i] = nxt.copy()
                    if t + 1 < T:
                        starts_in_rollout.append((t + 1, i))
                obs[i] = nxt
            common.report(cfg, (update - 1) * batch + (t + 1) * E, n_updates * batch)
        # reach-avoid targets (x_t is never in G ∪ F here: entering them ends the episode → r = 0, s = 1)
        y = ra_gae(np.zeros((T, E)), np.ones((T, E)), vnext_ra, term_b, trunc_b, termval_b, hp.gamma_ra, hp.gae_lambda)
        y_ra = torch.as_tensor(y, dtype=torch.float32, device=device)
        adv_ra = y_ra - vra_b
        adv_c = torch.zeros((T, E), device=device)  # ordinary GAE on the cost
        last = torch.zeros(E, device=device)
        vc_next = torch.as_tensor(vnext_c, dtype=torch.float32, device=device)
        cost_t = torch.as_tensor(cost_b, dtype=torch.float32, device=device)
        term_t = torch.as_tensor(term_b, dtype=torch.float32, device=device)
        end_t = torch.as_tensor(np.maximum(term_b, trunc_b), dtype=torch.float32, device=device)
        for t in reversed(range(T)):
            delta = cost_t[t] + hp.gamma * vc_next[t] * (1 - term_t[t]) - vc_b[t]
            last = delta + hp.gamma * hp.gae_lambda * (1 - end_t[t]) * last
            adv_c[t] = last
        ret_c = adv_c + vc_b
        flat = lambda z: z.reshape(batch, *z.shape[2:])  # noqa: E731
        b_obs, b_act, b_logp = flat(obs_b), flat(act_b), flat(logp_b)
        b_adv_ra, b_adv_c, b_y, b_ret_c = flat(adv_ra), flat(adv_c), flat(y_ra), flat(ret_c)
        mb, conflicts, n_mb = batch // hp.num_minibatches, 0, 0
        for _ in range(hp.update_epochs):
            perm = torch.randperm(batch, device=device)
            for s0 in range(0, batch, mb):
                idx = perm[s0:s0 + mb]
                logp, entropy = log_prob_entropy(agent.dist(b_obs[idx]), b_act[idx], space["discrete"])
                entropy = entropy.mean()
                ratio = (logp - b_logp[idx]).exp()
                loss_ra = _surrogate(ratio, b_adv_ra[idx], hp.clip_coef)  # maximise reach-avoid advantage
                loss_c = _surrogate(ratio, -b_adv_c[idx], hp.clip_coef)  # minimise cost advantage
                g_ent = _flat_grad(-hp.ent_coef * entropy, actor_params, retain=True)
                g_ra = _flat_grad(loss_ra, actor_params, retain=True)
                g_c = _flat_grad(loss_c, actor_params)
                if not lagrangian and hp.project:
                    g_c, g_ra, hit = project_conflicting(g_c, g_ra)
                    conflicts += int(hit)
                g = (g_c + lam * g_ra) / (1 + lam) + g_ent
                n_mb += 1
                v_loss = 0.5 * ((v_ra(b_obs[idx]) - b_y[idx]) ** 2).mean() \
                    + 0.5 * ((agent.value(b_obs[idx]) - b_ret_c[idx]) ** 2).mean()
                opt.zero_grad()
                v_loss.backward()
                offset = 0
                for prm in actor_params:
                    k = prm.numel()
                    prm.grad = g[offset:offset + k].view_as(prm).clone()
                    offset += k
                nn.utils.clip_grad_norm_(params, hp.max_grad_norm)
                opt.step()
        if lagrangian:  # the standard Lagrangian estimate: success rate of this rollout's episodes
            j_ra = float(np.mean([f["reached"] for f in finished])) if finished else 0.0
        else:
            j_ra = float(np.mean([f["v_start"] for f in finished])) if finished else float(vra_b[0].mean())
            if hp.j_estimate == "returns" and starts_in_rollout:
                # the λ-returns are mostly sampled outcomes of the current policy, so they do not lag
                # behind it the way a critic trained on earlier rollouts does
                j_ra = float(np.mean([y[t, i] for t, i in starts_in_rollout]))
        if not lagrangian and hp.compensation != "none" and finished:
            reached = [f["len"] for f in finished if f["reached"]]
            tau = np.mean(reached) if hp.compensation == "adaptive" and reached else np.mean([f["len"] for f in finished])
            j_ra = min(1.0, j_ra / hp.gamma_ra ** tau)
        lam = max(0.0, lam + hp.lambda_lr * (hp.p - j_ra))
        step = update * batch
        l_ra, l_c, l_v = float(loss_ra.item()), float(loss_c.item()), float(v_loss.item())
        common.check_finite(step, loss_ra=l_ra, loss_c=l_c, v_loss=l_v)
        yield {"step": step, "phase": "train", "loss_ra": l_ra, "loss_cost": l_c, "value_loss": l_v, "lambda": lam, "j_ra": j_ra,
               "conflict_share": conflicts / max(1, n_mb),
               "success": float(np.mean([f["reached"] for f in finished])) if finished else None,
               "unsafe": float(np.mean([f["unsafe"] for f in finished])) if finished else None,
               "episode_cost": float(np.mean([f["cost"] for f in finished])) if finished else None}
        if due(step) or update == n_updates:
            yield from common.evaluate_and_save(cfg, step, DeterministicPolicy(agent, space), eval_env,
                                                snapshot(update, lam))
        if update < n_updates and common.stop_now(cfg):  # SIGINT/SIGTERM after a finished update: exit 130
            common.interrupt(cfg, step, n_updates * batch, None if due(step) else snapshot(update, lam))
