"""mlx26 science cores: plain functions and dataclasses, no CLI imports."""

from mlx26.core._import_path import demote_checkout_root
from mlx26.core._version import __version__

demote_checkout_root()  # before anything imports transformers (see core/_import_path.py)

__all__ = ["__version__"]
