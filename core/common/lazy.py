"""Lazy package exports: a method package's public names import their module on first use.

A method package's ``__init__`` lists ``{submodule: names}`` instead of importing every module::

    __all__ = lazy_exports(__name__, {"calibration": ("calibrate", "verify"), "sampling": ("sample",)})

so importing the package (which ``import mlx26.core.<method>.spec`` does first) runs no numpy,
torch or science code, and ``mlx26 --help`` stays fast. ``from mlx26.core.<method> import X`` and
``package.X`` work as before: the first access imports the submodule (PEP 562 style).

A name that is also a submodule's name (``simplify.bench``, the function in ``bench.py``) keeps
meaning the exported object, as with an eager ``from .bench import bench`` in ``__init__``: when
the import system binds the submodule onto the package, that binding is skipped for such names.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterable, Mapping


class LazyPackage(types.ModuleType):
    """The class a package module gets from :func:`lazy_exports`."""

    __lazy_exports__: dict[str, str]

    def __getattr__(self, name: str):  # called only when ordinary lookup fails
        sub = self.__dict__.get("__lazy_exports__", {}).get(name)
        if sub is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{self.__name__}.{sub}"), name)
        types.ModuleType.__setattr__(self, name, value)  # cached: later lookups are ordinary
        return value

    def __setattr__(self, name: str, value) -> None:
        if (isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}"
                and name in self.__dict__.get("__lazy_exports__", {})):
            return  # the submodule `name` is being bound; `name` means the object exported under it
        types.ModuleType.__setattr__(self, name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__.get("__lazy_exports__", {})))


def lazy_exports(package: str, exports: Mapping[str, Iterable[str]]) -> list[str]:
    """Make ``package`` (a ``__name__``) import ``exports[submodule]`` names on first use; returns ``__all__``."""
    names: dict[str, str] = {}
    for sub, subnames in exports.items():
        for name in subnames:
            if name in names:
                raise ImportError(f"{package}: {name!r} is exported by both {names[name]!r} and {sub!r}")
            names[name] = sub
    module = sys.modules[package]
    module.__class__ = LazyPackage
    types.ModuleType.__setattr__(module, "__lazy_exports__", names)
    return sorted(names)
