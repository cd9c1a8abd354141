"""One chat interface for every LLM mlx26 drives: servers, local models, scripts and recordings.

Our own infrastructure (no paper reconstructed; see docs/llm.md). The methods that call an
LLM (rpa-distill, optimize-prompt, judge-audit's judges, table-decompose's arbitration) and
spec-bench's server benchmarks use only this:

    from mlx26.core.llm import get_backend
    llm = get_backend("openai:http://127.0.0.1:8000/v1#tiny-llama")   # or $MLX26_LLM
    result = llm.chat([{"role": "user", "content": "hi"}], temperature=0, max_tokens=64,
                      stop=None, seed=0, n=1)
    result.text, result.usage.prompt_tokens, result.usage.source, result.finish_reason

Backends: ``openai:`` (:mod:`.openai_backend`), ``hf:`` (:mod:`.hf_backend`), ``scripted:``
(:mod:`.scripted`), ``replay:`` / ``record:`` (:mod:`.recording`), ``cache:`` (:mod:`.cache`);
wrappers :class:`LedgerBackend` / :class:`Ledger` (budget, prices, per-purpose sums) and the
OpenAI-compatible HTTP server (:mod:`.server`). Nothing heavy is imported here: httpx,
torch and transformers load only with the backend that needs them.
"""

from mlx26.core.llm.base import Backend, Wrapper
from mlx26.core.llm.ledger import Ledger, LedgerBackend, PriceTable, read_ledger, summarize
from mlx26.core.llm.spec import ENV_VAR, FORMS, get_backend, inner_kinds, spec_kind
from mlx26.core.llm.types import (
    BudgetExceeded,
    Capabilities,
    ChatParams,
    ChatRequest,
    ChatResult,
    Choice,
    LLMError,
    Usage,
    normalize_messages,
)

__all__ = [
    "ENV_VAR", "FORMS", "Backend", "BudgetExceeded", "Capabilities", "ChatParams", "ChatRequest", "ChatResult",
    "Choice", "LLMError", "Ledger", "LedgerBackend", "PriceTable", "Usage", "Wrapper", "get_backend",
    "inner_kinds", "normalize_messages", "read_ledger", "spec_kind", "summarize",
]
