"""``mlx26 spec-bench serve-bench`` and ``report`` (registered on the group's app by cli/spec_bench.py)."""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _spec_bench as B
from mlx26.cli._errors import InputError, require
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    check_output,
    emit,
    notice,
)
from mlx26.core.spec_bench.spec import DEFAULT_CONCURRENCY, EMBEDDED

A = OutputFormat.auto


def register(app: typer.Typer) -> None:
    @app.command("serve-bench")
    def serve_bench_cmd(prompts: B.PoolArg = EMBEDDED,
                        url: Annotated[str | None, typer.Option("--url", help="Base URL of an OpenAI-compatible "
                                                                "server, e.g. http://127.0.0.1:8000/v1.", metavar="TEXT")] = None,
                        model: Annotated[str | None, typer.Option("--model", help="Model id on the server (default: "
                                                                  "--serve's target).", metavar="TEXT")] = None,
                        serve: Annotated[str | None, typer.Option("--serve", metavar="TARGET", help="Instead of "
                                                                  "--url: start `llm serve --llm hf:TARGET --draft "
                                                                  "DRAFT` in-process on a free loopback port.")] = None,
                        draft: B.DraftOpt = "tiny-llama-draft", k: B.KOpt = 4,
                        concurrency: Annotated[list[int] | None, typer.Option(
                            "--concurrency", "-c", help="Concurrency level; repeat (default 1 2 4 8 16).", metavar="N")] = None,
                        requests: Annotated[int, typer.Option("--requests", help="Requests per level (at least the "
                                                              "level).", min=1, metavar="N")] = 8,
                        max_tokens: B.MaxTokOpt = 32, per_category: B.PerCatOpt = None, limit: B.LimitOpt = None,
                        timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request.", metavar="NUMBER")] = 120.0,
                        output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
                        quiet: QuietOpt = False) -> None:
        """Concurrency sweep (streaming): TTFT, TPOT/ITL, tokens/s and AL scraped from /metrics, per level.

        AL comes from vLLM's spec_decode counters (null when the server exports none). With
        --serve, the report also has the engine's own AL (new tokens / target calls) per level.

        \b
        Examples:
          mlx26 spec-bench serve-bench --serve tiny-llama -c 1 -c 2 --requests 2 --max-tokens 8 --limit 4 --format json | head -c 300
        """
        if (url is None) == (serve is None):
            raise InputError("give exactly one of --url (a running server) and --serve TARGET.")
        if k <= 0:
            raise InputError(f"-k must be >= 1 (draft tokens per step), got {k}.")
        levels = concurrency or list(DEFAULT_CONCURRENCY)
        if any(c < 1 for c in levels):
            raise InputError(f"--concurrency values must be >= 1, got {levels}.")
        if url is not None and not model:
            raise InputError("--url needs --model (the id the server serves).")
        check_output(output, force)
        require("httpx", "spec")
        from mlx26.core.spec_bench.server_bench import sweep

        pool, _ = B.load_pool(prompts, per_category, limit)
        texts = [p.text for p in pool]
        if serve is None:
            levels_out = sweep(url, model, texts, levels, requests=requests, max_tokens=max_tokens, timeout=timeout)
            source = {"url": url, "model": model}
        else:
            if not draft:
                raise InputError("--serve needs --draft.")
            B.need_models()
            from mlx26.core.llm.server import LLMServer
            from mlx26.core.spec_bench.serving import SpecHFBackend

            backend = SpecHFBackend(serve, draft, k)
            with LLMServer(backend, model_name=model) as server:
                levels_out = []
                for level in levels:
                    start = len(backend.counters.log)
                    row = sweep(server.base_url, server.model_name, texts, [level], requests=requests,
                                max_tokens=max_tokens, timeout=timeout)[0]
                    log = backend.counters.log[start:]
                    calls = sum(e["target_calls"] for e in log)
                    row["engine_log_acceptance_length"] = sum(e["new_tokens"] for e in log) / calls if calls else None
                    levels_out.append(row)
            source = {"serve": serve, "draft": draft, "model": server.model_name}
        for row in levels_out:
            row.update(k=k if serve else None, max_tokens=max_tokens, **source)
            if row["errors"]:
                notice(f"Warning: concurrency {row['concurrency']}: {row['requests'] - row['ok']} failed request(s): "
                       f"{row['errors'][0]}", quiet)
        notice("spec-bench serve-bench: throughput on this CPU is CPU-specific (one model, requests serialised)", quiet)
        emit(levels_out, output, fmt, force=force, title="spec-bench serve-bench")

    @app.command("report")
    def report_cmd(reports: Annotated[list[str], typer.Argument(help="JSON reports of `run` and/or JSONL of "
                                                                "`serve-bench`.", metavar="REPORT...")],
                   png: Annotated[str | None, typer.Option("--png", metavar="DIR", help="Write al_by_category.png "
                                                           "and throughput_vs_concurrency.png here (matplotlib).")
                                  ] = None,
                   output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
                   quiet: QuietOpt = False) -> None:
        """Merge run / serve-bench reports into one table (and PNG plots): AL by category, throughput by level.

        \b
        Examples:
          mlx26 spec-bench run --per-category 1 --max-tokens 8 -o run.json --force -q && mlx26 spec-bench report run.json
        """
        check_output(output, force)
        if png:
            require("matplotlib", "spec")
        from mlx26.cli._io import read_numbered
        from mlx26.core.spec_bench import report

        loaded = []
        for path in reports:
            records = [r for _, r in read_numbered(path, "auto", text_default="jsonl")]
            loaded.append((path, records))
        rows = report.rows(loaded)
        if png:
            written = report.plots(rows, png, force=force)
            notice(f"spec-bench report: wrote {', '.join(written)}", quiet)
        emit(rows, output, fmt, force=force, title="spec-bench report")
