"""``mlx26 llm``: chat with any backend, serve one as an OpenAI-compatible API, summarise ledgers.

Thin wrapper over ``mlx26.core.llm`` (our own infrastructure; see docs/llm.md). The shared
``--llm SPEC`` option and helpers live in ``mlx26.cli._llm_options``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from mlx26.cli._errors import UsageError
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    InputArg,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    check_output,
    emit,
    emit_raw,
    notice,
    open_input,
    read_records,
)
from mlx26.cli._llm_options import (
    ApiKeyEnvOpt,
    BudgetTokensOpt,
    BudgetUsdOpt,
    CacheOpt,
    LedgerOpt,
    LLMOpt,
    MaxTokensOpt,
    NOpt,
    PricesOpt,
    PurposeOpt,
    RetriesOpt,
    StopOpt,
    TemperatureOpt,
    TimeoutOpt,
    llm_errors,
    open_llm,
)

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)


def _messages(prompt: str | None, system: str | None, messages: str | None) -> list[dict[str, Any]]:
    convo: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    if messages == "-" and prompt == "-":
        raise UsageError("--messages - and the prompt cannot both read stdin.",
                         hint="give the prompt as an argument, or the messages as a file")
    if messages:
        for number, r in enumerate(read_records(messages), 1):
            if not isinstance(r.get("role"), str) or not isinstance(r.get("content"), str):
                raise UsageError(f"{messages} message {number}: needs a string 'role' and a string 'content'.")
            convo.append({"role": r["role"], "content": r["content"]})
    if prompt == "-" or (prompt is None and not messages):
        with open_input("-") as stream:
            prompt = stream.read()
    if prompt is not None:
        convo.append({"role": "user", "content": prompt})
    return convo


@app.command("chat")
def chat(
    prompt: Annotated[str | None, typer.Argument(help="The prompt; - (or none without --messages) reads stdin.",
                                                 metavar="PROMPT")] = None,
    llm: LLMOpt = None,
    system: Annotated[str | None, typer.Option("--system", help="A system message sent first.", metavar="TEXT")] = None,
    messages: Annotated[str | None, typer.Option("--messages", metavar="FILE", help="JSON/JSONL {role, content} "
                                                 "records sent before PROMPT (- = stdin).")] = None,
    raw: Annotated[bool, typer.Option("--raw", help="Send PROMPT as a raw completion (no chat template).")] = False,
    stream: Annotated[bool, typer.Option("--stream", help="Print the reply as it is generated.")] = False,
    temperature: TemperatureOpt = 0.0,
    max_tokens: MaxTokensOpt = 256,
    stop: StopOpt = None,
    n: NOpt = 1,
    seed: SeedOpt = 0,
    timeout: TimeoutOpt = None,
    retries: RetriesOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    cache: CacheOpt = None,
    ledger: LedgerOpt = None,
    prices: PricesOpt = None,
    budget_usd: BudgetUsdOpt = None,
    budget_tokens: BudgetTokensOpt = None,
    purpose: PurposeOpt = "chat",
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Send one prompt (or a conversation) to an LLM and print the reply.

    With --format auto and no -o, the reply text is printed (n = 1); otherwise one record
    per choice: text, finish_reason, model, backend, token usage and its source, latency.

    \b
    Examples:
      mlx26 llm chat --llm scripted:demo "hello"
      echo "What is the capital of France?" | mlx26 llm chat --llm scripted:demo --format json
      mlx26 llm chat --llm scripted:demo "count to 20" --max-tokens 5 --stream
      MLX26_LLM=scripted:demo mlx26 llm chat "say: ready" --max-tokens 16 --budget-tokens 100 --quiet
    """
    check_output(output, force)
    if raw and (system or messages):
        raise UsageError("--raw sends a plain prompt: it cannot be combined with --system or --messages.")
    from mlx26.core.llm import ChatParams

    ChatParams.make(temperature=temperature, max_tokens=max_tokens, stop=stop, seed=seed, n=n)  # before loading
    convo = _messages(prompt, system, messages)
    text_mode = fmt == OutputFormat.auto and output in (None, "-") and n == 1
    on_token = None
    if stream and text_mode:
        def on_token(delta: str) -> None:
            emit_raw(delta)
    with llm_errors():
        backend = open_llm(llm, timeout=timeout, retries=retries, api_key_env=api_key_env, cache=cache,
                           ledger=ledger, prices=prices, budget_usd=budget_usd, budget_tokens=budget_tokens,
                           purpose=purpose)
        with backend:
            kwargs = dict(temperature=temperature, max_tokens=max_tokens, stop=stop, seed=seed, n=n,
                          on_token=on_token)
            result = (backend.complete(convo[-1]["content"], **kwargs) if raw else backend.chat(convo, **kwargs))
    if any(c.finish_reason == "length" for c in result.choices):
        notice(f"Warning: the reply stopped at --max-tokens {max_tokens} (finish_reason=length).", quiet)
    if result.replayed_from:
        notice(f"replayed from {result.replayed_from}", quiet)
    if text_mode:
        emit_raw(("" if on_token is not None else result.text) + "\n")
        return
    rows = [{"index": i, "text": c.text, "finish_reason": c.finish_reason, "model": result.model,
             "backend": result.backend, "prompt_tokens": result.usage.prompt_tokens,
             "completion_tokens": result.usage.completion_tokens, "usage_source": result.usage.source,
             "latency_s": round(result.latency_s, 6), "replayed_from": result.replayed_from,
             "cached": result.cached, "seed": seed} for i, c in enumerate(result.choices)]
    emit(rows[0] if n == 1 else rows, output, fmt, force=force, title="llm chat")


@app.command("serve")
def serve(
    llm: LLMOpt = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback unless --allow-remote).", metavar="TEXT")
                    ] = "127.0.0.1",
    port: Annotated[int | None, typer.Option("--port", help="Port; 0 = any free one (default 8000; 0 with "
                                             "--self-test).", metavar="N")] = None,
    model_name: Annotated[str | None, typer.Option("--model-name", help="Model id to serve (default: the "
                                                   "backend's).", metavar="TEXT")] = None,
    fault: Annotated[list[str] | None, typer.Option("--fault", help="Inject: 429 | 500 | malformed | slow | cut | "
                                                    "length; repeat to alternate.", metavar="TEXT")] = None,
    fault_count: Annotated[int, typer.Option("--fault-count", help="Fault only the first N generation requests "
                                             "(0 = all).", min=0, metavar="N")] = 0,
    retry_after: Annotated[float, typer.Option("--retry-after", help="Retry-After seconds sent with 429.", min=0, metavar="NUMBER")
                           ] = 1.0,
    slow_s: Annotated[float, typer.Option("--slow-s", help="Delay of the slow fault, in seconds.", min=0, metavar="NUMBER")] = 2.0,
    require_key_env: Annotated[str | None, typer.Option("--require-key-env", metavar="VAR", help="Require "
                                                        "'Authorization: Bearer $VAR' from clients.")] = None,
    max_requests: Annotated[int | None, typer.Option("--max-requests", help="Exit after serving N generation "
                                                     "requests.", min=1, metavar="N")] = None,
    self_test: Annotated[bool, typer.Option("--self-test", help="Start, check every endpoint with the built-in "
                                            "client, print a report and exit.")] = False,
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a non-loopback --host.")] = False,
    draft: Annotated[str | None, typer.Option("--draft", metavar="MODEL", help="Speculative decoding with this "
                                              "draft model (zoo name or folder; needs --llm hf:TARGET); exports "
                                              "vLLM's spec_decode counters on /metrics.")] = None,
    draft_k: Annotated[int, typer.Option("--draft-k", help="Draft tokens per step with --draft.", metavar="N")] = 4,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Serve a backend as an OpenAI-compatible API (/v1/models, /v1/chat/completions, /v1/completions, /metrics).

    Prints {"base_url", "model", "backend"} as one JSON line on stdout when listening (use
    --port 0 and read it), logs requests on stderr, and stops on Ctrl-C or SIGTERM.

    \b
    Examples:
      mlx26 llm serve --llm scripted:demo --self-test
      mlx26 llm serve --llm scripted:demo --self-test --fault 429 --fault 500 --fault-count 2 --retry-after 0
      mlx26 llm serve --llm hf:tiny-llama --draft tiny-llama-draft --draft-k 4 --self-test
    """
    import json
    import os

    check_output(output, force)
    if output not in (None, "-") and not self_test:
        raise UsageError("-o/--output holds the --self-test report; a running server prints its address on stdout.",
                         hint="add --self-test, or drop -o")
    api_key = None
    if require_key_env:
        api_key = os.environ.get(require_key_env)
        if not api_key:
            raise UsageError(f"--require-key-env: environment variable {require_key_env} is not set or empty.")
    from mlx26.core.llm.faults import FaultPlan
    from mlx26.core.llm.server import LLMServer

    plan = FaultPlan(fault or [], fault_count, retry_after, slow_s)
    if draft is not None:
        spec = (llm or os.environ.get("MLX26_LLM", "")).strip()
        if not spec.startswith("hf:"):
            raise UsageError(f"--draft needs a local target: --llm hf:TARGET (got '{spec or 'none'}').",
                             hint="e.g. mlx26 llm serve --llm hf:tiny-llama --draft tiny-llama-draft")
        if draft_k < 1:
            raise UsageError(f"--draft-k must be >= 1, got {draft_k}.")
    with llm_errors():
        if draft is not None:
            from mlx26.cli._llm_options import ensure_extras
            from mlx26.core.spec_bench.serving import SpecHFBackend

            ensure_extras(spec)
            backend = SpecHFBackend(spec[3:], draft, draft_k)
        else:
            backend = open_llm(llm)
        with backend:
            server = LLMServer(backend, host=host, port=(0 if self_test else 8000) if port is None else port,
                               model_name=model_name, faults=plan, api_key=api_key, allow_remote=allow_remote,
                               log=None if quiet else (lambda line: notice(f"llm serve: {line}")))
            if self_test:
                from mlx26.core.llm.selftest import self_test as check

                with server:
                    report = check(server.base_url, server.model_name, api_key=api_key)
                emit(report, output, fmt, force=force, title="llm serve --self-test")
                return
            emit_raw(json.dumps({"base_url": server.base_url, "model": server.model_name,
                                 "backend": backend.label}) + "\n")
            notice(f"llm serve: {backend.label} as '{server.model_name}' on {server.base_url} "
                   "(Ctrl-C stops)", quiet)
            server.run(max_requests)


@app.command("ledger")
def ledger_summary(
    input: InputArg,
    by: Annotated[list[str] | None, typer.Option("--by", help="Group by purpose | model | backend; repeat to "
                                                 "nest (default: purpose).", metavar="TEXT")] = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Summarise a ledger written with --ledger: calls, refusals, cache hits, tokens and cost per group.

    The last row (TOTAL) is the plain sum of every call line.

    \b
    Examples:
      printf '{"purpose":"judge","model":"m","prompt_tokens":12,"completion_tokens":5,"cost_usd":0.001}\\n' | mlx26 llm ledger -
    """
    keys = by or ["purpose"]
    bad = [k for k in keys if k not in ("purpose", "model", "backend")]
    if bad:
        from mlx26.cli._errors import unknown_name

        raise unknown_name("--by key", bad[0], ("purpose", "model", "backend"))
    check_output(output, force)
    from mlx26.core.llm import summarize

    emit(summarize(read_records(input, "jsonl"), keys), output, fmt, force=force, title="llm ledger")

