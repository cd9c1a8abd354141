"""The AST whitelist every generated (or edited) RPA function must pass before it is executed.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper runs
LLM-written RPA code; we only ever execute code in a tiny language: a docstring, ``TASK =
"…"``, and ``def rpa(api, fields):`` whose body uses ``api.click/type/select/exists``,
``NeedsLLM(slot, reason)``, ``for item in fields["k"]:``, ``if [not] api.exists(…):``, string
constants, ``fields["k"]``, ``+`` and the string methods lower/upper/title/strip. Anything
else (imports, attribute access outside that list, dunders, other names or calls) is rejected
with the line number, and the function runs with no builtins.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from mlx26.core.common.errors import InputError

API_METHODS = frozenset({"click", "type", "select", "exists"})
STR_METHODS = frozenset({"lower", "upper", "title", "strip"})
ALLOWED_NODES = (ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Expr, ast.Call, ast.Name, ast.Load,
                 ast.Store, ast.Constant, ast.Dict, ast.Subscript, ast.Attribute, ast.For, ast.If, ast.UnaryOp,
                 ast.Not, ast.BinOp, ast.Add, ast.Pass, ast.Assign)


class WhitelistError(InputError):
    """Generated code outside the whitelist."""


def _fail(node: ast.AST, why: str) -> WhitelistError:
    return WhitelistError(f"generated code rejected (line {getattr(node, 'lineno', '?')}): {why}.",
                          "only the RPA action API, fields[…], loops over fields and string transforms "
                          "are allowed")


def check(source: str) -> ast.Module:
    """The parsed module if ``source`` is inside the whitelist, else WhitelistError."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise WhitelistError(f"generated code does not parse (line {exc.lineno}): {exc.msg}.") from None
    funcs = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            funcs.append(node)
        elif isinstance(node, ast.Assign):
            if not (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id == "TASK" and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):
                raise _fail(node, "the only module-level assignment allowed is TASK = \"…\"")
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            raise _fail(node, f"{type(node).__name__} at module level")
    if len(funcs) != 1 or funcs[0].name != "rpa":
        raise _fail(tree, "exactly one function, def rpa(api, fields), is required")
    fn = funcs[0]
    if fn.decorator_list or fn.returns or [a.arg for a in fn.args.args] != ["api", "fields"] or (
            fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.defaults or fn.args.posonlyargs):
        raise _fail(fn, "the signature must be exactly rpa(api, fields)")
    loop_vars: set[str] = set()
    for loop in ast.walk(fn):
        if isinstance(loop, ast.For):
            if not isinstance(loop.target, ast.Name) or loop.orelse:
                raise _fail(loop, "a loop must be `for NAME in fields[...]:` without else")
            loop_vars.add(loop.target.id)
    for node in ast.walk(tree):  # type: ignore[assignment]
        if not isinstance(node, ALLOWED_NODES):
            raise _fail(node, f"{type(node).__name__} is not allowed")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (str, int, float, bool, type(None))):
            raise _fail(node, "only str/number/bool constants are allowed")
        if isinstance(node, ast.Name) and node.id not in {"api", "fields", "NeedsLLM", "TASK"} | loop_vars:
            raise _fail(node, f"name '{node.id}' is not allowed")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in loop_vars | {"TASK"}:
            raise _fail(node, f"assignment to '{node.id}' is not allowed")
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                raise _fail(node, f"attribute '{node.attr}' is not allowed")
            on_api = isinstance(node.value, ast.Name) and node.value.id == "api"
            if not ((on_api and node.attr in API_METHODS) or (not on_api and node.attr in STR_METHODS)):
                raise _fail(node, f"attribute '.{node.attr}' is not allowed")
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in STR_METHODS and (node.args or node.keywords):
                raise _fail(node, "string transforms take no arguments")
            if not isinstance(node.func, (ast.Attribute, ast.Name)) or node.keywords:
                raise _fail(node, "only api.<action>(…), NeedsLLM(…) and string transforms may be called")
        if isinstance(node, ast.Subscript) and not (isinstance(node.value, ast.Name) and node.value.id == "fields"
                                                    and isinstance(node.slice, ast.Constant)):
            raise _fail(node, "only fields[\"name\"] may be subscripted")
        if isinstance(node, ast.Dict) and not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                  for k in node.keys):
            raise _fail(node, "selector keys must be string constants")
        if isinstance(node, ast.If) and not _is_guard(node.test):
            raise _fail(node, "a condition must be [not] api.exists(selector)")
        if isinstance(node, ast.For) and not (isinstance(node.iter, ast.Subscript)):
            raise _fail(node, "a loop must iterate over fields[\"name\"]")
    return tree


def _is_guard(test: ast.expr) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "exists"
            and isinstance(test.func.value, ast.Name) and test.func.value.id == "api")


def load(source: str, needs_llm: Callable[[str, str], Any]) -> tuple[str, Callable[..., Any]]:
    """(TASK, rpa) from whitelisted source, executed without builtins."""
    tree = check(source)
    namespace: dict[str, Any] = {"__builtins__": {}, "NeedsLLM": needs_llm}
    exec(compile(tree, "<rpa-function>", "exec"), namespace)  # noqa: S102 - whitelisted AST, no builtins
    task = namespace.get("TASK")
    if not isinstance(task, str):
        raise WhitelistError("generated code has no TASK = \"<env>\" line.")
    return task, namespace["rpa"]
