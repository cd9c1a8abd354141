"""Shared options for every command that drives an LLM: ``--llm SPEC`` (env ``MLX26_LLM``) and friends.

Other commands (rpa-distill, optimize-prompt, judge-audit, table-decompose) reuse these::

    from mlx26.cli._llm_options import LLMOpt, BudgetUsdOpt, LedgerOpt, llm_errors, open_llm

    def cmd(llm: LLMOpt = None, ledger: LedgerOpt = None, budget_usd: BudgetUsdOpt = None):
        with llm_errors():
            backend = open_llm(llm, ledger=ledger, budget_usd=budget_usd, purpose="arbitration")
            result = backend.chat([...], max_tokens=64)

Only the standard library, typer and ``mlx26.cli._errors`` are imported at module level; the
core and its backends load inside :func:`open_llm`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from mlx26.cli._errors import RuntimeFailure, require

LLMOpt = Annotated[str | None, typer.Option(
    "--llm", envvar="MLX26_LLM", metavar="SPEC",
    help="LLM backend: openai:URL#MODEL, hf:NAME_OR_PATH, scripted:FILE (scripted:demo), replay:FILE, "
         "record:FILE=SPEC, cache:FILE=SPEC.")]
TemperatureOpt = Annotated[float, typer.Option("--temperature", help="Sampling temperature in [0, 2]; 0 = greedy.", metavar="NUMBER")]
MaxTokensOpt = Annotated[int, typer.Option("--max-tokens", help="Most tokens to generate per choice.", min=1, metavar="N")]
StopOpt = Annotated[list[str] | None, typer.Option("--stop", help="Stop sequence; repeat for several.", metavar="TEXT")]
NOpt = Annotated[int, typer.Option("--n", help="Number of choices.", min=1, max=16, metavar="N")]
TimeoutOpt = Annotated[float | None, typer.Option(
    "--timeout", help="Seconds per HTTP read/connect for openai: (default 60, env MLX26_LLM_TIMEOUT).", metavar="NUMBER")]
RetriesOpt = Annotated[int | None, typer.Option(
    "--retries", help="Retries on 429/5xx/timeouts for openai: (default 3, env MLX26_LLM_RETRIES).", min=0, metavar="N")]
ApiKeyEnvOpt = Annotated[str | None, typer.Option(
    "--api-key-env", metavar="VAR",
    help="Environment variable holding the API key (default MLX26_LLM_API_KEY, then OPENAI_API_KEY).")]
CacheOpt = Annotated[str | None, typer.Option(
    "--cache", metavar="FILE", help="Cache deterministic calls (temperature 0 or a seed) in this JSONL file.")]
LedgerOpt = Annotated[str | None, typer.Option(
    "--ledger", metavar="FILE", help="Append one line per call (usage, cost, purpose) to this JSONL file.")]
PricesOpt = Annotated[str | None, typer.Option(
    "--prices", metavar="FILE", help='Price table JSON/YAML {"MODEL": {"prompt": USD, "completion": USD}} '
                                     "per 1M tokens (default: all 0).")]
BudgetUsdOpt = Annotated[float | None, typer.Option(
    "--budget-usd", help="Refuse any call whose worst case would take the ledger over this many USD.", min=0, metavar="NUMBER")]
BudgetTokensOpt = Annotated[int | None, typer.Option(
    "--budget-tokens", help="Refuse any call whose worst case would take the ledger over this many tokens.", min=0, metavar="N")]
PurposeOpt = Annotated[str, typer.Option("--purpose", help="Label for the ledger's per-purpose sums.", metavar="TEXT")]


def ensure_extras(spec: str | None) -> None:
    """Exit 3 with the install hint if the backend of ``spec`` needs a missing package."""
    if not spec:
        return
    from mlx26.core.llm import inner_kinds

    for kind in inner_kinds(spec.strip()):
        if kind == "openai":
            require("httpx", "llm")
        elif kind == "hf":
            require("torch", "torch")
            require("transformers", "transformers")


def open_llm(spec: str | None, *, timeout: float | None = None, retries: int | None = None,
             api_key_env: str | None = None, cache: str | None = None, ledger: str | None = None,
             prices: str | None = None, budget_usd: float | None = None, budget_tokens: int | None = None,
             purpose: str = "default") -> Any:
    """The backend for ``spec`` (``$MLX26_LLM`` when None), wrapped in a cache and a ledger as asked."""
    ensure_extras(spec)
    from mlx26.core import llm as core

    book = None  # checked before a model is loaded (validate early)
    if ledger or prices or budget_usd is not None or budget_tokens is not None:
        book = core.Ledger(ledger, prices=core.PriceTable.load(prices), budget_usd=budget_usd,
                           budget_tokens=budget_tokens)
    backend = core.get_backend(spec, timeout=timeout, max_retries=retries, api_key_env=api_key_env)
    if cache:
        from mlx26.core.llm.cache import CachingBackend

        backend = CachingBackend(backend, cache)
    return core.LedgerBackend(backend, book, purpose) if book is not None else backend


@contextlib.contextmanager
def llm_errors() -> Iterator[None]:
    """Turn an LLM failure into one ``Error:`` line (+ ``Hint:``) and exit 1."""
    from mlx26.core.llm import LLMError

    try:
        yield
    except LLMError as exc:
        raise RuntimeFailure(exc.message, hint=exc.hint) from exc
