"""GRPO with a length reward on the arithmetic task, through TRL's ``GRPOTrainer`` (CPU).

Part of the SmartThinker reconstruction (ICML 2026, arXiv 2603.08000; upstream trains with verl on
GPUs). Here: TRL's ``GRPOTrainer`` — the maintained library implementation of GRPO — with our
per-group length rewards (:mod:`.rewards`) plugged in through ``reward_funcs``; a zoo model
(``tiny-llama``) after a short SFT warm-up (:mod:`.warmup`) on mixed-verbosity chains; our synthetic
arithmetic problems (:mod:`.data`) as the verifiable task. What is ours: the scale (a 1.4M-parameter
model, tens of steps), the task, and the presets below.

Groups stay whole: SmartThinker's reward needs all G generations of a prompt at once. TRL's sampler
puts a prompt's G copies consecutively in one process's batch when there is one process, so a run
with more than one process is refused, and the reward function regroups its batch by the prompt id
column and fails (exit 1) if a group is not exactly G completions.

Output folder: ``config.json``, ``metrics.jsonl`` (every record streamed), ``warmup/`` (the model
after the warm-up) and ``model/`` (after GRPO) — both ``save_pretrained`` folders, loadable with
``mlx26 llm chat --llm hf:DIR/model``; ``summary.json`` holds accuracy and mean length before/after.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import BackendMissing, InputError, RunFailure, unknown_name
from mlx26.core.smartthinker.spec import DATASETS, GRPO_PRESETS, LENGTH_REWARDS

Sink = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class GRPOSettings:
    model: str = "tiny-llama"
    data: str = "arith"
    length_reward: str = "smartthinker"
    num_generations: int = 8
    prompts_per_step: int = 4
    max_steps: int = 40
    max_completion_length: int = 128
    learning_rate: float = 2e-4
    beta: float = 0.0
    temperature: float = 1.0
    warmup_steps: int = 300
    warmup_lr: float = 5e-3
    warmup_batch_size: int = 16
    kinds: tuple[str, ...] | None = ("gain", "share")
    eval_problems: int = 100
    target_length: float | None = None
    coef: float | None = None
    seed: int = 0
    out: str = "runs/grpo"
    preset: str = "small"
    extra: dict[str, Any] = field(default_factory=dict)


# Presets: micro (the test suite's smoke run, well under a minute), small (the default), bench
# (benchmarks/smartthinker.py). Options given on the command line override them.
PRESETS: dict[str, dict[str, Any]] = {
    "micro": {"num_generations": 4, "prompts_per_step": 2, "max_steps": 2, "max_completion_length": 48,
              "warmup_steps": 4, "eval_problems": 8},
    "small": {},
    "bench": {"max_steps": 60, "warmup_steps": 400, "eval_problems": 200},
}


def settings(preset: str = "small", **overrides: Any) -> GRPOSettings:
    """The preset's settings with ``overrides`` (None values are ignored) applied, validated."""
    if preset not in GRPO_PRESETS:
        raise unknown_name("preset", preset, GRPO_PRESETS)
    values = {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}
    unknown = sorted(set(values) - set(GRPOSettings.__dataclass_fields__))
    if unknown:
        raise InputError(f"unknown GRPO setting(s): {', '.join(unknown)}")
    s = replace(GRPOSettings(), preset=preset, **values)
    validate(s)
    return s


def validate(s: GRPOSettings) -> None:
    from mlx26.core.smartthinker.data import check_kinds
    from mlx26.core.smartthinker.rewards import check_params

    if s.length_reward not in LENGTH_REWARDS:
        raise unknown_name("length reward", s.length_reward, LENGTH_REWARDS)
    if s.data not in DATASETS:
        raise unknown_name("dataset", s.data, DATASETS)
    check_params(s.length_reward, s.target_length, s.coef)
    check_kinds(s.kinds)
    from mlx26.core.zoo.registry import model_kind

    model_kind(s.model)  # an unknown zoo name or a folder without config.json fails here (exit 2)
    if s.num_generations < 2:
        raise InputError(f"--num-generations must be ≥ 2 (GRPO compares responses within a group), "
                         f"got {s.num_generations}.")
    for name, value in (("--max-steps", s.max_steps), ("--warmup-steps", s.warmup_steps),
                        ("--eval-problems", s.eval_problems)):
        if value < 0:
            raise InputError(f"{name} must be ≥ 0, got {value}.")
    for name, value in (("--prompts-per-step", s.prompts_per_step),
                        ("--max-completion-length", s.max_completion_length)):
        if value < 1:
            raise InputError(f"{name} must be ≥ 1, got {value}.")
    for name, rate in (("--learning-rate", s.learning_rate), ("--temperature", s.temperature),
                       ("--warmup-lr", s.warmup_lr)):
        if not (math.isfinite(rate) and rate > 0):
            raise InputError(f"{name} must be a positive number, got {rate}.")
    if not (math.isfinite(s.beta) and s.beta >= 0):
        raise InputError(f"--beta must be ≥ 0, got {s.beta}.")


def check_single_process() -> None:
    """Refuse a launch whose prompt groups could be split across processes (SmartThinker needs whole groups)."""
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if world > 1:
        raise InputError(f"train grpo runs in one process (WORLD_SIZE={world}): with several, TRL may place "
                         "a prompt's generations in different processes and SmartThinker needs the whole group.",
                         hint="launch it without torchrun/accelerate multi-process")


def load_trl() -> Any:
    """TRL's GRPOTrainer and GRPOConfig, or BackendMissing (exit 3) with the pip line."""
    try:
        import trl
    except ImportError as exc:
        raise BackendMissing(f"train grpo needs TRL, which is not installed ({exc}).",
                             hint="pip install 'mlx26[grpo]'") from exc
    try:
        from trl import GRPOConfig, GRPOTrainer
    except ImportError as exc:
        raise BackendMissing(f"this TRL ({getattr(trl, '__version__', '?')}) has no GRPOTrainer.",
                             hint="pip install 'mlx26[grpo]'") from exc
    return GRPOConfig, GRPOTrainer


class LengthReward:
    """A TRL reward function: correctness from the ``answer`` column, length = completion token count.

    Called once per generation batch with every completion of the batch; regroups them by the
    ``group`` column, checks each group holds exactly G completions, scores each group with the
    chosen length reward, and logs α, l_opt, accuracy and length through TRL's ``log_metric``.
    """

    def __init__(self, method: str, num_generations: int, *, target: float | None = None,
                 coef: float | None = None):
        from mlx26.core.smartthinker.rewards import check_params

        check_params(method, target, coef)
        self.method, self.g, self.target, self.coef = method, num_generations, target, coef
        self.__name__ = f"length_{method.replace('-', '_')}"

    def __call__(self, prompts: list, completions: list, completion_ids: list, answer: list, group: list,
                 log_metric: Callable[[str, float], None] | None = None, **_: Any) -> list[float]:
        from mlx26.core.smartthinker.data import is_correct
        from mlx26.core.smartthinker.rewards import group_reward

        members: dict[Any, list[int]] = {}
        for i, gid in enumerate(group):
            members.setdefault(gid, []).append(i)
        bad = {gid: len(idx) for gid, idx in members.items() if len(idx) != self.g}
        if bad:
            raise RunFailure(f"a prompt group reached the reward with {next(iter(bad.values()))} completions "
                             f"instead of {self.g} (group {next(iter(bad))!r}); SmartThinker needs whole groups.",
                             hint="run on one process with a batch that is a multiple of --num-generations")
        lengths = [float(max(1, len(ids))) for ids in completion_ids]
        right = [is_correct(c if isinstance(c, str) else c[-1]["content"], a)
                 for c, a in zip(completions, answer, strict=True)]
        rewards = [0.0] * len(completions)
        alphas, l_opts = [], []
        for idx in members.values():
            res = group_reward(self.method, [lengths[i] for i in idx], [right[i] for i in idx],
                               target=self.target, coef=self.coef)
            for i, r in zip(idx, res.rewards, strict=True):
                rewards[i] = r
            if res.alpha is not None and self.method == "smartthinker":
                n_right = sum(right[i] for i in idx)
                # α of mixed groups where some correct response is penalised; with every penalty 0 the
                # formula gives (1 - acc) / 1e-6, which scales nothing and would swamp the mean.
                if 0 < n_right < len(idx) and res.penalties and max(res.penalties) > 0:
                    alphas.append(res.alpha)
            if res.l_opt is not None:
                l_opts.append(res.l_opt)
        if log_metric is not None:
            log_metric("accuracy", sum(right) / len(right))
            log_metric("length", sum(lengths) / len(lengths))
            log_metric("mixed_groups", sum(0 < sum(right[i] for i in idx) < len(idx)
                                           for idx in members.values()) / len(members))
            if alphas:
                log_metric("alpha", sum(alphas) / len(alphas))
            if l_opts:
                log_metric("l_opt", sum(l_opts) / len(l_opts))
        return rewards


def prompt_rows(s: GRPOSettings) -> list[dict[str, Any]]:
    from mlx26.core.smartthinker.data import problems, prompt_text

    n = max(1, s.max_steps * s.prompts_per_step)
    return [{"prompt": prompt_text(p), "answer": p.answer, "group": f"rl-{i}"}
            for i, p in problems(n, seed=s.seed, split="rl", kinds=s.kinds)]


def eval_rows(s: GRPOSettings) -> list[dict[str, Any]]:
    from mlx26.core.smartthinker.data import records

    return list(records(s.eval_problems, seed=s.seed, split="test", kinds=s.kinds))


def _quiet_libraries() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    warnings.filterwarnings("ignore", module=r"(trl|transformers|accelerate|torch)(\.|$)")


def _evaluate(model: Any, tokenizer: Any, rows: list, s: GRPOSettings, when: str) -> list[dict[str, Any]]:
    from mlx26.core.smartthinker.evaluate import evaluate

    if not rows:
        return []
    return [{"phase": "eval", "when": when, **evaluate(model, tokenizer, rows, max_new_tokens=s.max_completion_length,
                                                       greedy=greedy, seed=s.seed)}
            for greedy in (True, False)]


def prepare_out(out: str, force: bool) -> Path:
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise InputError(f"--out {out} exists and is not a folder.")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise InputError(f"--out {out} is not empty.", hint="pass --force to overwrite, or choose another folder")
    path.mkdir(parents=True, exist_ok=True)
    return path


def train(s: GRPOSettings, sink: Sink, *, force: bool = False) -> dict[str, Any]:
    """Warm up, evaluate, train GRPO, evaluate again; every record goes to ``sink`` and metrics.jsonl."""
    GRPOConfig, GRPOTrainer = load_trl()
    check_single_process()
    import torch
    from mlx26.core.common.seeding import seed_everything
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.smartthinker.warmup import WarmupConfig, sft
    from mlx26.core.zoo import load_model, load_tokenizer

    out = prepare_out(s.out, force)
    _quiet_libraries()
    apply_torch_threads(torch)
    seed_everything(s.seed)
    (out / "config.json").write_text(json.dumps(asdict(s), indent=2) + "\n", encoding="utf-8")
    log = (out / "metrics.jsonl").open("w", encoding="utf-8")

    def emit(record: dict[str, Any]) -> None:
        record = {"length_reward": s.length_reward, **record}
        log.write(json.dumps(record, default=str) + "\n")
        log.flush()
        sink(record)

    try:
        model, tokenizer = load_model(s.model), load_tokenizer(s.model)
        for rec in sft(model, tokenizer, WarmupConfig(steps=s.warmup_steps, batch_size=s.warmup_batch_size,
                                                      lr=s.warmup_lr, seed=s.seed, kinds=s.kinds)):
            emit(rec)
        if s.warmup_steps:
            model.save_pretrained(out / "warmup")
            tokenizer.save_pretrained(out / "warmup")
        rows = eval_rows(s)
        before = _evaluate(model, tokenizer, rows, s, "before")
        for rec in before:
            emit(rec)
        after = before
        if s.max_steps:
            trainer = _trainer(GRPOConfig, GRPOTrainer, model, tokenizer, s, emit, out)
            try:
                trainer.train()
            except RunFailure:
                raise
            except (ValueError, RuntimeError) as exc:  # TRL's own checks (batch sizes, …) stop the run
                raise RunFailure(f"GRPO training failed: {' '.join(str(exc).split())[:300]}") from exc
            model = trainer.model
            model.eval()
            after = _evaluate(model, tokenizer, rows, s, "after")
            for rec in after:
                emit(rec)
        model.save_pretrained(out / "model")
        tokenizer.save_pretrained(out / "model")
    finally:
        log.close()
    summary = {"length_reward": s.length_reward, "model": s.model, "seed": s.seed, "out": str(out),
               "warmup_steps": s.warmup_steps, "grpo_steps": s.max_steps, "num_generations": s.num_generations,
               "data": "synthetic arithmetic (mlx26 zoo generator)",
               "before": {r["decode"]: {k: r[k] for k in ("accuracy", "mean_length")} for r in before},
               "after": {r["decode"]: {k: r[k] for k in ("accuracy", "mean_length")} for r in after}}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def _trainer(GRPOConfig: Any, GRPOTrainer: Any, model: Any, tokenizer: Any, s: GRPOSettings, emit: Sink,
             out: Path) -> Any:
    from datasets import Dataset
    from transformers import PrinterCallback, ProgressCallback, TrainerCallback

    class Stream(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "train_runtime" not in logs:
                emit({"phase": "grpo", "step": state.global_step, **{k: v for k, v in logs.items()}})

    config = GRPOConfig(
        output_dir=str(out / "trl"), report_to=[], save_strategy="no", logging_steps=1, use_cpu=True,
        bf16=False, fp16=False, max_steps=s.max_steps, learning_rate=s.learning_rate, seed=s.seed,
        data_seed=s.seed, per_device_train_batch_size=s.prompts_per_step * s.num_generations,
        gradient_accumulation_steps=1, num_generations=s.num_generations,
        max_completion_length=s.max_completion_length, temperature=s.temperature, beta=s.beta,
        dataloader_num_workers=0, disable_tqdm=True, lr_scheduler_type="constant", warmup_steps=0,
        **s.extra)
    reward = LengthReward(s.length_reward, s.num_generations, target=s.target_length, coef=s.coef)
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=config,
                          train_dataset=Dataset.from_list(prompt_rows(s)), processing_class=tokenizer,
                          callbacks=[Stream()])
    for printer in (PrinterCallback, ProgressCallback):  # stdout carries our records only
        trainer.remove_callback(printer)
    return trainer
