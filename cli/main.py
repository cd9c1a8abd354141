"""The ``mlx26`` typer app: every command is registered here, from one explicit list.

Command modules import only the standard library, typer, ``mlx26.cli._*`` and the
stdlib-only ``mlx26.core.<method>.spec`` choice lists at module level (numpy, torch and the
cores load inside the command functions; tests/foundation/test_layering.py checks it), so
building the whole app for ``mlx26 --help`` stays fast. ``main(argv)`` runs the app and maps every
failure to one line on stderr and an exit code (see ``mlx26.cli._errors``).
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterator, MutableMapping
from functools import partial
from typing import Annotated

import typer
import typer._click as click
from mlx26.cli import _typer_compat  # noqa: F401  (plain argument metavars in help)
from mlx26.cli._errors import InputError, did_you_mean, handle
from mlx26.cli._io import reset_run_state
from mlx26.core._version import __version__
from typer._click.utils import make_default_short_help
from typer.core import TyperGroup

# (command name, "module:function") for single commands; (group name, "module:app") for groups.
# Order is the order shown by --help.
# The one-line help of a single command is its docstring's first line, written here too so that
# `mlx26 --help` lists every command without importing any (tests/foundation/test_main.py checks
# that both agree).
COMMANDS: list[tuple[str, str, str]] = [
    ("info", "mlx26.cli.info:info",
     "Show the version, Python, which extras and backends are present, and the data directory."),
    ("quantize-moe", "mlx26.cli.quantize_moe:quantize_moe",
     "Quantize MoE experts (RTN/GPTQ/HQQ) and compensate the error with LQER or TileQ factors."),
    ("profile-memory", "mlx26.cli.profile_memory:profile_memory",
     "Time prepare / relevancy / retrieval / apply per decode step on a real model, with a roofline."),
    ("claims", "mlx26.cli.claims:claims",
     "Every paper claim, the figure that tests it, the data, and whether it reproduced."),
]
GROUPS: list[tuple[str, str, str]] = [
    ("io", "mlx26.cli.io_convert:app", "Convert records between JSON, JSONL, CSV and TSV."),
    ("simplify", "mlx26.cli.simplify:app", "Rule-based simplification of symbolic expressions (SimpliPy-style)."),
    ("table-decompose", "mlx26.cli.table_decompose:app", "Column/row header trees and cell lineage of complex tables (OHD, Cao et al.)."),
    ("dp-mix", "mlx26.cli.dp_mix:app", "Gaussian-mixture noise for (ε, δ)-DP (Liu, Selvi & Wiesemann, ICML 2026)."),
    ("rl", "mlx26.cli.rl:app", "Offline RL data (OGBench, D4RL, Minari), eval, sweeps, plots."),
    ("zoo", "mlx26.cli.zoo:app", "Small language models and corpora that mlx26 trains and ships itself."),
    ("llm", "mlx26.cli.llm:app", "LLM backends: chat, an OpenAI-compatible server, token and cost ledgers."),
    ("rpa-distill", "mlx26.cli.rpa_distill:app", "Distil agent trajectories into robust RPA functions (AutoRPA reconstruction)."),
    ("select-batch", "mlx26.cli.select_batch:app", "PartitionSel minibatch selection under per-domain budgets (Agrawal et al.)."),
    ("rationality", "mlx26.cli.rationality:app", "Exact rational risk of RL agents on toy-text MDPs (Qian, Storkey & He)."),
    ("score-code", "mlx26.cli.score_code:app", "Step-level security scores along code: detection and ranking (SecCodePRM, Yu et al.)."),
    ("judge-audit", "mlx26.cli.judge_audit:app", "LLM-judge reliability audits: metrics, ASR, concordance, ReliableBench, stress test."),
    ("reward", "mlx26.cli.reward_length:app", "Length rewards of GRPO prompt groups: SmartThinker and baselines."),
    ("data", "mlx26.cli.data_arith:app", "Task data for training commands: synthetic arithmetic with worked chains."),
    ("fmri", "mlx26.cli.fmri:app", "Atlas-free fMRI tokenisation with dynamic patching and a tiny MAE (Omni-fMRI)."),
    ("wifi-pose", "mlx26.cli.wifi_pose:app", "WiFi CSI 3D multi-person pose: dual-stream selective SSMs, ONNX (WiFi-Mamba reconstruction)."),
    ("spec-bench", "mlx26.cli.spec_bench:app", "Speculative-decoding benchmark across domains and concurrency (SPEED-Bench)."),
    ("sr", "mlx26.cli.sr:app", "Flash-ANSR amortised symbolic regression on the simplify engine (Saegert & Köthe)."),
    ("optimize-prompt", "mlx26.cli.optimize_prompt:app", "MR.PEA label-free prompt optimisation by meta-reasoning, with a hard budget."),
    ("spike", "mlx26.cli.spike:app", "Spiking transformer classifiers: DAS, Spike2Max, energy, ONNX (SpikingLM reconstruction)."),
    ("vuln-games", "mlx26.cli.vuln_games:app", "Vulnerability games: RL agents finding loopholes, persistence, transcript audits."),
]
# Groups whose bare form runs a default subcommand: `mlx26 simplify FILE` = `mlx26 simplify run FILE`.
# A group cannot take a positional argument before its subcommand name, so argv is rewritten; the
# names that are subcommands are read from the group's typer app (subcommand_names), never copied.
DEFAULT_SUBCOMMANDS: dict[str, str] = {
    "simplify": "run",
    "table-decompose": "run",
    "select-batch": "run",
    "score-code": "score",
}

# Nested training entry points (`mlx26 train rl`, `mlx26 train grpo`) register here.
TRAIN_COMMANDS: list[tuple[str, str]] = [
    ("rl", "mlx26.cli.train_rl:train_rl"),
    ("grpo", "mlx26.cli.train_grpo:train_grpo"),
]


def _resolve(target: str):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _version(value: bool) -> None:
    if value:
        print(f"mlx26 {__version__}")
        raise typer.Exit()


def _plain_typer(**kwargs) -> typer.Typer:
    return typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False, **kwargs)


def _build_single(name: str, target: str) -> click.Command:
    holder = _plain_typer()
    holder.command(name)(_resolve(target))
    command = typer.main.get_command(holder)
    command.name = name
    return command


def _build_group(name: str, sub: typer.Typer, help_text: str) -> click.Command:
    holder = _plain_typer()
    holder.add_typer(sub, name=name, help=help_text)
    holder.callback()(lambda: None)  # a callback makes typer return the holder group, whose one child we take
    group = typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]
    _describe_group(name, group)
    return group


def _first_example(command: click.Command, runnable: bool = True) -> str | None:
    help_text = command.help or ""
    if "Examples:" not in help_text:
        return None
    lines = [line.strip() for line in help_text.split("Examples:", 1)[1].split("\n\n", 1)[0].splitlines()]
    commands = [line for line in lines if line.startswith(("mlx26 ", "echo ", "printf ", "cat ")) or "| mlx26 " in line]
    return next((line for line in commands if self_contained(line) or not runnable), None)


def self_contained(example: str) -> bool:
    """An example that runs in an empty folder: it names no user file (data.csv, toy.npz) and globs no
    user folder (runs/*). The help-examples test runs exactly these (tests/foundation/test_docs_and_recipes.py)."""
    return bool(example) and not re.search(r"(^|\s)[\w/.-]+\.(csv|tsv|json|jsonl|txt|yaml|npz)\b", example) \
        and not re.search(r"(^|\s)[\w.-]+/[\w/.-]*\*", example)


def _describe_group(name: str, group: click.Command, most: int = 4) -> None:
    """Group help names its default subcommand and ends with examples taken from its subcommands' own
    (issue 31), so they are exactly the lines the help-examples test runs and cannot drift."""
    commands: dict[str, click.Command] = getattr(group, "commands", {})
    for sub_name, sub in commands.items():
        if getattr(sub, "commands", None):
            _describe_group(f"{name} {sub_name}", sub, most)
    default = DEFAULT_SUBCOMMANDS.get(name)
    order = ([default] if default in commands else []) + [n for n in commands if n != default]
    examples = [e for e in (_first_example(commands[n]) for n in order) if e][:most]
    if not examples:  # every subcommand's examples name the user's files: show one of those
        examples = [e for e in (_first_example(commands[n], runnable=False) for n in order) if e][:1]
    if default:
        group.help = (f"{group.help}\n\nWithout a subcommand name, `mlx26 {name} ARGS` runs "
                      f"`mlx26 {name} {default} ARGS`.")
    if examples:
        group.epilog = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in examples)


def _build_train() -> typer.Typer:
    train = _plain_typer(no_args_is_help=True, help=TRAIN_HELP)
    for name, target in TRAIN_COMMANDS:
        train.command(name)(_resolve(target))
    return train


TRAIN_HELP = "Training entry points."


class _LazyCommands(MutableMapping):
    """name → click command, built (and its module imported) only when a command is looked up.

    `mlx26 --help` lists names and one-line helps from the tables above; `mlx26 sr …` imports the
    sr command module and no other, so start-up stays near the interpreter's own (issue 31).
    """

    def __init__(self) -> None:
        self._builders: dict[str, Callable[[], click.Command]] = {}
        for name, target, _ in COMMANDS:
            self._builders[name] = partial(_build_single, name, target)
        for name, target, help_text in GROUPS:
            self._builders[name] = partial(lambda n, t, h: _build_group(n, _resolve(t), h), name, target, help_text)
        if TRAIN_COMMANDS:
            self._builders["train"] = lambda: _build_group("train", _build_train(), TRAIN_HELP)
        self._built: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._built:
            self._built[name] = self._builders[name]()
        return self._built[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._built[name] = command
        self._builders.setdefault(name, lambda: command)

    def __delitem__(self, name: str) -> None:
        self._built.pop(name, None)
        del self._builders[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._builders)

    def __len__(self) -> int:
        return len(self._builders)


def short_helps() -> dict[str, str]:
    """Each top-level command's one-line help, without importing any command module."""
    helps = {name: text for name, _, text in COMMANDS}
    helps.update({name: text for name, _, text in GROUPS})
    if TRAIN_COMMANDS:
        helps["train"] = TRAIN_HELP
    return helps


class _LazyRoot(TyperGroup):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.commands = _LazyCommands()

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        helps = short_helps()
        limit = formatter.width - 6 - max(len(name) for name in helps)
        with formatter.section("Commands"):
            formatter.write_dl([(name, make_default_short_help(text, limit)) for name, text in helps.items()])


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="mlx26",
        cls=_LazyRoot,
        help="Methods of 19 ICML 2026 papers as one command-line toolbox.\n\n"
        "Data goes to stdout, everything else to stderr. INPUT may be - for stdin.",
        no_args_is_help=True,
        add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
        rich_markup_mode=None,  # plain help: no rich import on the --help path, stable for docs
        pretty_exceptions_enable=False,
        # A fixed width keeps --help identical on every terminal, so docs/cli-reference.md is stable.
        context_settings={"help_option_names": ["-h", "--help"], "terminal_width": 100,
                          "max_content_width": 100},
    )

    @app.callback()
    def root(
        version: Annotated[bool, typer.Option("--version", help="Show the version and exit.",
                                              is_eager=True, callback=_version)] = False,
    ) -> None:
        """mlx26: methods of 19 ICML 2026 papers as one command-line toolbox."""

    return app


app = build_app()
_root_command: click.Command | None = None


def command_names() -> list[str]:
    return list(short_helps())


def subcommand_names(group: str) -> tuple[str, ...]:
    """The subcommand (and sub-group) names registered on the typer app of ``group``."""
    sub = _build_train() if group == "train" else _resolve(next(target for name, target, _ in GROUPS if name == group))
    names = [c.name or getattr(c.callback, "__name__", "").lower().replace("_", "-") for c in sub.registered_commands]
    names += [g.name or g.typer_instance.info.name for g in sub.registered_groups if g.typer_instance]
    return tuple(n for n in names if isinstance(n, str) and n)


def _with_default_subcommand(args: list[str]) -> list[str]:
    if len(args) >= 2 and args[0] in DEFAULT_SUBCOMMANDS:
        names = subcommand_names(args[0])
        if args[1] not in (*names, "-h", "--help"):
            _refuse_mistyped_subcommand(args[0], args[1], names)
            return [args[0], DEFAULT_SUBCOMMANDS[args[0]], *args[1:]]
    return args


def _refuse_mistyped_subcommand(group: str, word: str, names: tuple[str, ...]) -> None:
    """`mlx26 simplify rnu -` is a typo of `run`, not an input file named 'rnu' (issue 31).

    A bare word close to a subcommand name that is not an existing path is refused with did-you-mean;
    anything else (a path, -, an option, an unrelated word) goes to the default subcommand.
    """
    import os

    if word.startswith("-") or any(c in word for c in "./\\") or os.path.exists(word):
        return  # an option, or something shaped like a path (label.py, ./run): the default subcommand reports it
    suggestion = did_you_mean(word, names)
    if suggestion:
        raise InputError(f"No such command '{word}'. {suggestion}",
                         hint=f"see 'mlx26 {group} --help'; a file named '{word}' does not exist")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI on ``argv`` and return the exit code (never raises, except under MLX26_DEBUG)."""
    reset_run_state()
    try:
        return _run(argv)
    finally:
        reset_run_state()  # -q / --field of this run must not leak into the caller's process (tests, scripts)


def _run(argv: list[str] | None) -> int:
    try:
        args = _with_default_subcommand(sys.argv[1:] if argv is None else list(argv))
        global _root_command
        if _root_command is None:
            _root_command = typer.main.get_command(app)
        rc = _root_command.main(args=args, prog_name="mlx26", standalone_mode=False)
        if rc == 130:  # typer turns Ctrl-C into a silent Exit(130); say it in our one line
            return handle(KeyboardInterrupt())
    except Exception as exc:  # every failure becomes one line + exit code
        return handle(exc, command_names())
    except KeyboardInterrupt as exc:
        return handle(exc)
    return rc if isinstance(rc, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
