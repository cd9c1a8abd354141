"""``mlx26 table-decompose``: Orthogonal Hierarchical Decomposition of complex tables.

Thin wrapper over ``mlx26.core.table_decompose`` (a reconstruction of Cao et al., ICML 2026).
``mlx26 table-decompose INPUT`` is short for ``mlx26 table-decompose run INPUT`` (see
``DEFAULT_SUBCOMMANDS`` in main.py).
"""

from __future__ import annotations

import importlib.util
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli._engine import BatchSizeOpt, EngineOpt, NumCpusOpt, RayAddressOpt, check_engine, run_engine
from mlx26.cli._errors import BackendMissing, UsageError, require, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    TextOutputOpt,
    check_output,
    emit,
    field_requested,
    notice,
    open_input,
    write_text,
)
from mlx26.core.table_decompose.spec import (
    DEFAULT_RENDERS,
    FORMATS,
    GOLD_FORMATS,
    GOLD_SOURCES,
    RENDERS,
    SPLITS,
)

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)

# --input-format: the core's FORMATS (members auto, html, …, hitab_json = "hitab-json").
TableFormat = StrEnum("TableFormat", [(f.replace("-", "_"), f) for f in FORMATS])  # type: ignore[misc]


class Emit(StrEnum):
    lines = "lines"
    lineage = "lineage"
    trees = "trees"
    hitab_json = "hitab-json"
    markdown = "markdown"


class ArbiterName(StrEnum):
    rules = "rules"
    llm = "llm"


def _read(input: str, example: str | None) -> tuple[bytes, str]:
    if example is not None:
        if input != "-":
            raise UsageError("give either INPUT or --example, not both")
        from mlx26.core.table_decompose.examples import example_path

        path = example_path(example)
        return path.read_bytes(), path.name
    handle = open_input(input)  # validates the path, refuses an interactive stdin
    try:
        data = handle.buffer.read() if hasattr(handle, "buffer") else handle.read().encode("utf-8")
    finally:
        if input != "-":
            handle.close()
    return data, "stdin" if input == "-" else input


def _llm_arbiter(spec: str | None, cache: str | None):
    """A factory of LLMArbiters (one answer cache) over ``mlx26.core.llm``, or exit 3 without it."""
    import importlib

    try:
        llm = importlib.import_module("mlx26.core.llm")
    except ImportError as exc:
        raise BackendMissing("--arbiter llm needs the mlx26 LLM backend interface (mlx26.core.llm), which this "
                             "installation does not have", hint="use --arbiter rules (the default)") from exc
    from mlx26.core.table_decompose.arbiter import ArbiterCache, LLMArbiter

    backend = llm.get_backend(spec)  # a bad or missing spec is a usage error (exit 2)

    def chat(messages):
        return backend.chat(messages, temperature=0.0, max_tokens=64).text

    shared = ArbiterCache(cache)
    label = getattr(backend, "label", spec or "")
    return lambda: LLMArbiter(chat, cache=shared, model=label)


def _text_not_json(output: str | None, emit_as: Emit) -> None:
    """--emit lines/markdown write text: refuse an output name that promises JSON."""
    if output and emit_as in (Emit.lines, Emit.markdown) and output.lower().endswith((".json", ".jsonl")):
        raise UsageError(f"--emit {emit_as.value} writes text, not JSON, and -o {output} names a JSON file",
                         "use --emit lineage (records as JSON/JSONL), or a .txt/.md name")


def _ignored_llm(arbiter: ArbiterName, llm: str | None, llm_cache: str | None, quiet: bool) -> None:
    given = [name for name, value in (("--llm", llm), ("--llm-cache", llm_cache)) if value is not None]
    if arbiter == ArbiterName.rules and given:
        notice(f"table-decompose: {' and '.join(given)} ignored with --arbiter rules (give --arbiter llm)", quiet)


@app.command("run")
def run(
    inputs: Annotated[list[str] | None, typer.Argument(help="HTML, XLSX, CSV/TSV, Markdown or HiTab JSON tables, "
                                                       "or folders of them; - = stdin.", metavar="INPUT…")] = None,
    example: Annotated[str | None, typer.Option("--example", help="Decompose a shipped example instead: statcan, "
                                                "orchard-html|xlsx|csv, library-…, transit-… (tables made "
                                                "up for mlx26).", metavar="NAME")] = None,
    input_format: Annotated[TableFormat, typer.Option("--input-format", help="Input format; auto = from the "
                                                      "extension, else sniffed.")] = TableFormat("auto"),
    sheet: Annotated[str | None, typer.Option("--sheet", help="XLSX sheet name or 0-based index.", metavar="S")] = None,
    cell_range: Annotated[str | None, typer.Option("--range", help="XLSX: read only this A1 range of the sheet "
                                                   "(a sheet holding several tables gives the first, with a "
                                                   "notice).", metavar="A1:B2")] = None,
    table_index: Annotated[int | None, typer.Option("--table-index", help="Which table of an HTML/Markdown input "
                                                    "holding several (0-based).", min=0, metavar="N")] = None,
    emit_as: Annotated[Emit, typer.Option("--emit", help="lines: 'row path | col path = value' (units, totals: "
                                          "in lineage); lineage: a record per data cell; trees: column + row tree JSON; hitab-json; markdown.")
                       ] = Emit.lines,
    header_rows: Annotated[int | None, typer.Option("--header-rows", help="Force H, the number of header rows.",
                                                    min=0, metavar="N")] = None,
    header_cols: Annotated[int | None, typer.Option("--header-cols", help="Force L, the number of row-header "
                                                    "columns.", min=0, metavar="N")] = None,
    arbiter: Annotated[ArbiterName, typer.Option("--arbiter", help="Who resolves ambiguous decisions: rules "
                                                 "(deterministic) or llm (needs an LLM backend).")] = ArbiterName.rules,
    llm: Annotated[str | None, typer.Option("--llm", help="LLM spec for --arbiter llm (default $MLX26_LLM), e.g. "
                                            "openai:URL#MODEL or scripted:FILE.", metavar="SPEC")] = None,
    llm_cache: Annotated[str | None, typer.Option("--llm-cache", help="JSON file caching the model's answers by "
                                                  "case hash (reruns ask nothing).", metavar="FILE")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Overlapping merged cells are an error (exit 2) "
                                         "instead of being clipped.")] = False,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    batch_size: BatchSizeOpt = 16,
    num_cpus: NumCpusOpt = None,
    output: TextOutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Decompose a table into a column tree and a row tree; give every data cell its lineage.

    Every non-empty data cell gets its root-to-leaf row path and column path (dual-pathway
    lineage). Warnings (clamped spans, ragged rows, arbitration cases) go to stderr. An empty
    or header-only table gives empty lineage, exit 0 and a notice. --format applies to
    --emit lineage.

    Several INPUTs or a folder (its table files, sorted; other files skipped with a notice)
    are a stream of tables, each decomposed on its own: lineage records and tree documents
    gain a "table" field, lines a "TABLE: " prefix, markdown a "## TABLE" heading per table;
    --emit trees|hitab-json write one record per table (--format applies). --engine ray
    decomposes them on Ray Data (batches of --batch-size tables); the output is identical.

    \b
    Examples:
      mlx26 table-decompose --example statcan | head -3
      mlx26 table-decompose --example orchard-xlsx --emit markdown | head -5
      mlx26 table-decompose --example statcan --emit trees | head -12
      printf ',Sales,\\n,2023,2024\\nNorth,10,12\\nSouth,7,9\\n' | mlx26 table-decompose -
      printf '<table><tr><th></th><th colspan=2>Sales</th></tr><tr><td></td><td>2023</td><td>2024</td></tr><tr><td>North</td><td>10</td><td>12</td></tr></table>' | mlx26 table-decompose - --emit lineage --format jsonl
      mkdir -p tables && printf '<table><tr><td></td><td>2024</td></tr><tr><td>North</td><td>12</td></tr></table>' > tables/a.html && cp tables/a.html tables/b.html && mlx26 table-decompose tables
    """
    paths = list(inputs or ["-"])
    several = len(paths) > 1 or any(p != "-" and Path(p).is_dir() for p in paths)
    records_out = emit_as == Emit.lineage or (several and emit_as in (Emit.trees, Emit.hitab_json))
    if fmt != OutputFormat.auto and not records_out:
        one = emit_as in (Emit.trees, Emit.hitab_json)
        raise UsageError(f"--format applies to --emit lineage only (not --emit {emit_as.value}"
                         f"{' of one table' if one else ''})",
                         hint="over several tables --emit trees|hitab-json write records and take --format" if one
                         else None)
    if example is not None and paths != ["-"]:
        raise UsageError("give either INPUT or --example, not both")
    if paths.count("-") > 1:
        raise UsageError("stdin (-) can be read only once")
    _text_not_json(output, emit_as)
    _ignored_llm(arbiter, llm, llm_cache, quiet)
    check_engine(engine, ray_address, inputs=paths, num_cpus=num_cpus)
    if arbiter == ArbiterName.llm and engine == "ray":
        raise UsageError("--arbiter llm keeps its backend and answer cache in this process; it does not run on Ray.",
                         hint="use --engine local (or --arbiter rules on Ray)")
    check_output(output, force)
    factory = _llm_arbiter(llm, llm_cache) if arbiter == ArbiterName.llm else None
    from functools import partial

    from mlx26.core.table_decompose.records import decompose_tables

    tables = _tables(paths, example, input_format.value, several, quiet)
    options = {"sheet": sheet, "cell_range": cell_range, "table_index": table_index, "strict": strict,
               "header_rows": header_rows, "header_cols": header_cols}
    fn = partial(decompose_tables, emit=emit_as.value, options=options, stream=several, arbiter_factory=factory)
    if engine == "local" and not several:  # one table, as before: its errors unchanged
        results = iter(fn(list(tables)))
    else:
        results = run_engine(fn, tables, engine=engine, ray_address=ray_address, batch_size=batch_size,
                             num_cpus=num_cpus, description="table-decompose", unit="tables", quiet=quiet)

    def outputs():
        for result in results:
            where = f"{result['table']}: " if several else ""
            for message in result["notices"]:
                notice(f"table-decompose: {where}{message}", quiet)
            yield result
        if factory is not None:
            factory().cache.save()

    if records_out:
        rows = (row for r in outputs() for row in (r["output"] if emit_as == Emit.lineage else [r["output"]]))
        emit(rows, output, fmt, force=force, title="table-decompose " + ("lineage" if emit_as == Emit.lineage
                                                                            else emit_as.value))
    elif emit_as == Emit.lines:
        write_text("".join(x + "\n" for r in outputs() for x in r["output"]), output, force=force)
    elif emit_as == Emit.markdown:
        write_text(_markdown(outputs(), several), output, force=force)
    else:
        doc = list(outputs())[0]["output"]
        write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", output, force=force)


def _markdown(results, several: bool) -> str:
    """One table's markdown as before; several: each under a ``## TABLE`` heading, a blank line between."""
    if not several:
        return "".join(r["output"] for r in results)
    return "\n".join(f"## {r['table']}\n\n{r['output'] or '_(no data cells)_' + chr(10)}" for r in results)


def _tables(paths: list[str], example: str | None, input_format: str, several: bool, quiet: bool):
    """The tables to decompose, ``{table, data, format}`` each, read here (the driver); folders listed up front."""
    from mlx26.core.table_decompose.load import detect_format
    from mlx26.core.table_decompose.records import table_files

    if several:
        files, skipped = table_files(paths)
        for path, why in skipped:
            notice(f"table-decompose: skipped {path} ({why})", quiet)
        if not files:
            raise UsageError(f"no table files in {', '.join(paths)}.",
                             hint="table files end in .html, .xlsx, .csv, .tsv, .md or .json")
        missing = next((p for p in files if p != "-" and not Path(p).exists()), None)
        if missing is not None:  # validate early: before any table is decomposed
            raise UsageError(f"input file not found: {missing}")
        if input_format == "xlsx" or any(Path(p).suffix.lower() in (".xlsx", ".xlsm", ".xls") for p in files):
            require("openpyxl", "table")  # before any table is decomposed
    else:
        files = paths
    for path in files:
        data, name = _read(path, example)
        resolved = input_format if input_format != "auto" else detect_format(data, name)
        if resolved == "xlsx":
            require("openpyxl", "table")
        yield {"table": name, "data": data, "format": resolved}


@app.command("eval")
def evaluate(
    aitqa: Annotated[str | None, typer.Option("--aitqa", help="The AITQA folder (holding aitqa_tables.jsonl and "
                                              "aitqa_questions.jsonl, IBM/AITQA's raw_data/); needed for "
                                              "--gold-format aitqa: mlx26 ships no copy.", metavar="DIR")] = None,
    gold: Annotated[str | None, typer.Option("--gold", help="Gold tables: HiTab table JSON file/folder (--gold-format "
                                             "hitab), or AITQA's aitqa_tables.jsonl or its folder (like --aitqa).",
                                             metavar="FILE|DIR")] = None,
    gold_format: Annotated[str, typer.Option("--gold-format", help=" or ".join(GOLD_FORMATS) + ".", metavar="TEXT")] = "aitqa",
    render: Annotated[list[str] | None, typer.Option("--render", help="AITQA: how each table is rendered before "
                                                     "decomposing; repeatable: " + ", ".join(RENDERS) +
                                                     " (default: " + " and ".join(DEFAULT_RENDERS) + ").", metavar="TEXT")] = None,
    table: Annotated[list[str] | None, typer.Option("--table", help="AITQA table id to evaluate; repeatable.",
                                                    metavar="ID")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Evaluate the first N tables.", min=1, metavar="N")] = None,
    per_table: Annotated[bool, typer.Option("--per-table", help="Include per-table metrics.")] = False,
    tables: Annotated[str | None, typer.Option("--tables", help="mlx26 gold: the folder holding the annotated "
                                               "tables' source files (<table>.xlsx / .html), read in place.",
                                               metavar="DIR")] = None,
    source: Annotated[list[str] | None, typer.Option("--source", help="mlx26 gold: which source files to score; "
                                                     "repeatable: " + ", ".join(GOLD_SOURCES) + " (default: both).", metavar="TEXT")
                      ] = None,
    split: Annotated[str | None, typer.Option("--split", help="mlx26 gold: score only tables of this split (" +
                                              ", ".join(SPLITS) + ").", metavar="TEXT")] = None,
    arbiter: Annotated[ArbiterName, typer.Option("--arbiter", help="Who resolves ambiguous decisions (see run); "
                                                 "eval reports how often the LLM was consulted and changed a "
                                                 "rule's answer.")] = ArbiterName.rules,
    llm: Annotated[str | None, typer.Option("--llm", help="LLM spec for --arbiter llm (default $MLX26_LLM).",
                                            metavar="SPEC")] = None,
    llm_cache: Annotated[str | None, typer.Option("--llm-cache", help="JSON file caching the model's answers.",
                                                  metavar="FILE")] = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Score the decomposition against gold header paths; JSON metrics on stdout.

    Metrics, overall (micro over cells) and per table: exact match of the row path, the
    column path and both; header-region (H, L) accuracy; column/row tree edge F1. AITQA
    tables are rendered from their gold paths first (--render); shape-inconsistent ones are
    listed and skipped. mlx26 ships no dataset: --aitqa names the folder holding IBM/AITQA's
    aitqa_tables.jsonl and aitqa_questions.jsonl (its raw_data/).

    \b
    Examples:
      mlx26 table-decompose eval --aitqa AITQA/raw_data --table tab-5   # holds aitqa_tables.jsonl
      mlx26 table-decompose eval --gold AITQA/raw_data/aitqa_tables.jsonl --render html --limit 20
      mlx26 table-decompose eval --gold hitab/statcan.json --gold-format hitab
      mlx26 table-decompose eval --gold-format mlx26 --gold gold/statcan_12.json --tables hitab-statcan/ --split heldout

    mlx26 gold (--gold-format mlx26) is hand-annotated row and column paths per source table
    (format: tests/table_decompose/statcan_gold/README.md), scored on the original XLSX/HTML.
    """
    from mlx26.core.table_decompose import evaluate as ev

    if gold_format not in GOLD_FORMATS:
        raise unknown_name("gold format", gold_format, GOLD_FORMATS)
    for name in render or []:
        if name not in RENDERS:
            raise unknown_name("rendering", name, RENDERS)
    if aitqa is not None and gold is not None:
        raise UsageError("give either --aitqa DIR or --gold FILE|DIR, not both")
    if aitqa is not None and gold_format == "hitab":
        raise UsageError("--aitqa is the AITQA folder; with --gold-format hitab give --gold FILE|DIR")
    if gold_format != "mlx26" and (tables is not None or source or split is not None):
        raise UsageError("--tables, --source and --split apply to --gold-format mlx26")
    for name in source or []:
        if name not in GOLD_SOURCES:
            raise unknown_name("source format", name, GOLD_SOURCES)
    if split is not None and split not in SPLITS:
        raise unknown_name("split", split, SPLITS)
    _ignored_llm(arbiter, llm, llm_cache, False)
    check_output(output, force)
    factory = _llm_arbiter(llm, llm_cache) if arbiter == ArbiterName.llm else None
    if gold_format == "mlx26":
        if gold is None or tables is None:
            raise UsageError("--gold-format mlx26 needs --gold FILE|DIR and --tables DIR",
                             "the gold holds the paths; --tables the .xlsx/.html files they annotate")
        sources = source or list(GOLD_SOURCES)
        if not source and importlib.util.find_spec("openpyxl") is None:
            sources = [s for s in sources if s != "xlsx"]  # the default asks for both: score what can be read
            notice("table-decompose: openpyxl is not installed: scoring the .html sources only "
                   "(pip install 'mlx26[table]' for the .xlsx ones)")
        if "xlsx" in sources:
            require("openpyxl", "table")
        result = ev.eval_gold(gold, tables, formats=sources, split=split, arbiter=factory, limit=limit,
                              per_table=per_table)
        if factory is not None:
            factory().cache.save()
        _write_eval(result, output, fmt, force)
        return
    if gold_format == "hitab":
        if gold is None:
            raise UsageError("--gold-format hitab needs --gold FILE|DIR (no HiTab tables ship with mlx26)")
        result = ev.eval_hitab(gold, arbiter=factory, limit=limit, per_table=per_table)
    else:
        from mlx26.core.table_decompose.aitqa import TABLES_FILE, resolve

        resolve(aitqa if aitqa is not None else gold, TABLES_FILE)  # no folder, or a wrong one: exit 2 up front
        renders = render or list(DEFAULT_RENDERS)
        if "xlsx" in renders:
            require("openpyxl", "table")
        result = ev.eval_aitqa(aitqa if aitqa is not None else gold, renders=renders, tables=table, limit=limit,
                               per_table=per_table, arbiter=factory)
    _write_eval(result, output, fmt, force)


def _write_eval(result: dict, output: str | None, fmt: OutputFormat, force: bool) -> None:
    """The metrics JSON as before (auto/json); any other --format or --field goes through emit()."""
    from mlx26.core.table_decompose import evaluate as ev

    if OutputFormat(fmt) in (OutputFormat.auto, OutputFormat.json) and not field_requested():
        write_text(ev.dumps(result), output, force=force)
    else:
        emit(result, output, fmt, force=force, title="table-decompose eval")
