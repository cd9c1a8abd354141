"""End-to-end ``mlx26 quantize-moe``: load, calibrate, quantize, compensate, evaluate, save.

Orchestrates our TileQ reconstruction (Gu, Chen, Hu, Liu, ICML 2026, arXiv 2605.09281; see
:mod:`.lowrank` for the reconstructed parts). Returns one record per layer and projection and a
final summary record (perplexities, total extra memory, latency). Default calibration text: the
first ``calib_bytes`` of the zoo's ``stdlib-code`` *train* split; default evaluation text (when
asked for with ``heldout``): its whole *held-out* split, or its first ``eval_bytes``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from mlx26.core.common.errors import InputError
from mlx26.core.quantize_moe import calibrate, evaluate, pipeline, storage

CONTEXT = 128


def default_text(split: str, max_bytes: int | None) -> str:
    from mlx26.core.zoo import corpus

    return corpus("stdlib-code").text(split, max_bytes=max_bytes)


def _ids(tokenizer: Any, text: str, what: str) -> list[int]:
    from mlx26.core.zoo.tokenization import encode_plain

    ids = encode_plain(tokenizer, text)
    if len(ids) < 16:
        raise InputError(f"the {what} text has only {len(ids)} tokens; give at least a few hundred.")
    return ids


def run(model_spec: str, cfg: pipeline.Config, calib_text: str, eval_text: str | None = None,
        bench_latency: bool = False, out: str | None = None, force: bool = False,
        warn: Callable[[str], None] = lambda _m: None,
        status: Callable[[str], None] = lambda _m: None, runtime: str = "fp32",
        export_to: str | None = None) -> list[dict[str, Any]]:
    """Quantize ``model_spec``'s experts and measure them; ``status(text)`` is told each phase (a display).

    ``runtime="int4"`` evaluates (and times) the quantized model on packed int4 weights instead of
    dequantized fp32 ones; the saved folder is the same either way. ``export_to`` also writes a
    compressed-tensors checkpoint transformers loads as is (:mod:`.export`)."""
    from mlx26.core.zoo import load_model, load_tokenizer

    if storage.is_quantized_dir(model_spec):
        if export_to is not None:
            raise InputError(f"{model_spec} is already quantized and only evaluated; --export needs the original "
                             "model.", "quantize the original model with --export")
        if out is not None:
            raise InputError(f"{model_spec} is already quantized: it is only evaluated, so --out would write "
                             "nothing.", "quantize the original model with --out, or drop --out")
        return [evaluate_saved(model_spec, eval_text, bench_latency, calib_text, runtime)]
    if out is not None:
        storage.check_target(out, force, source=model_spec)
    if export_to is not None:
        from mlx26.core.quantize_moe import export

        export.check(cfg, "mixtral")  # the options first; the architecture once the model is loaded
        storage.check_target(export_to, force, source=model_spec, what="quantize-moe export",
                             ours=export.is_export_dir)
    status(f"loading {model_spec}…")
    model = load_model(model_spec)
    experts = calibrate.find_experts(model)
    calibrate.check_finite(experts, model)
    shapes = [tuple(getattr(m, p).shape) for _, m in experts for p in pipeline.PROJECTIONS]
    pipeline.validate(cfg, shapes)
    if export_to is not None:
        export.check(cfg, model.config.model_type)
    if runtime == "int4":  # before any work: the kernel's limits on bits, groups and shapes
        from mlx26.kernels.quantize_moe_int4 import check

        if cfg.bits != 4:
            raise InputError(f"--runtime int4 needs --bits 4, got --bits {cfg.bits}.", "use --runtime fp32")
        for (name, m) in experts:
            for p in pipeline.PROJECTIONS:
                _, rows_out, cols_in = getattr(m, p).shape
                check(cfg.bits, cfg.group_size, rows_out, cols_in, f"{name}.{p}")
    tokenizer = load_tokenizer(model_spec)
    bos = tokenizer.bos_token_id
    calib_ids = _ids(tokenizer, calib_text, "calibration")
    eval_ids = _ids(tokenizer, eval_text, "evaluation") if eval_text is not None else None
    torch.manual_seed(cfg.seed)
    status(f"calibrating on {len(calib_ids)} tokens…")
    stats = calibrate.collect(model, evaluate.token_batches(calib_ids, bos, CONTEXT), cfg.base == "gptq", warn)
    summary: dict[str, Any] = {"record": "summary", "model": model_spec, **cfg.to_dict(),
                               "calibration_tokens": len(calib_ids)}
    if eval_ids is not None:
        summary["eval_tokens"] = len(eval_ids)
        status(f"perplexity of the full-precision model on {len(eval_ids)} tokens…")
        fp_chunks = evaluate.chunk_nll(model, eval_ids, bos, CONTEXT)
        summary["ppl_fp"] = evaluate.chunks_ppl(fp_chunks)
    done, todo = [0], len(experts) * len(pipeline.PROJECTIONS)

    def quantizing(name: str) -> None:
        done[0] += 1
        status(f"quantizing {name} ({done[0]}/{todo})…")

    results = pipeline.quantize_layers(experts, stats, cfg, quantizing)
    pipeline.apply(experts, results)
    model.set_experts_implementation("tileq")
    quantized = [{p: res[p].quantized for p in pipeline.PROJECTIONS} for res in results]
    if export_to is not None:
        from mlx26.core._version import __version__

        status(f"exporting to {export_to}…")
        summary.update(export.export(export_to, model, tokenizer, experts, quantized,
                                     {"mlx26_version": __version__, "model": model_spec, "options": cfg.to_dict()}))
    if bench_latency:
        st, (_, module) = stats[0], experts[0]
        n = min(len(st.inputs), 1024)
        status("timing the fused and the loop experts forward…")
        summary["latency"] = evaluate.latency(module, st.inputs[:n], st.top_k_index[:n], st.top_k_weights[:n])
    summary["runtime"] = runtime
    if runtime == "int4":
        summary.update(pipeline.to_int4(experts, quantized))
        model.set_experts_implementation("tileq_int4")
        if bench_latency:
            fp32 = summary["latency"]
            summary["latency"] = {**fp32, **evaluate.int4_latency(experts[0][1], st.inputs[:n], st.top_k_index[:n],
                                                                  st.top_k_weights[:n], fp32)}
    if eval_ids is not None:
        status("perplexity of the quantized model…")
        base_chunks = None
        if cfg.lowrank != "none":
            saved = [m.tileq_factors for _, m in experts]
            for _, m in experts:
                m.tileq_factors = {}
            base_chunks = evaluate.chunk_nll(model, eval_ids, bos, CONTEXT)
            for (_, m), f in zip(experts, saved, strict=True):
                m.tileq_factors = f
        q_chunks = evaluate.chunk_nll(model, eval_ids, bos, CONTEXT)
        base_chunks = base_chunks or q_chunks
        summary["ppl_base"] = evaluate.chunks_ppl(base_chunks)
        summary["ppl_quantized"] = evaluate.chunks_ppl(q_chunks)
        # paired over chunks of 8 windows of the same text: the standard error of each difference
        for name, (a, b) in {"quantized_vs_fp": (q_chunks, fp_chunks), "base_vs_fp": (base_chunks, fp_chunks),
                             "quantized_vs_base": (q_chunks, base_chunks)}.items():
            summary[f"dlnppl_{name}"], summary[f"dlnppl_{name}_se"] = evaluate.paired_delta(a, b)
    records = [res[p].record | {"record": "projection"} for res in results for p in pipeline.PROJECTIONS]
    if cfg.match_lqer_rank is not None:  # --rank was not used: each projection's rank was matched
        summary["rank"] = None
        summary["ranks_chosen"] = [r.get("rank") for r in records]
    elif cfg.lowrank == "none":  # no correction, so no rank (--rank, if given, had nothing to apply to)
        summary["rank"] = None
    summary["total_extra_bytes"] = sum(r["extra_bytes"] for r in records)
    summary["total_lqer_bytes"] = sum(r["lqer_bytes"] for r in records)
    summary["total_base_bytes"] = sum(r["base_bytes"] for r in records)
    summary["fp32_expert_bytes"] = sum(4 * r["experts"] * r["m"] * r["n"] for r in records)
    if out is not None:
        from mlx26.core._version import __version__

        status(f"saving to {out}…")
        storage.save(out, model, tokenizer, experts, results,
                     {"mlx26_version": __version__, "model": model_spec, "options": cfg.to_dict(),
                      "records": records}, force=force)
        summary["out"] = out
    return [*records, summary]


def evaluate_saved(path: str, eval_text: str | None, bench_latency: bool, calib_text: str,
                   runtime: str = "fp32") -> dict[str, Any]:
    """Reload a directory written by ``--out`` and measure it (no re-quantization)."""
    from mlx26.core.zoo import load_tokenizer

    model, meta = storage.load(path, runtime)
    tokenizer = load_tokenizer(path)
    records = meta.get("records", [])
    summary: dict[str, Any] = {"record": "summary", "model": path, "reloaded": True, **meta.get("options", {}),
                               "total_extra_bytes": sum(r["extra_bytes"] for r in records), "runtime": runtime}
    if runtime == "int4":
        summary.update(meta.pop("int4_sizes"))
    if eval_text is not None:
        ids = _ids(tokenizer, eval_text, "evaluation")
        summary["eval_tokens"] = len(ids)
        summary["ppl_quantized"] = evaluate.chunks_ppl(evaluate.chunk_nll(model, ids, tokenizer.bos_token_id, CONTEXT))
    if bench_latency:
        experts = calibrate.find_experts(model)
        ids = _ids(tokenizer, calib_text, "calibration")
        st = calibrate.capture(model, experts[:1], evaluate.token_batches(ids, tokenizer.bos_token_id, CONTEXT))
        x, idx, w = (torch.cat([r[i].reshape(-1, r[i].shape[-1]) for r in st[experts[0][0]]]) for i in range(3))
        n = min(len(x), 1024)
        if runtime == "int4":
            summary["latency"] = evaluate.int4_latency(experts[0][1], x[:n], idx[:n].long(), w[:n])
        else:
            summary["latency"] = evaluate.latency(experts[0][1], x[:n], idx[:n].long(), w[:n])
    return summary


class Trials:
    """Calibrate once, then quantize with several configs on the same statistics (benchmarks, tests).

    ``trial(cfg)`` returns (records, perplexity or None); the FP expert weights are restored after
    each trial, so trials are independent.
    """

    def __init__(self, model_spec: str, calib_text: str, eval_text: str | None = None, need_hessian: bool = False):
        from mlx26.core.zoo import load_model, load_tokenizer

        self.model = load_model(model_spec)
        self.experts = calibrate.find_experts(self.model)
        self.tokenizer = load_tokenizer(model_spec)
        bos = self.tokenizer.bos_token_id
        ids = _ids(self.tokenizer, calib_text, "calibration")
        self.stats = calibrate.collect(self.model, evaluate.token_batches(ids, bos, CONTEXT), need_hessian)
        self.eval_ids = _ids(self.tokenizer, eval_text, "evaluation") if eval_text is not None else None
        self.fp = [{p: getattr(m, p).detach().clone() for p in pipeline.PROJECTIONS} for _, m in self.experts]

    def perplexity(self) -> float | None:
        if self.eval_ids is None:
            return None
        return evaluate.perplexity(self.model, self.eval_ids, self.tokenizer.bos_token_id, CONTEXT)

    def restore(self) -> None:
        with torch.no_grad():
            for (_, m), w in zip(self.experts, self.fp, strict=True):
                for p in pipeline.PROJECTIONS:
                    getattr(m, p).data.copy_(w[p])
                m.tileq_factors = {}

    def trial(self, cfg: pipeline.Config, ppl: bool = True) -> tuple[list[dict[str, Any]], float | None]:
        shapes = [tuple(getattr(m, p).shape) for _, m in self.experts for p in pipeline.PROJECTIONS]
        pipeline.validate(cfg, shapes)
        results = pipeline.quantize_layers(self.experts, self.stats, cfg)
        pipeline.apply(self.experts, results)
        self.model.set_experts_implementation("tileq")
        value = self.perplexity() if ppl else None
        self.restore()
        return [res[p].record for res in results for p in pipeline.PROJECTIONS], value
