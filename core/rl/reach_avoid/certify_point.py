"""Statistical reach-avoid certificate for RAPC checkpoints on ``mlx26/ra-point`` (RAPC reconstruction,
Pan et al., ICML 2026; the certification scheme is ours, not the paper's).

On a continuous state space the learned critic B cannot be checked against B_γB everywhere, and
a check of that condition at sampled states is not a certificate: in one run 16% of the states it
passed at p = 0.6 reached the goal less often than p. So the critic only **proposes** and
Monte-Carlo rollouts **certify**:

1. ``n_states`` states x are drawn uniformly from the box outside G ∪ F (seeded);
2. the candidates are the states the critic claims, B(x) ≥ p (``candidates="all"``: every state);
3. from each candidate the checkpoint's deterministic policy is rolled out ``n_mc`` times for
   the env's horizon H (the episode length), giving k successes (reach G before F within H);
4. a candidate is **certified** when the one-sided Clopper–Pearson lower bound of P(RA | x) at
   level 1 − δ/m is ≥ p, with m = the number of candidates (Bonferroni).

What is certified: the finite set of listed states, not a region around them (there is no
Lipschitz or grid argument here), for the quantity P(reach G before F within H steps from x under
the deterministic policy, with the env's noise). Guarantee: with probability ≥ 1 − δ over the
rollouts, *every* certified state has P(RA) ≥ p simultaneously. The critic's own claims are
reported beside it (``critic_claimed``, and how many the rollouts refute at the same level).
"""

from __future__ import annotations

import numpy as np
from mlx26.core.common.errors import InputError


def _batch_policy(agent, space):
    import torch

    def act(xy: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            mean = agent.actor(torch.as_tensor(xy, dtype=torch.float32)).numpy()
        return np.clip(mean, space["action_low"], space["action_high"])

    return act


def _batch_critic(critic):
    import torch

    def value(xy: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return torch.sigmoid(critic(torch.as_tensor(xy, dtype=torch.float32)).squeeze(-1)).numpy().astype(np.float64)

    return value


def sample_free_states(model, n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty((0, 2))
    while len(out) < n:
        xy = rng.uniform(-1, 1, size=(2 * n, 2))
        out = np.vstack([out, xy[~model.in_goal(xy) & ~model.in_hazard(xy)]])
    return out[:n]


def rollout_p_ra(model, act, starts: np.ndarray, n_mc: int, horizon: int, rng: np.random.Generator,
                 chunk: int = 200_000) -> np.ndarray:
    """Monte-Carlo successes ``[len(starts)]`` (reach G before F within ``horizon`` steps)."""
    per = max(1, chunk // max(n_mc, 1))
    out = np.zeros(len(starts), dtype=np.int64)
    for lo in range(0, len(starts), per):  # bounded memory for many states × rollouts
        part = starts[lo:lo + per]
        xy = np.repeat(part, n_mc, axis=0)
        hit, done = np.zeros(len(xy), dtype=bool), np.zeros(len(xy), dtype=bool)
        for _ in range(horizon):
            live = np.flatnonzero(~done)
            if not len(live):
                break
            xy[live] = model.step(xy[live], act(xy[live]), rng)
            g, f = model.in_goal(xy[live]), model.in_hazard(xy[live])
            hit[live[g]] = True
            done[live[g | f]] = True
        out[lo:lo + per] = hit.reshape(len(part), n_mc).sum(axis=1)
    return out


def clopper_pearson(k: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided exact bounds: P(RA) ≥ lower and P(RA) ≤ upper, each with confidence 1 − alpha."""
    from scipy.stats import beta

    k = np.asarray(k, dtype=np.float64)
    lower = np.where(k > 0, beta.ppf(alpha, k, n - k + 1), 0.0)
    upper = np.where(k < n, beta.ppf(1 - alpha, k + 1, n - k), 1.0)
    return np.nan_to_num(lower), np.nan_to_num(upper, nan=1.0)


def certify_point(agent, critic, space: dict, model, gamma: float, p: float, *, n_states: int = 300,
                  n_mc: int = 200, horizon: int = 60, confidence: float = 0.95, candidates: str = "critic",
                  seed: int = 0) -> dict:
    if not 0 < confidence < 1:
        raise InputError(f"--confidence must be in (0, 1), got {confidence}")
    if candidates not in ("critic", "all"):
        from mlx26.core.rl.registry import unknown

        raise unknown("candidates", candidates, ["critic", "all"])
    if n_states < 1:
        raise InputError(f"--n-states must be ≥ 1, got {n_states}")
    rng = np.random.default_rng(seed)
    act, value = _batch_policy(agent, space), _batch_critic(critic)
    xs = sample_free_states(model, n_states, rng)
    B = value(xs)
    claimed = np.flatnonzero(B >= p)
    chosen = claimed if candidates == "critic" else np.arange(n_states)
    m = max(len(chosen), 1)
    delta = 1.0 - confidence
    hits = rollout_p_ra(model, act, xs[chosen], n_mc, horizon, rng) if len(chosen) else np.zeros(0, np.int64)
    lower, upper = clopper_pearson(hits, n_mc, delta / m)
    ok = lower >= p
    refuted = upper < p  # the rollouts reject P(RA) ≥ p at the same level
    in_claimed = np.isin(chosen, claimed)
    cert_idx = chosen[ok]
    return {"what": (f"P(reach G before F within {horizon} steps | x) ≥ {p} under the checkpoint's deterministic "
                     f"policy, for each listed state x (a finite set, not a region), all at once with "
                     f"confidence {confidence} (Clopper–Pearson, Bonferroni over {m} candidates)"),
            "sampled_states": n_states, "candidates": candidates, "critic_claimed": len(claimed),
            "candidates_tested": len(chosen), "certified": int(ok.sum()),
            "critic_claims_refuted": int((refuted & in_claimed).sum()),
            "confidence": confidence, "mc_n": n_mc, "mc_horizon": horizon,
            "certified_states": np.round(xs[cert_idx], 6).tolist(),
            "certified_critic_value": np.round(B[cert_idx], 6).tolist(),
            "certified_p_hat": (hits[ok] / n_mc).tolist(),
            "certified_cp_lower": np.round(lower[ok], 6).tolist(),
            "candidate_p_hat_min": float((hits / n_mc).min()) if len(chosen) else None,
            "gamma_ra": gamma}
