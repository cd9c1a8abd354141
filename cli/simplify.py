"""``mlx26 simplify``: rule-based simplification of symbolic expressions (SimpliPy-style).

Thin wrapper over ``mlx26.core.simplify`` (Saegert & Köthe, ICML 2026). ``mlx26 simplify
INPUT`` is short for ``mlx26 simplify run INPUT`` (see ``DEFAULT_SUBCOMMANDS`` in main.py).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from mlx26.cli._engine import BatchSizeOpt, EngineOpt, NumCpusOpt, RayAddressOpt, check_engine, run_engine
from mlx26.cli._errors import RuntimeFailure, UsageError, unknown_name
from mlx26.cli._io import (
    VALUE_KEY,
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    InputFormat,
    InputFormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    RecordStream,
    answer_in_kind,
    check_output,
    emit,
    notice,
    write_text,
)
from mlx26.core.simplify.spec import DOMAINS, MODES

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)

ModeOpt = Annotated[str, typer.Option("--mode", help="sound: equal wherever the input is defined; "
                                      "lossy: equal where both sides are finite (SR training data).", metavar="TEXT")]
MaskOpt = Annotated[bool, typer.Option("--mask-constants", help="Fold constants into <constant> (SR skeletons).")]
RulesOpt = Annotated[str | None, typer.Option("--rules", help="Rules JSON file: ours (from `mine`) or a SimpliPy "
                                              "rule set ([[source, target], ...], re-verified on import); "
                                              "default: the shipped mined rules + identities.", metavar="FILE")]


def _mode(mode: str) -> str:
    if mode not in MODES:
        raise unknown_name("mode", mode, MODES)
    return mode


@app.command("run")
def run(
    input: Annotated[str, typer.Argument(help="Expressions, one a line, or JSONL {id, expr|prefix}; - = stdin.",
                                         metavar="INPUT")] = "-",
    mode: ModeOpt = "sound",
    mask_constants: MaskOpt = False,
    rules: RulesOpt = None,
    workers: Annotated[int, typer.Option("--workers", help="Processes for large inputs.", min=1, metavar="N")] = 1,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when any line could not be simplified.")
                      ] = False,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    batch_size: BatchSizeOpt = 2000,
    num_cpus: NumCpusOpt = None,
    input_format: InputFormatOpt = InputFormat.auto,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Simplify expressions: one infix expression a line, or JSONL with "expr" or "prefix".

    Writes {id, input, simplified, prefix, len_in, len_out} a line; a malformed line gives
    {id, input, error} and the stream goes on (exit 0, or 1 with --strict). --engine ray
    runs the same per-record work on Ray Data, in order (docs/scale-out.md).

    \b
    Examples:
      echo 'x1*x2/x2' | mlx26 simplify -
      printf 'x1 - x1\\nsin(x1)**2 + cos(x1)**2\\n' | mlx26 simplify - --format table
      echo 'x3*sin(2+1)/(x3*x3)' | mlx26 simplify - --mask-constants --format json
    """
    _mode(mode)
    check_engine(engine, ray_address, inputs=[input], num_cpus=num_cpus)
    if engine == "ray" and workers > 1:
        raise UsageError("--workers is for --engine local; with --engine ray use --num-cpus.")
    check_output(output, force)
    from mlx26.core import simplify as core

    ruleset = core.load_rules(rules) if rules else None
    # Blank lines are reported as errors, so ids stay line numbers and nothing is dropped silently.
    source = RecordStream(input, input_format, text_default="lines", keep_blank_lines=True)
    failures = [0]
    if workers > 1:
        records = _simplified(source, core, failures, mode=mode, mask_constants=mask_constants, rules=ruleset,
                              workers=workers)
    else:  # one batch function for both engines (core/simplify/records.py): the same output by construction
        from functools import partial

        from mlx26.core.simplify.records import simplify_records

        fn = partial(simplify_records, mode=mode, mask_constants=mask_constants,
                     rules=str(Path(rules).resolve()) if rules else None)
        records = _counted(run_engine(fn, source, engine=engine, ray_address=ray_address, batch_size=batch_size,
                                      num_cpus=num_cpus, description="simplify", unit="expr", quiet=quiet), failures)
    emit(records, output, fmt, force=force, title=f"simplify ({mode})")
    if failures[0]:
        notice(f"simplify: {failures[0]} line(s) could not be parsed or simplified (see their 'error').", quiet)
        if strict:
            raise RuntimeFailure(f"{failures[0]} line(s) failed.", hint="drop --strict to keep going")


def _counted(records: Iterator[dict[str, Any]], failures: list[int]) -> Iterator[dict[str, Any]]:
    for record in records:
        failures[0] += "error" in record
        yield record


def _simplified(source: RecordStream, core: Any, failures: list[int], *, workers: int, **kw: Any
                ) -> Iterator[dict[str, Any]]:
    """--workers N: parse in this process (per-line errors), simplify in chunks on a pool (so output streams)."""
    from mlx26.core.simplify.records import parse_record

    chunk_size = 20_000
    chunk: list[tuple[Any, str, Any]] = []
    for line, record in source:
        chunk.append(parse_record(line, record))
        if len(chunk) >= chunk_size:
            yield from _run_chunk(chunk, core, failures, workers, kw)
            chunk = []
    if chunk:
        yield from _run_chunk(chunk, core, failures, workers, kw)


def _run_chunk(chunk: list[tuple[Any, str, Any]], core: Any, failures: list[int], workers: int,
               kw: dict[str, Any]) -> Iterator[dict[str, Any]]:
    from mlx26.core.simplify.records import result_record

    valid = [parsed for _, _, parsed in chunk if isinstance(parsed, list)]
    results = iter(core.simplify_many(valid, workers=workers, **kw))
    for rid, text, parsed in chunk:
        out = next(results) if isinstance(parsed, list) else parsed
        failures[0] += isinstance(out, Exception)
        yield result_record(rid, text, parsed, out)


def _parse_either(text: str, core: Any) -> list[str]:
    try:
        return core.parse_infix(text)
    except core.ExpressionError as exc:
        raise UsageError(f"cannot parse '{text}': {exc}") from None


@app.command("equiv")
def equiv(
    a: Annotated[str, typer.Argument(help="First expression (infix).", metavar="EXPR1")],
    b: Annotated[str, typer.Argument(help="Second expression (infix).", metavar="EXPR2")],
    points: Annotated[int, typer.Option("--points", help="Points per point set.", min=8, max=1_000_000, metavar="N")] = 128,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the point sets.", min=0, metavar="N")] = 0,
    rtol: Annotated[float, typer.Option("--rtol", help="Relative tolerance.", metavar="NUMBER")] = 1e-6,
    domain: Annotated[str, typer.Option("--domain", help="strict: same domain too; intersection: "
                                        "compare where both are finite.", metavar="TEXT")] = "strict",
    rename: Annotated[bool, typer.Option("--rename", help="Allow renaming variables (also permutations of the "
                                         "same names; variables are paired by functional signature first).")
                      ] = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Numeric, domain-aware equivalence of two expressions; <constant> is fitted.

    Exit 0 when equivalent, 1 when not (like diff), 2 on a malformed expression.

    \b
    Examples:
      mlx26 simplify equiv 'sin(x1)**2 + cos(x1)**2' '1'
      mlx26 simplify equiv 'x1*<constant> + <constant>' '<constant>*(x1 + <constant>)' --format json
      mlx26 simplify equiv 'x1/x2' 'x2/x1' --rename
    """
    if domain not in DOMAINS:
        raise unknown_name("domain", domain, DOMAINS)
    if not 0 < rtol < 1:  # also refuses NaN; ≥ 1 would call nearly anything equal
        raise UsageError(f"--rtol must be in (0, 1), got {rtol}.")
    check_output(output, force)
    from mlx26.core import simplify as core

    pa, pb = _parse_either(a, core), _parse_either(b, core)
    details = core.equivalent_details(pa, pb, n_points=points, seed=seed, rtol=rtol, domain=domain,
                                      allow_renaming=rename)
    emit({"a": a, "b": b, **details}, output, fmt, force=force, title="simplify equiv")
    if not details["equivalent"]:
        raise typer.Exit(1)


@app.command("mine")
def mine(
    max_len: Annotated[int, typer.Option("--max-len", help="Longest source expression (tokens).", min=1, max=9, metavar="N")
                       ] = 5,
    n_vars: Annotated[int, typer.Option("--n-vars", help="Number of wildcards.", min=1, max=4, metavar="N")] = 2,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the fingerprint and verification points.", min=0, metavar="N")] = 0,
    operator: Annotated[list[str] | None, typer.Option("--operator", help="Operator to enumerate; repeatable "
                                                       "(default: the whole table).", metavar="TEXT")] = None,
    constants: Annotated[bool, typer.Option("--constants/--no-constants", help="Also mine <constant> rules.")
                         ] = True,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Mine verified rewrite rules by enumeration + numeric fingerprints (deterministic per seed).

    Writes the rules JSON (with its provenance: every parameter and the seed) to stdout or -o;
    --format jsonl/csv/tsv/table (or --field) gives the rules alone, one record each.

    \b
    Examples:
      mlx26 simplify mine --max-len 3 --n-vars 1 --operator neg --operator + | head -c 300
    """
    check_output(output, force)
    from mlx26.core import simplify as core

    if operator:
        unknown = [o for o in operator if o not in core.OPERATORS]
        if unknown:
            raise unknown_name("operator", unknown[0], core.OPERATORS)
    status = None if quiet or not sys.stderr.isatty() else (lambda msg: notice(f"mine: {msg}"))
    result = core.mine(max_len=max_len, n_vars=n_vars, seed=seed, operators=operator, constants=constants,
                       progress=status)
    if only_field is None and OutputFormat(fmt) in (OutputFormat.auto, OutputFormat.json):
        write_text(core.rules_json(result), output, force=force)  # the file `simplify --rules` reads
    else:
        rules = result["rules"]
        emit([r if isinstance(r, dict) else {"source": r[0], "target": r[1]} for r in rules], output, fmt, force=force,
             title="simplify mine: verified rules")
    notice(f"mine: {len(result['rules'])} verified rules", quiet)


@app.command("decontam")
def decontam(
    train: Annotated[str, typer.Option("--train", help="Training expressions (lines or JSONL); - = stdin.",
                                       metavar="FILE")],
    test: Annotated[str, typer.Option("--test", help="Test expressions (lines or JSONL).", metavar="FILE")],
    mode: ModeOpt = "sound",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the functional-image grid.", min=0, metavar="N")] = 0,
    image: Annotated[bool, typer.Option("--image/--no-image", help="Also match by functional image.")] = True,
    canonical: Annotated[bool, typer.Option("--canonical/--first-pass", help="Keys insensitive to variable "
                                            "renaming (signature order) and to a free scale/offset "
                                            "(default), or the first pass's first-appearance keys.")] = True,
    cancel: Annotated[bool, typer.Option("--cancel", help="Also cancel common polynomial factors of "
                                         "numerator and denominator (needs SymPy).")] = False,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    batch_size: BatchSizeOpt = 1000,
    num_cpus: NumCpusOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Drop training expressions equivalent to any test expression (skeleton or functional image).

    Streams over --train; the test set is indexed by hash. Counts go to stderr. --engine ray
    checks the training rows on Ray Data (each worker indexes the test set once).

    \b
    Examples:
      mlx26 simplify decontam --train <(printf 'x1+x1\\nsin(x2)\\n') --test <(printf '2*x1\\n')
      mlx26 simplify decontam --train <(printf 'x3/x1 + 2\\n(x1**2-1)/(x1-1)\\n') --test <(printf 'x2/x1\\nx1+1\\n') --cancel
    """
    _mode(mode)
    if train == "-" and test == "-":
        raise UsageError("--train and --test cannot both be stdin.")
    check_engine(engine, ray_address, inputs=[train, test], num_cpus=num_cpus)
    check_output(output, force)
    from mlx26.core import simplify as core

    train_source = RecordStream(train, text_default="lines")
    test_items = [_item(r) for _, r in RecordStream(test, text_default="lines")]
    if cancel:
        from mlx26.cli._errors import require

        require("sympy", "simplify")
    options = {"mode": mode, "seed": seed, "use_image": image, "canonical": canonical, "cancel": cancel}
    d = core.Decontaminator(test_items, **options)
    stats = d.stats
    if engine == "local":
        kept = d.filter(_item(r) for _, r in train_source)
    else:  # the same Decontaminator.verdict per row, on Ray; this process counts and keeps
        from functools import partial

        from mlx26.core.simplify.records import decontam_verdicts

        items = [_item(r) for _, r in train_source]
        verdicts = run_engine(partial(decontam_verdicts, test=test_items, options=options), items, engine=engine,
                              ray_address=ray_address, batch_size=batch_size, num_cpus=num_cpus,
                              description="simplify decontam", unit="rows", quiet=quiet)
        kept = (x for x, v in zip(items, verdicts, strict=True) if d.count(v))
    if stats["test_errors"]:
        # a test row we cannot read is contamination we cannot check: refuse rather than pass it silently
        raise UsageError(f"{stats['test_errors']} of {stats['test']} test expressions could not be parsed, so "
                         "training rows equivalent to them would go unchecked",
                         hint="fix or remove those rows of --test (`mlx26 simplify run --strict` names them)")
    as_lines = train_source.format == "lines"
    records = ({VALUE_KEY: x} if as_lines else x for x in kept)
    emit(records, output, answer_in_kind(fmt, output, train_source.format), force=force)
    notice(f"decontam: kept {stats['kept']} of {stats['train']} training rows (dropped {stats['dropped_skeleton']} "
           f"by skeleton, {stats['dropped_image']} by functional image; {stats['train_errors']} unparsable kept)",
           quiet)


def _item(record: dict[str, Any]) -> Any:
    return record[VALUE_KEY] if set(record) == {VALUE_KEY} else record


@app.command("bench")
def bench(
    n: Annotated[int, typer.Option("--n", help="Random expressions to compare.", min=1, metavar="N")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the expression generator.", min=0, metavar="N")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", help="SymPy time limit per expression (s).", metavar="NUMBER")] = 1.0,
    max_ops: Annotated[int, typer.Option("--max-ops", help="Operators per expression at most.", min=1, metavar="N")] = 10,
    mode: ModeOpt = "sound",
    throughput: Annotated[int, typer.Option("--throughput", help="Also time N expressions with 1 and 2 "
                                            "workers (0 = skip).", min=0, metavar="N")] = 0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Side by side with sympy.simplify on seeded random expressions: speed and length ratios.

    \b
    Examples:
      mlx26 simplify bench --n 20 --timeout 0.5 --format json
    """
    _mode(mode)
    if not 0 < timeout < 3600:  # also refuses NaN; ≤ 0 would time every SymPy call out and time the failures
        raise UsageError(f"--timeout must be in (0, 3600) seconds, got {timeout}.")
    check_output(output, force)
    from mlx26.cli._errors import require

    require("sympy", "simplify")
    from mlx26.cli._progress import Bar, spinner
    from mlx26.core import simplify as core

    with Bar("simplify bench · ours", total=n, unit="expr", quiet=quiet) as bar:
        def told(side: str, done: int, total: int) -> None:
            if side == "sympy" and bar.description.endswith("ours"):
                bar.phase("simplify bench · sympy.simplify", total)
            bar.update(done)

        result = core.bench(n=n, seed=seed, timeout=timeout, max_ops=max_ops, mode=mode,
                            progress=told if bar.active else None)
    if throughput:
        for workers in (1, 2):
            with spinner(f"simplify bench: throughput of {throughput} expressions, {workers} worker(s)…", quiet=quiet):
                t = core.throughput(n=throughput, seed=seed, workers=workers, max_ops=max_ops, mode=mode)
            result[f"throughput_w{workers}_expr_per_s"] = t.get("expr_per_s", t)
    emit(result, output, fmt, force=force, title="simplify bench (anchor: sympy.simplify)")
