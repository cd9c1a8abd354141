"""``mlx26 quantize-moe``: low-bit MoE experts with LQER or TileQ low-rank error compensation.

Thin wrapper over ``mlx26.core.quantize_moe`` — our reconstruction of TileQ (Gu, Chen, Hu, Liu,
ICML 2026) on top of LQER/L2QER; see docs/quantize-moe.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli._errors import UsageError, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    ConfigOpt,
    FieldOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    PrintConfigOpt,
    QuietOpt,
    SeedOpt,
    check_output,
    emit,
    notice,
    print_config_requested,
    read_text,
)
from mlx26.cli._plot import ForceOutPlotOpt, QuantizePlotOpt, check_plot, wrote
from mlx26.core.quantize_moe.spec import BASES, BITS, CLUSTERS, LOWRANKS, RUNTIMES

# The terminal table shows these first, as many as fit (--columns all: every field; JSON/CSV carry all).
TABLE = ("record", "layer", "projection", "rank", "err_base", "err_lowrank", "extra_bytes", "total_extra_bytes",
         "extra_ratio_vs_lqer", "ppl_fp", "ppl_base", "ppl_quantized")


def _choice(kind: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise unknown_name(kind, value, choices)
    return value


def _match(spec: str | None) -> int | None:
    if spec is None:
        return None
    kind, _, rank = spec.partition(":")
    if kind != "lqer" or not (rank.isascii() and rank.isdecimal()) or int(rank) < 1:
        raise UsageError(f"--match-memory must look like lqer:R with an integer R ≥ 1, not '{spec}'.")
    return int(rank)


def quantize_moe(
    ctx: typer.Context,
    model: Annotated[str, typer.Option("--model", help="A zoo NAME, a model folder, or a folder written by "
                                       "--out (then it is only evaluated).", metavar="MODEL")] = "tiny-moe",
    bits: Annotated[int, typer.Option("--bits", "-b", help="Bits per weight: 2, 3, 4 or 8.", metavar="N")] = 4,
    group_size: Annotated[int, typer.Option("--group-size", "-g", help="Input channels per (scale, zero).", metavar="N")] = 64,
    base: Annotated[str, typer.Option("--base", help="rtn | gptq | hqq (needs the hqq package).", metavar="TEXT")] = "rtn",
    lowrank: Annotated[str, typer.Option("--lowrank", help="none | lqer (per expert) | tileq (shared tiles).", metavar="TEXT")
                       ] = "tileq",
    rank: Annotated[int, typer.Option("--rank", "-r", help="Rank of the correction.", metavar="N")] = 8,
    rows: Annotated[int | None, typer.Option("--rows", help="TileQ row groups P (default 1, or searched).", metavar="N")] = None,
    cols: Annotated[int | None, typer.Option("--cols", help="TileQ column groups Q (default 1, or searched).", metavar="N")] = None,
    cluster: Annotated[str, typer.Option("--cluster", help="Expert grouping: " + " | ".join(CLUSTERS) + ".", metavar="TEXT")] = "index",
    match_memory: Annotated[str | None, typer.Option("--match-memory", metavar="lqer:R",
                                                     help="Pick TileQ's rank to use the extra memory of "
                                                     "per-expert LQER at rank R; without --rows/--cols also "
                                                     "search P, Q in 1, 2, 4, ..., E for the lowest calibration-"
                                                     "weighted error.")] = None,
    calib: Annotated[str | None, typer.Option("--calib", metavar="FILE|-", help="Calibration text (default: "
                                              "zoo stdlib-code train split).")] = None,
    calib_bytes: Annotated[int, typer.Option("--calib-bytes", help="Bytes of default calibration text.", min=256, metavar="N")
                           ] = 16384,
    eval_ppl: Annotated[str | None, typer.Option("--eval-ppl", metavar="FILE|-|heldout",
                                                 help="Perplexity text; 'heldout' = zoo stdlib-code held-out. The "
                                                 "summary gives each perplexity and the paired Δln ppl ± its "
                                                 "standard error over chunks of 8 windows.")
                        ] = None,
    eval_bytes: Annotated[int | None, typer.Option("--eval-bytes", help="Bytes of held-out text for 'heldout' "
                                                   "(default: the whole split).", min=256, metavar="N")] = None,
    bench_latency: Annotated[bool, typer.Option("--bench-latency", help="Time fused vs loop experts forward.")
                             ] = False,
    out: Annotated[str | None, typer.Option("--out", metavar="DIR", help="Save the quantized model here.")] = None,
    runtime: Annotated[str, typer.Option("--runtime", metavar="TEXT", help="Evaluate on fp32 (dequantized "
                                         "weights) | int4 (packed 4-bit weights, torch's int4 CPU kernel; "
                                         "--bits 4, group size 32/64/128/256).")] = "fp32",
    symmetric: Annotated[bool, typer.Option("--symmetric", help="Symmetric codes (zero point at the middle "
                                            "code; rtn and gptq), the layout --export needs.")] = False,
    export_to: Annotated[str | None, typer.Option("--export", metavar="DIR", help="Also write a compressed-tensors "
                                                  "(pack-quantized) checkpoint that transformers loads as is; "
                                                  "needs --bits 4 --symmetric --lowrank none.")] = None,
    plot: QuantizePlotOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOutPlotOpt = False,
    seed: SeedOpt = 0,
    quiet: QuietOpt = False,
    config: ConfigOpt = None,
    print_config: PrintConfigOpt = False,
) -> None:
    """Quantize MoE experts (RTN/GPTQ/HQQ) and compensate the error with LQER or TileQ factors.

    One record per layer and projection (err_base, err_lowrank, extra_bytes, extra_ratio_vs_lqer),
    then a summary record (perplexities, total extra memory, latency). Errors are the
    activation-weighted relative errors ‖(W − Ŵ)S‖/‖WS‖. TileQ here is a reconstruction from the
    paper's abstract (shared U_p, V_q and per-expert cores fitted by alternating SVDs).
    --plot FILE.png draws each projection's error against its extra memory: the base quantizer alone,
    LQER at the reference rank and TileQ (a folder already quantized has no such records: refused).

    \b
    Examples:
      mlx26 quantize-moe --bits 3 --lowrank lqer --rank 4 --calib-bytes 4096 --format jsonl
      mlx26 quantize-moe --bits 3 --lowrank tileq --match-memory lqer:4 --calib-bytes 4096 --format csv
    """
    if print_config_requested(ctx, print_config):
        return
    if bits not in BITS:
        raise UsageError(f"--bits must be one of {', '.join(map(str, BITS))}, got {bits}.")
    _choice("base", base, BASES)
    _choice("lowrank", lowrank, LOWRANKS)
    _choice("cluster", cluster, CLUSTERS)
    _choice("runtime", runtime, RUNTIMES)
    if group_size < 2:
        raise UsageError(f"--group-size must be ≥ 2, got {group_size}.")
    if rank < 1:
        raise UsageError(f"--rank must be ≥ 1, got {rank}.")
    for name, value in (("--rows", rows), ("--cols", cols)):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be ≥ 1, got {value}.")
    if lowrank != "tileq" and (rows is not None or cols is not None or match_memory is not None):
        raise UsageError("--rows, --cols and --match-memory apply to --lowrank tileq only.")
    matched = _match(match_memory)
    if calib == "-" and eval_ppl == "-":
        raise UsageError("--calib and --eval-ppl cannot both read stdin.")
    check_output(output, force)
    check_plot(plot, force)
    if out is not None and output not in (None, "-") and Path(out).absolute() == Path(output).absolute():
        raise UsageError("--out (the model folder) and -o (the records) name the same path.")
    if (Path(model) / "quantize_moe.json").is_file():
        if plot:
            raise UsageError(f"--plot draws a quantization run; {model} is already quantized and only evaluated.",
                             hint="drop --plot, or quantize the original model")
        # typer vendors its own click, so compare the parameter source by name
        given = [name for name in ("bits", "group_size", "base", "lowrank", "rank", "rows", "cols", "cluster",
                                   "match_memory", "symmetric")
                 if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") not in ("DEFAULT", "DEFAULT_MAP")]
        if given:
            notice(f"quantize-moe: {model} is already quantized; it is only evaluated, so "
                   + ", ".join("--" + g.replace("_", "-") for g in given) + " are ignored.", quiet)
    if base == "hqq":
        from mlx26.cli._errors import require

        require("hqq", "quantize-moe")
    if export_to is not None:
        from mlx26.cli._errors import ensure_installed

        ensure_installed("compressed_tensors", "quantize-moe")
        for other, name in ((out, "--out"), (output, "-o")):
            if other not in (None, "-") and Path(other).absolute() == Path(export_to).absolute():
                raise UsageError(f"--export and {name} name the same path.")
    from mlx26.core.zoo.registry import model_kind

    model_kind(model)  # an unknown name is an input error before torch loads (issue 31: fast errors)
    calib_text = read_text(calib, "the calibration text") if calib is not None else None
    eval_text = read_text(eval_ppl, "the evaluation text") if eval_ppl not in (None, "heldout") else None
    import torch
    from mlx26.core.quantize_moe import pipeline
    from mlx26.core.quantize_moe import run as qrun

    torch.manual_seed(seed)
    cfg = pipeline.Config(bits=bits, group_size=group_size, base=base, lowrank=lowrank, rank=rank, rows=rows,
                          cols=cols, cluster=cluster, match_lqer_rank=matched, seed=seed, symmetric=symmetric)
    if calib_text is None:
        calib_text = qrun.default_text("train", calib_bytes)
    if eval_ppl == "heldout":
        eval_text = qrun.default_text("heldout", eval_bytes)
    from mlx26.cli._progress import spinner

    with spinner(f"quantize-moe: loading {model}…", quiet=quiet) as say:
        records = qrun.run(model, cfg, calib_text, eval_text, bench_latency, out, force,
                           warn=lambda m: notice(m, quiet), status=lambda text: say(f"quantize-moe: {text}"),
                           runtime=runtime, export_to=export_to)
    if out is not None:
        notice(f"quantize-moe: saved the quantized model to {out}", quiet)
    if plot:
        from mlx26.core.quantize_moe.figure import draw

        wrote(draw(records, plot, title=f"quantize-moe {bits}-bit {base} + {lowrank}", force=force), quiet)
    emit(records, output, fmt, force=force, title="quantize-moe", columns=TABLE)
