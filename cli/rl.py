"""``mlx26 rl``: offline datasets (``data make/info/convert``), checkpoint evaluation (``eval``), seed
sweeps (``sweep``), learning curves (``plot``) and reach-avoid certificates (``reach-avoid``).

Thin wrapper over ``mlx26.core.rl`` (datasets in the OGBench schema; OGBench, D4RL and Minari read).
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _complete as complete
from mlx26.cli._errors import require
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    ForceOutOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    check_output,
    emit,
    notice,
)
from mlx26.core.rl.spec import DATA_POLICIES

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)
data_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                       help="Generate, inspect and convert offline datasets: mlx26/OGBench .npz, D4RL "
                            "HDF5/.npz, Minari dataset folders.")
app.add_typer(data_app, name="data")


@data_app.command("make")
def data_make(
    env: Annotated[str, typer.Option("--env", help="mlx26/toy-modes, ogbench:<id> or a gymnasium id.", metavar="TEXT")],
    out: Annotated[str, typer.Option("--out", help="Train file D.npz (D-val.npz is written beside it).",
                                     metavar="D.npz")],
    policy: Annotated[str, typer.Option("--policy", help=" | ".join(DATA_POLICIES) + ".", metavar="TEXT")] = "oracle",
    noise: Annotated[float, typer.Option("--noise", help="Action noise σ.", metavar="NUMBER")] = 0.1,
    steps: Annotated[int, typer.Option("--steps", help="Train transitions (+10% for -val).", metavar="N")] = 100_000,
    episode_length: Annotated[int | None, typer.Option("--episode-length", help="Cut episodes at N steps "
                                                       "(OGBench manipulation default 1001).", min=1, metavar="N")] = None,
    seed: SeedOpt = 0,
    force: ForceOutOpt = False,
    quiet: QuietOpt = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Generate an offline dataset by running a scripted oracle, noisy or random policy.

    OGBench manipulation envs use OGBench's own oracles (plan = "play" data, markov + noise =
    "noisy" data); other envs take random or noisy (random-walk) policies; mlx26/toy-modes
    has its behaviour mixture as the oracle. Prints a summary of the file written.

    \b
    Examples:
      mlx26 rl data make --env mlx26/toy-modes --policy oracle --steps 1000 --out toy.npz --force
      mlx26 rl data make --env ogbench:cube-single-singletask-task2-v0 --steps 100000 --out cube.npz
    """
    require("gymnasium", "rl")
    if env.startswith("ogbench:"):
        require("ogbench", "ogbench")
    if not out.endswith(".npz"):
        raise typer.BadParameter("--out must end in .npz", param_hint="--out")
    from mlx26.core.rl import datagen, datasets

    check_output(out, force)
    check_output(str(datasets.val_path(out)), force)
    check_output(output, force)
    counter = _Counter(steps + round(steps * 0.1), quiet)
    train, val, meta = datagen.generate(env, policy, noise, steps, seed, episode_length, progress=counter)
    counter.close()
    datasets.save(out, train, meta)
    datasets.save(datasets.val_path(out), val, {**meta, "split": "val"})
    notice(f"wrote {out} ({len(train['actions'])} rows) and {datasets.val_path(out)} ({len(val['actions'])} rows)",
           quiet)
    info = datasets.info(out)
    info.pop("keys")
    emit(info, output, fmt, force=force, title="rl data make")


class _Counter:
    """A rich progress bar on stderr (only on a terminal, not --quiet)."""

    def __init__(self, total: int, quiet: bool):
        import sys

        self.bar = None
        if not quiet and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("collecting", total=total)

    def __call__(self, n: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _relabel_env(env: str | None):
    """The OGBench single-task env that relabels rewards (``--env``), or None."""
    if env is None:
        return None
    require("gymnasium", "rl")
    from mlx26.core.rl.envs import make_env, resolve_env_id

    env_id, _ = resolve_env_id(env)
    if not (env_id.startswith("ogbench:") and "singletask" in env_id):
        raise typer.BadParameter(f"{env} is not an OGBench single-task env (…-singletask-taskN-v0); only those "
                                 "relabel rewards", param_hint="--env")
    require("ogbench", "ogbench")
    return make_env(env_id)


EnvRelabelOpt = Annotated[str | None, typer.Option(
    "--env", help="OGBench single-task env whose task relabels the rewards (as OGBench's loader does).",
    metavar="ogbench:ID")]


@data_app.command("info")
def data_info(
    path: Annotated[str, typer.Argument(help="Dataset: .npz (mlx26, OGBench, D4RL), .hdf5 (D4RL) or a Minari "
                                             "dataset folder.", metavar="DATASET")],
    env: EnvRelabelOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Format, transitions, episodes, rewards, successes and action ranges of a dataset, as training reads it.

    Warns (stderr, and in the 'warning' field) when the data carries no reward signal, e.g. when
    single-task relabelling leaves no successes.

    \b
    Examples:
      mlx26 rl data info toy.npz
      mlx26 rl data info cube-single-play-v0.npz --env ogbench:cube-single-singletask-task2-v0 --format json
    """
    check_output(output, force)
    from mlx26.core.rl import datasets

    result = datasets.info(path, env=_relabel_env(env))
    if result.get("warning"):
        notice(f"warning: {result['warning']}", quiet)
    emit(result, output, fmt, force=force, title="rl data info")


@data_app.command("convert")
def data_convert(
    path: Annotated[str, typer.Argument(help="OGBench/D4RL .npz or .hdf5, or a Minari dataset folder.",
                                        metavar="IN")],
    out: Annotated[str, typer.Option("--out", help="mlx26 .npz to write (IN's -val split goes to D-val.npz).",
                                     metavar="D.npz")],
    to: Annotated[str, typer.Option("--to", help="Target format (mlx26).", metavar="TEXT")] = "mlx26",
    env: EnvRelabelOpt = None,
    force: ForceOutOpt = False,
    quiet: QuietOpt = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Convert a released dataset into mlx26's .npz (the rows training reads from IN, incl. its -val split).

    \b
    Examples:
      mlx26 rl data convert hopper-medium-v2.hdf5 --to mlx26 --out hopper.npz
      mlx26 rl data convert cube-single-play-v0.npz --env ogbench:cube-single-singletask-task2-v0 --out cube.npz
    """
    if to != "mlx26":
        raise typer.BadParameter(f"unknown target format '{to}' (only mlx26)", param_hint="--to")
    if not out.endswith(".npz"):
        raise typer.BadParameter("--out must end in .npz", param_hint="--out")
    from mlx26.core.rl import datasets, formats

    check_output(out, force)
    check_output(output, force)
    if formats.val_path(path) is not None:
        check_output(str(datasets.val_path(out)), force)
    result = datasets.convert(path, out, env=_relabel_env(env))
    for item in result["written"]:
        notice(f"wrote {item['file']} ({item['rows']} rows from {item['source_format']})", quiet)
    emit(result["written"], output, fmt, force=force, title="rl data convert")


@app.command("eval")
def eval_(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Run folder (or its checkpoint.pt).",
                                            metavar="DIR")],
    episodes: Annotated[int | None, typer.Option("--episodes", help="Episodes [default: as in training].", metavar="N")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Eval seed [default: the run's seed].", min=0, metavar="N")] = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Evaluate a checkpoint; with the run's seed and episode count it reproduces training's last eval.

    \b
    Examples:
      mlx26 train rl --algo dqn --steps 300 --set learning_starts=100 --set train_freq=50 --out r --force --quiet > /dev/null && mlx26 rl eval --checkpoint r --episodes 3
    """
    check_output(output, force)
    require("gymnasium", "rl")
    require("torch", "torch")
    from mlx26.core.rl import checkpoint as ckpt
    from mlx26.core.rl import registry
    from mlx26.core.rl.envs import make_env
    from mlx26.core.rl.evaluation import evaluate
    from mlx26.core.rl.hparams import set_threads

    set_threads()
    state = ckpt.load(checkpoint)
    if state["env"].startswith("ogbench:"):
        require("ogbench", "ogbench")
    from mlx26.core.rl.reach_avoid.user_sets import wrap

    spec = (state.get("config") or {}).get("reach_avoid")
    env = wrap(make_env(state["env"]), spec)
    policy = registry.module(state["algo"]).load_policy(state, env)
    n = episodes if episodes is not None else state.get("eval_episodes", 10)
    result = evaluate(env, policy, n, state["seed"] if seed is None else seed)
    if state["env"].startswith("mlx26/ra-") or spec:  # reach-avoid: success / unsafe / cost, whatever the reward
        from mlx26.core.rl.reach_avoid.metrics import evaluate_reach_avoid

        env = wrap(make_env(state["env"]), spec)
        ra = evaluate_reach_avoid(env, policy, n, state["seed"] if seed is None else seed)
        result.update({f"ra_{k}": v for k, v in ra.items() if k != "episodes"})
    last = state.get("last_eval") or {}
    if last.get("eval_seed") == result["eval_seed"] and last.get("eval_episodes") == n:
        result["matches_training_eval"] = last.get("eval_returns") == result["eval_returns"]
    notice(f"{state['algo']} on {state['env']}, checkpoint step {state['step']}", quiet)
    emit({"algo": state["algo"], "env": state["env"], "step": state["step"], **result}, output, fmt,
         force=force, title="rl eval")


ra_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                     help="Reach-avoid probability certificates for RAPC checkpoints (reconstruction).")
app.add_typer(ra_app, name="reach-avoid")


@ra_app.command("certify")
def ra_certify(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="A rapc/ppo-lag run folder on ra-grid or ra-point.",
                                            metavar="DIR")],
    n_mc: Annotated[int, typer.Option("--n-mc", help="Monte-Carlo rollouts per candidate cell/state.", metavar="N")] = 200,
    p: Annotated[float | None, typer.Option("--p", help="Certification level [default: the run's p].", metavar="NUMBER")] = None,
    confidence: Annotated[float, typer.Option("--confidence", help="ra-point: joint confidence of the "
                                              "certificate (Clopper–Pearson, Bonferroni).", metavar="NUMBER")] = 0.95,
    n_states: Annotated[int, typer.Option("--n-states", help="ra-point: states sampled outside G ∪ F.", metavar="N")] = 300,
    candidates: Annotated[str, typer.Option("--candidates", help="ra-point: critic (states with B ≥ p) | all.", metavar="TEXT")
                          ] = "critic",
    seed: SeedOpt = 0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Certified states of a RAPC checkpoint: exact on ra-grid, statistical on ra-point.

    ra-grid: the certificate B ≤ B_γ B over all cells (B ≥ p), with Monte-Carlo P(RA) and Wilson
    bounds. ra-point: sampled states the critic claims (B ≥ p) are certified when Monte-Carlo
    rollouts give a Clopper–Pearson lower bound ≥ p, jointly at --confidence; the listed states
    are certified, not a region (see docs/rl.md).

    \b
    Examples:
      mlx26 train rl --algo rapc --env mlx26/ra-grid --steps 64 --set num_steps=16 --set num_envs=2 --set num_minibatches=2 --out ra --force --quiet > /dev/null && mlx26 rl reach-avoid certify --checkpoint ra --n-mc 50 --p 0.05
    """
    check_output(output, force)
    require("gymnasium", "rl")
    require("torch", "torch")
    from mlx26.core.rl.hparams import set_threads
    from mlx26.core.rl.reach_avoid.certify import certify_checkpoint

    set_threads()
    emit(certify_checkpoint(checkpoint, n_mc=n_mc, p=p, seed=seed, confidence=confidence, n_states=n_states,
                            candidates=candidates), output, fmt, force=force,
         title="rl reach-avoid certify")


@ra_app.command("optimum")
def ra_optimum(
    p: Annotated[float, typer.Option("--p", help="Required P(reach G before F) from the start.", metavar="NUMBER")] = 0.9,
    slip: Annotated[float, typer.Option("--slip", help="ra-grid slip probability.", metavar="NUMBER")] = 0.2,
    mud_cost: Annotated[float, typer.Option("--mud-cost", help="ra-grid extra cost of mud cells.", metavar="NUMBER")] = 2.0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Exact minimum expected cost subject to P(RA) ≥ p on mlx26/ra-grid (occupancy-measure LP).

    \b
    Examples:
      mlx26 rl reach-avoid optimum --p 0.9
      mlx26 rl reach-avoid optimum --p 0.5 --slip 0.1 --format json
    """
    check_output(output, force)
    require("scipy", "rl")
    from mlx26.core.rl.reach_avoid.grid import DEFAULT_LAYOUT, GridModel
    from mlx26.core.rl.reach_avoid.lp import constrained_optimum, expected_cost

    model = GridModel(DEFAULT_LAYOUT, slip, mud_cost)
    best = constrained_optimum(model, p)
    emit({"p": p, "slip": slip, "mud_cost": mud_cost, "optimal_cost": best["cost"], "p_ra": best["p_ra"],
          "cost_check": expected_cost(model, best["policy"]), "max_p_ra": float(model.max_p_ra()[model.start]),
          "randomised_cells": best["randomised_states"]},
         output, fmt, force=force, title="rl reach-avoid optimum")


@app.command("plot")
def plot(
    runs: Annotated[list[str], typer.Argument(help="Run folders (`train rl --out`), e.g. a sweep's ROOT/*.",
                                              metavar="RUN...")],
    output: Annotated[str, typer.Option("--output", "-o", help="PNG to write.", metavar="FILE.png")],
    metric: Annotated[str, typer.Option("--metric", help="A metrics.jsonl key (eval_* needs --eval-every).", metavar="TEXT")
                      ] = "eval_return",
    group_by: Annotated[str, typer.Option("--group-by", help="algo | run | a hyperparameter name (e.g. alpha).", metavar="TEXT")
                        ] = "algo",
    level: Annotated[float, typer.Option("--level", help="Confidence level of the band.", metavar="NUMBER")] = 0.95,
    force: ForceOpt = False,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Learning curves to PNG: one curve per algorithm (or group), mean ± t-confidence band over seeds.

    The band is at the steps every seed of a group logged. Envs shipped here are labelled
    synthetic in the title. Prints the final point of each curve.

    \b
    Examples:
      mlx26 rl plot sweep/fql-s* sweep/dfql-s* -o curves.png --metric eval_success
      mlx26 rl plot runs/* -o alpha.png --group-by alpha --metric critic_loss
    """
    if not output.endswith(".png"):
        raise typer.BadParameter("--output must end in .png", param_hint="--output")
    if not 0 < level < 1:
        raise typer.BadParameter(f"must be in (0, 1), got {level}", param_hint="--level")
    check_output(output, force)
    require("matplotlib", "rl")
    require("scipy", "rl")
    from mlx26.core.rl import logs, sweep
    from mlx26.core.rl.plot import draw

    loaded, dropped = sweep.unique_runs([logs.read_run(r) for r in runs])
    if dropped:
        notice(f"warning: {dropped} repeated run folder(s) ignored", quiet)
    sweep.check_group_by(loaded, group_by)
    sweep.check_distinct_seeds(loaded, group_by)
    curves = sweep.curves(loaded, metric, level, by=group_by)
    draw(curves, metric, output, envs=[str(r["env"]) for r in loaded], level=level)
    notice(f"wrote {output}", quiet)
    rows = [{"group": g, "seeds": c["n"], "points": len(c["step"]), "last_step": c["step"][-1] if c["step"] else None,
             f"{metric}_mean": c["mean"][-1] if c["mean"] else None, "ci_low": c["ci_low"][-1] if c["step"] else None,
             "ci_high": c["ci_high"][-1] if c["step"] else None} for g, c in curves.items()]
    emit(rows, None, fmt, title="rl plot")


@app.command("sweep")
def sweep_(
    algo: Annotated[list[str], typer.Option("--algo", help="Algorithm; repeat for several.", metavar="ALGO",
                                                          autocompletion=complete.rl_algorithms)],
    seeds: Annotated[str, typer.Option("--seeds", help="Seeds: 0-4 or 0,1,2.", metavar="TEXT")] = "0-4",
    env: Annotated[str, typer.Option("--env", help="As for `train rl`.", metavar="TEXT")] = "CartPole-v1",
    dataset: Annotated[str | None, typer.Option("--dataset", help="Offline dataset (fql, dfql).",
                                                metavar="D.npz")] = None,
    steps: Annotated[int, typer.Option("--steps", help="As for `train rl`.", metavar="N")] = 50_000,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Hyperparameter key=value (every algorithm); "
                                                   "repeatable.", metavar="TEXT")] = None,
    eval_every: Annotated[int, typer.Option("--eval-every", help="Evaluate every N steps (0 = end).", metavar="N")] = 0,
    eval_episodes: Annotated[int | None, typer.Option("--eval-episodes", help="Episodes per evaluation "
                                                      "[default: as for `train rl`].", metavar="N")] = None,
    rescale: Annotated[bool, typer.Option("--rescale", help="Map dataset actions into [-1, 1].")] = False,
    out: Annotated[str, typer.Option("--out", help="Root folder: one run per ROOT/<algo>-s<seed>.",
                                     metavar="ROOT")] = "sweep",
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Overwrite existing run folders --out ROOT/<algo>-s<seed> "
                                        "(config, metrics, logs, checkpoint) and an existing --output file.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Train each algorithm on each seed (sequentially), then one row per algorithm: final eval metrics
    as mean, sd and 95% Student-t CI over the seeds. Plot the runs with `mlx26 rl plot ROOT/*`.

    \b
    Examples:
      mlx26 rl sweep --algo fql --algo dfql --env mlx26/toy-modes --dataset toy.npz --seeds 0-4 --steps 800 --set preset=small --out sw
      mlx26 rl sweep --algo dqn --env CartPole-v1 --seeds 0-2 --steps 600 --set learning_starts=200 --out sw --force --format json
    """
    check_output(output, force)
    require("gymnasium", "rl")
    require("torch", "torch")
    require("scipy", "rl")
    from mlx26.core.rl import logs, sweep
    from mlx26.core.rl.envs import resolve_env_id
    from mlx26.core.rl.hparams import parse_assignments

    seed_list = sweep.parse_seeds(seeds)
    env_id, env_notice = resolve_env_id(env)
    if env_notice:
        notice(env_notice, quiet)
    common = {"steps": steps, "eval_every": eval_every, "dataset": dataset, "rescale": rescale}
    if eval_episodes is not None:
        common["eval_episodes"] = eval_episodes
    runs = []
    for row in sweep.run_sweep(algo, env_id, seed_list, out, overrides=parse_assignments(set_ or []), force=force,
                               **common):
        notice(f"{row['algo']} seed {row['seed']}: " + ", ".join(f"{k} {v:.4g}" for k, v in row.items()
                                                                if k.startswith("eval_")), quiet)
        runs.append(logs.read_run(row["run"]))
    emit(sweep.summarize(runs), output, fmt, force=force, title="rl sweep")
