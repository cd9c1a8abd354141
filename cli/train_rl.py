"""``mlx26 train rl``: one entry point for the RL algorithms in ``mlx26.core.rl.registry``.

DQN / PPO baselines, FQL (Park, Li & Levine 2025) and DFQL (Direct Flow Q-Learning, ICML 2026,
reconstructed). Metrics stream as JSONL on stdout; the run folder keeps config.json,
metrics.jsonl and checkpoint.pt. Under torchrun fql and dfql train data-parallel (rank 0 prints and
writes; see docs/scale-out.md); the online algorithms refuse to start there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli import _complete as complete
from mlx26.cli._errors import BackendMissing, InputError, ensure_installed, require
from mlx26.cli._io import (
    ColumnsOpt,
    ConfigOpt,
    FieldOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    PrintConfigOpt,
    QuietOpt,
    RecordSink,
    SeedOpt,
    notice,
    print_config_requested,
)
from mlx26.cli._plot import PlotOpt, check_plot, curves, read_jsonl
from mlx26.core.rl.spec import ALGORITHMS, DATA_PARALLEL

ALGO_HELP = " | ".join(ALGORITHMS) + " (the registry may hold more)."


def train_rl(
    ctx: typer.Context,
    algo: Annotated[str, typer.Option("--algo", help=ALGO_HELP, metavar="ALGO",
                                               autocompletion=complete.rl_algorithms)] = "dqn",
    env: Annotated[str | None, typer.Option("--env", help="gymnasium id, ogbench:<id> or mlx26/toy-modes "
                                            "[default: a Minari --dataset's env, else CartPole-v1].", metavar="TEXT")] = None,
    dataset: Annotated[str | None, typer.Option("--dataset", help="Offline .npz (fql, dfql).", metavar="D.npz")] = None,
    steps: Annotated[int, typer.Option("--steps", help="Env steps (dqn, ppo) or offline gradient steps.", metavar="N")] = 50_000,
    online_steps: Annotated[int | None, typer.Option("--online-steps", help="Offline-to-online env steps.", metavar="N")] = None,
    alpha: Annotated[float | None, typer.Option("--alpha", help="BC coefficient α (fql, dfql).", metavar="NUMBER")] = None,
    flow_steps: Annotated[int | None, typer.Option("--flow-steps", help="Euler steps K (fql, dfql).", metavar="N")] = None,
    reward: Annotated[str | None, typer.Option("--reward", help="ppo: env | weighted (reach-avoid envs).", metavar="TEXT")] = None,
    w_goal: Annotated[float | None, typer.Option("--w-goal", help="Weighted reward: goal bonus.", metavar="NUMBER")] = None,
    w_unsafe: Annotated[float | None, typer.Option("--w-unsafe", help="Weighted reward: unsafe penalty.", metavar="NUMBER")] = None,
    goal: Annotated[str | None, typer.Option("--goal", help="Reach-avoid goal set G on a user env: module:function "
                                             "(obs → bool) or box:I=LO..HI[,…][;box:…].", metavar="TEXT")] = None,
    unsafe: Annotated[str | None, typer.Option("--unsafe", help="Reach-avoid unsafe set F (as --goal).", metavar="TEXT")] = None,
    cost: Annotated[str | None, typer.Option("--cost", help="Step cost: a number (default 1) or module:function "
                                             "(obs, action → float).", metavar="TEXT")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Hyperparameter key=value; repeatable.", metavar="TEXT")] = None,
    out: Annotated[str | None, typer.Option("--out", help="Run folder [default: runs/<algo>-<env>-s<seed>].",
                                            metavar="DIR")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run in --out from its checkpoint (its stored "
                                         "options; --steps N extends it); a folder without one restarts its "
                                         "config from step 0.")] = False,
    eval_every: Annotated[int, typer.Option("--eval-every", help="Evaluate + checkpoint every N steps (0 = end).", metavar="N")] = 0,
    eval_episodes: Annotated[int, typer.Option("--eval-episodes", help="Episodes per evaluation (the FQL "
                                               "reference's 50).", metavar="N")] = 50,
    device: Annotated[str, typer.Option("--device", help="cpu | cuda.", metavar="TEXT")] = "cpu",
    rescale: Annotated[bool, typer.Option("--rescale", help="Map dataset actions into [-1, 1].")] = False,
    show_hparams: Annotated[bool, typer.Option("--show-hparams", help="List the algorithm's hyperparameters.")] = False,
    seed: SeedOpt = 0,
    plot: PlotOpt = None,
    force: Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Overwrite an existing run in --out (its config, "
                                        "metrics, logs and checkpoint) and an existing --output or --plot file.")] = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    config: ConfigOpt = None,
    print_config: PrintConfigOpt = False,
) -> None:
    """Train an RL agent; stream JSONL metrics; write config, metrics and checkpoints to --out.

    --format auto streams the metrics as JSONL on stdout, on a terminal too (records arrive while it
    trains); --format table, another format or -o FILE writes them all at the end.

    Algorithms: dqn, ppo (online baselines), fql, dfql (offline flow policies; DFQL is a
    reconstruction), rapc (reach-avoid with certificates, reconstruction) and its baselines
    ppo-lag and ppo --reward weighted (envs mlx26/ra-grid, ra-point, ra-reacher, ra-hopper). --set k=v (repeatable) and --config FILE (keys = option names; `set` is a
    list of "k=v") override hyperparameters; unknown keys are errors. --show-hparams lists them.
    MLX26_THREADS sets torch threads (default 1). Ctrl-C (or SIGTERM) saves a checkpoint of the step
    in progress and exits 130; --resume continues from it (dqn, fql and dfql exactly as an
    uninterrupted run; ppo, rapc and ppo-lag from the last finished update with fresh episodes).
    fql and dfql (offline) also run data-parallel under torchrun --nproc-per-node N -m mlx26.cli
    (batch_size must divide by N; rank 0 prints and writes).

    \b
    Examples:
      mlx26 train rl --algo dqn --env CartPole-v1 --steps 600 --set learning_starts=200 --set train_freq=100 --out r1 --force
      mlx26 rl data make --env mlx26/toy-modes --policy oracle --steps 512 --out toy.npz && mlx26 train rl --algo dfql --env mlx26/toy-modes --dataset toy.npz --steps 20 --set preset=small --out r2 --force
      mlx26 train rl --algo rapc --env mlx26/ra-point --steps 256 --set num_steps=32 --set p=0.9 --eval-episodes 2 --out r3 --force
      mlx26 train rl --algo ppo --env mlx26/ra-point --reward weighted --w-goal 5 --w-unsafe 5 --steps 512 --eval-episodes 2 --out r4 --force
      mlx26 train rl --algo rapc --env MountainCarContinuous-v0 --goal 'box:0=0.45..inf' --unsafe 'box:1=-inf..-0.06' --cost 1 --steps 256 --set num_steps=32 --eval-episodes 2 --out r5 --force
      mlx26 train rl --algo fql --show-hparams
    """
    if print_config_requested(ctx, print_config):
        return
    from mlx26.core.common.distributed import env as world_env

    world = world_env()
    if algo not in ALGORITHMS:  # a typo is a typo before it is an algorithm torchrun cannot run
        from mlx26.core.rl import registry

        raise registry.unknown("algorithm", algo, registry.names())
    if not resume:  # a resumed run's algorithm is in its config.json: checked once that is read
        _refuse_online(algo)
    main_rank = world.main  # under torchrun only rank 0 prints and writes (docs/scale-out.md)
    quiet = quiet or not main_rank
    sink = RecordSink(output, fmt, force=force, title=f"train rl {algo}")
    check_plot(plot, force)
    from mlx26.core.common.interrupts import stop_requested

    with stop_requested() as stop:  # from here on, Ctrl-C is a request to stop and keep the work
        ensure_installed("gymnasium", "rl")
        ensure_installed("torch", "torch")  # imported only once the options are known to be valid
        from mlx26.core.rl import checkpoint, registry, runner

        if algo not in registry.names():
            raise registry.unknown("algorithm", algo, registry.names())
        from mlx26.core.rl.envs import resolve_env_id
        from mlx26.core.rl.hparams import hp_help, parse_assignments

        if show_hparams:
            if not main_rank:
                return
            for row in hp_help(registry.module(algo).Hyperparams):
                sink(row)
            sink.close()
            return
        if env is None:
            from mlx26.core.rl.formats import minari_env_id

            env = (minari_env_id(dataset) if dataset else None) or "CartPole-v1"
            if dataset and env != "CartPole-v1":
                notice(f"--env {env} (from the Minari dataset's metadata)", quiet)
        if env.startswith("ogbench:"):
            require("ogbench", "ogbench")
        if device == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise BackendMissing("--device cuda: torch sees no CUDA device.", hint="use --device cpu")
        overrides = parse_assignments(set_ or [])
        for key, value in (("online_steps", online_steps), ("alpha", alpha), ("flow_steps", flow_steps),
                           ("reward", reward), ("w_goal", w_goal), ("w_unsafe", w_unsafe)):
            if value is not None:
                overrides[key] = value
        out = out or f"runs/{algo}-{env.replace('/', '_').replace(':', '_')}-s{seed}"
        if resume:
            stored = runner.prepare_out(out, resume=True)
            _refuse_online(str((stored or {}).get("algo")))
            state = checkpoint.load(out) if (Path(out) / checkpoint.NAME).is_file() else None
            at = state["step"] if state else 0
            given = getattr(ctx.get_parameter_source("steps"), "name", "DEFAULT") != "DEFAULT"
            if given and steps <= at:
                raise InputError(f"--steps {steps} does not go beyond the checkpoint in {out} (step {at})",
                                 "leave --steps out to finish the stored run, or give a larger number")
            cfg = runner.config_from_stored(stored, out=out, steps=steps if given else None)
            cfg.resume_state = state
            if main_rank:
                runner.trim_logs(out, at)
            if state is None:
                notice(f"no checkpoint in {out} yet: running its stored config ({cfg.algo} on {cfg.env}, seed "
                       f"{cfg.seed}) from step 0 to {cfg.steps}", quiet)
            elif at >= cfg.steps:
                notice(f"the run in {out} is complete (step {at} of {cfg.steps}); give a larger --steps to extend it",
                       quiet)
                return
            else:
                notice(f"resuming {cfg.algo} on {cfg.env} from step {at} to {cfg.steps}", quiet)
        else:
            env_id, env_notice = resolve_env_id(env)
            if env_notice:
                notice(env_notice, quiet)
            cfg = runner.build_config(algo, env_id, overrides, steps=steps, seed=seed, eval_every=eval_every,
                                      eval_episodes=eval_episodes, device=device, dataset=dataset, rescale=rescale,
                                      reach_avoid={"goal": goal, "unsafe": unsafe, "cost": cost},
                                      out=out)
            if main_rank:
                runner.prepare_out(out, force=force)
            for warning in cfg.warnings:
                notice(f"warning: {warning}", quiet)
            if cfg.env_defaults:
                notice(f"{cfg.algo} on {cfg.env}: the reference's per-env defaults "
                       + ", ".join(f"{k}={v}" for k, v in cfg.env_defaults.items())
                       + " (config.json 'env_defaults'; --alpha / --set override them)", quiet)
        if main_rank:
            runner.write_config(out, cfg)
        else:
            cfg.out = None  # the run folder is rank 0's
        cfg.stop = stop.is_set  # SIGINT/SIGTERM: checkpoint the step in progress, exit 130
        from mlx26.cli._progress import Bar

        total = cfg.steps + int(getattr(cfg.hp, "online_steps", 0) or 0)  # ppo-style runs correct it
        shown = {"status": ""}  # what the last record said (the bar's text between records)
        with Bar(f"{cfg.algo} {cfg.env}", total=total, unit="steps", quiet=quiet, status="starting…",
                 completed=int((cfg.resume_state or {}).get("step") or 0)) as bar:
            if bar.active:  # told every step; nothing to call when no bar is drawn
                cfg.progress = lambda step, total, status: bar.update(step, total=total,
                                                                       status=status or shown["status"])
            for record in runner.run(cfg):  # under torchrun the other ranks train in step and yield nothing
                shown["status"] = _status(record)
                bar.update(record.get("step"), status=shown["status"])
                sink(record)
        if not main_rank:
            return
        sink.close()
        curves(plot, read_jsonl(Path(out) / "metrics.jsonl"), title=f"train rl {cfg.algo} on {cfg.env}", force=force,
               quiet=quiet, series="phase")
        notice(f"run folder: {out}", quiet)


def _refuse_online(algo: str) -> None:
    """Under torchrun: an InputError (exit 2) for the algorithms that do not run data-parallel."""
    if algo not in DATA_PARALLEL:
        from mlx26.core.common.distributed import refuse

        refuse("mlx26 train rl", f"--algo {algo} steps environments with per-process replay buffers; only the "
               f"offline algorithms ({', '.join(DATA_PARALLEL)}) train data-parallel")


def _status(record: dict) -> str:
    """The bar's text for a metric record: the evaluation's return, else the first loss."""
    if record.get("phase") == "eval" and record.get("eval_return") is not None:
        return f"eval return {record['eval_return']:.4g}"
    for key, value in record.items():
        if "loss" in key and isinstance(value, (int, float)):
            return f"{key} {value:.4g}"
    return ""
