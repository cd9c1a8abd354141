"""mlx26 science cores: plain functions and dataclasses, no CLI imports."""

from mlx26.core._version import __version__

__all__ = ["__version__"]
