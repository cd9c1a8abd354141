"""The I/O contract shared by every mlx26 command (CONTRIBUTING.md, "The I/O contract").

* ``read_records`` / ``read_numbered``: a path or ``-`` (stdin) in JSON, JSONL, CSV, TSV or
  plain lines, chosen by ``--input-format``, else by the file extension, else by sniffing.
* ``emit``: one result (a mapping) or records (an iterable of mappings) as a rich table on a
  terminal, JSON / JSONL when piped, or the ``--format`` asked for; files are written
  atomically and never overwritten without ``--force``; a closed pipe ends the run quietly.
* The option types every command reuses (``InputArg``, ``OutputOpt``, ``FormatOpt``, …),
  ``--config`` handling and a stderr progress helper.

Only the standard library and typer are imported at module level: this module is on the
``mlx26 --help`` path. rich and yaml are imported when a table, progress bar or YAML file is used.
"""

from __future__ import annotations

import contextlib
import contextvars
import csv
import json
import math
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import Enum, StrEnum
from pathlib import Path
from typing import IO, Annotated, Any

import typer
from mlx26.cli._errors import UsageError, did_you_mean
from mlx26.core.common.files import atomic_writer, is_special


class InputFormat(StrEnum):
    auto = "auto"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"
    tsv = "tsv"
    lines = "lines"


class OutputFormat(StrEnum):
    auto = "auto"
    table = "table"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"
    tsv = "tsv"
    lines = "lines"


# Key under which plain lines and bare JSON scalars are stored in a record.
VALUE_KEY = "value"

_EXT_IN = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv",
           ".tab": "tsv", ".txt": "lines"}
_EXT_OUT = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv",
            ".txt": "lines"}


# --------------------------------------------------------------------------- shared options

def _config_keys(ctx: typer.Context) -> dict[str, str]:
    """Config key (the long option name, e.g. ``input-format``; an argument's name) → parameter name."""
    keys: dict[str, str] = {}
    for param in ctx.command.params:
        if param.name in (None, "config", "print_config"):
            continue
        longs = [opt[2:] for opt in param.opts if opt.startswith("--")]
        keys[longs[0] if longs else param.name.replace("_", "-")] = param.name
    return keys


def _load_config(ctx: typer.Context, param: Any, value: str | None) -> str | None:
    """Eager ``--config`` callback: file keys become defaults, so the command line still wins."""
    if not value:
        return value
    data = _read_config_file(value)
    keys = _config_keys(ctx)
    resolved: dict[str, Any] = {}
    for key, val in data.items():
        name = keys.get(str(key).replace("_", "-"))
        if name is None:
            suggestion = did_you_mean(str(key).replace("_", "-"), keys)
            raise UsageError(
                f"unknown key '{key}' in config file {value}." + (f" {suggestion}" if suggestion else ""),
                hint="valid keys: " + ", ".join(sorted(keys)),
            )
        param_obj = next(p for p in ctx.command.params if p.name == name)
        if (getattr(param_obj, "multiple", False) or getattr(param_obj, "nargs", 1) != 1) \
                and not isinstance(val, list):
            val = [val]  # `delta: 1e-5` in YAML means a one-item list for a repeatable option
        resolved[name] = val
    ctx.default_map = {**(ctx.default_map or {}), **resolved}
    return value


def _read_config_file(path: str) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"config file not found: {path}")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # yaml and json raise different types; both are malformed input
        raise UsageError(f"cannot parse config file {path}: {' '.join(str(exc).split())}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"config file {path} must hold a mapping of option names to values")
    return data


# -q and --field act through these: notice(), progress() and emit() read them, so a command that
# declares the option needs no plumbing of its own. main() resets them before every run.
_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("mlx26_quiet", default=False)
_FIELD: contextvars.ContextVar[str | None] = contextvars.ContextVar("mlx26_field", default=None)
# --columns: None = the command's order, as many as fit; ["*"] = all; else exactly these
_COLUMNS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("mlx26_columns", default=None)
# whether the running command has --input-format (hints name only options the command has)
_HAS_INPUT_FORMAT: contextvars.ContextVar[bool] = contextvars.ContextVar("mlx26_input_format", default=False)
# -o and --format as parsed, so the pair is checked at parse time, before any work
_OUTPUT: contextvars.ContextVar[tuple[str | None] | None] = contextvars.ContextVar("mlx26_output", default=None)
_FORMAT: contextvars.ContextVar[str | None] = contextvars.ContextVar("mlx26_format", default=None)


def reset_run_state() -> None:
    """Forget -q and --field of an earlier in-process run (tests call main() many times)."""
    _QUIET.set(False)
    _FIELD.set(None)
    _COLUMNS.set(None)
    _HAS_INPUT_FORMAT.set(False)
    _OUTPUT.set(None)
    _FORMAT.set(None)


def note_input_format(value: Any) -> Any:
    _HAS_INPUT_FORMAT.set(True)
    return value


def input_format_hint(advice: str, otherwise: str) -> str:
    """``advice`` (which names --input-format) when the running command has that option, else ``otherwise``."""
    return advice if _HAS_INPUT_FORMAT.get() else otherwise


def _remember_output(value: str | None) -> str | None:
    _OUTPUT.set((value,))
    if _FORMAT.get() is not None:
        output_format_for(_FORMAT.get() or "auto", value)
    return value


def _remember_format(value: Any) -> Any:
    fmt = OutputFormat(value).value
    _FORMAT.set(fmt)
    if _OUTPUT.get() is not None:
        output_format_for(fmt, _OUTPUT.get()[0])  # type: ignore[index]
    return value


def field_requested() -> bool:
    """Whether this run was given ``--field`` (a command writing exact text then goes through emit)."""
    return _FIELD.get() is not None


def quiet_requested() -> bool:
    """Whether this run was given ``-q`` (progress and notices stay off)."""
    return _QUIET.get()


def _remember_quiet(value: bool) -> bool:
    _QUIET.set(bool(value))
    return value


def _remember_field(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise UsageError("--field needs a field name.", hint="e.g. --field name; see --format json for the names")
    _FIELD.set(value)
    return value


def _remember_columns(value: str | None) -> str | None:
    if value is None:
        _COLUMNS.set(None)
        return value
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise UsageError("--columns needs column names or 'all'.", hint="e.g. --columns all or --columns name,sigma")
    _COLUMNS.set(["*"] if names == ["all"] else names)
    return value


InputArg = Annotated[str, typer.Argument(help="Input file, or - for stdin.", metavar="INPUT")]
InputFormatOpt = Annotated[
    InputFormat,
    typer.Option("--input-format", help="Input format; auto = from the extension, else sniffed.",
                 callback=note_input_format),
]
OutputOpt = Annotated[
    str | None, typer.Option("--output", "-o", help="Write here instead of stdout (atomic).", metavar="PATH",
                             callback=_remember_output)
]
# -o of a command that may also write text of its own (Markdown, HTML): no extension check at parse time
TextOutputOpt = Annotated[
    str | None, typer.Option("--output", "-o", help="Write here instead of stdout (atomic).", metavar="PATH")
]
FormatOpt = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="auto = table on a terminal, JSON/JSONL when piped or by -o extension "
                 "(.json .jsonl .csv .tsv .txt).", callback=_remember_format),
]
# Every --force reads MLX26_FORCE too (typer's envvar=): a Makefile rule re-runs with MLX26_FORCE=1.
FORCE_ENV = "MLX26_FORCE"
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite an existing --output file.", envvar=FORCE_ENV)]
ForceOutOpt = Annotated[bool, typer.Option("--force", help="Overwrite an existing --out (and --output) file.",
                                           envvar=FORCE_ENV)]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed; output is deterministic for a fixed seed.", min=0, metavar="N")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress or notices on stderr.",
                                        callback=_remember_quiet)]
FieldOpt = Annotated[
    str | None,
    typer.Option("--field", help="Print only this field of each record, one a line (for xargs, paste).",
                 callback=_remember_field, metavar="NAME"),
]
ColumnsOpt = Annotated[
    str | None,
    typer.Option("--columns", help="Table columns: all, or a,b,… [default: the command's own order, as many "
                 "as fit the terminal]. Data formats always carry every field.", callback=_remember_columns,
                 metavar="LIST"),
]
ConfigOpt = Annotated[
    str | None,
    typer.Option("--config", help="YAML/JSON file whose keys are option names; the command line wins.",
                 is_eager=True, callback=_load_config, metavar="FILE"),
]
PrintConfigOpt = Annotated[
    bool, typer.Option("--print-config", help="Print the resolved options as YAML and exit.")
]


def print_config_requested(ctx: typer.Context, print_config: bool) -> bool:
    """If ``--print-config`` was given, print the resolved options as YAML and return True."""
    if not print_config:
        return False
    import yaml

    resolved = {key: ctx.params.get(name) for key, name in _config_keys(ctx).items()}
    resolved = {k: (v.value if isinstance(v, Enum) else v) for k, v in resolved.items()}
    sys.stdout.write(yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True))
    return True


# --------------------------------------------------------------------------- reading

def open_input(path: str) -> IO[str]:
    """Open a path or ``-`` for text reading; fail at once when stdin is a terminal."""
    if path == "-":
        stdin = sys.stdin
        if stdin is None or stdin.isatty():
            raise UsageError("nothing piped to stdin.", hint="pipe data in (… | mlx26 …) or give a file path")
        try:  # under a C/POSIX locale Python decodes stdin with surrogateescape: bad bytes would pass silently
            stdin.reconfigure(encoding="utf-8-sig", errors="strict")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # a replaced stream, or reading already began
            pass
        return stdin
    p = Path(path)
    if not p.exists():
        raise UsageError(f"input file not found: {path}")
    if p.is_dir():
        raise UsageError(f"input is a directory, not a file: {path}")
    return open(p, encoding="utf-8-sig", newline="")


def read_text(path: str, what: str = "the input") -> str:
    """The whole UTF-8 text of a path or ``-``; non-UTF-8 bytes and blank input are one-line input errors
    (``what`` names the input in them), and stdin is left open."""
    stream = open_input(path)
    try:
        text = stream.read()
    except UnicodeDecodeError as exc:  # its args hold the whole input: never echo them
        raise UsageError(f"{what} ({'stdin' if path == '-' else path}) is not UTF-8 text "
                         f"({exc.reason} at byte {exc.start}).") from None
    finally:
        if stream is not sys.stdin:
            stream.close()
    if not text.strip():
        raise UsageError(f"{what} ({'stdin' if path == '-' else path}) is empty.")
    return text


def resolve_input_format(path: str, input_format: InputFormat | str, head: str, text_default: str) -> str:
    fmt = InputFormat(input_format).value
    if fmt != "auto":
        return fmt
    if path != "-":
        by_ext = _EXT_IN.get(Path(path).suffix.lower())
        if by_ext:
            return by_ext
    return sniff_format(head, text_default)


def sniff_format(head: str, text_default: str = "csv") -> str:
    """Guess the format of text from its first line(s).

    ``text_default`` is what non-JSON text is read as: "csv" lets a delimiter decide between
    CSV/TSV/plain lines; "lines" (for commands whose natural input is one item a line, such as
    expressions that may contain commas) skips delimiter sniffing.
    """
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    if first.startswith("["):
        return "json"
    if first.startswith("{"):
        try:
            return "jsonl" if isinstance(json.loads(first), dict) else "json"
        except json.JSONDecodeError:
            return "json"  # a pretty-printed object spans lines
    if text_default == "lines":
        return "lines"
    if "\t" in first:
        return "tsv"
    if "," in first:
        return "csv"
    return "lines"


class RecordStream:
    """Numbered records from a path or ``-``; the format is resolved on construction.

    Iterating yields ``(line_number, record)``; malformed input raises UsageError naming the
    line. JSONL, CSV, TSV and lines are streamed; a JSON document is read whole. A JSON scalar
    or a plain line becomes ``{"value": …}``. ``format`` lets a command answer in kind (CSV in,
    CSV out). ``keep_blank_lines`` yields blank plain lines too, for commands that report them.
    """

    def __init__(self, path: str, input_format: InputFormat | str = "auto", *, text_default: str = "csv",
                 keep_blank_lines: bool = False):
        self.path = path
        self.keep_blank_lines = keep_blank_lines
        self.name = "stdin" if path == "-" else path
        self._stream = open_input(path)
        self._head: list[str] = []
        try:
            for line in self._stream:
                self._head.append(line)
                if line.strip() or len(self._head) > 1000:
                    break
        except UnicodeDecodeError as exc:
            self.close()
            raise UsageError(f"{self.name} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
        self.format = resolve_input_format(path, input_format, "".join(self._head), text_default)

    def close(self) -> None:
        if self._stream is not sys.stdin:
            self._stream.close()

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        name, fmt = self.name, self.format
        lines = _chain(self._head, self._stream)
        try:
            if fmt == "json":
                yield from _read_json(name, "".join(lines))
            elif fmt == "jsonl":
                yield from _read_jsonl(name, lines)
            elif fmt in ("csv", "tsv"):
                yield from _read_csv(name, lines, "\t" if fmt == "tsv" else ",")
            else:
                for number, line in enumerate(lines, 1):
                    text = line.rstrip("\r\n")
                    if text.strip() or self.keep_blank_lines:
                        yield number, {VALUE_KEY: text}
        except UnicodeDecodeError as exc:
            raise UsageError(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
        finally:
            self.close()


def read_numbered(path: str, input_format: InputFormat | str = "auto", *, text_default: str = "csv"
                  ) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_number, record)`` pairs from a path or ``-``; see :class:`RecordStream`."""
    return iter(RecordStream(path, input_format, text_default=text_default))


def read_records(path: str, input_format: InputFormat | str = "auto", *, text_default: str = "csv"
                 ) -> Iterator[dict[str, Any]]:
    """Records from a path or ``-``; see :func:`read_numbered`."""
    return (record for _, record in read_numbered(path, input_format, text_default=text_default))


def _chain(head: list[str], rest: Iterable[str]) -> Iterator[str]:
    yield from head
    yield from rest


def _as_record(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {VALUE_KEY: value}


def _read_json(name: str, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{name} line {exc.lineno}: invalid JSON ({exc.msg}, column {exc.colno}).",
                         hint=input_format_hint("for one object a line use --input-format jsonl",
                                                "the input must be one JSON document, or one JSON object a line")) from exc
    except RecursionError:
        raise UsageError(f"{name}: JSON nested too deeply to read.") from None
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items, 1):
        yield index, _as_record(item)


def _read_jsonl(name: str, lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{name} line {number}: invalid JSON ({exc.msg}, column {exc.colno}).",
                             hint=input_format_hint("use --input-format lines to read each line as plain text",
                                                    "each line must be one JSON object")) from exc
        yield number, _as_record(value)


_CSV_EOF = "\ufdd0end-of-input\ufdd0"  # a noncharacter line after the input: inside a quote it shows the quote is open


def _with_eof(lines: Iterable[str]) -> Iterator[str]:
    yield from lines
    yield _CSV_EOF


def _read_csv(name: str, lines: Iterable[str], delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(_with_eof(lines), delimiter=delimiter)
    header: list[str] | None = None
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 26))  # 128 KiB default: long texts are real data
    for row in _csv_rows(name, reader):
        if header is None:
            if not any(cell.strip() for cell in row):
                continue
            header = [cell.strip() or f"column{i + 1}" for i, cell in enumerate(row)]
            duplicates = {h for h in header if header.count(h) > 1}
            if duplicates:
                raise UsageError(f"{name}: duplicate column name(s) in header: {', '.join(sorted(duplicates))}")
            continue
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            raise UsageError(f"{name} line {reader.line_num}: {len(row)} fields but the header has {len(header)}.",
                             hint="quote fields that contain the delimiter")
        yield reader.line_num, dict(zip(header, row + [""] * (len(header) - len(row)), strict=True))


def _csv_rows(name: str, reader: Any) -> Iterator[list[str]]:
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise UsageError(f"{name} line {reader.line_num}: unreadable CSV ({exc}).") from None
        if row == [_CSV_EOF]:
            return
        if row and row[-1].endswith(_CSV_EOF):  # csv's lenient mode would swallow the rest of the input
            raise UsageError(f"{name} line {start}: unterminated quoted field (a \" opened in this record is "
                             "never closed).", hint='close the quote, or write a literal quote inside one as ""')
        start = reader.line_num + 1
        yield row


def parse_number(text: Any) -> float | int | None:
    """An int or float from a cell (ints stay ints), or None when the cell is not a number."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return text
    if not isinstance(text, str):
        return None
    s = text.strip()
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return None


# --------------------------------------------------------------------------- writing

def check_output(output: str | None, force: bool) -> None:
    """Refuse an existing output file before any work is done (validate early)."""
    if output in (None, "-"):
        return
    if not output.strip():
        raise UsageError("the output path is empty.")
    p = Path(output)
    if p.is_dir():
        raise UsageError(f"output path is a directory: {output}")
    if is_special(p):  # /dev/null, a FIFO, a terminal: written through, nothing is overwritten
        return
    if os.path.lexists(p) and not force:  # lexists: a dangling link counts too
        raise UsageError(f"refusing to overwrite existing file {output}.", hint="add --force (or set MLX26_FORCE=1, e.g. in a Makefile) to replace it")
    parent = Path(os.path.realpath(p)).parent
    if not parent.exists():
        raise UsageError(f"output directory does not exist: {p.parent}")
    if not parent.is_dir():
        raise UsageError(f"cannot write {output}: {parent} is not a directory.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {output}: {parent} is not writable.")


def output_format_for(fmt: OutputFormat | str, output: str | None) -> str | None:
    """The format ``-o PATH`` implies under ``--format auto``; an extension we cannot write is an input error.

    None: no file, no extension (``-o results``), or a device such as /dev/null (then JSON/JSONL).
    """
    if OutputFormat(fmt) != OutputFormat.auto or output in (None, "-") or is_special(Path(output)):
        return None
    suffix = Path(output).suffix.lower()
    if not suffix:
        return None
    if suffix in _EXT_OUT:
        return _EXT_OUT[suffix]
    known = " ".join(sorted(_EXT_OUT))
    what = "YAML" if suffix in (".yaml", ".yml") else f"'{suffix}' files"
    raise UsageError(f"cannot write {what}: -o {output} has an extension mlx26 does not write.",
                     hint=f"use one of {known}, or give --format explicitly")


def resolve_output_format(fmt: OutputFormat | str, output: str | None, single: bool) -> str:
    fmt = OutputFormat(fmt).value
    if fmt != "auto":
        return fmt
    if output not in (None, "-"):
        by_ext = output_format_for(fmt, output)
        if by_ext:
            return by_ext
    elif _isatty(sys.stdout):
        return "table"
    return "json" if single else "jsonl"


def answer_in_kind(fmt: OutputFormat | str, output: str | None, input_format: str) -> OutputFormat:
    """``auto`` on a pipe answers in the input's own text format: CSV in, CSV out; lines in, lines out."""
    fmt = OutputFormat(fmt)
    if (fmt == OutputFormat.auto and output in (None, "-") and input_format in ("csv", "tsv", "lines")
            and not _isatty(sys.stdout)):
        return OutputFormat(input_format)
    return fmt


def _isatty(stream: IO[str] | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except ValueError:  # closed stream
        return False


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # numpy arrays and scalars, torch tensors; no numpy import needed
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (Path, set, frozenset)):
        return str(obj) if isinstance(obj, Path) else sorted(obj)
    if hasattr(obj, "__dataclass_fields__"):
        import dataclasses

        return dataclasses.asdict(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def _finite(value: Any) -> Any:
    """``value`` with NaN/±inf floats as None, recursively (strict JSON has no such numbers)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    try:
        return _finite(_json_default(value))
    except TypeError:
        return value


def to_json(value: Any, indent: int | None = None) -> str:
    """Strict JSON: a NaN or infinite number is written as null (bare NaN breaks jq, browsers, …)."""
    try:
        return json.dumps(value, default=_json_default, ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), default=_json_default, ensure_ascii=False, indent=indent,
                          allow_nan=False)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # round-trips exactly
    if isinstance(value, (dict, list, tuple)):
        return to_json(value)
    return str(value)


def _line(record: Mapping[str, Any]) -> str:
    """A record as one plain line: its ``value`` (or only) field, else the record as JSON."""
    if len(record) == 1:
        return _cell(next(iter(record.values())))
    if VALUE_KEY in record:
        return _cell(record[VALUE_KEY])
    return to_json(record)


# Display only (tables on a terminal): floats rounded, text on one line and cut with an ellipsis.
# Data formats (json/jsonl/csv/tsv/lines) never pass through here.
CELL_CHARS = 40
FLOAT_DIGITS = 4


def _display(value: Any, limit: int = CELL_CHARS) -> str:
    if isinstance(value, bool) or not isinstance(value, float):
        text = _cell(value)
    elif not math.isfinite(value):
        text = str(value)
    else:
        text = f"{value:.{FLOAT_DIGITS}g}"
    text = " ".join(text.split()) if ("\n" in text or "\t" in text) else text
    return text if len(text) <= limit else text[:max(limit - 1, 1)] + "…"


def _columns(records: list[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for record in records:
        for key in record:
            seen.setdefault(key, None)
    return list(seen)


def _write(stream: IO[str], data: Mapping[str, Any] | Iterable[Mapping[str, Any]], fmt: str,
           single: bool, title: str | None, preferred: Sequence[str] = ()) -> None:
    if fmt == "json":
        stream.write(to_json(data if single else list(data), indent=2) + "\n")
        return
    rows: Iterable[Mapping[str, Any]] = [data] if isinstance(data, Mapping) else data
    if fmt in ("jsonl", "lines"):
        for record in rows:  # streamed: records are written as they are produced
            stream.write((to_json(record) if fmt == "jsonl" else _line(record)) + "\n")
        return
    records = list(rows)
    if fmt in ("csv", "tsv"):
        columns = _columns(records)
        writer = csv.writer(stream, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        writer.writerow(columns)
        for record in records:
            writer.writerow([_cell(record.get(c)) for c in columns])
        return
    _write_table(stream, records, single, title, preferred)


def _write_table(stream: IO[str], records: list[Mapping[str, Any]], single: bool, title: str | None,
                 preferred: Sequence[str] = ()) -> None:
    """A rich table that fits the terminal, else one key/value block per record (like ``psql \\x``).

    Columns come in the command's preferred order, then the rest; on a terminal only those that fit
    at full header width are shown (a caption says how many are hidden and how to see them), unless
    ``--columns`` names them. A table written to a file or pipe keeps every column.
    """
    from rich.console import Console
    from rich.table import Table

    tty = _isatty(stream)
    console = Console(file=stream, width=None if tty else 160, soft_wrap=False)
    width = console.width
    table = Table(title=title, show_lines=False)
    if single:
        shown_keys = _known_columns(list(records[0]))
        items = [(k, v) for k, v in records[0].items()
                 if shown_keys is None or shown_keys == ["*"] or k in shown_keys]
        value_room = max(width - max((len(str(k)) for k, _ in items), default=3) - 7, 12)
        table.add_column("key", style="bold", no_wrap=True)
        table.add_column("value", no_wrap=True)
        for key, value in items:
            table.add_row(str(key), _display(value, value_room))
        console.print(table)
        return
    present = _columns(records)
    wanted = _known_columns(present)
    if wanted is not None and wanted != ["*"]:
        columns, choose = list(wanted), False
    else:
        columns = [c for c in preferred if c in present] + [c for c in present if c not in preferred]
        choose = tty and wanted is None
    # a cell's whole display text (floats rounded, whitespace folded); cut to `limit[c]` when shown
    full = {c: [_display(record.get(c), 10**9) for record in records] for c in columns}
    longest = {c: max([len(c)] + [len(v) for v in full[c]]) for c in columns}
    limit = {c: min(longest[c], max(len(c), CELL_CHARS)) for c in columns}
    if choose:  # keep, in order, every column that still fits at its full header width
        shown, used = [], 1
        for column in columns:  # in the command's order: the first that does not fit ends the table
            if used + limit[column] + 3 <= width:
                shown.append(column)
                used += limit[column] + 3
                continue
            text = any(isinstance(record.get(column), str) for record in records)
            if text and longest[column] > len(column) and width - used - 3 >= max(len(column), 16):
                limit[column] = width - used - 3  # a text column takes the rest of the line, cut with …
                shown.append(column)
            break
        hidden = len(columns) - len(shown)
        if len(shown) >= 2 or (shown and not hidden):
            if hidden:
                table.caption = f"{hidden} more column(s): --columns all, or --format json"
            columns = shown
    if tty:
        _fit_widths(columns, limit, longest, width)
    fits = sum(limit[c] for c in columns) + 3 * len(columns) + 1 <= width
    if not tty or fits:
        for column in columns:
            table.add_column(column, no_wrap=tty)
        for i in range(len(records)):
            table.add_row(*[_cut(full[c][i], limit[c]) for c in columns])
        console.print(table)
        return
    _write_vertical(stream, records, columns, title, width)


def _known_columns(present: list[str]) -> list[str] | None:
    """``--columns`` as given, less the names the output does not have (each named in a warning: the
    check comes after the job, which must not be lost to a typo). None: not given, or none known."""
    wanted = _COLUMNS.get()
    if wanted is None or wanted == ["*"] or not present:
        return wanted if present else None
    for name in (c for c in wanted if c not in present):
        suggestion = did_you_mean(name, present)
        notice(f"warning: --columns: no column '{name}' in the output." + (f" {suggestion}" if suggestion else "")
               + " Columns: " + ", ".join(present))
    known = [c for c in wanted if c in present]
    return known or None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(limit - 1, 1)] + "…"


def _fit_widths(columns: list[str], limit: dict[str, int], longest: dict[str, int], width: int) -> None:
    """Widths for a terminal: room left over goes to cut cells (the longest text first); a table too
    wide narrows its widest columns, never below the header or 8 characters, before it gives up."""
    room = width - (sum(limit[c] for c in columns) + 3 * len(columns) + 1)
    if room > 0:
        for column in sorted(columns, key=lambda c: longest[c] - limit[c], reverse=True):
            grow = min(room, longest[column] - limit[column])
            if grow > 0:
                limit[column] += grow
                room -= grow
    while room < 0:
        widest = max(columns, key=lambda c: limit[c] - max(len(c), 8))
        spare = limit[widest] - max(len(widest), 8)
        if spare <= 0:
            return
        take = min(spare, -room)
        limit[widest] -= take
        room += take


def _write_vertical(stream: IO[str], records: list[Mapping[str, Any]], columns: list[str], title: str | None,
                    width: int) -> None:
    key_width = max(len(c) for c in columns)
    room = max(width - key_width - 3, 12)
    if title:
        stream.write(f"{title}\n")
    for number, record in enumerate(records, 1):
        stream.write(f"─[ {number} ]" + "─" * max(width - len(str(number)) - 6, 4) + "\n")
        for column in columns:
            if column in record:
                stream.write(f"{column:<{key_width}} │ {_display(record[column], room)}\n")


def emit(
    data: Mapping[str, Any] | Iterable[Mapping[str, Any]],
    output: str | None = None,
    fmt: OutputFormat | str = "auto",
    *,
    force: bool = False,
    title: str | None = None,
    columns: Sequence[str] = (),
) -> None:
    """Write one result (a mapping) or records (an iterable of mappings).

    ``columns``: the order a terminal table shows fields in (most useful first); see _write_table.

    stdout: a closed pipe (``| head``) ends the run with exit 0 and no traceback.
    file: written to a temporary file in the same folder and renamed, so an interrupted or
    failed run leaves any previous file intact; an existing file needs ``force``.
    """
    single = isinstance(data, Mapping)
    resolved = resolve_output_format(fmt, output, single)
    field = _FIELD.get()
    if field is not None:
        rows: Iterable[Mapping[str, Any]] = [data] if isinstance(data, Mapping) else data
        data, single, resolved = _only_field(rows, field), False, "lines"
    if output in (None, "-"):
        with _quiet_broken_pipe():
            _write(sys.stdout, data, resolved, single, title, columns)
            sys.stdout.flush()
        return
    with atomic_output(output, force) as handle:
        _write(handle, data, resolved, single, title, columns)


def _only_field(rows: Iterable[Mapping[str, Any]], field: str) -> Iterator[dict[str, Any]]:
    """``--field NAME``: each record's NAME, one a line; a record without it is an input error."""
    for record in rows:
        if field not in record:
            suggestion = did_you_mean(field, list(record))
            raise UsageError(f"no field '{field}' in the output." + (f" {suggestion}" if suggestion else ""),
                             hint="fields: " + ", ".join(map(str, record)))
        yield {VALUE_KEY: record[field]}


class RecordSink:
    """Records produced one at a time by a long job (a training log), written as they come.

    ``--format auto`` to stdout is JSONL (``default``), streamed record by record, as are
    ``jsonl``/``lines`` and ``--field``; a file (``-o``) or a table/JSON/CSV collects the records
    and writes them at :meth:`close` (atomically, like :func:`emit`). The output is checked at
    construction, before any work.
    """

    def __init__(self, output: str | None, fmt: OutputFormat | str = "auto", *, force: bool = False,
                 title: str | None = None, default: str = "jsonl"):
        check_output(output, force)
        fmt = OutputFormat(fmt)
        to_stdout = output in (None, "-")
        self.fmt = OutputFormat(default) if fmt == OutputFormat.auto and to_stdout else fmt
        self.output, self.force, self.title = output, force, title
        self.streaming = to_stdout and (self.fmt in (OutputFormat.jsonl, OutputFormat.lines) or field_requested())
        self.records: list[Mapping[str, Any]] = []

    def __call__(self, record: Mapping[str, Any]) -> None:
        if self.streaming:
            emit([record], None, self.fmt)
        else:
            self.records.append(record)

    def close(self) -> None:
        if not self.streaming:
            emit(self.records, self.output, self.fmt, force=self.force, title=self.title)


@contextlib.contextmanager
def atomic_output(output: str, force: bool = False) -> Iterator[IO[str]]:
    """A text handle on a temporary file beside ``output``, renamed onto it only on success."""
    check_output(output, force)
    # a device or FIFO is written through; a symlink keeps the link; the mode is kept (core/common/files.py)
    with atomic_writer(output, "w", encoding="utf-8", newline="") as handle:
        yield handle


def write_text(text: str, output: str | None, *, force: bool = False) -> None:
    """Write exact text (e.g. a byte-stable JSON file) to stdout or atomically to a file."""
    if _FIELD.get() is not None:
        raise UsageError("--field picks a field of records; this output is text.", hint="drop --field")
    if output in (None, "-"):
        emit_raw(text)
        return
    with atomic_output(output, force) as handle:
        handle.write(text)


def emit_raw(text: str) -> None:
    with _quiet_broken_pipe():
        sys.stdout.write(text)
        sys.stdout.flush()


@contextlib.contextmanager
def _quiet_broken_pipe() -> Iterator[None]:
    """The reader went away (``| head``): silence the flush at exit too, then stop with exit 0."""
    try:
        yield
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0) from None


# --------------------------------------------------------------------------- stderr

def notice(message: str, quiet: bool = False) -> None:
    """A one-line notice or warning on stderr (never stdout)."""
    if not (quiet or _QUIET.get()):
        print(message, file=sys.stderr)


def progress(iterable: Iterable[Any], *, total: int | None = None, description: str = "working",
             quiet: bool = False, unit: str = "records") -> Iterator[Any]:
    """Iterate with a progress bar on stderr (only on a terminal, not quiet); see :mod:`mlx26.cli._progress`."""
    from mlx26.cli._progress import track

    yield from track(iterable, total=total, description=description, unit=unit, quiet=quiet)
