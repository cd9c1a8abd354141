"""Shared options and table loading of ``mlx26 judge-audit`` (standard library + typer at module level).

Every analysis subcommand takes the same table options; it passes ``ctx.params`` to
:func:`load_table`, which reads the records (or simulates them), maps the columns and applies
``--balance``. Figures from SIMULATED data are labelled: every output record gets ``data: SIMULATED``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from mlx26.cli._errors import InputError, UsageError, unknown_name
from mlx26.cli._io import InputFormat, note_input_format, notice
from mlx26.core.judge_audit.spec import HUMAN_SCALES, PRESETS, SIM_JUDGES, SIMULATED

InputOpt = Annotated[str | None, typer.Argument(help="Labelled audit table (CSV/TSV/JSON/JSONL), - = stdin; "
                                                "omit with --simulated.", metavar="INPUT")]
SimulatedOpt = Annotated[bool, typer.Option("--simulated", help="Audit a SIMULATED table (judge-audit "
                                            "simulate's defaults, --seed) instead of INPUT.")]
InputFormatOpt = Annotated[InputFormat, typer.Option("--input-format", help="auto = from the extension (.json, "
                                                     ".jsonl, .csv, .tsv), else sniffed from the first line (.txt "
                                                     "too: a table is never plain lines).",
                                                     callback=note_input_format)]
PresetOpt = Annotated[str | None, typer.Option("--preset", help="Column mapping of a known table: "
                                               + ", ".join(PRESETS) + " (the paper's released CSVs: Human_Judgement "
                                               "and any of its six judge columns; Id, Attack, Model, Behavior_ID "
                                               "used when present; see docs/judge-audit.md).", metavar="TEXT")]
IdOpt = Annotated[str | None, typer.Option("--id", help="Id column (unique); default: a unique column named 'id' "
                                           "if there is one, else record numbers.", metavar="COL")]
HumanOpt = Annotated[str | None, typer.Option("--human", help="Human label column (default 'human').", metavar="COL")]
HumanScaleOpt = Annotated[str, typer.Option("--human-scale", help=" | ".join(HUMAN_SCALES) + "; auto refuses "
                                            "ambiguous labels.", metavar="TEXT")]
HumanThresholdOpt = Annotated[float | None, typer.Option("--human-threshold", help="Harmful when label ≥ this "
                                                         "(default 3 on 1-5, 0.5 on 0-1).", metavar="NUMBER")]
JudgeOpt = Annotated[list[str] | None, typer.Option("--judge", help="Judge score column, NAME=COLUMN or COLUMN; "
                                                    "repeat.", metavar="NAME=COL")]
JudgeScaleOpt = Annotated[list[str] | None, typer.Option("--judge-scale", help="Score scale 0-1 (default), 1-5, "
                                                         "1-10, 0-100; NAME=SCALE for one judge; repeat.", metavar="TEXT")]
JudgeThresholdOpt = Annotated[float, typer.Option("--judge-threshold", help="Judge says harmful when its [0, 1] "
                                                  "score ≥ this.", metavar="NUMBER")]
BalanceOpt = Annotated[list[str] | None, typer.Option("--balance", help="Class-balance every cell of these "
                                                      "columns (crossed) by subsampling; repeat.", metavar="COL")]
CompleteOpt = Annotated[bool, typer.Option("--complete-cases", help="Keep only the items every selected judge "
                                           "scored, so judges are compared on the same items (the dropped count "
                                           "goes to stderr).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the simulator, balancing and bootstrap.", min=0, metavar="N")]
SliceOpt = Annotated[list[str] | None, typer.Option("--slice", help="Slice column; A,B crosses columns; repeat.",
                                                    metavar="COL")]
PlotOpt = Annotated[str | None, typer.Option("--plot", help="Also write a PNG (needs matplotlib: "
                                             "mlx26[judge-audit]).", metavar="PNG")]


_TABLE_EXT = (".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".tab")


def read_table(path: str, input_format: InputFormat | str = "auto") -> list[dict[str, Any]]:
    """The records of an audit table: never plain lines (a .txt file is sniffed like an unknown
    extension), every JSON(L) record an object, and a JSON-parse error on CSV-looking text hints csv."""
    from pathlib import Path

    from mlx26.cli._io import RecordStream, sniff_format

    fmt = InputFormat(input_format).value
    if fmt == "auto" and path != "-" and Path(path).suffix.lower() not in _TABLE_EXT and Path(path).is_file():
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            first = next((line for line in handle if line.strip()), "")
        fmt = sniff_format(first)  # .txt (lines by extension) and unknown extensions: sniffed
    stream = RecordStream(path, fmt)
    name, resolved = stream.name, stream.format
    sniffed = sniff_format("".join(stream._head))  # noqa: SLF001 (the first line, already read)
    if resolved == "lines":
        stream.close()
        raise InputError(f"{name} reads as plain lines (no comma, tab or JSON on its first line), not an audit "
                         "table.", "give a CSV/TSV/JSON/JSONL table with a header row (or --input-format csv|tsv)")
    records = []
    try:
        for number, record in stream:
            if resolved in ("json", "jsonl") and list(record) == ["value"]:
                where = "line" if resolved == "jsonl" else "record"
                raise InputError(f"{name} {where} {number}: not a JSON object ({str(record['value'])[:30]!r}); an "
                                 "audit table needs one object per record.")
            records.append(record)
    except InputError as exc:
        if resolved in ("json", "jsonl") and sniffed in ("csv", "tsv") and "invalid JSON" in exc.message:
            raise InputError(exc.message, f"the input looks like {sniffed.upper()}: give --input-format {sniffed} "
                             "(or leave it auto)") from None
        raise
    return records


def load_table(p: dict[str, Any], *, need_judges: bool = True, need_human: bool = True, check=None,
               group_columns=None):
    """The AuditTable for a command's ``ctx.params`` (reads INPUT, or simulates with --simulated).

    ``check(table)`` validates the command's own columns before any notice is printed, so an error
    is the only thing on stderr; empty cells of ``group_columns(table)`` (slices, --by, behaviour) become
    the named value '(missing)', with a notice."""
    from mlx26.core.judge_audit import simulate, table

    if p["human_scale"] not in HUMAN_SCALES:
        raise unknown_name("human scale", p["human_scale"], HUMAN_SCALES)
    if p.get("preset") and p["preset"] not in PRESETS:
        raise unknown_name("preset", p["preset"], PRESETS)
    preset: dict[str, Any] = dict(PRESETS[p["preset"]]) if p.get("preset") else {}
    if p.get("simulated"):
        if p.get("input") not in (None, "-"):
            raise UsageError("give either INPUT or --simulated, not both")
        records = simulate.simulate(seed=p["seed"])
        preset = {"id": "id", "human": "human", "judges": SIM_JUDGES, "slices": ("attack", "model")}
    else:
        records = read_table(p.get("input") or "-", p.get("input_format", "auto"))
    simulated = bool(records) and all(r.get("data") == SIMULATED for r in records[:50])
    early: list[str] = []  # notices printed once the table is built (an error comes first, alone)
    present = {k for r in records for k in r}
    id_col = p.get("id") or preset.get("id")
    if not p.get("id") and id_col and id_col not in present:
        early.append(f"no '{id_col}' column: items numbered instead")
        id_col = None
    if not id_col and "id" in present and not p.get("simulated"):
        values = [str(r.get("id", "")) for r in records]
        if len(set(values)) == len(values):
            id_col = "id"
            early.append("using column 'id' as the item id (--id COL to choose another)")
        else:
            early.append("column 'id' is not unique, so items are numbered instead (--id COL to choose one)")
    if p.get("preset"):
        preset["slices"] = tuple(c for c in preset.get("slices", ()) if c in present)
    judge_specs = p.get("judge") or list(preset.get("judges", ()))
    if not p.get("judge") and p.get("preset"):
        judge_specs = [j for j in judge_specs if j in present]
        missing = [j for j in preset.get("judges", ()) if j not in present]
        if missing and judge_specs:
            early.append(f"--preset {p['preset']}: judge column(s) {', '.join(missing)} absent; auditing "
                         f"{', '.join(judge_specs)}")
        elif not judge_specs:
            raise InputError(f"--preset {p['preset']}: none of its judge columns ({', '.join(preset['judges'])}) is "
                             "in the input.", "give --judge NAME=COLUMN, or check the file is the paper's table")
    judges = table.parse_judge_specs(judge_specs)
    if need_judges and not judges:
        raise UsageError("no judges: give --judge NAME=COLUMN (repeatable)", hint="or --preset coinflip / --simulated")
    tab = table.build(records, human=p.get("human") or preset.get("human", "human") if need_human else p.get("human"),
                      judges=judges, id_col=id_col,
                      human_scale=p["human_scale"] if p["human_scale"] != "auto" else preset.get("human_scale", "auto"),
                      human_threshold=p.get("human_threshold"),
                      judge_scales=table.parse_scales(p.get("judge_scale") or [], [n for n, _ in judges]),
                      judge_threshold=p.get("judge_threshold", 0.5), simulated=simulated)
    tab.preset = preset  # type: ignore[attr-defined]
    tab.notes[:0] = early
    if p.get("complete_cases") and tab.judges:
        import numpy as np

        keep = np.flatnonzero(np.all([tab.valid(j) for j in tab.judges], axis=0))
        if not len(keep):
            raise InputError("--complete-cases left no items: no item has a score from every judge.",
                             "select fewer judges, or drop --complete-cases")
        dropped = tab.n - len(keep)
        tab = tab.subset(keep)
        tab.preset = preset  # type: ignore[attr-defined]
        tab.notes = [n for n in tab.notes if "without a score dropped for this judge" not in n]
        tab.notes.append(f"--complete-cases: {dropped} item(s) without a score from every judge dropped; "
                         f"{tab.n} kept")
    if p.get("balance"):
        import numpy as np

        idx, notes = table.balanced_indices(tab, p["balance"], np.random.default_rng(p["seed"]))
        tab = tab.subset(idx)
        tab.preset = preset  # type: ignore[attr-defined]
        tab.notes += notes + [f"balanced by {' × '.join(p['balance'])}: {tab.n} items kept"]
    if check is not None:
        check(tab)
    if group_columns is not None:
        tab.notes += table.name_missing(tab, [c for c in group_columns(tab) if c in tab.columns])
    for note in tab.notes:
        notice(f"judge-audit: {note}", p.get("quiet", False))
    if tab.simulated:
        notice("judge-audit: SIMULATED data: these figures say nothing about real judges", p.get("quiet", False))
    return tab


def need_column(tab, columns, option: str, what: str) -> None:
    """An error naming the option to give when a column for ``what`` (--by, --behavior) is absent."""
    from mlx26.core.common.errors import did_you_mean

    for c in columns:
        if c not in tab.columns:
            guess = did_you_mean(c, tab.columns)
            raise InputError(f"no column '{c}' for {what}." + (f" {guess}" if guess else ""),
                             f"give {option}, one of: {', '.join(sorted(tab.columns))}")


def labelled(records, tab):
    """Records with ``data: SIMULATED`` when the table is simulated (every printed figure is labelled)."""
    if not tab.simulated:
        return list(records)
    return [{"data": SIMULATED, **r} for r in records]


WideOpt = Annotated[bool, typer.Option("--wide", help="On a terminal table show every column (default: a compact "
                                     "table: judge, slices, n, accuracy [95% CI], balanced accuracy, κ, AUROC, "
                                     "F1; n* = below --min-n). JSON/CSV/JSONL always carry every column.")]
COMPACT = {"balanced_accuracy": "bal. acc.", "kappa": "kappa", "auroc": "auroc", "f1": "f1"}


def _r(value) -> str:
    return "" if value is None else f"{value:.3f}"


def compact(records: list[dict[str, Any]], fmt, output, title: str) -> tuple[list[dict[str, Any]], str]:
    """The metrics records as a terminal table shows them by default (every column stays in JSON/CSV/JSONL).

    SIMULATED data is labelled in the table's title instead of a column; the ``slice`` column is left out when the
    slice columns say it all (one group besides ``all``), and the ``all`` row reads ``(all)`` there.
    """
    from mlx26.cli._io import resolve_output_format

    if resolve_output_format(fmt, output, False) != "table" or not records:
        return records, title
    if any(r.get("data") == SIMULATED for r in records):
        title += f" ({SIMULATED} data)"
    metric_keys = {"accuracy", "precision", "recall", "fpr", "fnr", "mcc", "prevalence", "low_n", "n", *COMPACT}
    slice_cols = [k for k in records[0] if k not in metric_keys | {"slice", "judge", "data"}
                  and not k.endswith(("_lo", "_hi"))]
    show_slice = len({r["slice"] for r in records} - {"all"}) > 1
    out = []
    for r in records:
        row = {"judge": r["judge"]}
        if show_slice:
            row["slice"] = r["slice"]
        for i, c in enumerate(slice_cols):
            row[c] = "(all)" if r["slice"] == "all" and i == 0 else ("" if r[c] is None else r[c])
        row["n"] = f"{r['n']}{'*' if r.get('low_n') else ''}"
        row["accuracy [95% CI]"] = (f"{_r(r['accuracy'])} [{_r(r['accuracy_lo'])}, {_r(r['accuracy_hi'])}]"
                                    if r.get("accuracy_lo") is not None else _r(r["accuracy"]))
        row.update({COMPACT[m]: _r(r[m]) for m in COMPACT})
        out.append(row)
    return out, title


def slices(specs: list[str] | None, default: tuple[str, ...]) -> list[tuple[str, ...]]:
    groups: list[tuple[str, ...]] = [()]
    for spec in specs if specs is not None else list(default):
        groups.append(tuple(c.strip() for c in spec.split(",") if c.strip()))
    return groups
