"""Options and loaders shared by the ``mlx26 spike`` commands (kept out of cli/spike.py to keep it thin)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli._errors import InputError, require, unknown_name
from mlx26.cli._io import check_output
from mlx26.core.spike.spec import (
    ARCH_DEFAULTS,
    ARCHS,
    ATTNS,
    GLUE_TASKS,
    NEURONS,
    NORMS,
    RUNTIMES,
    SURROGATES,
    SYNTHETIC_TASKS,
    TASKS,
)

TaskOpt = Annotated[str, typer.Option("--task", help=f"{' | '.join(TASKS)} (GLUE ones read --train/--test TSVs).", metavar="TEXT")]
ModelOpt = Annotated[str, typer.Option("--model", "-m", help="Model folder from `spike train --out`.", metavar="DIR")]
TestOpt = Annotated[str | None, typer.Option("--test", help="GLUE TSV to evaluate on (GLUE tasks).", metavar="TSV")]
NTestOpt = Annotated[int, typer.Option("--n-test", help="Held-out examples of a built-in task.", min=1, max=100_000, metavar="N")]
ForceOpt = Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Replace an existing -o/--metrics file, ONNX file or --out "
                                        "model folder (never a folder that is not a spike model).")]
ForceTrainOpt = Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Replace an existing -o, --metrics "
                                             "or --plot file or --out model folder (never a folder that is not a "
                                             "spike model).")]
ForceExportOpt = Annotated[bool, typer.Option("--force", envvar="MLX26_FORCE", help="Replace an existing --onnx "
                                              "or -o file.")]
MaxLenOpt = Annotated[int, typer.Option("--max-len", help="Tokens per sequence; longer ones are truncated "
                                        "(the count is reported).", min=1, max=512, metavar="N")]
EnergyTableOpt = Annotated[str | None, typer.Option("--energy-table", help="JSON/YAML {op: pJ} overriding the "
                                                    "45 nm defaults (see `spike energy --table`).", metavar="FILE")]


def start(output: str | None, force: bool, *files: str | None) -> None:
    """Check output paths before any work, and that torch is installed."""
    check_output(output, force)
    for f in files:
        if f:
            check_output(f, force)
    require("torch", "torch")


def check_folder(out: str, force: bool) -> None:
    """An --out folder may be new, empty, or (with --force) a spike model folder: --force replaces the whole
    folder, so it is refused for any folder holding anything but a model's files."""
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise InputError(f"{out} exists and is not a folder")
    if not p.is_dir() or not any(p.iterdir()):
        return
    if p.resolve() == Path.cwd().resolve():
        raise InputError(f"--out {out} is the current folder", "name a new folder, e.g. --out spk")
    own = {"config.json", "weights.pt", "model.onnx"}
    foreign = sorted(x.name for x in p.iterdir() if x.name not in own)
    if foreign:
        raise InputError(f"{out} holds files that are not a spike model's ({', '.join(foreign[:3])}"
                         f"{', …' if len(foreign) > 3 else ''}); refusing to replace it", "name a new folder for --out")
    if not force:
        raise InputError(f"{out} holds a spike model", "pass --force to replace it")


def choice(kind: str, value: str, choices) -> str:
    if value not in choices:
        raise unknown_name(kind, value, choices)
    return value


MAX_T = 64


def model_options(arch: str, attn: str | None, das: bool | None, T: int | None, neuron: str | None,
                  theta: float | None, surrogate: str | None, norm: str, ternary: bool) -> dict:
    """The SpikeConfig options for ``--arch`` with ``--attn``/``--das`` overriding its defaults; spiking options
    given to the ANN are refused rather than silently recorded."""
    choice("arch", arch, ARCHS)
    default_attn, default_das = ARCH_DEFAULTS[arch]
    attn = choice("attention", attn or default_attn, ATTNS)
    if arch == "ann":
        given = [name for name, v in (("--T", T), ("--neuron", neuron), ("--theta", theta),
                                      ("--surrogate", surrogate)) if v is not None] + (["--ternary"] if ternary else [])
        if given:
            raise InputError(f"{', '.join(given)} set(s) spiking neurons; --arch ann has none", "drop them, or use "
                             "--arch snn|spikinglm")
    T = 4 if T is None else T
    neuron, surrogate = choice("neuron", neuron or "if", NEURONS), choice("surrogate", surrogate or "atan", SURROGATES)
    theta = 1.0 if theta is None else theta
    choice("normalisation", norm, NORMS)
    if T < 1:
        raise InputError(f"--T must be ≥ 1, got {T}")
    if T > MAX_T:
        raise InputError(f"--T {T} is more time steps than this CPU implementation takes (≤ {MAX_T})")
    if not theta > 0 or theta == float("inf"):
        raise InputError(f"--theta must be a finite number > 0, got {theta}")
    return {"arch": arch, "attn": attn, "das": default_das if das is None else das, "T": 1 if arch == "ann" else T,
            "neuron": neuron, "theta": theta, "surrogate": surrogate, "norm": norm, "ternary": ternary}


def require_text(task: str) -> None:
    """Every task but the synthetic ones tokenizes text with the zoo's shipped tokenizer (transformers)."""
    if task not in SYNTHETIC_TASKS:
        require("transformers", "spike")


def test_data(record: dict, test: str | None, n_test: int | None, max_len: int | None = None):
    """The held-out data of a trained model: its GLUE ``--test`` TSV, or its built-in task regenerated."""
    from mlx26.core.spike import tasks

    task = record.get("task", "salient")
    require_text(task)
    cfg = record["config"]
    if task in GLUE_TASKS:
        if test is None:
            test = record.get("test_path")
            if test is None:
                raise InputError(f"the model was trained on --task {task}", "pass --test FILE.tsv")
            if not Path(test).is_file():
                raise InputError(f"the model's test file {test} is gone", "pass --test FILE.tsv")
        return tasks.glue(task, test, max_len or cfg["max_len"])
    if test is not None:
        raise InputError(f"the model was trained on the built-in task {task}, which reads no --test file")
    data = tasks.builtin(task, "heldout", n_test or record.get("n_test", 1000), record.get("seed", 0),
                         max_len or cfg["max_len"])
    if data.vocab != cfg.get("vocab", data.vocab):  # the task's definition changed since (salient: 6 → 16 levels)
        raise InputError(f"the model was trained on an earlier version of --task {task} (vocabulary {cfg['vocab']}, "
                         f"the task now has {data.vocab})", f"retrain it: mlx26 spike train --task {task} …")
    return data


def runtime(value: str) -> str:
    return choice("runtime", value, RUNTIMES)
