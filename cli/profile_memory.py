"""``mlx26 profile-memory``: profile the four-stage memory-processing pipeline and model its offload.

Thin wrapper over ``mlx26.core.profile_memory`` (He, Ma, Sun, Cong, ICML 2026; a reconstruction)
and the HLS kernels in ``mlx26.fpga``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli._errors import BackendMissing, RuntimeFailure, UsageError, require, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    check_output,
    emit,
    notice,
    resolve_output_format,
)
from mlx26.cli._plot import ForcePlotOpt, ProfilePlotOpt, check_plot, wrote
from mlx26.core.profile_memory.spec import BATCHED, DEVICES, DTYPES, FPGA_BACKENDS, PLACEMENTS
from mlx26.core.profile_memory.spec import PIPELINES as CORE_PIPELINES

PIPELINES = (*CORE_PIPELINES, "all")
COMPACT = ("pipeline", "stage", "device", "time_s", "share", "flops", "bytes", "intensity", "bound", "memory_share",
           "speedup", "energy_ratio")


def profile_memory(
    pipeline: Annotated[str, typer.Option("--pipeline", help=" | ".join(PIPELINES) + ".", metavar="TEXT")] = "quest",
    device: Annotated[str, typer.Option("--device", help="cpu | gpu (CUDA/ROCm via torch) | fpga.", metavar="TEXT")] = "cpu",
    fpga_backend: Annotated[str, typer.Option("--fpga-backend", help="emu: HLS C++ built by g++ (times modelled); "
                                              "xrt: an Alveo card through pyxrt.", metavar="TEXT")] = "emu",
    xclbin: Annotated[str | None, typer.Option("--xclbin", help="Kernels built from fpga/hls by v++ (xrt).",
                                               metavar="PATH")] = None,
    model: Annotated[str, typer.Option("--model", help="A zoo NAME or a Llama-family model folder.",
                                       metavar="MODEL")] = "tiny-llama-long",
    context: Annotated[int, typer.Option("--context", help="Context tokens (seeded random ids).", metavar="N")] = 2048,
    decode_steps: Annotated[int, typer.Option("--decode-steps", help="Decode steps timed.", metavar="N")] = 8,
    dtype: Annotated[str, typer.Option("--dtype", help="fp32 | bf16: weights, activations and KV cache (bf16: "
                                       "cpu/gpu only; the HLS kernels are float32).", metavar="TEXT")] = "fp32",
    batch: Annotated[int, typer.Option("--batch", help="Sequences decoded together (" + " | ".join(BATCHED[:2])
                                       + "; sequence b is seeded --seed + b): one forward over B rows, a pipeline per sequence.",
                                       metavar="B")] = 1,
    budget: Annotated[int, typer.Option("--budget", help="Tokens kept by the retrieval (pages/chunks/segments × "
                                        "their size).", metavar="N")] = 512,
    specs: Annotated[str | None, typer.Option("--specs", help='JSON {"gpu": NAME|{...}, "fpga": NAME|{...}}; '
                                              "default MI210 + U55C.", metavar="FILE")] = None,
    placement: Annotated[str, typer.Option("--placement", help=" | ".join(PLACEMENTS) + " (modelled offload).", metavar="TEXT")
                         ] = "auto",
    overlap: Annotated[bool, typer.Option("--overlap/--no-overlap", help="Model GPU/FPGA overlap.")] = True,
    seed: SeedOpt = 0,
    plot: ProfilePlotOpt = None,
    trace: Annotated[str | None, typer.Option("--trace", metavar="FILE.json", help="Also write a torch.profiler "
                                              "trace of the run (Chrome trace JSON: open in ui.perfetto.dev) "
                                              "with the stages as their own track.")] = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForcePlotOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Time prepare / relevancy / retrieval / apply per decode step on a real model, with a roofline.

    One record per stage (seconds, share, FLOPs, bytes, intensity, bound against ceilings measured
    at start, modelled GPU/FPGA seconds), then a "total" record: memory-processing share and the
    MODELLED GPU-only vs GPU+FPGA speedup and energy ratio beside the paper's reported ranges.
    --device fpga runs the HLS kernels (g++ emulation: their wall time is CPU time; FPGA times
    are modelled). The default model tiny-llama-long is RANDOM INIT: timing only.
    --plot FILE.png draws the stages' measured ms per decode step and share of the step as bars.

    \b
    Examples:
      mlx26 profile-memory --model tiny-llama --context 512 --decode-steps 2 --budget 128 -q
      mlx26 profile-memory --model tiny-llama --context 256 --decode-steps 2 --budget 64 --plot stages.png --force -q
      mlx26 profile-memory --pipeline rag --model tiny-llama --context 1000 --decode-steps 2 --format json -q
      mlx26 profile-memory --device fpga --model tiny-llama --context 256 --decode-steps 2 --budget 64 -q
      mlx26 profile-memory --model tiny-llama --context 256 --decode-steps 2 --budget 64 --trace run.json --force -q
      mlx26 profile-memory --model tiny-llama --context 256 --decode-steps 2 --budget 64 --dtype bf16 -q
      mlx26 profile-memory --model tiny-llama --context 256 --decode-steps 2 --budget 64 --batch 4 -q
    """
    if pipeline not in PIPELINES:
        raise unknown_name("pipeline", pipeline, PIPELINES)
    if device not in DEVICES:
        raise unknown_name("device", device, DEVICES)
    if fpga_backend not in FPGA_BACKENDS:
        raise unknown_name("fpga backend", fpga_backend, FPGA_BACKENDS)
    if placement not in PLACEMENTS:
        raise unknown_name("placement", placement, PLACEMENTS)
    if dtype not in DTYPES:
        raise unknown_name("dtype", dtype, DTYPES)
    check_output(output, force)
    check_plot(plot, force)
    if trace is not None:
        check_output(trace, force)
        if output not in (None, "-") and Path(output).absolute() == Path(trace).absolute():
            raise UsageError("--trace and -o name the same file.")
    from mlx26.core.profile_memory.devices import load_specs
    from mlx26.core.profile_memory.profiler import ProfileOptions, check_positions, max_positions_of, validate

    names = list(CORE_PIPELINES) if pipeline == "all" else [pipeline]
    options = [ProfileOptions(pipeline=p, device=device, fpga_backend=fpga_backend, xclbin=xclbin, model=model,
                              context=context, decode_steps=decode_steps, budget=budget, seed=seed,
                              dtype=dtype, batch=batch) for p in names]
    for opts in options:
        validate(opts)
    spec_map = load_specs(specs)
    ops = _ops(device, fpga_backend, xclbin, quiet)
    check_positions(options[0], max_positions_of(model))
    require("torch", "torch")
    require("transformers", "zoo")
    rows = _run(options, spec_map, ops, placement, overlap, quiet, trace)
    if plot:
        from mlx26.core.profile_memory.figure import draw

        wrote(draw(rows, plot, title=f"profile-memory on {model} ({device}, {context} tokens; measured)",
                   force=force), quiet)
    if resolve_output_format(fmt, output, False) == "table":
        rows = [{k: r.get(k) for k in COMPACT if k in r} for r in rows]
    emit(rows, output, fmt, force=force, title=f"profile-memory on {model} (speedup/energy MODELLED)")


def _ops(device: str, backend: str, xclbin: str | None, quiet: bool):
    """Check the device before any heavy work; return the kernel runner (or None for torch)."""
    if device == "gpu":
        torch = require("torch", "torch")
        if not torch.cuda.is_available():
            raise BackendMissing("--device gpu: no CUDA/ROCm device is visible to torch.",
                                 hint="use --device cpu, or --device fpga (emulated kernels, modelled times)")
        return None
    if device == "cpu":
        return None
    if backend == "xrt":
        from mlx26.fpga.xrt_host import XRT_HINT, availability

        ok, reason = availability(xclbin)
        if not ok:
            raise BackendMissing(reason, hint=XRT_HINT)
    from mlx26.fpga.emu import BuildError, CompilerMissing

    try:
        from mlx26.core.profile_memory.ops import FpgaOps

        return FpgaOps(backend, xclbin)
    except CompilerMissing as exc:
        raise BackendMissing(str(exc), hint="install g++ (apt-get install g++) or set MLX26_CXX") from None
    except BuildError as exc:
        for line in exc.stderr.splitlines():
            notice(line)
        hint = "the compiler output is above; " if exc.stderr.strip() else "the compiler printed nothing; "
        raise RuntimeFailure(str(exc), hint=hint + "fix the kernel or set MLX26_CXX") from None


def _run(options, spec_map, ops, placement: str, overlap: bool, quiet: bool, trace: str | None = None) -> list[dict]:
    import torch
    from mlx26.cli._progress import spinner
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.profile_memory import ceilings
    from mlx26.core.profile_memory.devices import measured_spec
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.profiler import check_positions, profile
    from mlx26.core.profile_memory.report import records
    from mlx26.core.zoo import load_model

    threads = apply_torch_threads(torch)
    first = options[0]
    with spinner(f"profile-memory: loading {first.model}…", quiet=quiet):
        net = load_model(first.model)
    check_positions(first, int(getattr(net.config, "max_position_embeddings", 0) or 0))
    target = "cuda" if first.device == "gpu" else "cpu"
    net = net.to(target, dtype=torch.bfloat16 if first.dtype == "bf16" else torch.float32)
    with spinner(f"profile-memory: measuring the {target} ceilings (GEMM, copy)…", quiet=quiet):
        ceil = ceilings.measure(target)
    measured = measured_spec(ceil["gemm_flops"], ceil["copy_bw"], threads, "gpu" if target == "cuda" else "cpu")
    rows: list[dict] = []
    assumptions: list[str] = []
    from contextlib import nullcontext

    from mlx26.core.profile_memory.trace import Recorder

    recorder = Recorder(first.device) if trace else None
    with recorder or nullcontext():
        results = []
        for opts in options:
            with spinner(f"profile-memory: profiling {opts.pipeline}…", quiet=quiet):
                results.append(profile(opts, net, ops or TorchOps(), warn=lambda m: notice(m, quiet),
                                       spans=recorder.spans(opts.pipeline) if recorder else None))
    if recorder is not None:
        written = recorder.write(trace)
        notice(f"profile-memory: wrote {trace} ({written['stage_spans']} stage spans, {written['trace_events']:,} "
               "events; open it in ui.perfetto.dev). The stage times of this run include the profiler's own overhead; "
               "run without --trace for the figures.", quiet)
    for opts, result in zip(options, results, strict=True):
        rows += records(opts, result, measured, spec_map, placement, overlap, first.model)
        plan = result["plan"]
        assumptions = plan["assumptions"]
        notice(f"profile-memory {opts.pipeline}: memory-processing share {result['memory_share']:.1%}; MODELLED "
               f"{plan['gpu']}-only vs {plan['gpu']}+{plan['fpga']} ({', '.join(plan['on_fpga']) or 'nothing'} "
               f"offloaded): speedup {plan['speedup']:.2f}×, energy {plan['energy_ratio']:.2f}× "
               "(paper: 1.04–2.2×, 1.11–4.7×)", quiet)
    for line in assumptions:
        notice(f"  assumption: {line}", quiet)
    return rows
