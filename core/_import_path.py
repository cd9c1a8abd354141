"""Keep a checkout's top-level folders from shadowing PyPI packages of the same name.

The repository's ``kernels/`` folder installs as ``mlx26.kernels``, but a process started in the
repository root (``python -m mlx26.cli.main``, pytest, ``make`` recipes) has that root on ``sys.path``
first, where ``kernels/`` also answers ``import kernels`` — the name of the Hugging Face package that
transformers (≥ 5) imports at load time. The import then fails inside transformers. This moves such a
root behind every other entry, so installed packages win and ``tests`` stays importable. Standard library
only; runs once, when ``mlx26.core`` is first imported.
"""

from __future__ import annotations

import os
import sys


def _is_checkout_root(entry: str) -> bool:
    root = os.path.abspath(entry or os.curdir)
    return (os.path.isfile(os.path.join(root, "kernels", "__init__.py"))
            and os.path.isfile(os.path.join(root, "core", "_version.py"))
            and os.path.isfile(os.path.join(root, "setup.py")))


def demote_checkout_root() -> list[str]:
    """Move checkout roots to the end of ``sys.path``; returns the entries moved."""
    moved = [p for p in sys.path if _is_checkout_root(p)]
    for p in moved:
        sys.path.remove(p)
    sys.path.extend(moved)
    return moved
