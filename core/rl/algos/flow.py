"""Shared machinery of the offline flow-policy algorithms (FQL, DFQL).

Follows the FQL reference (seohongpark/fql ``agents/fql.py``, ``main.py``), re-implemented in
torch: a Q ensemble (2 critics, LayerNorm, GELU MLPs) trained on r + γ·m·Q̄_target(s', a'),
Polyak targets (τ = 0.005), a flow-matching BC policy v_θ(s, a_t, t) on linear paths
x_t = (1−t)·x₀ + t·a (x₀ ~ N(0, I)), K-step Euler sampling, dataset actions clipped to
±(1 − 1e-5), one update per step and, with ``online_steps`` > 0, offline-to-online training in
which new transitions join the dataset as one replay buffer (the reference's default).

An algorithm subclasses :class:`FlowAgent`, adding ``actor_loss`` / ``target_actions`` /
``policy_actions``; :func:`train_loop` does the rest (data, eval, checkpoints, resume).

Data-parallel under ``torchrun`` (:mod:`mlx26.core.common.distributed`; offline only): every rank
loads the dataset, builds the same agent (same seed) and draws the same global minibatch of
``batch_size`` rows from the same seeded stream, then keeps its block (``FlowAgent.rows``). Every
random draw of an update (target-action noise, flow-matching x₀ and t, policy noise) is made for the
global batch and sliced too, so the torch RNG advances in lockstep on every rank and exactly as in one
process. Each backward is followed by an all-reduce of the gradients (:func:`~mlx26.core.common.
distributed.average_gradients`, not a DDP wrapper: several losses and optimisers per step, and the
agent's state-dict keys stay those of a one-process run), and the normalisers mean |Q| are averaged
over the ranks, so the ranks take the optimisation steps of one process at the same global batch (equal
up to float summation order) and keep identical weights, targets and optimiser states. The logged
metrics and the stop flag are averaged in one small all-reduce per step. Rank 0 alone computes the
validation losses, evaluates and writes the checkpoint (the others wait at a barrier); the runner's
files and stdout are rank 0's (the CLI gives the other ranks no ``out``). In one process every
helper is a no-op and the RNG calls are those of the single-process loop.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from mlx26.core.common import distributed
from mlx26.core.common.errors import InputError
from mlx26.core.rl import checkpoint, datasets
from mlx26.core.rl.algos import common
from mlx26.core.rl.hparams import TrainConfig, doc
from mlx26.core.rl.nets import QEnsemble, VectorField, polyak

PRESETS = {"reference": (512, 512, 512, 512), "small": (256, 256)}


@dataclass
class FlowHyperparams:
    preset: str = doc("reference", "network sizes: reference (4×512) | small (2×256, for CPU)")
    actor_hidden: tuple = doc((), "actor hidden sizes (empty = from preset)")
    value_hidden: tuple = doc((), "critic hidden sizes (empty = from preset)")
    lr: float = doc(3e-4, "Adam learning rate (all networks)")
    batch_size: int = doc(256, "minibatch size")
    discount: float = doc(0.99, "γ")
    tau: float = doc(0.005, "Polyak rate of the target critic")
    flow_steps: int = doc(10, "Euler steps K of the flow policy")
    alpha: float = doc(10.0, "BC coefficient α")
    normalize_q_loss: bool = doc(False, "divide the Q term by mean |Q| (stop-gradient)")
    q_agg: str = doc("mean", "aggregate the target ensemble: mean | min")
    layer_norm: bool = doc(True, "LayerNorm in the critics")
    actor_layer_norm: bool = doc(False, "LayerNorm in the actor networks")
    online_steps: int = doc(0, "offline-to-online: env steps after the offline phase")
    action_clip_eps: float = doc(1e-5, "clip dataset actions to ±(1 − eps)")
    log_every: int = doc(100, "steps between training-metric records")
    bc_steps: int = doc(0, "BC warm-up: the first N steps train the critic and flow matching only (not in the "
                        "reference; the toy-modes DFQL figure needs 300)")

    def resolve(self):
        import dataclasses

        if self.preset not in PRESETS:
            from mlx26.core.rl.registry import unknown

            raise unknown("preset", self.preset, list(PRESETS))
        return dataclasses.replace(self, actor_hidden=tuple(self.actor_hidden) or PRESETS[self.preset],
                                   value_hidden=tuple(self.value_hidden) or PRESETS[self.preset])

    def validate(self) -> None:
        if self.flow_steps < 1:
            raise InputError(f"--flow-steps must be ≥ 1, got {self.flow_steps}")
        if self.alpha < 0 or self.online_steps < 0 or self.batch_size < 1 or self.lr <= 0 or self.bc_steps < 0:
            raise InputError("need alpha ≥ 0, online_steps ≥ 0, bc_steps ≥ 0, batch_size ≥ 1 and lr > 0")
        if self.q_agg not in ("mean", "min"):
            from mlx26.core.rl.registry import unknown

            raise unknown("q_agg", self.q_agg, ["mean", "min"])


def euler(v: VectorField, obs: torch.Tensor, noise: torch.Tensor, K: int, keep: bool = False):
    """K-step Euler integration of da/dt = v(s, a, t) from a₀ = noise; optionally all a_k (k < K)."""
    a, path = noise, []
    for k in range(K):
        if keep:
            path.append(a)
        t = torch.full((obs.shape[0], 1), k / K, dtype=obs.dtype, device=obs.device)
        a = a + v(obs, a, t) / K
    return (a, path) if keep else a


Rows = tuple[int, slice] | None  # under torchrun: (global batch, this rank's block); None in one process


def draw(sample, like: torch.Tensor, width: int, rows: Rows = None) -> torch.Tensor:
    """``sample(n, width)`` (``torch.randn`` / ``torch.rand``) for the ``n`` rows of ``like``; with ``rows``,
    drawn for the whole global batch and this rank's block kept (the RNG advances as in one process)."""
    if rows is None:
        return sample(like.shape[0], width, dtype=like.dtype, device=like.device)
    total, block = rows
    return sample(total, width, dtype=like.dtype, device=like.device)[block]


def bc_flow_loss(v: VectorField, obs: torch.Tensor, actions: torch.Tensor, rows: Rows = None) -> torch.Tensor:
    x0 = draw(torch.randn, actions, actions.shape[1], rows)
    t = draw(torch.rand, actions, 1, rows)
    xt = (1 - t) * x0 + t * actions
    return ((v(obs, xt, t) - (actions - x0)) ** 2).mean()


class FlowAgent(torch.nn.Module):
    """Critic ensemble + target + BC flow; subclasses add the policy-improvement part."""

    def __init__(self, obs_dim: int, act_dim: int, hp: FlowHyperparams):
        super().__init__()
        self.hp, self.act_dim = hp, act_dim
        self.critic = QEnsemble(obs_dim, act_dim, hp.value_hidden, layer_norm=hp.layer_norm)
        self.target_critic = copy.deepcopy(self.critic).requires_grad_(False)
        self.flow = VectorField(obs_dim, act_dim, hp.actor_hidden, layer_norm=hp.actor_layer_norm)
        self.rows: Rows = None  # set by train_loop under torchrun

    def noise(self, like: torch.Tensor) -> torch.Tensor:
        """N(0, I) action noise for the rows of ``like`` (the global batch's, this rank's block, under torchrun)."""
        return draw(torch.randn, like, self.act_dim, self.rows)

    def global_mean(self, value: torch.Tensor) -> torch.Tensor:
        """A per-batch mean (a loss normaliser) averaged over the ranks: the global batch's mean under torchrun."""
        if self.rows is None:
            return value
        return value.new_tensor(distributed.all_reduce_mean([value.item()])[0])

    def actor_parameters(self):
        return self.flow.parameters()

    def make_optimizers(self):
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=self.hp.lr)
        self.actor_opt = torch.optim.Adam(list(self.actor_parameters()), lr=self.hp.lr)

    def flow_actions(self, obs: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        return euler(self.flow, obs, noise, self.hp.flow_steps).clamp(-1, 1)

    # -- to override
    def target_actions(self, next_obs: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def policy_actions(self, obs: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def actor_loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
        raise NotImplementedError

    # -- shared
    def critic_loss(self, b: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
        with torch.no_grad():
            next_a = self.target_actions(b["next_observations"])
            next_qs = self.target_critic(b["next_observations"], next_a)
            next_q = next_qs.min(0).values if self.hp.q_agg == "min" else next_qs.mean(0)
            target = b["rewards"] + self.hp.discount * b["masks"] * next_q
        q = self.critic(b["observations"], b["actions"])
        loss = ((q - target) ** 2).mean()
        return loss, {"critic_loss": loss.item(), "q_mean": q.mean().item()}

    def losses(self, b: dict[str, torch.Tensor]) -> dict[str, float]:
        """The training losses on a batch, without updating anything (the reference's validation losses).

        The torch RNG is restored afterwards, so a run with a validation split trains exactly as one without."""
        rng, rows = torch.get_rng_state(), self.rows
        self.rows = None  # a whole batch, on one rank
        try:
            with torch.enable_grad():  # the DFQL loss takes ∇_a Q
                _, cinfo = self.critic_loss(b)
                aloss, ainfo = self.actor_loss(b)
        finally:
            torch.set_rng_state(rng)
            self.rows = rows
        return {**cinfo, **ainfo, "actor_loss": aloss.item()}

    def update(self, b: dict[str, torch.Tensor], bc_only: bool = False) -> dict[str, float]:
        closs, info = self.critic_loss(b)
        self.critic_opt.zero_grad()
        closs.backward()
        if self.rows is not None:
            distributed.average_gradients(self.critic.parameters())
        self.critic_opt.step()
        if bc_only:  # warm-up: flow matching alone
            aloss = bc_flow_loss(self.flow, b["observations"], b["actions"], self.rows)
            ainfo = {"bc_flow_loss": aloss.item()}
        else:
            aloss, ainfo = self.actor_loss(b)
        self.actor_opt.zero_grad()
        aloss.backward()
        if self.rows is not None:
            distributed.average_gradients(self.actor_parameters())
        self.actor_opt.step()
        polyak(self.target_critic, self.critic, self.hp.tau)
        return {**info, **ainfo, "actor_loss": aloss.item()}


class FlowPolicy:
    """Evaluation policy: ``policy_actions`` with noise from a generator reseeded per evaluation."""

    def __init__(self, agent: FlowAgent, scale: np.ndarray, offset: np.ndarray, device: torch.device):
        self.agent, self.scale, self.offset, self.device = agent, scale, offset, device
        self.gen = torch.Generator(device="cpu")

    def reset(self, seed: int) -> None:
        self.gen.manual_seed(seed)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        noise = torch.randn(1, self.agent.act_dim, generator=self.gen).to(self.device)
        with torch.no_grad():
            x = torch.as_tensor(np.asarray(obs, np.float32).reshape(1, -1), device=self.device)
            a = self.agent.policy_actions(x, noise)[0].cpu().numpy()
        return a * self.scale + self.offset


def build_agent(cls, state: dict, hp_cls) -> FlowAgent:
    raw = dict(state["config"]["hp"])
    raw = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    hp = hp_cls(**raw).resolve()
    agent = cls(int(np.prod(state["space"]["obs_shape"])), state["space"]["action_dim"], hp)
    agent.load_state_dict(state["models"]["agent"])
    return agent.eval()


def load_flow_policy(cls, hp_cls, state: dict) -> FlowPolicy:
    agent = build_agent(cls, state, hp_cls)
    return FlowPolicy(agent, np.asarray(state["action_scale"], np.float32),
                      np.asarray(state["action_offset"], np.float32), torch.device("cpu"))


def check_config(cfg: TrainConfig) -> list[str]:
    """Validate the dataset now, before any training; return warnings for the user (reward signal).

    Under torchrun (WORLD_SIZE > 1): the global batch must split evenly over the ranks, and the run must be
    offline (an env interaction phase, ``online_steps`` > 0, runs in one process)."""
    world = distributed.env()
    if world.active:
        distributed.check_divisible(cfg.hp.batch_size, "batch_size", world)
        if cfg.hp.online_steps:
            raise InputError(f"{cfg.algo} with online_steps={cfg.hp.online_steps} does not run under torchrun "
                             f"(WORLD_SIZE={world.size}): the offline-to-online phase steps an env, in one process",
                             "train the offline phase under torchrun with --online-steps 0, or run it as one process")
    if not cfg.dataset:
        raise InputError(f"{cfg.algo} is an offline algorithm: give --dataset D.npz",
                         f"make one with `mlx26 rl data make --env {cfg.env} --out D.npz`")
    env = common.env_for(cfg)
    if hasattr(env.action_space, "n"):
        raise InputError(f"{cfg.algo} needs a continuous (Box) action space; {cfg.env} is discrete")
    data = load_data(cfg, env)
    load_val(cfg, env, data)
    warning = datasets.reward_warning(data, cfg.dataset, relabels(cfg))
    return [warning] if warning else []


def relabels(cfg: TrainConfig) -> bool:
    return cfg.env.startswith("ogbench:") and "singletask" in cfg.env


def load_data(cfg: TrainConfig, env, path: str | None = None,
              like: datasets.Transitions | None = None) -> datasets.Transitions:
    """The dataset (or, with ``like``, its validation split, scaled with the train split's action bounds)."""
    space = env.action_space
    low = None if np.allclose(space.low, -1) else space.low
    high = None if np.allclose(space.high, 1) else space.high
    if like is not None and not (np.all(like.action_scale == 1) and np.all(like.action_offset == 0)):
        low, high = like.action_offset - like.action_scale, like.action_offset + like.action_scale
    data = datasets.load(path or cfg.dataset, obs_dim=int(np.prod(env.observation_space.shape)),
                         rescale=cfg.rescale, action_low=low, action_high=high,
                         env=env if relabels(cfg) else None)
    eps = cfg.hp.action_clip_eps
    data.actions = np.clip(data.actions, -1 + eps, 1 - eps)
    return data


def load_val(cfg: TrainConfig, env, train: datasets.Transitions) -> datasets.Transitions | None:
    """The validation split beside the dataset (OGBench's ``D-val.npz``), or None."""
    from mlx26.core.rl import formats

    vp = formats.val_path(cfg.dataset) if cfg.dataset else None
    if vp is None:
        return None
    val = load_data(cfg, env, str(vp), like=train)
    if val.actions.shape[1] != train.actions.shape[1]:
        raise InputError(f"{vp}: actions have dimension {val.actions.shape[1]} but the train split's "
                         f"{train.actions.shape[1]}")
    return val


class Buffer:
    """The dataset, growing with online transitions (one replay buffer, as in the FQL reference)."""

    KEYS = ("observations", "actions", "next_observations", "rewards", "masks")

    def __init__(self, data: datasets.Transitions, extra: int):
        n = len(data)
        self.arrays = {}
        for k in self.KEYS:
            src = getattr(data, k)
            arr = np.zeros((n + extra, *src.shape[1:]), np.float32)
            arr[:n] = src
            self.arrays[k] = arr
        self.size = n

    def add(self, **row) -> None:
        for k in self.KEYS:
            self.arrays[k][self.size] = row[k]
        self.size += 1

    def sample(self, n: int, rng: np.random.Generator, device: torch.device,
               rows: slice | None = None) -> dict[str, torch.Tensor]:
        """``n`` rows drawn with replacement; with ``rows`` (under torchrun), that block of them."""
        idx = rng.integers(0, self.size, size=n)
        if rows is not None:
            idx = idx[rows]
        return {k: torch.as_tensor(v[idx], device=device) for k, v in self.arrays.items()}


def train_loop(cfg: TrainConfig, agent_cls) -> Iterator[dict]:
    """The training stream; under torchrun every rank runs it in one process group (records from rank 0 only)."""
    with distributed.session(device=cfg.device) as world:
        yield from _train_loop(cfg, agent_cls, world)


def _train_loop(cfg: TrainConfig, agent_cls, world: distributed.World) -> Iterator[dict]:
    hp = cfg.hp
    device = common.setup(cfg)
    env, eval_env = common.env_for(cfg), common.env_for(cfg)
    data = load_data(cfg, env)
    val = load_val(cfg, env, data)
    val_buffer = Buffer(val, 0) if val is not None else None
    val_rng = np.random.default_rng(cfg.seed + 12345)
    obs_dim, act_dim = data.observations.shape[1], data.actions.shape[1]
    agent = agent_cls(obs_dim, act_dim, hp).to(device)
    agent.make_optimizers()
    block = distributed.shard(hp.batch_size, world) if world.active else None
    if block is not None:
        agent.rows = (hp.batch_size, block)
    stored = (cfg.resume_state or {}).get("online", {})
    buffer = Buffer(data, hp.online_steps + len(stored.get("rewards", [])))
    rng = np.random.default_rng(cfg.seed)
    total = cfg.steps + hp.online_steps
    start = 0
    if cfg.resume_state:
        s = cfg.resume_state
        agent.load_state_dict(s["models"]["agent"])
        agent.critic_opt.load_state_dict(s["optim"]["critic"])
        agent.actor_opt.load_state_dict(s["optim"]["actor"])
        rng.bit_generator.state = s["np_rng"]
        common.set_rng_state(s["rng"])
        start = s["step"]
        for k, v in stored.items():
            buffer.arrays[k][len(data):len(data) + len(v)] = v
        buffer.size = len(data) + len(stored.get("rewards", []))
    policy = FlowPolicy(agent, data.action_scale, data.action_offset, device)
    act_gen = torch.Generator(device="cpu").manual_seed(cfg.seed + 1)
    due = common.eval_points(cfg, total)
    episode = common.EpisodeLog(env)
    obs, ep_ret, returns = None, 0.0, list[float]()
    progress = (cfg.resume_state or {}).get("progress")
    if progress:  # written by this version: the RNGs of validation and online noise, the episode in progress
        val_rng.bit_generator.state = progress["val_rng"]
        act_gen.set_state(progress["act_gen"])
        ep_ret, returns = progress["ep_ret"], list(progress["returns"])
        if progress["episode"] is not None:
            obs = episode.restore(progress["episode"])
            if obs is None:
                ep_ret = 0.0

    def snapshot(step: int) -> dict:
        n0 = len(data)
        return {**common.base_state(cfg, step, eval_env), "models": {"agent": agent.state_dict()},
                "optim": {"critic": agent.critic_opt.state_dict(), "actor": agent.actor_opt.state_dict()},
                "np_rng": rng.bit_generator.state, "rng": common.rng_state(),
                "action_scale": data.action_scale.tolist(), "action_offset": data.action_offset.tolist(),
                "online": {k: v[n0:buffer.size] for k, v in buffer.arrays.items()},
                "progress": {"val_rng": val_rng.bit_generator.state, "act_gen": act_gen.get_state(),
                             "episode": None if obs is None else episode.state(obs), "ep_ret": ep_ret,
                             "returns": list(returns)}}

    if start < total and distributed.any_rank(common.stop_now(cfg)):  # a signal during start-up
        if world.active:
            if world.main and cfg.out:
                checkpoint.save(cfg.out, snapshot(start))
            distributed.barrier()
        common.interrupt(cfg, start, total, None if world.active else snapshot(start))
    for step in range(start + 1, total + 1):
        online = step > cfg.steps
        if online:
            if obs is None:
                obs, _ = episode.reset(seed=cfg.seed + step)
            noise = torch.randn(1, act_dim, generator=act_gen).to(device)
            with torch.no_grad():
                a = agent.policy_actions(torch.as_tensor(np.asarray(obs, np.float32)[None], device=device), noise)
            a = a[0].cpu().numpy()
            next_obs, reward, terminated, truncated, _ = episode.step(a * data.action_scale + data.action_offset)
            buffer.add(observations=np.ravel(obs), actions=a, next_observations=np.ravel(next_obs),
                       rewards=reward, masks=0.0 if terminated else 1.0)
            ep_ret += float(reward)
            obs = next_obs
            if terminated or truncated:
                returns, ep_ret, obs = (returns + [ep_ret])[-20:], 0.0, None
        info = agent.update(buffer.sample(hp.batch_size, rng, device, block), bc_only=step <= hp.bc_steps)
        stopping = False
        if world.active:  # the global batch's metrics, and one stop decision for every rank
            *values, flag = distributed.all_reduce_mean([*info.values(), float(common.stop_now(cfg))])
            info, stopping = dict(zip(info, values, strict=True)), flag > 0
        common.report(cfg, step, total)
        common.check_finite(step, **{k: v for k, v in info.items() if k.endswith("loss")})
        if world.main and (step % hp.log_every == 0 or step == total):  # the final step is always logged
            rec = {"step": step, "phase": "online" if online else "train", **info}
            if val_buffer is not None:
                rec.update({f"val_{k}": v for k, v in agent.losses(val_buffer.sample(hp.batch_size, val_rng,
                                                                                       device)).items()})
            if online and returns:
                rec["episode_return"] = float(np.mean(returns))
            yield rec
        if due(step):
            if world.main:
                yield from common.evaluate_and_save(cfg, step, policy, eval_env, snapshot(step))
            distributed.barrier()  # the other ranks wait for rank 0's evaluation and checkpoint
        if step < total and (stopping if world.active else common.stop_now(cfg)):  # SIGINT/SIGTERM: exit 130
            if world.active:  # rank 0 writes this step's checkpoint; the others wait for it, then stop too
                if world.main and not due(step) and cfg.out:
                    checkpoint.save(cfg.out, snapshot(step))
                distributed.barrier()
            common.interrupt(cfg, step, total, None if due(step) or world.active else snapshot(step))
