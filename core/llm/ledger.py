"""Budget and ledger wrapper: sum usage per call and per purpose, price it, refuse over-budget calls.

Our own accounting (no paper reconstructed). Every call through :class:`LedgerBackend` adds
one JSON line to the ledger (when a file is given) with its purpose, model, billed tokens,
cost and the budget in force; a refused call adds a line with ``"refused": true``. Totals
are plain sums of the per-call lines, so ``mlx26 llm ledger FILE`` can recompute them.

Budget guarantee: before a call, its worst case — an upper bound on the prompt tokens
(:meth:`Backend.prompt_token_bound`: exact for ``hf:``/``scripted:``/``replay:``, one token
per UTF-8 byte plus a template allowance for servers) plus ``max_tokens × n`` completion
tokens — is added to what is already spent and to what concurrent calls have reserved; the
call is refused (:class:`BudgetExceeded`) if that could exceed ``budget_tokens`` or
``budget_usd``. A ledger file that already exists counts towards the budget: one file is one
budget. Cached results are billed nothing. If a server ever reports more prompt tokens than
the bound, the line says ``"bound_exceeded": true``.

Prices are USD per million tokens, from a JSON/YAML table
``{"MODEL": {"prompt": 0.15, "completion": 0.60}, "*": {…}}`` (``*`` = any other model);
the default table prices everything at 0.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.llm.base import Backend, Wrapper
from mlx26.core.llm.recording import CallWriter
from mlx26.core.llm.types import BudgetExceeded, ChatRequest, ChatResult, TokenCallback

PRICE_KEYS = ("prompt", "completion")
PER = 1_000_000


@dataclass(frozen=True)
class PriceTable:
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | None) -> PriceTable:
        if not path:
            return cls()
        p = Path(path)
        if not p.is_file():
            raise InputError(f"price table not found: {path}")
        try:
            if p.suffix.lower() in (".yaml", ".yml"):
                import yaml

                data = yaml.safe_load(p.read_text(encoding="utf-8"))
            else:
                data = json.loads(p.read_text(encoding="utf-8"))
        except Exception as exc:  # json and yaml raise different types; both mean a malformed file
            raise InputError(f"cannot parse price table {path}: {' '.join(str(exc).split())}") from None
        return cls.from_mapping(data, path)

    @classmethod
    def from_mapping(cls, data: Any, name: str = "price table") -> PriceTable:
        if not isinstance(data, Mapping):
            raise InputError(f"{name}: expected a mapping MODEL -> {{prompt, completion}} (USD per 1M tokens).")
        prices = {}
        for model, entry in data.items():
            if not isinstance(entry, Mapping) or set(entry) - set(PRICE_KEYS):
                raise InputError(f"{name}: '{model}' must map to {{\"prompt\": USD, \"completion\": USD}} per 1M tokens.")
            values = [entry.get(k, 0.0) for k in PRICE_KEYS]
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in values):
                raise InputError(f"{name}: prices of '{model}' must be non-negative numbers.")
            prices[str(model)] = (float(values[0]), float(values[1]))
        return cls(prices)

    def rates(self, model: str) -> tuple[float, float]:
        return self.prices.get(model, self.prices.get("*", (0.0, 0.0)))

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        p, c = self.rates(model)
        return (prompt_tokens * p + completion_tokens * c) / PER


def read_ledger(path: str) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        return []
    entries = []
    for number, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path} line {number}: invalid JSON ({exc.msg}).") from None
            if not isinstance(entry, dict):
                raise InputError(f"{path} line {number}: not a ledger entry.")
            entries.append(entry)
    return entries


def _num(entry: Mapping[str, Any], key: str) -> float:
    value = entry.get(key, 0) or 0
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise InputError(f"ledger entry {entry.get('call', '?')}: '{key}' is not a number.")
    if not math.isfinite(value) or value < 0:
        raise InputError(f"ledger entry {entry.get('call', '?')}: '{key}' is {value}; tokens and costs are "
                         "finite and ≥ 0.")
    return value


class Ledger:
    """Spending state shared by every :class:`LedgerBackend` view (thread-safe)."""

    def __init__(self, path: str | None = None, *, prices: PriceTable | None = None,
                 budget_usd: float | None = None, budget_tokens: int | None = None):
        for name, value in (("budget_usd", budget_usd), ("budget_tokens", budget_tokens)):
            if value is not None and not value >= 0:
                raise InputError(f"{name} must be non-negative, got {value}.")
        self.path = path
        self.prices = prices or PriceTable()
        self.budget_usd = budget_usd
        self.budget_tokens = budget_tokens
        self.entries: list[dict[str, Any]] = read_ledger(path) if path else []
        self._writer = _LineWriter(path) if path else None
        self._lock = threading.Lock()
        billed = [e for e in self.entries if not e.get("refused")]
        self.spent_tokens = int(sum(_num(e, "prompt_tokens") + _num(e, "completion_tokens") for e in billed))
        self.spent_usd = float(sum(_num(e, "cost_usd") for e in billed))
        self._reserved_tokens = 0
        self._reserved_usd = 0.0

    def _append(self, entry: dict[str, Any]) -> None:
        entry["call"] = len(self.entries) + 1
        self.entries.append(entry)
        if self._writer is not None:
            self._writer.write(entry)

    def reserve(self, purpose: str, model: str, tokens: int, usd: float) -> None:
        with self._lock:
            over = []
            if self.budget_tokens is not None and self.spent_tokens + self._reserved_tokens + tokens > self.budget_tokens:
                left = self.budget_tokens - self.spent_tokens - self._reserved_tokens
                over.append(f"could use up to {tokens} tokens but {max(left, 0)} of the {self.budget_tokens}-token "
                            "budget remain")
            if self.budget_usd is not None and self.spent_usd + self._reserved_usd + usd > self.budget_usd + 1e-12:
                left_usd = self.budget_usd - self.spent_usd - self._reserved_usd
                over.append(f"could cost up to ${usd:.6g} but ${max(left_usd, 0):.6g} of the ${self.budget_usd:g} "
                            "budget remain")
            if over:
                self._append(self._base(purpose, model) | {"refused": True, "reason": "; ".join(over),
                                                          "worst_case_tokens": tokens, "worst_case_usd": usd,
                                                          "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0})
                raise BudgetExceeded(f"budget: this call {' and '.join(over)}.",
                                     "raise --budget-tokens/--budget-usd, lower --max-tokens, or start a new ledger")
            self._reserved_tokens += tokens
            self._reserved_usd += usd

    def release(self, tokens: int, usd: float) -> None:
        with self._lock:
            self._reserved_tokens -= tokens
            self._reserved_usd -= usd

    def commit(self, purpose: str, result: ChatResult, *, kind: str, worst_tokens: int, worst_usd: float,
               prompt_bound: int) -> dict[str, Any]:
        billed = not result.cached
        prompt = result.usage.prompt_tokens if billed else 0
        completion = result.usage.completion_tokens if billed else 0
        cost = self.prices.cost(result.model, prompt, completion) if billed else 0.0
        entry = self._base(purpose, result.model) | {
            "backend": result.backend, "kind": kind, "prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion, "usage_source": result.usage.source, "cost_usd": cost,
            "cached": result.cached, "replayed_from": result.replayed_from, "finish_reason": result.finish_reason,
            "latency_s": round(result.latency_s, 6), "worst_case_tokens": worst_tokens, "worst_case_usd": worst_usd}
        if billed and result.usage.prompt_tokens > prompt_bound:
            entry["bound_exceeded"] = True
        with self._lock:
            self._reserved_tokens -= worst_tokens
            self._reserved_usd -= worst_usd
            self.spent_tokens += prompt + completion
            self.spent_usd += cost
            self._append(entry)
        return entry

    def _base(self, purpose: str, model: str) -> dict[str, Any]:
        return {"ts": round(time.time(), 3), "purpose": purpose, "model": model,
                "budget_tokens": self.budget_tokens, "budget_usd": self.budget_usd}

    def summary(self, by: Iterable[str] = ("purpose",)) -> list[dict[str, Any]]:
        with self._lock:
            return summarize(list(self.entries), by)


class _LineWriter:
    def __init__(self, path: str):
        CallWriter(path)  # same path checks as call files
        self.path = path

    def write(self, entry: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
            handle.flush()


class LedgerBackend(Wrapper):
    """A view of ``inner`` that books every call in ``ledger`` under ``purpose``."""

    kind = "ledger"

    def __init__(self, inner: Backend, ledger: Ledger | None = None, purpose: str = "default"):
        super().__init__(inner, inner.label)
        self.ledger = ledger if ledger is not None else Ledger()
        self.purpose = purpose

    def for_purpose(self, purpose: str) -> LedgerBackend:
        """Another view on the same backend and ledger, booking under ``purpose``."""
        return LedgerBackend(self.inner, self.ledger, purpose)

    def call(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        model = self.inner.model or "?"
        prompt_bound = self.inner.prompt_token_bound(request)
        completion_bound = request.params.max_tokens * request.params.n
        worst_tokens = prompt_bound + completion_bound
        worst_usd = self.ledger.prices.cost(model, prompt_bound, completion_bound)
        self.ledger.reserve(self.purpose, model, worst_tokens, worst_usd)
        try:
            result = self.inner.call(request, on_token)
        except BaseException:
            self.ledger.release(worst_tokens, worst_usd)
            raise
        self.model = self.inner.model
        self.ledger.commit(self.purpose, result, kind=request.kind, worst_tokens=worst_tokens,
                           worst_usd=worst_usd, prompt_bound=prompt_bound)
        return result


SUM_KEYS = ("prompt_tokens", "completion_tokens", "cost_usd")


def summarize(entries: Iterable[Mapping[str, Any]], by: Iterable[str] = ("purpose",)) -> list[dict[str, Any]]:
    """One row per group (and a final ``TOTAL`` row): calls, refused, cached, tokens, cost."""
    by = tuple(by)
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    total = _empty_row({k: "TOTAL" if i == 0 else "" for i, k in enumerate(by)})
    for entry in entries:
        key = tuple(entry.get(k, "") for k in by)
        bad = next((k for k, v in zip(by, key, strict=True) if isinstance(v, (dict, list))), None)
        if bad is not None:
            raise InputError(f"ledger entry {entry.get('call', '?')}: '{bad}' must be a plain value, not "
                             f"{type(entry[bad]).__name__}.")
        row = groups.setdefault(key, _empty_row(dict(zip(by, key, strict=True))))
        for target in (row, total):
            _add(target, entry)
    rows = [groups[k] for k in sorted(groups, key=lambda k: tuple(map(str, k)))]
    return [_finish(r) for r in [*rows, total]]


def _empty_row(head: dict[str, Any]) -> dict[str, Any]:
    return head | {"calls": 0, "refused": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0,
                   "total_tokens": 0, "cost_usd": 0.0, "estimated_calls": 0}


def _add(row: dict[str, Any], entry: Mapping[str, Any]) -> None:
    if entry.get("refused"):
        row["refused"] += 1
        return
    row["calls"] += 1
    row["cached"] += bool(entry.get("cached"))
    row["estimated_calls"] += entry.get("usage_source") == "estimated"
    for key in SUM_KEYS:
        row[key] += _num(entry, key)


def _finish(row: dict[str, Any]) -> dict[str, Any]:
    row["total_tokens"] = int(row["prompt_tokens"] + row["completion_tokens"])
    row["cost_usd"] = round(row["cost_usd"], 10)
    return row
