"""Typed errors shared by every core and the CLI (no paper).

A core states *why* it stopped by the class it raises; the CLI maps only these classes (and typer's
own usage errors) to a one-line message and an exit code:

- ``InputError`` — bad user input: an option out of range, a malformed or unreadable file (exit 2).
- ``RunFailure`` — a failure found while running: a solver that did not converge, bad data met
  mid-run, a child process that died (exit 1).
- ``BackendMissing`` — a requested backend, device or optional extra is absent (exit 3).

Anything else that escapes a command — a plain ``ValueError`` from numpy, a ``RuntimeError`` from
torch — is a bug, and the CLI reports it as an internal error instead of blaming the user's input.
``InputError`` subclasses ``ValueError`` (and ``RunFailure`` ``RuntimeError``) so code that catches
the built-in class keeps working.

Only the standard library is imported: this module is on the ``--help`` path.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_BACKEND = 3


class Mlx26Error(Exception):
    """An error with a one-line message, an optional hint and an exit code."""

    exit_code = EXIT_RUNTIME

    def __init__(self, message: str, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = str(message)
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(Mlx26Error, ValueError):
    """Bad option, unreadable or malformed input, value out of range (exit 2)."""

    exit_code = EXIT_USAGE


class RunFailure(Mlx26Error, RuntimeError):
    """Bad data found while running, a solver that did not converge, a failed subprocess (exit 1)."""

    exit_code = EXIT_RUNTIME


class BackendMissing(Mlx26Error):
    """A requested backend, device or optional extra is not installed (exit 3)."""

    exit_code = EXIT_BACKEND


# Words that mean the same across the libraries our users come from (PyTorch, cleanrl, SB3, HF Trainer,
# torchtune), so `--set learning_rate=…` suggests `lr`, not the nearest spelling `learning_starts`.
# Each set is one meaning; the first word is only a label.
SYNONYMS: tuple[frozenset[str], ...] = tuple(frozenset(group) for group in (
    {"lr", "learning_rate", "learningrate", "step_size"},
    {"batch_size", "batch", "bs", "minibatch_size", "mini_batch_size", "per_device_train_batch_size"},
    {"gamma", "discount", "discount_factor"},
    {"steps", "total_steps", "total_timesteps", "max_steps", "timesteps"},  # not num_steps: PPO rollout length
    {"epochs", "num_epochs", "n_epochs", "num_train_epochs", "update_epochs"},
    {"hidden", "hidden_size", "hidden_dim", "hidden_dims", "hidden_sizes", "width", "net_arch", "units"},
    {"l2", "weight_decay", "wd"},
    {"max_grad_norm", "grad_clip", "clip_grad_norm", "max_norm", "gradient_clip", "clip_norm", "grad_norm_clip"},
    {"buffer_size", "replay_size", "replay_buffer_size", "memory_size"},
    {"seed", "random_seed", "rng_seed"},
    {"tau", "polyak", "soft_update", "target_smoothing"},
    {"layers", "num_layers", "n_layers", "depth", "n_layer"},
    {"heads", "num_heads", "n_heads", "n_head", "num_attention_heads"},
    {"warmup", "warmup_steps", "num_warmup_steps"},
    {"temperature", "temp"},
    {"rank", "r", "lora_rank", "lora_r"},
    {"dropout", "dropout_rate", "drop_rate", "p_dropout"},
    {"eval_episodes", "n_eval_episodes", "num_eval_episodes"},
    {"clip_coef", "clip_range", "clip_ratio", "clip_eps", "epsilon_clip"},
    {"ent_coef", "entropy_coef", "entropy_coefficient", "entropy_weight"},
    {"vf_coef", "value_coef", "value_loss_coef"},
    {"gae_lambda", "lam", "lambda_gae", "gae_lam"},
))


def _same_meaning(name: str, choices: list[str]) -> str | None:
    key = name.strip().lower().replace("-", "_")
    for group in SYNONYMS:
        if key in group:
            for choice in choices:
                if choice.lower().replace("-", "_") in group and choice.lower().replace("-", "_") != key:
                    return choice
    return None


def did_you_mean(name: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """``"Did you mean 'x'?"`` for a choice with the same meaning (``learning_rate`` → ``lr``), else the
    closest spelling, or None when nothing is close."""
    names = [str(c) for c in choices]
    alias = _same_meaning(str(name), names)
    if alias:
        return f"Did you mean '{alias}'?"
    close = difflib.get_close_matches(str(name), names, n=1, cutoff=cutoff)
    return f"Did you mean '{close[0]}'?" if close else None


def unknown_name(kind: str, name: str, choices: Iterable[str], hint: str | None = None, *,
                 cutoff: float = 0.6, shown: int = 24, suffix: str = "") -> InputError:
    """``Unknown <kind> 'name'. Did you mean …?`` with the valid names (or ``hint``) as the hint.

    ``suffix`` is appended to the suggestion (``':'`` for backend specs such as ``scripted:``);
    at most ``shown`` names are listed, so a registry of hundreds stays one line.
    """
    names = [str(c) for c in choices]
    suggestion = did_you_mean(name, names, cutoff)
    if suggestion and suffix:
        suggestion = suggestion.replace("'?", f"{suffix}'?")
    message = f"Unknown {kind} '{name}'." + (f" {suggestion}" if suggestion else "")
    listed = names if len(names) <= shown else [*names[:shown], "…"]
    return InputError(message, hint=hint or ("choose one of: " + ", ".join(listed)))
