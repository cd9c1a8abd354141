"""``mlx26 score-code``: step-level security scores along code (SecCodePRM, Yu et al., ICML 2026).

Thin wrapper over ``mlx26.core.score_code``. ``mlx26 score-code FILE`` is short for
``mlx26 score-code score FILE`` (see ``DEFAULT_SUBCOMMANDS`` in main.py).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from mlx26.cli import _score_code_eval
from mlx26.cli._engine import BatchSizeOpt, EngineOpt, NumCpusOpt, RayAddressOpt, check_engine, run_engine
from mlx26.cli._errors import BackendMissing, RuntimeFailure, UsageError, unknown_name
from mlx26.cli._io import (
    FORCE_ENV,
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
    read_records,
)
from mlx26.core.score_code.spec import AGGREGATORS, ANALYZERS, MODELS
from mlx26.core.score_code.spec import SEGMENT_MODES as SEGMENTS

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)
_score_code_eval.register(app)  # `score-code eval` (real code) lives in cli/_score_code_eval.py

InputsArg = Annotated[list[str] | None, typer.Argument(help="Python files or folders (their *.py); - = stdin.",
                                                       metavar="PATH…")]
ModelOpt = Annotated[str, typer.Option("--model", help="linear (fast) | transformer (small causal transformer).",
                                       metavar="KIND")]
ModelDirOpt = Annotated[str | None, typer.Option("--model-dir", help="Folder from `score-code train` "
                                                 "(default: the shipped models).", metavar="DIR")]
SegmentOpt = Annotated[str, typer.Option("--segment", help="Steps: block (blank-line separated, the paper's) | "
                                         "line | logical | ast.", metavar="MODE")]
AggOpt = Annotated[str, typer.Option("--agg", help="softmax (paper) | min | mean | last | lse | cvar.", metavar="NAME")]
TauOpt = Annotated[float, typer.Option("--tau", help="Temperature of softmax and lse.", metavar="NUMBER")]
AlphaOpt = Annotated[float, typer.Option("--alpha", help="Tail fraction of cvar.", metavar="NUMBER")]
RuntimeOpt = Annotated[str, typer.Option("--runtime", help="auto | numpy | torch | onnx (onnxruntime). auto: numpy "
                                         "for linear, torch for transformer; onnx for --stream when installed.", metavar="NAME")]
OnnxOpt = Annotated[str | None, typer.Option("--onnx", help="ONNX file from `score-code export` (implies --runtime "
                                             "onnx; default: <kind>.onnx beside the model).", metavar="FILE")]
RUNTIME_CHOICES = ("auto", "numpy", "torch", "onnx")


def _segment(name: str) -> str:
    if name not in SEGMENTS:
        raise unknown_name("segmentation", name, SEGMENTS)
    return name


def _kind_and_dir(kind: str, model_dir: str | None) -> tuple[str, str | None]:
    """``--model linear|transformer`` with ``--model-dir``, or ``--model DIR`` (a folder holding one model)."""
    if kind in MODELS:
        return kind, model_dir
    folder = Path(kind)
    if not folder.is_dir():
        raise unknown_name("model", kind, MODELS, hint="give linear, transformer or a model folder")
    if model_dir is not None:
        raise UsageError("--model DIR and --model-dir both name a folder; give one.")
    kinds = [k for k in MODELS if (folder / f"{k}.npz").is_file()]
    if len(kinds) != 1:
        raise UsageError(f"{folder} holds {'no model' if not kinds else 'both models'}.",
                         hint=f"use --model {'|'.join(MODELS)} --model-dir {folder}")
    return kinds[0], str(folder)


def _model(kind: str, model_dir: str | None, runtime: str = "auto", onnx: str | None = None, *,
           stream: bool = False, quiet: bool = False) -> Any:
    """The PRM ``kind`` (or a model folder) running in ``runtime`` (auto: see RuntimeOpt)."""
    from mlx26.cli._errors import require

    kind, model_dir = _kind_and_dir(kind, model_dir)
    if runtime not in RUNTIME_CHOICES:
        raise unknown_name("runtime", runtime, RUNTIME_CHOICES)
    if onnx is not None:
        if runtime not in ("auto", "onnx"):
            raise UsageError(f"--onnx runs the model in onnxruntime; it cannot be combined with --runtime {runtime}.")
        runtime = "onnx"
    auto_onnx = False
    if runtime == "auto":
        from mlx26.core.score_code.runtime import default_onnx_path, onnx_available

        runtime = "numpy" if kind == "linear" else "torch"
        if stream and default_onnx_path(kind, model_dir).is_file() and onnx_available():
            runtime, auto_onnx = "onnx", True
    if runtime == "onnx":
        require("onnxruntime", "onnx")
        require("onnx", "onnx")
    if kind == "transformer" or runtime == "torch":
        require("torch", "torch")
    from mlx26.core.common.errors import Mlx26Error
    from mlx26.core.score_code import load_model
    from mlx26.core.score_code.runtime import with_runtime

    loaded = load_model(kind, model_dir)
    try:
        return with_runtime(loaded, runtime, model_dir=model_dir, onnx_path=onnx)
    except Mlx26Error as exc:
        if not auto_onnx:
            raise
        # --stream chose onnxruntime by itself: a stale or broken .onnx falls back, and says so.
        native = "numpy" if kind == "linear" else "torch"
        notice(f"score-code: not using onnxruntime ({exc.message}); streaming with --runtime {native}.", quiet)
        if native == "torch":
            require("torch", "torch")
        return with_runtime(loaded, native, model_dir=model_dir)


def _sources(inputs: list[str] | None, quiet: bool) -> Iterator[Any]:
    """Sources from files, folders and stdin; empty/binary ones are skipped with a notice."""
    from mlx26.core.score_code import source as src

    paths = list(src.iter_paths(inputs or ["-"]))
    if not paths:  # folders without any *.py: say so rather than print nothing
        raise UsageError(f"no Python files (*.py) in {', '.join(inputs or [])}.")
    missing = next((p for p in paths if p != "-" and not Path(p).exists()), None)
    if missing is not None:  # validate early: before any record is written
        raise UsageError(f"input file not found: {missing}")
    for path in paths:
        if path == "-":
            if sys.stdin is None or sys.stdin.isatty():
                raise UsageError("nothing piped to stdin.", hint="pipe code in (… | mlx26 score-code -) or give files")
            raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
            s = src.decode(raw, "stdin")
        else:
            try:
                s = src.read_path(path)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        for message in s.notices:
            notice(message, quiet)
        if not s.skipped:
            yield s


def _step(name: str, step: Any, score: float) -> dict[str, Any]:
    from mlx26.core.score_code.records import step_record

    return step_record(name, step, score)


def _mapped(fn: Any, sources: Iterator[Any], engine_opts: dict[str, Any], quiet: bool, description: str
            ) -> Iterator[dict[str, Any]]:
    """The rows of ``fn`` (core/score_code/records.py) over the sources, one engine or the other; notices to stderr."""
    if engine_opts["engine"] == "ray":
        import pickle

        try:
            pickle.dumps(fn)
        except Exception as exc:  # noqa: BLE001  (an onnxruntime session, a torch module on a device …)
            raise UsageError(f"this model cannot be sent to Ray workers ({type(exc).__name__}).",
                             hint="use --runtime numpy (linear) or torch with --engine ray") from None
    records = ({"name": s.name, "text": s.text} for s in sources)
    for result in run_engine(fn, records, **engine_opts, description=description, unit="files", quiet=quiet):
        for message in result["notices"]:
            notice(message, quiet)
        yield from result["rows"]


@app.command("score")
def score(
    inputs: InputsArg = None,
    model: ModelOpt = "linear",
    model_dir: ModelDirOpt = None,
    segment: SegmentOpt = "block",
    stream: Annotated[bool, typer.Option("--stream", help="Score stdin as lines arrive; a step is written "
                                         "once the next begins.")] = False,
    runtime: RuntimeOpt = "auto",
    onnx: OnnxOpt = None,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    batch_size: BatchSizeOpt = 64,
    num_cpus: NumCpusOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Score every step: s = p(safe) − p(vulnerable) in [−1, 1], from the code up to that step.

    Writes {file, step, start_line, end_line, text, score} per step. Scores are causal:
    appending code never changes the scores of earlier steps. Scores come from small models
    trained here (linear: real code; transformer: synthetic; see docs/score-code.md), not from
    the paper's LLM. --engine ray scores the files on Ray Data (batches of --batch-size files).

    \b
    Examples:
      printf 'import os\\n\\ndef f(p):\\n    os.system("ls " + p)\\n' | mlx26 score-code -
      printf 'x = 1\\n\\ny = input()\\n' | mlx26 score-code score - --stream --segment line
    """
    _segment(segment)
    check_engine(engine, ray_address, inputs=inputs or ["-"], num_cpus=num_cpus)
    if stream and engine != "local":
        raise UsageError("--stream scores stdin as it arrives, in this process; drop --engine ray.")
    check_output(output, force)
    m = _model(model, model_dir, runtime, onnx, stream=stream, quiet=quiet)
    if stream:
        if inputs not in (None, [], ["-"]) or output not in (None, "-"):
            raise UsageError("--stream reads stdin and writes stdout only.")
        _stream(m, segment, fmt)
        return
    from functools import partial

    from mlx26.core.score_code.records import score_sources

    engine_opts = {"engine": engine, "ray_address": ray_address, "batch_size": batch_size, "num_cpus": num_cpus}
    records = _mapped(partial(score_sources, model=m, segment=segment), _sources(inputs, quiet), engine_opts, quiet,
                      "score-code")
    emit(records, output, fmt, force=force, title=f"score-code ({model}, {segment} steps)")


def _stream(model: Any, segment: str, fmt: OutputFormat) -> None:
    from mlx26.core.score_code.stream import StreamScorer

    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("nothing piped to stdin.", hint="--stream scores code piped in as it arrives")
    if fmt not in (OutputFormat.auto, OutputFormat.jsonl):  # one JSON/CSV document needs the whole input
        raise UsageError(f"--stream writes JSONL, one record a step as it is scored; --format {fmt.value} "
                         "needs the whole input.", hint="drop --stream for other formats")
    scorer = StreamScorer(model, segment)
    form = OutputFormat.jsonl
    raw = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None
    lines = (iter(raw.readline, b"") if raw is not None else iter(sys.stdin.readline, ""))
    for line in lines:
        text = line.decode("utf-8", "surrogateescape") if isinstance(line, bytes) else line
        for step, value in scorer.feed(text):
            emit(_step("stdin", step, value), None, form)
    for step, value in scorer.close():
        emit(_step("stdin", step, value), None, form)


@app.command("detect")
def detect(
    inputs: InputsArg = None,
    agg: AggOpt = "softmax",
    tau: TauOpt = 0.1,
    alpha: AlphaOpt = 0.2,
    unit: Annotated[str, typer.Option("--unit", help="file | function (top-level defs and classes).", metavar="UNIT")] = "file",
    prefix: Annotated[float, typer.Option("--prefix", help="Partial code: score only this fraction of each "
                                          "file's lines (e.g. 0.5).", metavar="FRACTION")] = 1.0,
    top: Annotated[int, typer.Option("--top", help="Riskiest steps listed per verdict.", min=0, metavar="N")] = 3,
    fail_on_vuln: Annotated[bool, typer.Option("--fail-on-vuln", help="Exit 1 when any unit is vulnerable "
                                               "(for CI).")] = False,
    threshold: Annotated[float | None, typer.Option("--threshold", help="Vulnerable iff the aggregate is <= this; "
                                                    "default: the model's calibrated threshold (manifest) for this "
                                                    "--agg/--tau, else 0.", metavar="NUMBER")] = None,
    model: ModelOpt = "linear",
    model_dir: ModelDirOpt = None,
    segment: SegmentOpt = "block",
    runtime: RuntimeOpt = "auto",
    onnx: OnnxOpt = None,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    batch_size: BatchSizeOpt = 64,
    num_cpus: NumCpusOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """One verdict per file (or function): vulnerable iff the aggregated step score is ≤ the threshold.

    Writes {file, unit, start_line, end_line, steps, aggregate, vulnerable, riskiest}. Exit 0
    whatever the verdicts (findings are data) unless --fail-on-vuln. --engine ray judges the
    files on Ray Data.

    \b
    Examples:
      printf 'import pickle\\n\\ndef load(b):\\n    return pickle.loads(b)\\n' | mlx26 score-code detect - --format json
      printf 'import json\\n\\ndef load(b):\\n    return json.loads(b)\\n' | mlx26 score-code detect - --agg cvar --alpha 0.5
    """
    from mlx26.core.score_code.aggregate import aggregate
    from mlx26.core.score_code.detect import UNITS, prefix_text

    if agg not in AGGREGATORS:
        raise unknown_name("aggregator", agg, AGGREGATORS)
    if unit not in UNITS:
        raise unknown_name("unit", unit, UNITS)
    aggregate([0.0], agg, tau=tau, alpha=alpha)  # validates tau and alpha before any work
    if not 0 < prefix <= 1:
        raise UsageError(f"--prefix must be in (0, 1], got {prefix}.")
    _segment(segment)
    check_engine(engine, ray_address, inputs=inputs or ["-"], num_cpus=num_cpus)
    check_output(output, force)
    m = _model(model, model_dir, runtime, onnx)
    from functools import partial

    from mlx26.core.score_code.detect import operating_threshold
    from mlx26.core.score_code.records import detect_sources

    cut = threshold if threshold is not None else operating_threshold(model, model_dir, agg, tau)
    found = [0]

    def sources() -> Iterator[Any]:
        for s in _sources(inputs, quiet):
            if prefix < 1:
                s.text = prefix_text(s.text, prefix)
            yield s

    fn = partial(detect_sources, model=m, segment=segment, unit=unit, agg=agg, tau=tau, alpha=alpha, top=top,
                 threshold=cut)
    engine_opts = {"engine": engine, "ray_address": ray_address, "batch_size": batch_size, "num_cpus": num_cpus}

    def records() -> Iterator[dict[str, Any]]:
        for row in _mapped(fn, sources(), engine_opts, quiet, "score-code detect"):
            found[0] += row["vulnerable"]
            yield row

    emit(records(), output, fmt, force=force, title=f"score-code detect ({agg})")
    if fail_on_vuln and found[0]:
        raise RuntimeFailure(f"{found[0]} unit(s) judged vulnerable.", hint="drop --fail-on-vuln to always exit 0")


def _printable(text: str) -> str:
    from mlx26.core.score_code.source import printable

    return printable(text)


def _analyzer_names(values: list[str] | None) -> list[str]:
    names = [n.strip() for v in (values or ["bandit"]) for n in v.split(",") if n.strip()]
    for n in names:
        if n not in ANALYZERS:
            raise unknown_name("analyzer", n, ANALYZERS)
    return list(dict.fromkeys(names))


@app.command("label")
def label(
    inputs: InputsArg = None,
    analyzers: Annotated[list[str] | None, typer.Option(
        "--analyzers", help="bandit and/or semgrep; repeat or comma-join (default bandit).", metavar="NAME")] = None,
    rules: Annotated[list[str] | None, typer.Option(
        "--rules", help="Local semgrep rule file or folder; repeatable (default: the shipped rules). Registry "
        "configs are refused.", metavar="PATH")] = None,
    fixed: Annotated[str | None, typer.Option("--fixed", help="Fixed version of the (single) input: label the "
                                              "steps the fix changes, no analyzer.", metavar="FILE")] = None,
    annotations: Annotated[bool, typer.Option("--annotations", help="Label from '# ruleid:' comments, no "
                                              "analyzer.")] = False,
    label_mode: Annotated[str, typer.Option("--label-mode", help="local (overlapping steps) | monotone (every "
                                            "step from the first vulnerable one on).", metavar="MODE")] = "local",
    segment: SegmentOpt = "block",
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Step labels (1 = vulnerable) from analyzer findings, a fix diff or ruleid comments.

    Writes {file, step, start_line, end_line, text, label, rules} per step; usable as
    `score-code train --data`. semgrep runs offline: local rules only, --metrics=off.

    \b
    Examples:
      printf 'import subprocess\\n\\ndef f(c):\\n    subprocess.call(c, shell=True)\\n' | mlx26 score-code label - --segment line
      printf 'import os\\n# ruleid: shell\\nos.system(x)\\n' | mlx26 score-code label - --annotations --format json
    """
    from mlx26.core.score_code import labels as lab
    from mlx26.core.score_code.analyzers import AnalyzerMissing, available, check_rules, run
    from mlx26.core.score_code.segment import segment as split

    _segment(segment)
    if label_mode not in lab.LABEL_MODES:
        raise unknown_name("label mode", label_mode, lab.LABEL_MODES)
    names = [] if (fixed or annotations) else _analyzer_names(analyzers)
    if "semgrep" in names:
        check_rules(rules or [])
    for n in names:
        if not available(n):
            raise BackendMissing(f"the analyzer '{n}' is not installed.", hint="pip install 'mlx26[score-code]'")
    check_output(output, force)
    sources = list(_sources(inputs, quiet))
    if fixed and len(sources) != 1:
        raise UsageError("--fixed needs exactly one input file (the vulnerable version).")
    findings: dict[str, list[tuple[int, int, str]]] = {s.name: [] for s in sources}
    if fixed:
        fixed_source = next(_sources([fixed], quiet), None)
        if fixed_source is None:
            raise UsageError(f"--fixed {fixed}: empty or binary file, nothing to diff against.")
        fixed_text = fixed_source.text
        findings[sources[0].name] = [(a, b, "fix-diff") for a, b in lab.diff_ranges(sources[0].text, fixed_text)]
    elif annotations:
        for s in sources:
            findings[s.name] = [(a, b, "ruleid") for a, b in lab.annotation_ranges(s.text)]
    else:
        for n in names:
            try:
                for f in run(n, {s.name: s.text for s in sources}, rules or []):
                    findings[f.file].append((f.start_line, f.end_line, f"{n}:{f.rule}"))
            except AnalyzerMissing as exc:
                raise BackendMissing(str(exc), hint="pip install 'mlx26[score-code]'") from None

    def records() -> Iterator[dict[str, Any]]:
        for s in sources:
            steps = split(s.text, segment)
            spans = findings[s.name]
            ys = lab.step_labels(steps, [(a, b) for a, b, _ in spans], label_mode)
            for st, y in zip(steps, ys, strict=True):
                hits = sorted({r for a, b, r in spans if a <= st.end_line and b >= st.start_line})
                yield {"file": s.name, "step": st.index, "start_line": st.start_line, "end_line": st.end_line,
                       "text": _printable(st.text), "label": y, "rules": hits}

    emit(records(), output, fmt, force=force, title=f"score-code label ({label_mode})")


@app.command("corpus")
def corpus(
    n: Annotated[int, typer.Option("--n", help="Number of files.", min=1, metavar="N")] = 100,
    seed: SeedOpt = 0,
    vulnerable_fraction: Annotated[float, typer.Option("--vulnerable-fraction", help="Share of vulnerable files.",
                                                       min=0.0, max=1.0, metavar="FRACTION")] = 0.5,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Synthetic Python files with source→sink vulnerabilities (6 CWEs) and safe counterparts.

    Writes {id, code, vulnerable_lines, cwe, pattern, vulnerable, hard, …} per file; the
    labels are the templates' ground truth. Deterministic for --seed.

    \b
    Examples:
      mlx26 score-code corpus --n 3 --seed 1 --format jsonl | head -c 400
    """
    check_output(output, force)
    from mlx26.core.score_code.corpus import generate

    emit((e.to_record() for e in generate(n, seed, vulnerable_fraction)), output, fmt, force=force,
         title="score-code corpus (synthetic)", columns=("id", "cwe", "pattern", "vulnerable", "hard", "code"))


@app.command("train")
def train(
    out: Annotated[str, typer.Option("--out", help="Folder for the model files and manifest.json.", metavar="DIR")],
    data: Annotated[str | None, typer.Option("--data", help="JSONL of {code, vulnerable_lines} or of labelled "
                                             "steps (from `label`); default: a synthetic corpus.",
                                             metavar="FILE")] = None,
    sven: Annotated[str | None, typer.Option("--sven", help="Train on real code: SVEN's fixes (this folder, with "
                                             "train/ and val/), installed library code and a synthetic minority; "
                                             "calibrates the threshold (see docs).", metavar="DIR")] = None,
    n_files: Annotated[int, typer.Option("--n-files", help="Synthetic files when no --data.", min=2, metavar="N")] = 1500,
    model: Annotated[list[str] | None, typer.Option("--model", help="linear and/or transformer; repeatable "
                                                    "(default both).", metavar="KIND")] = None,
    epochs: Annotated[int, typer.Option("--epochs", help="Transformer epochs.", min=1, metavar="N")] = 10,
    seed: SeedOpt = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace model files already in --out (and an existing "
                                        "--output file).", envvar=FORCE_ENV)] = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    quiet: QuietOpt = False,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Train the step scorers (seeded) into DIR: linear.npz, transformer.npz, manifest.json.

    Class-balanced losses; the transformer uses MLX26_THREADS (default 1 thread here).

    \b
    Examples:
      mlx26 score-code train --model linear --n-files 60 --out prm-example --force --format json
      mlx26 score-code train --sven sven --model linear --out prm-real --format json   # sven/train/cwe-089.jsonl …
    """

    check_output(output, force)
    kinds = list(dict.fromkeys(model or MODELS))
    for k in kinds:
        if k not in MODELS:
            raise unknown_name("model", k, MODELS)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--out is a file, not a folder: {out}")
    clash = [k for k in kinds if (folder / f"{k}.npz").exists()]
    if clash and not force:
        raise UsageError(f"{out} already holds {', '.join(k + '.npz' for k in clash)}.", hint="add --force to replace")
    if "transformer" in kinds:
        from mlx26.cli._errors import require

        require("torch", "torch")
    from mlx26.core.common.seeding import seed_everything
    from mlx26.core.score_code import train as core

    seed_everything(seed)
    if sven is not None:
        if data:
            raise UsageError("give --sven DIR or --data FILE, not both")
        from mlx26.core.score_code.realtrain import train_real

        folder.mkdir(parents=True, exist_ok=True)
        with _models_bar(kinds, quiet) as told:
            entry = train_real(sven, str(folder), models=kinds, seed=seed, epochs=epochs, progress=told)
        emit(entry, output, fmt, force=force, title="score-code train")
        return
    if data:
        records = list(read_records(data, "jsonl"))
        note: dict[str, Any] = {"source": Path(data).name}
    else:
        from mlx26.core.score_code.corpus import generate

        records = [e.to_record() for e in generate(n_files, seed)]
        note = {"source": "synthetic corpus (mlx26.core.score_code.corpus)", "generator_seed": seed,
                "n_files": n_files}
    folder.mkdir(parents=True, exist_ok=True)
    with _models_bar(kinds, quiet) as told:
        entry = core.train(records, str(folder), models=kinds, seed=seed, epochs=epochs, data_note=note,
                           progress=told)
    emit(entry, output, fmt, force=force, title="score-code train")


@contextlib.contextmanager
def _models_bar(kinds: list[str], quiet: bool):
    """The ``progress`` for core's train: each message as a notice and, on a terminal, a bar over the models
    (one done at each "KIND: trained in …") whose text is the latest message (the transformer's epochs)."""
    if quiet:
        yield None
        return
    from mlx26.cli._progress import Bar

    with Bar("score-code train", total=len(kinds), unit="models", status=f"{kinds[0]}…") as bar:
        def told(message: str) -> None:
            notice(message)
            if ": trained in " in message:
                bar.advance()
            bar.set_status(message if len(message) <= 60 else message[:59] + "…")

        yield told


@app.command("export")
def export(
    model: Annotated[str, typer.Option("--model", help="linear | transformer | DIR (a `score-code train` folder "
                                       "holding one model).", metavar="KIND|DIR")] = "linear",
    model_dir: ModelDirOpt = None,
    onnx: Annotated[str, typer.Option("--onnx", help="The ONNX file to write.", metavar="OUT.onnx")] = "",
    opset: Annotated[int, typer.Option("--opset", help="ONNX opset of the graph (linear 13+, transformer "
                                       "14-20).", metavar="N")] = 17,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --onnx (and --output) file.",
                                        envvar=FORCE_ENV)] = False,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    quiet: QuietOpt = False,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Export a PRM to ONNX for onnxruntime; prints the manifest stored in the file.

    The manifest (in the file's metadata) records the opset, a hash of the featuriser the model
    expects and a hash of the source weights: `--runtime onnx` refuses a file whose hashes do
    not match. Featurisation stays in Python; the graph holds the model's arithmetic.
    --model DIR exports a `score-code train` folder that holds one model.

    \b
    Examples:
      mlx26 score-code export --model linear --onnx linear.onnx --force
      mlx26 score-code export --model transformer --onnx transformer.onnx --opset 17 --force
    """
    from mlx26.cli._errors import require

    if not onnx:
        raise UsageError("give the file to write with --onnx OUT.onnx.")
    model, model_dir = _kind_and_dir(model, model_dir)
    check_output(onnx, force)
    check_output(output, force)
    require("onnx", "onnx")
    if model == "transformer":
        require("torch", "torch")
    from mlx26.core.score_code import load_model
    from mlx26.core.score_code.detect import operating_threshold
    from mlx26.core.score_code.onnx_export import export_onnx
    from mlx26.core.score_code.prm import manifest

    entry = manifest(model_dir).get("models", {}).get(model, {})
    rule = {"aggregate": entry.get("aggregate", "softmax"), "tau": float(entry.get("tau", 0.1))}
    rule["threshold"] = operating_threshold(model, model_dir, rule["aggregate"], rule["tau"])
    info = export_onnx(load_model(model, model_dir), onnx, opset=opset, operating_rule=rule)
    emit({"onnx": onnx, **info}, output, fmt, force=force, title="score-code export")


@app.command("rank")
def rank(
    candidates: Annotated[str | None, typer.Option("--candidates", help="JSONL of {id?, prefix?, candidate} "
                                                   "(also prompt/completion/code); - = stdin.",
                                                   metavar="FILE")] = None,
    prompt: Annotated[str | None, typer.Option("--prompt", help="Code prefix to continue with --llm.", metavar="TEXT")] = None,
    llm: Annotated[str | None, typer.Option("--llm", envvar="MLX26_LLM", metavar="SPEC",
                                            help="Generate candidates for --prompt with this backend "
                                                 "(see `mlx26 llm`).")] = None,
    n: Annotated[int, typer.Option("--n", help="Candidates to generate with --llm.", min=1, max=16, metavar="N")] = 4,
    temperature: Annotated[float, typer.Option("--temperature", help="Sampling temperature for --llm.", metavar="NUMBER")] = 0.8,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Tokens per generated candidate.", min=1, metavar="N")] = 256,
    best: Annotated[bool, typer.Option("--best", help="Keep only the best candidate per prefix.")] = False,
    agg: AggOpt = "softmax",
    tau: TauOpt = 0.1,
    alpha: AlphaOpt = 0.2,
    model: ModelOpt = "linear",
    model_dir: ModelDirOpt = None,
    segment: SegmentOpt = "block",
    runtime: RuntimeOpt = "auto",
    onnx: OnnxOpt = None,
    seed: SeedOpt = 0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
) -> None:
    """Rank candidate continuations by their aggregated step reward (prefix as causal context).

    Writes {group, id, rank, reward, steps, candidate}, best first within each prefix group.

    \b
    Examples:
      printf '%s\\n' '{"id": "a", "candidate": "import os\\nos.system(cmd)\\n"}' '{"id": "b", "candidate": "import subprocess\\nsubprocess.run([\\"ls\\", d])\\n"}' | mlx26 score-code rank --candidates - --format table
    """
    from mlx26.core.score_code.aggregate import aggregate

    if agg not in AGGREGATORS:
        raise unknown_name("aggregator", agg, AGGREGATORS)
    aggregate([0.0], agg, tau=tau, alpha=alpha)
    _segment(segment)
    if (candidates is None) == (prompt is None):
        raise UsageError("give --candidates FILE, or --prompt CODE with --llm SPEC.")
    if prompt is not None and not llm:
        raise UsageError("--prompt needs --llm SPEC (or MLX26_LLM) to generate candidates.",
                         hint="e.g. --llm scripted:FILE, --llm openai:URL#MODEL or --llm hf:PATH")
    check_output(output, force)
    m = _model(model, model_dir, runtime, onnx)
    if candidates is not None:
        rows = [_candidate(r, i) for i, r in enumerate(read_records(candidates, "jsonl"), 1)]
    else:
        from mlx26.cli._llm_options import llm_errors, open_llm

        with llm_errors():
            backend = open_llm(llm, purpose="score-code rank")
            result = backend.complete(prompt or "", n=n, temperature=temperature, max_tokens=max_tokens, seed=seed)
        rows = [{"group": "prompt", "id": f"gen{i}", "prefix": prompt or "", "candidate": t}
                for i, t in enumerate(result.texts)]
    emit(_ranked(rows, m, segment, agg, tau, alpha, best), output, fmt, force=force,
         title=f"score-code rank ({agg})")


def _candidate(r: dict[str, Any], line: int) -> dict[str, Any]:
    text = r.get("candidate", r.get("completion", r.get("code")))
    if not isinstance(text, str):
        raise UsageError(f"candidates line {line}: needs a 'candidate' (or 'completion'/'code') string.")
    prefix = r.get("prefix", r.get("prompt", ""))
    if not isinstance(prefix, str):
        raise UsageError(f"candidates line {line}: 'prefix' (or 'prompt') must be a string.")
    return {"group": r.get("group", prefix[-60:] if prefix else ""), "id": r.get("id", line),
            "prefix": prefix, "candidate": text}


def _ranked(rows: list[dict[str, Any]], model: Any, segment: str, agg: str, tau: float, alpha: float,
            best: bool) -> list[dict[str, Any]]:
    from mlx26.core.score_code import score_text
    from mlx26.core.score_code.detect import candidate_reward
    from mlx26.core.score_code.segment import split_lines

    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        prefix = r["prefix"]
        if prefix and not prefix.endswith("\n"):
            prefix += "\n"
        scored = score_text(prefix + r["candidate"], model, segment)
        reward, n_steps = candidate_reward(scored.scores, scored.steps, len(split_lines(prefix)), agg=agg, tau=tau,
                                           alpha=alpha)
        groups.setdefault(str(r["group"]), []).append({"group": r["group"], "id": r["id"], "reward": reward,
                                                       "steps": n_steps, "candidate": _printable(r["candidate"])})
    out = []
    for items in groups.values():
        items.sort(key=lambda x: (x["reward"] != x["reward"], -x["reward"] if x["reward"] == x["reward"] else 0))
        for i, item in enumerate(items[:1] if best else items, 1):
            out.append({"group": item["group"], "id": item["id"], "rank": i, "reward": item["reward"],
                        "steps": item["steps"], "candidate": item["candidate"]})
    return out
