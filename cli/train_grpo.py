"""``mlx26 train grpo``: GRPO with a length reward (SmartThinker and baselines) through TRL.

Thin wrapper over ``mlx26.core.smartthinker.grpo`` (SmartThinker, ICML 2026, arXiv 2603.08000):
SFT warm-up of a zoo model on mixed-verbosity arithmetic chains, then TRL's ``GRPOTrainer`` with the
chosen length reward; records stream as JSONL on stdout and into ``--out``/metrics.jsonl.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from mlx26.cli._errors import require
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
)
from mlx26.cli._plot import PlotOpt, check_plot, curves, read_jsonl
from mlx26.core.smartthinker.spec import DATASETS, DEFAULT_PRESET, GRPO_PRESETS, LENGTH_REWARDS


def train_grpo(
    ctx: typer.Context,
    model: Annotated[str, typer.Option("--model", help="Zoo name or save_pretrained folder.", metavar="TEXT")] = "tiny-llama",
    data: Annotated[str, typer.Option("--data", help=" | ".join(DATASETS) + " (synthetic arithmetic).", metavar="TEXT")] = "arith",
    length_reward: Annotated[str, typer.Option("--length-reward", help=" | ".join(LENGTH_REWARDS) + ".", metavar="TEXT")
                             ] = "smartthinker",
    preset: Annotated[str, typer.Option("--preset", help=" | ".join(GRPO_PRESETS) + "; options below override it.", metavar="TEXT")
                      ] = DEFAULT_PRESET,
    num_generations: Annotated[int | None, typer.Option("--num-generations", help="G, responses per prompt.", metavar="N")
                               ] = None,
    prompts_per_step: Annotated[int | None, typer.Option("--prompts-per-step", help="Prompt groups per step.", metavar="N")
                                ] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="GRPO optimizer steps (0: warm-up only).", metavar="N")
                         ] = None,
    max_completion_length: Annotated[int | None, typer.Option("--max-completion-length",
                                                              help="Token cap per response.", metavar="N")] = None,
    learning_rate: Annotated[float | None, typer.Option("--learning-rate", help="GRPO learning rate.", metavar="NUMBER")] = None,
    beta: Annotated[float | None, typer.Option("--beta", help="KL coefficient (0: no reference model).", metavar="NUMBER")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", help="Sampling temperature.", metavar="NUMBER")] = None,
    warmup_steps: Annotated[int | None, typer.Option("--warmup-steps", help="SFT warm-up steps on mixed-"
                                                     "verbosity chains (0: start from --model as is).", metavar="N")] = None,
    warmup_lr: Annotated[float | None, typer.Option("--warmup-lr", help="Warm-up learning rate.", metavar="NUMBER")] = None,
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Problem kinds; repeat [default: gain, share].", metavar="TEXT")
                    ] = None,
    eval_problems: Annotated[int | None, typer.Option("--eval-problems", help="Held-out problems evaluated "
                                                      "before and after.", metavar="N")] = None,
    target_length: Annotated[float | None, typer.Option("--target-length", help="Target / cap for l1-*, "
                                                        "thinkprune.", metavar="NUMBER")] = None,
    coef: Annotated[float | None, typer.Option("--coef", help="Length coefficient of kimi / arora / l1-*.", metavar="NUMBER")] = None,
    out: Annotated[str | None, typer.Option("--out", help="Run folder [default: runs/grpo-<reward>-s<seed>].",
                                            metavar="DIR")] = None,
    seed: SeedOpt = 0,
    plot: PlotOpt = None,
    force: Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Reuse a non-empty --out folder (its files are replaced) and replace an "
                                        "existing --output or --plot file.")] = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    config: ConfigOpt = None,
    print_config: PrintConfigOpt = False,
) -> None:
    """Warm up, evaluate, train GRPO with a length reward, evaluate again; stream JSONL records.

    --format auto streams JSONL on stdout; -o FILE or another --format writes the records at the end.

    Records: warmup (loss), eval before/after (accuracy, mean_length; greedy and sampled), grpo
    per step (TRL's reward, loss, KL… plus accuracy, length, alpha, l_opt). --out keeps
    config.json, metrics.jsonl, summary.json, warmup/ and model/ (loads with `mlx26 llm chat
    --llm hf:DIR/model`). One process only: SmartThinker needs each prompt's whole group.
    Needs the grpo extra (TRL). The task and model are tiny and synthetic.

    \b
    Examples:
      mlx26 train grpo --preset micro --out g1 --force --quiet
      mlx26 train grpo --preset micro --length-reward kimi --num-generations 4 --max-steps 1 --out g2 --force --quiet
    """
    from mlx26.core.smartthinker.grpo import check_single_process, load_trl, settings, train

    s = settings(preset, model=model, data=data, length_reward=length_reward, num_generations=num_generations,
                 prompts_per_step=prompts_per_step, max_steps=max_steps, max_completion_length=max_completion_length,
                 learning_rate=learning_rate, beta=beta, temperature=temperature, warmup_steps=warmup_steps,
                 warmup_lr=warmup_lr, kinds=tuple(kind) if kind else None, eval_problems=eval_problems,
                 target_length=target_length, coef=coef, seed=seed,
                 out=out or f"runs/grpo-{length_reward}-s{seed}")  # validates the preset and values (exit 2)
    if print_config:  # the preset's values with the command line applied, as the run would use them
        import dataclasses

        import yaml

        resolved = {k.replace("_", "-"): (list(v) if isinstance(v, tuple) else v)
                    for k, v in dataclasses.asdict(s).items()}
        sys.stdout.write(yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True))
        return
    check_single_process()  # under torchrun/accelerate: one exit-2 line up front, before TRL and the model load
    sink = RecordSink(output, fmt, force=force, title="train grpo (tiny synthetic task)")
    check_plot(plot, force)
    require("torch", "torch")
    load_trl()
    from mlx26.cli._progress import Bar

    first = ("warm-up", s.warmup_steps) if s.warmup_steps else ("GRPO", s.max_steps)
    with Bar(f"train grpo · {first[0]}", total=first[1], unit="steps", quiet=quiet,
             status=f"loading {s.model}…") as bar:
        summary = train(s, _with_progress(sink, bar, s), force=force)
    sink.close()
    from pathlib import Path

    curves(plot, read_jsonl(Path(s.out) / "metrics.jsonl"), title=f"train grpo {s.length_reward} (warm-up and GRPO steps)",
           force=force, quiet=quiet, series="phase")
    b, a = summary["before"].get("greedy", {}), summary["after"].get("greedy", {})
    if b:
        notice(f"greedy: accuracy {b['accuracy']:.3f} → {a['accuracy']:.3f}, mean length {b['mean_length']:.1f} → "
               f"{a['mean_length']:.1f} tokens (synthetic arithmetic, tiny model)", quiet)
    notice(f"run folder: {s.out}", quiet)


def _with_progress(sink, bar, s):
    """``sink`` that also moves the bar: warm-up steps, then GRPO steps, and says when it evaluates."""
    def on_record(record: dict) -> None:
        phase, step = record.get("phase"), record.get("step")
        if phase == "warmup":
            bar.update(step, status="evaluating (before)…" if step >= s.warmup_steps else f"loss {record['loss']:.3f}")
        elif phase == "grpo":
            bar.update(step, status="evaluating (after)…" if step >= s.max_steps else
                       (f"loss {record['loss']:.3f}" if isinstance(record.get("loss"), float) else None))
        elif phase == "eval" and record.get("decode") == "greedy":
            bar.set_status(f"evaluating ({record.get('when')}, sampled)…")
        elif phase == "eval" and record.get("when") == "before" and s.max_steps:
            bar.phase("train grpo · GRPO", s.max_steps, status="generating…")
        elif phase == "eval":
            bar.set_status("saving the model…")
        sink(record)

    return on_record

