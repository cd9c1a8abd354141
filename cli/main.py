"""The ``mlx26`` typer app: every command is registered here, from one explicit list.

Command modules import only the standard library, typer, ``mlx26.cli._*`` and the
stdlib-only ``mlx26.core.<method>.spec`` choice lists at module level (numpy, torch and the
cores load inside the command functions; tests/foundation/test_layering.py checks it), so
building the whole app for ``mlx26 --help`` stays fast. ``main(argv)`` runs the app and maps every
failure to one line on stderr and an exit code (see ``mlx26.cli._errors``).
"""

from __future__ import annotations

import importlib
import sys
from typing import Annotated

import typer
from mlx26.cli._errors import InputError, did_you_mean, handle
from mlx26.cli._io import reset_run_state
from mlx26.core._version import __version__

# (command name, "module:function") for single commands; (group name, "module:app") for groups.
# Order is the order shown by --help.
COMMANDS: list[tuple[str, str]] = [
    ("info", "mlx26.cli.info:info"),
    ("quantize-moe", "mlx26.cli.quantize_moe:quantize_moe"),
    ("profile-memory", "mlx26.cli.profile_memory:profile_memory"),
    ("claims", "mlx26.cli.claims:claims"),
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


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="mlx26",
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

    for name, target in COMMANDS:
        app.command(name)(_resolve(target))
    for name, target, help_text in GROUPS:
        app.add_typer(_resolve(target), name=name, help=help_text)
    if TRAIN_COMMANDS:
        train = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Training entry points.")
        for name, target in TRAIN_COMMANDS:
            train.command(name)(_resolve(target))
        app.add_typer(train, name="train")
    return app


app = build_app()


def command_names() -> list[str]:
    return [n for n, _ in COMMANDS] + [n for n, _, _ in GROUPS] + (["train"] if TRAIN_COMMANDS else [])


def subcommand_names(group: str) -> tuple[str, ...]:
    """The subcommand (and sub-group) names registered on the typer app of ``group``."""
    sub = _resolve(next(target for name, target, _ in GROUPS if name == group))
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
        args = _with_default_subcommand(sys.argv[1:] if argv is None else list(argv))
        rc = app(args=args, prog_name="mlx26", standalone_mode=False)
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
