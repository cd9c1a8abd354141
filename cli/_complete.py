"""Shell completion of names: zoo models, RL algorithms, DP mechanisms (typer's ``autocompletion=``).

``mlx26 --install-completion`` (bash, zsh, fish, PowerShell) installs typer's script, which calls
``mlx26`` with ``_MLX26_COMPLETE`` set; these functions then list the names that start with what
was typed. Each imports only standard-library spec modules inside the function, so completing
stays as fast as ``mlx26 --help``.
"""

from __future__ import annotations

from collections.abc import Iterable


def _starting(names: Iterable[str], incomplete: str) -> list[str]:
    return [name for name in names if name.startswith(incomplete)]


def zoo_models(incomplete: str) -> list[str]:
    """Shipped and random-init zoo models (a folder path is completed by the shell as usual)."""
    from mlx26.core.zoo.registry import random_init_names, shipped_names

    return _starting([*shipped_names(), *random_init_names()], incomplete)


def zoo_presets(incomplete: str) -> list[str]:
    from mlx26.core.zoo.presets import PRESETS

    return _starting(sorted(PRESETS), incomplete)


def rl_algorithms(incomplete: str) -> list[str]:
    from mlx26.core.rl.spec import ALGORITHMS

    return _starting(ALGORITHMS, incomplete)


def dp_mechanisms(incomplete: str) -> list[str]:
    from mlx26.core.dp_mix.spec import MECHANISMS

    return _starting(MECHANISMS, incomplete)


def dp_mixtures(incomplete: str) -> list[str]:
    from mlx26.core.dp_mix.spec import MIXTURES

    return _starting(MIXTURES, incomplete)
