"""The claims ledger: each paper claim, the benchmark figure that tests it, the data, and a computed status.

No paper: this is the project's own bookkeeping (issue "one ledger of every paper claim"). Claims live
in one YAML file per method (``core/claims/methods/<method>.yaml``, shipped with the package); figures
come only from the machine-readable results the benchmarks write (``benchmarks/results/<name>.json``,
see ``benchmarks/_results.py``), never typed by hand. A claim names its figures by dotted keys into a
results file, a ``measured`` template that prints them, and a ``criterion`` over them; the status is
computed:

- ``reproduced`` — the criterion (the paper's figure or target) holds;
- ``reproduced in direction`` — the criterion only asks for the paper's direction (``kind: direction``)
  and it holds, e.g. "cheaper than the baseline", at our tiny scale;
- ``partly reproduced`` — the criterion fails but the claim's stated ``partial`` criterion holds;
- ``not reproduced`` — neither holds;
- ``not testable here`` — ``testable: false`` with the reason (a GPU, a 7B model, data we do not have).

A missing results file or figure key is an error in strict mode (docs generation and the tests), and a
``no figure`` status with the reason otherwise (``mlx26 claims`` on a checkout whose benchmarks never ran).
Criteria are small expressions (comparisons, arithmetic, and/or/not, abs/min/max/all/any/len) evaluated
by a whitelist over the parsed syntax tree, never by ``eval``.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlx26.core.claims.spec import DATA_KINDS
from mlx26.core.common.errors import InputError, RunFailure, unknown_name

METHODS_DIR = Path(__file__).resolve().parent / "methods"
SNAPSHOT = Path(__file__).resolve().parent / "ledger.json"
REQUIRED_RESULT_FIELDS = ("benchmark", "command", "commit", "date", "machine", "data", "figures")
REQUIRED_MACHINE_FIELDS = ("cores", "cpu", "python")
CLAIM_KEYS = {"id", "claim", "source", "results", "figures", "measured", "data", "data_kind", "criterion",
              "partial", "kind", "testable", "why", "section"}
METHOD_KEYS = {"method", "paper", "docs", "readme", "claims"}
README_KEYS = {"claim", "figure", "vs"}


@dataclass
class Claim:
    method: str
    id: str
    claim: str
    source: str
    data: str
    data_kind: str
    results: str | None = None
    figures: dict[str, str | list[str]] = field(default_factory=dict)
    measured: str = ""
    criterion: str | None = None
    partial: str | None = None
    kind: str = "target"
    testable: bool = True
    why: str | None = None
    section: str | None = None


@dataclass
class MethodClaims:
    method: str
    paper: str
    docs: str
    claims: list[Claim]
    readme: dict[str, str] | None = None
    path: Path | None = None


# ----------------------------------------------------------------------------- loading


def _require(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise InputError(f"{where}: {message}")


def parse_method(raw: Any, where: str) -> MethodClaims:
    """One method's claims from its parsed YAML; every key is checked, so a typo cannot pass silently."""
    _require(isinstance(raw, dict), where, "expected a mapping with method, paper, docs, claims")
    unknown = set(raw) - METHOD_KEYS
    _require(not unknown, where, f"unknown keys {sorted(unknown)}")
    for key in ("method", "paper", "docs", "claims"):
        _require(key in raw, where, f"missing '{key}'")
    _require(isinstance(raw["claims"], list) and bool(raw["claims"]), where, "'claims' must be a non-empty list")
    claims: list[Claim] = []
    seen: set[str] = set()
    for i, item in enumerate(raw["claims"]):
        at = f"{where}: claim {i + 1}"
        _require(isinstance(item, dict), at, "expected a mapping")
        unknown = set(item) - CLAIM_KEYS
        _require(not unknown, at, f"unknown keys {sorted(unknown)}")
        for key in ("id", "claim", "source", "data", "data_kind"):
            _require(key in item, at, f"missing '{key}'")
        _require(item["id"] not in seen, at, f"duplicate id '{item['id']}'")
        seen.add(item["id"])
        if item["data_kind"] not in DATA_KINDS:
            raise unknown_name("data kind", str(item["data_kind"]), DATA_KINDS)
        claim = Claim(method=raw["method"], **item)
        _require(claim.kind in ("target", "direction"), at, "kind must be 'target' or 'direction'")
        if claim.testable:
            for key in ("results", "figures", "measured", "criterion"):
                _require(bool(getattr(claim, key)), at, f"a testable claim needs '{key}'")
            _require(isinstance(claim.figures, dict), at, "'figures' maps names to dotted result keys")
            for expr in (claim.criterion, claim.partial):
                if expr:
                    names = _names(expr, at)
                    missing = names - set(claim.figures)
                    _require(not missing, at, f"criterion uses undeclared figures {sorted(missing)}")
        else:
            _require(bool(claim.why), at, "a claim that is not testable here needs 'why'")
        claims.append(claim)
    readme = raw.get("readme")
    if readme is not None:
        _require(isinstance(readme, dict) and set(readme) == README_KEYS, where,
                 f"'readme' needs exactly {sorted(README_KEYS)}")
        _require(readme["claim"] in seen, where, f"readme claim '{readme['claim']}' is not one of its claims")
    return MethodClaims(method=raw["method"], paper=raw["paper"], docs=raw["docs"], claims=claims,
                        readme=readme)


def load_methods(directory: Path = METHODS_DIR) -> list[MethodClaims]:
    import yaml

    out = []
    for path in sorted(Path(directory).glob("*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise InputError(f"{path.name}: not valid YAML ({str(exc).splitlines()[0]})") from None
        mc = parse_method(raw, path.name)
        mc.path = path
        out.append(mc)
    return out


def load_results(results_dir: Path, name: str) -> dict[str, Any]:
    path = Path(results_dir) / f"{name}.json"
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no results file {path} (run the benchmark that writes it)") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    check_results(payload, str(path))
    return payload


def check_results(payload: Any, where: str) -> None:
    """A results file must say how, when, where and on what it was measured."""
    _require(isinstance(payload, dict), where, "expected a JSON object")
    missing = [k for k in REQUIRED_RESULT_FIELDS if payload.get(k) in (None, "")]
    _require(not missing, where, f"missing provenance fields {missing}")
    machine = payload["machine"]
    _require(isinstance(machine, dict), where, "'machine' must be an object")
    missing = [k for k in REQUIRED_MACHINE_FIELDS if machine.get(k) in (None, "")]
    _require(not missing, where, f"machine lacks {missing}")
    _require(isinstance(payload["data"], list) and all(isinstance(d, dict) and d.get("name") and d.get("source")
                                                       for d in payload["data"]),
             where, "'data' must list {name, source} for each dataset used")
    _require(isinstance(payload["figures"], dict), where, "'figures' must be an object")


def lookup(figures: dict[str, Any], key: str) -> Any:
    """``a.b.2.c`` into nested objects and lists; KeyError names the first missing part.

    An object key that itself contains dots (``first_er_0.9``) is matched greedily: at each level the
    longest run of parts that is a key of that object wins.
    """
    node: Any = figures
    parts = key.split(".")
    i = 0
    while i < len(parts):
        if isinstance(node, dict):
            for j in range(len(parts), i, -1):
                name = ".".join(parts[i:j])
                if name in node:
                    node, i = node[name], j
                    break
            else:
                raise KeyError(parts[i])
        elif isinstance(node, list) and parts[i].lstrip("-").isdigit() and -len(node) <= int(parts[i]) < len(node):
            node, i = node[int(parts[i])], i + 1
        else:
            raise KeyError(parts[i])
    return node


def figure_value(figures: dict[str, Any], key: str | list[str]) -> Any:
    """One dotted key, or a list of keys whose values form a list (``min(...)`` over games in a criterion)."""
    if isinstance(key, list):
        return [lookup(figures, k) for k in key]
    return lookup(figures, key)


# ----------------------------------------------------------------------------- criteria

_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Eq: operator.eq, ast.NotEq: operator.ne}
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_FUNCS: dict[str, Callable[..., Any]] = {"abs": abs, "min": min, "max": max, "all": all, "any": any, "len": len, "sum": sum,
          # element-wise over two equally long lists: min(diff(rl, sft)) > 0 = "larger in every cell"
          "diff": lambda a, b: [x - y for x, y in zip(a, b, strict=True)],
          "ratio": lambda a, b: [x / y for x, y in zip(a, b, strict=True)]}


def _names(expr: str, where: str) -> set[str]:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise InputError(f"{where}: criterion {expr!r} does not parse") from None
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - calls


def evaluate(expr: str, values: dict[str, Any]) -> Any:
    """Evaluate a criterion over named figures with a whitelist of node types."""

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in values:
                raise InputError(f"criterion {expr!r}: unknown figure '{node.id}'")
            return values[node.id]
        if isinstance(node, ast.BoolOp):
            parts = [ev(v) for v in node.values]
            return all(parts) if isinstance(node.op, ast.And) else any(parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            v = ev(node.operand)
            return (not v) if isinstance(node.op, ast.Not) else -v
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                if type(op) not in _CMP:
                    break
                right = ev(comp)
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            else:
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS \
                and not node.keywords:
            return _FUNCS[node.func.id](*[ev(a) for a in node.args])
        if isinstance(node, (ast.List, ast.Tuple)):
            return [ev(e) for e in node.elts]
        raise InputError(f"criterion {expr!r}: {type(node).__name__} is not allowed")

    return ev(ast.parse(expr, mode="eval"))


# ----------------------------------------------------------------------------- resolving


class _Formatter(string.Formatter):
    """A missing figure (None, from NaN) prints as n/a instead of failing the whole template."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, list):
            return ", ".join(self.format_field(v, format_spec) for v in value)
        return "n/a" if value is None else super().format_field(value, format_spec)


def _format(template: str, values: dict[str, Any], where: str) -> str:
    try:
        return _Formatter().format(template, **values)
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        raise InputError(f"{where}: measured template {template!r} fails: {exc}") from None


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v) for v in value)
    return value is None


def resolve_claim(claim: Claim, results: dict[str, Any] | None, *, strict: bool) -> dict[str, Any]:
    where = f"{claim.method}/{claim.id}"
    row: dict[str, Any] = {"method": claim.method, "id": claim.id, "claim": claim.claim, "source": claim.source,
                           "measured": "", "data": claim.data, "data_kind": claim.data_kind, "status": "",
                           "criterion": claim.criterion, "kind": claim.kind, "values": {}, "benchmark": None,
                           "why": claim.why, "section": claim.section}
    if not claim.testable:
        row["status"] = "not testable here"
        row["measured"] = f"not measured: {claim.why}"
        return row
    if results is None:
        row["status"] = "no figure"
        row["measured"] = f"no results file {claim.results}.json (run its benchmark)"
        return row
    values = {}
    for name, key in claim.figures.items():
        try:
            values[name] = figure_value(results["figures"], key)
        except KeyError as exc:
            message = f"{where}: results file {claim.results}.json has no figure '{key}' (missing '{exc.args[0]}')"
            if strict:
                raise InputError(message, hint="re-run its benchmark, or fix the claim's figure key") from None
            row["status"] = "no figure"
            row["measured"] = message
            return row
    row["values"] = values
    row["benchmark"] = {k: results.get(k) for k in ("benchmark", "command", "commit", "dirty", "date")}
    row["measured"] = _format(claim.measured, values, where)
    if any(_has_nan(values[n]) for n in _names(claim.criterion or "", where) if n in values):
        row["status"] = "not reproduced"
        row["measured"] += " (a figure is missing or NaN)"
        return row
    assert claim.criterion is not None
    if evaluate(claim.criterion, values):
        row["status"] = "reproduced in direction" if claim.kind == "direction" else "reproduced"
    elif claim.partial and evaluate(claim.partial, values):
        row["status"] = "partly reproduced"
    else:
        row["status"] = "not reproduced"
    return row


def build_ledger(methods: list[MethodClaims], results_dir: Path, *, strict: bool) -> dict[str, Any]:
    """Every claim resolved against the results files: ``{"methods": [...], "claims": [rows]}``."""
    cache: dict[str, dict[str, Any] | None] = {}
    rows = []
    for mc in methods:
        for claim in mc.claims:
            results = None
            if claim.testable and claim.results:
                if claim.results not in cache:
                    try:
                        cache[claim.results] = load_results(results_dir, claim.results)
                    except InputError:
                        if strict:
                            raise
                        cache[claim.results] = None
                results = cache[claim.results]
            rows.append(resolve_claim(claim, results, strict=strict))
    meta = [{"method": mc.method, "paper": mc.paper, "docs": mc.docs, "readme": mc.readme} for mc in methods]
    return {"methods": meta, "claims": rows}


def select(ledger: dict[str, Any], method: str | None) -> dict[str, Any]:
    if method is None:
        return ledger
    names = [m["method"] for m in ledger["methods"]]
    if method not in names:
        raise unknown_name("method", method, names)
    return {"methods": [m for m in ledger["methods"] if m["method"] == method],
            "claims": [r for r in ledger["claims"] if r["method"] == method]}


def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    from mlx26.core.claims.spec import STATUSES

    counts = {s: 0 for s in (*STATUSES, "no figure")}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {k: v for k, v in counts.items() if v}


def shipped_ledger(results_dir: Path | None = None) -> dict[str, Any]:
    """The ledger shipped with this version, or recomputed from ``results_dir`` (non-strict: a claim whose
    figure is missing shows ``no figure`` instead of stopping the listing)."""
    if results_dir is not None:
        return build_ledger(load_methods(), Path(results_dir), strict=False)
    try:
        return json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFailure(f"the shipped ledger {SNAPSHOT.name} is missing from this installation",
                         hint="pass --results benchmarks/results from a checkout") from None
