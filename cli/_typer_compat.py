"""Plain argument names in help, as our docs and users write them (issue 31: plain metavars).

typer 0.29 renders a required argument as ``{INPUT}`` on the usage line and appends its Python type
(``INPUT <str>``) in the Arguments list, even when the command gave a metavar. Every other CLI our users
know writes ``INPUT`` (required) and ``[INPUT]`` (optional), and a metavar already says what to give.
These two private methods are the only place typer decides that; if a typer release renames them the
patch does nothing and tests/foundation/test_lazy_startup.py::test_argument_metavars_are_plain fails.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument


def _usage_display_name(self: Any) -> str:
    name = self.display_name_raw
    if not self.required:
        name = f"[{name}]"
    return name + ("..." if self.nargs != 1 and not self.display_name_raw.endswith("...") else "")


def _install() -> None:
    if hasattr(TyperArgument, "_usage_display_name"):
        TyperArgument._usage_display_name = _usage_display_name  # type: ignore[method-assign]
    original = getattr(TyperArgument, "display_type_rich", None)
    if original is not None and not getattr(original, "_mlx26_plain", False):
        def display_type_rich(self: Any, ctx: Any) -> str:
            return "" if self.metavar is not None else original(self, ctx=ctx)

        display_type_rich._mlx26_plain = True  # type: ignore[attr-defined]
        TyperArgument.display_type_rich = display_type_rich  # type: ignore[method-assign]


_install()
