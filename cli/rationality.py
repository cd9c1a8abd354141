"""``mlx26 rationality``: exact rational risk of RL agents on gymnasium toy-text MDPs.

Thin wrapper over ``mlx26.core.rationality`` (Qian, Storkey & He, ICML 2026). This module loads
``mlx26 train rl`` checkpoints through ``mlx26.core.rl`` and hands the core a policy table, so the
core never imports the RL package; the sweep's ``train_fn`` is built here from ``core.rl`` too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli._errors import UsageError, require, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    ConfigOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    PrintConfigOpt,
    QuietOpt,
    check_output,
    emit,
    notice,
    print_config_requested,
)
from mlx26.core.rationality.spec import DEFAULT_ENV, HYPOTHESES, METRICS, REGULARIZERS, W1_METHODS

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)

EnvOpt = Annotated[str, typer.Option("--env", help="Gymnasium toy-text id (CliffWalking-v1, FrozenLake-v1, "
                                     "FrozenLake8x8-v1, Taxi-v4, …).", metavar="TEXT")]
HorizonOpt = Annotated[int, typer.Option("--horizon", "-H", help="Finite horizon H (> 0).", metavar="N")]
EpsTrainOpt = Annotated[float, typer.Option("--eps-train", help="Slip probability of the training kernel, in [0, 1].", metavar="NUMBER")]
EpsDeployOpt = Annotated[float, typer.Option("--eps-deploy", help="Slip probability of the deployment kernel.", metavar="NUMBER")]
MixOpt = Annotated[float, typer.Option("--init-mix", help="Deployment initial distribution: (1-m) mu0 + m uniform.", metavar="NUMBER")]
MetricOpt = Annotated[str, typer.Option("--metric", help="Ground metric for W1: " + " | ".join(METRICS) + ".", metavar="TEXT")]
W1Opt = Annotated[str, typer.Option("--w1-method", help="auto | closed (slip family, no POT) | pot.", metavar="TEXT")]


def _choice(kind: str, value: str, choices) -> str:
    if value not in choices:
        raise unknown_name(kind, value, choices)
    return value


def _policy(spec: str | None, m, eps_train: float, horizon: int):
    """A ``(S,)`` action table: the training-optimal policy, a JSON {state: action}, a callable or a checkpoint."""
    import json
    from pathlib import Path

    import numpy as np
    from mlx26.core.rationality import mdp, risk

    if spec is None:
        return risk.greedy(mdp.solve(m, eps_train, horizon)), "training-optimal"
    p = Path(spec)
    if p.suffix == ".json" and p.is_file():
        try:
            table = json.loads(p.read_text())
        except json.JSONDecodeError as exc:
            raise UsageError(f"{spec} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
        if not isinstance(table, dict):
            raise UsageError(f"{spec} must hold an object {{state: action}}")
        extra = sorted(k for k in table if not (str(k).isdigit() and int(k) < m.n_states))
        if extra:  # a policy of another env (or a typo): never score it on the first states silently
            raise UsageError(f"{spec} names state(s) {', '.join(map(str, extra[:10]))} that {m.env_id} does not have",
                             hint=f"{m.env_id} has states 0..{m.n_states - 1}; is the policy for another --env?")
        missing = [s for s in range(m.n_states) if str(s) not in table]
        if missing:
            raise UsageError(f"{spec} has no action for state(s) {', '.join(map(str, missing[:10]))}"
                             + (f" … ({len(missing)} missing)" if len(missing) > 10 else ""),
                             hint=f"give an action for every state 0..{m.n_states - 1}")
        try:
            return np.array([int(table[str(s)]) for s in range(m.n_states)]), str(spec)
        except (TypeError, ValueError):
            raise UsageError(f"{spec}: every action must be an integer") from None
    if ":" in spec and not p.exists():
        return _callable(spec, m), spec
    return _checkpoint(spec, m)


def _callable(spec: str, m):
    import importlib
    import importlib.util

    import numpy as np

    module, _, name = spec.rpartition(":")
    try:
        if module.endswith(".py"):
            loader = importlib.util.spec_from_file_location("mlx26_user_policy", module)
            if loader is None or loader.loader is None:
                raise ImportError(module)
            mod = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(mod)
        else:
            mod = importlib.import_module(module)
        fn = getattr(mod, name)
    except (ImportError, AttributeError, FileNotFoundError) as exc:
        raise UsageError(f"cannot load policy callable '{spec}': {exc}",
                         hint="use module:function or path.py:function; the function maps a state to an action"
                         ) from None
    return np.array([int(fn(s)) for s in range(m.n_states)])


def _checkpoint(spec: str, m):
    import numpy as np
    from mlx26.core.rationality.envs import base_env
    from mlx26.core.rl import checkpoint, registry

    require("torch")
    state = checkpoint.load(spec)
    if base_env(state["env"]) != m.env_id:
        raise UsageError(f"{spec} is a checkpoint of {state['env']}, not of {m.env_id}",
                         hint=f"pass --env {base_env(state['env'])} or a checkpoint trained on {m.env_id}")
    pol = registry.module(state["algo"]).load_policy(state, None)
    eye = np.eye(m.n_states, dtype=np.float32)
    return np.array([int(pol(eye[s])) for s in range(m.n_states)]), f"{state['algo']} checkpoint {spec}"


@app.command("mdp")
def mdp_cmd(
    env: EnvOpt = DEFAULT_ENV,
    eps: Annotated[float, typer.Option("--eps", help="Slip probability in [0, 1].", metavar="NUMBER")] = 0.0,
    horizon: HorizonOpt = 100,
    states: Annotated[bool, typer.Option("--states", help="Also list V*, Q* and the rational set per state.")] = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Optimal finite-horizon values of the slip-shifted MDP: V*(start) and a Q* summary.

    \b
    Examples:
      mlx26 rationality mdp
      mlx26 rationality mdp --env CliffWalking-v1 --eps 0.1 --horizon 100 --format json
    """
    check_output(output, force)
    from mlx26.core.rationality import mdp

    mdp.check_eps(eps), mdp.check_horizon(horizon)
    m = mdp.from_gym(env)
    emit(mdp.summary(m, mdp.solve(m, eps, horizon), eps, states), output, fmt, force=force, title="rationality mdp")


@app.command("risk")
def risk_cmd(
    env: EnvOpt = DEFAULT_ENV,
    policy: Annotated[str | None, typer.Option("--policy", help="CHECKPOINT (train rl --out folder), policy.json "
                                               "{state: action}, or module:function; default: training-optimal.", metavar="TEXT")
                      ] = None,
    eps_train: EpsTrainOpt = 0.0,
    eps_deploy: EpsDeployOpt = 0.1,
    horizon: HorizonOpt = 100,
    init_mix: MixOpt = 0.0,
    episodes: Annotated[int, typer.Option("--episodes", help="Training trajectories for the empirical risk.",
                                          min=1, metavar="N")] = 200,
    metric: MetricOpt = "grid",
    w1_method: W1Opt = "auto",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the training trajectories.", min=0, metavar="N")] = 0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Expected (exact) and empirical rational risk, the gap's extrinsic/intrinsic split and its bounds.

    \b
    Examples:
      mlx26 rationality risk
      mlx26 rationality risk --env FrozenLake-v1 --eps-train 0 --eps-deploy 0.2 --metric discrete --format json
    """
    _choice("metric", metric, METRICS), _choice("w1 method", w1_method, W1_METHODS)
    check_output(output, force)
    from mlx26.core.rationality import mdp, sweep

    for name, value in (("--eps-train", eps_train), ("--eps-deploy", eps_deploy), ("--init-mix", init_mix)):
        mdp.check_eps(value, name)
    mdp.check_horizon(horizon)
    m = mdp.from_gym(env)
    table, label = _policy(policy, m, eps_train, horizon)
    result = sweep.score(m, table, eps_train, eps_deploy, horizon, episodes=episodes, seed=seed, metric=metric,
                         mu_deploy=mdp.init_mixture(m, init_mix), w1_method=w1_method)
    # The norm-based size proxy of the value class needs the network's weights: only a checkpoint has them.
    from mlx26.core.rationality import bounds

    weights = _q_net_weights(policy) if policy and Path(policy).is_dir() else None
    result["q_net_norm_bound"] = None if weights is None else bounds.norm_bound(weights, episodes)
    emit({"policy": label, "init_mix": init_mix, **result}, output, fmt, force=force, title="rationality risk")


def _q_net_weights(spec: str):
    """The Q-network's weight matrices, input to output, from a value-based ``train rl`` checkpoint."""
    from mlx26.core.rl import checkpoint

    models = checkpoint.load(spec).get("models", {})
    net = models.get("q")
    if net is None:  # a policy-gradient checkpoint: no Q-network to size
        return None
    import numpy as np

    weights = []
    for name, t in net.items():
        if name.endswith(".weight") and t.ndim == 2:
            weights.append(t.detach().cpu().numpy())
        elif name.endswith("parametrizations.weight.original1") and t.ndim == 2:  # weight_norm: W = g v / ||v||
            g = net[name[:-1] + "0"].detach().cpu().numpy().reshape(-1, 1)
            v = t.detach().cpu().numpy()
            weights.append(g * v / np.linalg.norm(v, axis=1, keepdims=True))
    return weights or None


@app.command("bound")
def bound_cmd(
    env: EnvOpt = DEFAULT_ENV,
    eps_train: EpsTrainOpt = 0.0,
    eps_deploy: EpsDeployOpt = 0.1,
    init_mix: MixOpt = 0.0,
    metric: MetricOpt = "grid",
    w1_method: W1Opt = "auto",
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """The W1 terms alone: per-(s, a) kernel distance (training vs deployment) and initial distributions.

    \b
    Examples:
      mlx26 rationality bound
      mlx26 rationality bound --env Taxi-v4 --eps-deploy 0.3 --metric discrete --format json
    """
    _choice("metric", metric, METRICS), _choice("w1 method", w1_method, W1_METHODS)
    check_output(output, force)
    from mlx26.core.rationality import bounds, mdp

    for name, value in (("--eps-train", eps_train), ("--eps-deploy", eps_deploy), ("--init-mix", init_mix)):
        mdp.check_eps(value, name)
    m = mdp.from_gym(env)
    C = bounds.ground_metric(m, metric)
    w = bounds.w1_slip(m, eps_train, eps_deploy, C, w1_method)
    emit({"env": env, "eps_train": eps_train, "eps_deploy": eps_deploy, "metric": metric,
          "w1_kernel_mean": float(w.mean()), "w1_kernel_max": float(w.max()),
          "w1_kernel_per_delta_eps": float(w.mean() / abs(eps_deploy - eps_train)) if eps_deploy != eps_train else None,
          "w1_init": bounds.w1(m.mu0, mdp.init_mixture(m, init_mix), C, w1_method)}, output, fmt, force=force,
         title="rationality bound")


def _dqn_train_fn(quiet: bool):
    def train(env_id: str, seed: int, overrides: dict, steps: int):
        import tempfile

        import numpy as np
        from mlx26.core.rationality.envs import base_env
        from mlx26.core.rl import checkpoint, registry, runner

        cfg = runner.build_config("dqn", env_id, overrides, steps=steps, seed=seed, eval_episodes=1)
        with tempfile.TemporaryDirectory() as tmp:
            cfg.out = tmp
            for _ in runner.run(cfg):
                pass
            state = checkpoint.load(tmp)
        pol = registry.module("dqn").load_policy(state, None)
        from mlx26.core.rationality import mdp

        n = mdp.from_gym(base_env(env_id)).n_states
        eye = np.eye(n, dtype=np.float32)
        weights = [v.numpy() for k, v in state["models"]["q"].items() if k.endswith("weight")]
        notice(f"rationality sweep: trained dqn on {env_id} seed {seed} {overrides}", quiet)
        return np.array([int(pol(eye[s])) for s in range(n)]), weights

    return train


@app.command("sweep")
def sweep_cmd(
    ctx: typer.Context,
    env: EnvOpt = DEFAULT_ENV,
    hypothesis: Annotated[list[str] | None, typer.Option("--hypothesis", help=" | ".join(HYPOTHESES)
                                                         + "; repeat (default: all).", metavar="TEXT")] = None,
    regularizer: Annotated[list[str] | None, typer.Option("--regularizer", help=" | ".join(REGULARIZERS)
                                                          + "; repeat (default: all).", metavar="TEXT")] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds per variant.", min=1, metavar="N")] = 5,
    steps: Annotated[int, typer.Option("--steps", help="DQN env steps per run.", min=1, metavar="N")] = 3000,
    eps_train: EpsTrainOpt = 0.1,
    eps_deploy: EpsDeployOpt = 0.25,
    eps_grid: Annotated[list[float] | None, typer.Option("--eps-grid", help="eps_deploy values of the shift "
                                                         "curve; repeat (default 0, .1, .25, .4).", metavar="NUMBER")] = None,
    horizon: HorizonOpt = 100,
    set_: Annotated[list[str] | None, typer.Option("--set", help="DQN hyperparameter key=value; repeat.", metavar="TEXT")] = None,
    plot: Annotated[str | None, typer.Option("--plot", help="Write a PNG of risk vs shift (needs matplotlib).",
                                             metavar="PNG")] = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    config: ConfigOpt = None,
    print_config: PrintConfigOpt = False,
) -> None:
    """Train DQN variants (regulariser x seed, domain randomisation x seed) and score them by exact risk.

    Streams one JSONL record per run, then a summary record (mean, bootstrap 95% CI and the
    direction of each hypothesis). Agents are small DQNs trained here: figures are from tiny local runs.

    \b
    Examples:
      mlx26 rationality sweep --seeds 1 --steps 600 --regularizer none --hypothesis shift --quiet
    """
    if print_config_requested(ctx, print_config):
        return
    check_output(output, force)
    if plot:
        require("matplotlib", "rationality")
    from mlx26.core.rationality import envs, sweep
    from mlx26.core.rl.hparams import parse_assignments

    cfg = {"env": env, "seeds": seeds, "steps": steps, "eps_train": eps_train, "eps_deploy": eps_deploy,
           "horizon": horizon, "set": parse_assignments(set_ or [])}
    if hypothesis:
        cfg["hypotheses"] = hypothesis
    if regularizer:
        cfg["regularizers"] = regularizer
    if eps_grid:
        cfg["eps_grid"] = eps_grid
    cfg = sweep.resolve(cfg)
    summary: list = []

    def records():
        for rec in sweep.sweep(cfg, _dqn_train_fn(quiet), envs.register_slip_env):
            if "summary" in rec:
                summary.extend(rec["summary"])
                yield from ({"summary": True, **row} for row in rec["summary"])
            else:
                yield rec

    emit(records(), output, OutputFormat.jsonl if fmt == OutputFormat.auto else fmt, force=force)
    if plot:
        sweep.plot(summary, plot)
        notice(f"rationality sweep: wrote {plot}", quiet)
