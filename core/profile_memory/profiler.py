"""The profiler of ``mlx26 profile-memory``: run a real model over a long context through one of
the four memory-processing pipelines and time each stage (He, Ma, Sun, Cong, ICML 2026,
"Understand and Accelerate Memory Processing Pipeline for Disaggregated LLM Inference").

Reconstruction (no code is public): the stage split follows the paper; the pipelines are in
``quest``, ``indexer``, ``rag`` and ``hmt``; timing uses a :class:`LapClock` (contiguous laps,
device-synchronised) inside a hand-unrolled decode loop (:mod:`runner`); the end-to-end time is
read independently around the same region, so the per-stage sum can be checked against it.

Timed region ("request"): quest / indexer / dense — building the page/indexer metadata over the
context, then ``decode_steps`` decode steps; rag — index build, query, fetch, prefill of the
augmented prompt, decode; memory — segment summaries, recall, memory-prompt prefill, decode. The
dense prefill of the whole context (quest / indexer / dense) is reported as a separate "setup"
row and left out of the shares: in disaggregated serving it runs on the prefill node.
The memory-processing share = (prepare + relevancy + retrieval) / end-to-end.

Batch (quest / indexer / dense): ``batch`` sequences of the same length, sequence b drawn with seed
``seed + b`` (so it is the batch-1 run at that seed), are prefilled and decoded together: one
forward over B rows for the model's own work, one pipeline per sequence over its own KV cache.
rag and memory build one prompt per request and are refused with batch > 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.clock import LapClock
from mlx26.core.profile_memory.costs import MEMORY_STAGES, STAGES, CostBook
from mlx26.core.profile_memory.kernel_bw import topk_traffic
from mlx26.core.profile_memory.spec import BATCHED, DEVICES, DTYPES, PIPELINES

OFFLOADED = {  # stages whose kernels run through FpgaOps with --device fpga
    "quest": ("prepare", "relevancy", "retrieval"),
    "indexer": ("retrieval",),
    "rag": ("retrieval",),
    "memory": ("retrieval",),
    "dense": (),
}


@dataclass
class ProfileOptions:
    pipeline: str = "quest"
    device: str = "cpu"
    fpga_backend: str = "emu"
    xclbin: str | None = None
    model: str = "tiny-llama-long"
    context: int = 2048
    decode_steps: int = 8
    budget: int = 512
    seed: int = 0
    dtype: str = "fp32"
    batch: int = 1



def validate(opts: ProfileOptions) -> None:
    """Checks that need no model (exit 2 before anything heavy loads)."""
    if opts.pipeline not in (*PIPELINES, "dense"):
        raise InputError(f"Unknown pipeline '{opts.pipeline}'.", "choose one of: " + ", ".join(PIPELINES) + ", all")
    if opts.device not in DEVICES:
        raise InputError(f"Unknown device '{opts.device}'.", "choose one of: " + ", ".join(DEVICES))
    if opts.dtype not in DTYPES:
        raise InputError(f"Unknown dtype '{opts.dtype}'.", "choose one of: " + ", ".join(DTYPES))
    if opts.device == "fpga" and opts.dtype != "fp32":
        raise InputError("--device fpga runs the HLS kernels of fpga/hls, which are float32.",
                         "use --dtype fp32 with --device fpga (bf16 runs on --device cpu or gpu)")
    if opts.batch < 1:
        raise InputError(f"--batch must be ≥ 1, got {opts.batch}.")
    if opts.batch > 1 and opts.pipeline not in BATCHED:
        raise InputError(f"--batch {opts.batch}: the {opts.pipeline} pipeline builds one prompt per request and "
                         "decodes one sequence.", "use --batch 1, or --pipeline " + " / ".join(BATCHED[:2]))
    if opts.budget <= 0:
        raise InputError(f"--budget must be a positive number of tokens, got {opts.budget}.")
    if opts.context < 64:
        raise InputError(f"--context must be at least 64 tokens, got {opts.context}.")
    if opts.decode_steps < 1:
        raise InputError(f"--decode-steps must be ≥ 1, got {opts.decode_steps}.")
    if opts.pipeline == "memory" and opts.context < 512:
        raise InputError(f"the memory pipeline needs at least 2 segments of 256 tokens; --context {opts.context} "
                         "is too short.", "use --context ≥ 512")
    if opts.device == "fpga" and opts.pipeline == "indexer":
        from mlx26.fpga.emu import MAX_TOPK

        if min(opts.budget, opts.context + opts.decode_steps) > MAX_TOPK:
            raise InputError(f"--device fpga: the HLS top-k kernel keeps at most {MAX_TOPK} tokens, but the indexer "
                             f"would select {min(opts.budget, opts.context + opts.decode_steps)}.",
                             f"use --budget ≤ {MAX_TOPK} with --pipeline indexer --device fpga")
    if opts.pipeline == "rag" and opts.context < 96:
        raise InputError(f"the rag pipeline needs one 64-token chunk plus a 32-token query; --context "
                         f"{opts.context} is too short.", "use --context ≥ 96")


def check_positions(opts: ProfileOptions, max_positions: int) -> None:
    if max_positions and opts.context + opts.decode_steps > max_positions:
        raise InputError(f"--context {opts.context} + --decode-steps {opts.decode_steps} exceeds the model's "
                         f"{max_positions} positions.", f"use --context ≤ {max_positions - opts.decode_steps}")


def max_positions_of(spec: str) -> int:
    """The model's max positions from its preset or config.json, without loading weights (0 = unknown)."""
    import json
    from pathlib import Path

    from mlx26.core.zoo.presets import get_preset
    from mlx26.core.zoo.registry import model_kind

    kind, value = model_kind(spec)
    if kind == "random":
        return int(get_preset(spec).arch.get("max_position_embeddings", 0))
    if kind in ("zoo", "path"):
        config = json.loads((Path(value) / "config.json").read_text(encoding="utf-8"))
        return int(config.get("max_position_embeddings", 0) or 0)
    return 0


def _sync(device: Any) -> Callable[[], None]:
    import torch

    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def _decode_loop(runner: Any, attend: Callable[..., Any], first: int, steps: int, clock: LapClock,
                 costs: CostBook) -> None:
    _decode_batch_loop(runner, [attend], [first], steps, clock, costs)


def _decode_batch_loop(runner: Any, attends: list[Callable[..., Any]], firsts: list[int], steps: int,
                       clock: LapClock, costs: CostBook) -> list[list[int]]:
    """Greedy decode of every sequence; returns each one's ids (the first included)."""
    import torch

    hooks = [_bind(attend, clock, costs) for attend in attends]
    tokens = [[t] for t in firsts]
    for _ in range(steps):
        nxt = runner.decode_batch(torch.tensor([seq[-1] for seq in tokens]), hooks, clock, costs)
        for seq, t in zip(tokens, nxt, strict=True):
            seq.append(t)
    return tokens


def _bind(attend: Callable[..., Any], clock: LapClock, costs: CostBook) -> Callable[..., Any]:
    return lambda i, q, k, v, pos, h: attend(i, q, k, v, pos, h, clock, costs)


def context_ids(opts: ProfileOptions, vocab: int) -> Any:
    """[batch, context] seeded random ids; sequence b uses seed + b, so it is the batch-1 context of that seed."""
    import torch

    return torch.stack([torch.randint(0, vocab, (opts.context,), generator=torch.Generator().manual_seed(opts.seed + b))
                        for b in range(opts.batch)])


def _plain_attend(runner: Any) -> Callable[..., Any]:
    """Dense attention whose time stays in the runner's "other" lap (decode after a RAG/memory prompt)."""
    from mlx26.core.profile_memory.reference import dense_attention

    def attend(i: int, q: Any, k: Any, v: Any, pos: int, h: Any, clock: LapClock, costs: CostBook) -> Any:
        runner.k_cache[i][:, pos] = k
        runner.v_cache[i][:, pos] = v
        keys, vals = runner.k_cache[i][:, :pos + 1], runner.v_cache[i][:, :pos + 1]
        if runner.n_kv != runner.n_heads:
            rep = runner.n_heads // runner.n_kv
            keys, vals = keys.repeat_interleave(rep, 0), vals.repeat_interleave(rep, 0)
        n = pos + 1
        costs["other"].add(runner.n_heads * n * (4 * runner.head_dim + 5),
                           runner.itemsize * runner.n_heads * runner.head_dim * (2 * n + 2), launches=6, calls=0)
        return dense_attention(q, keys, vals)

    return attend


def profile(opts: ProfileOptions, model: Any, ops: Any, warn: Callable[[str], None] = lambda m: None,
            spans: list[tuple[str, float, float]] | None = None) -> dict[str, Any]:
    """Run one pipeline; return {"stages": {stage: seconds}, "costs": CostBook, "end_to_end_s", ...}.
    ``spans``: a list to receive every lap as (stage, start, end) (``--trace``). The decode-time pipelines also
    return "tokens" (each sequence's greedy ids) and "last_logits" ([batch, V]) for checking batch decode."""
    import torch

    validate(opts)
    from mlx26.core.profile_memory.runner import LlamaRunner

    max_pos = int(getattr(model.config, "max_position_embeddings", 0) or 0)
    check_positions(opts, max_pos)
    device = next(model.parameters()).device
    ids = context_ids(opts, model.config.vocab_size)
    costs = CostBook()
    clock = LapClock(_sync(device), spans)
    info: dict[str, Any] = {}
    setup_s = 0.0
    extra: dict[str, Any] = {}
    if opts.pipeline in BATCHED:
        runner = LlamaRunner(model, opts.context + opts.decode_steps, opts.batch)
        pipes = [_make_decoder(opts, runner.sequence(b), ops) for b in range(opts.batch)]
        t0 = time.perf_counter()
        logits, _ = runner.prefill_batch(ids, capture=_batch_capture(pipes))
        _sync(device)()
        setup_s = time.perf_counter() - t0
        start = time.perf_counter()
        clock.start()
        for pipe in pipes:
            pipe.build(clock, costs)
        tokens = _decode_batch_loop(runner, [p.attend for p in pipes], torch.argmax(logits, dim=-1).tolist(),
                                    opts.decode_steps, clock, costs)
        _sync(device)()
        end_to_end = time.perf_counter() - start
        extra = {"tokens": tokens, "last_logits": runner.last_logits}
        if any(pipe.clamped for pipe in pipes):
            warn(f"Warning: --budget {opts.budget} exceeds the context; k clamped to every "
                 f"{'page' if opts.pipeline == 'quest' else 'token'}.")
    elif opts.pipeline == "rag":
        end_to_end, info = _run_rag(opts, model, ops, ids[0], clock, costs, warn)
    else:
        end_to_end, info = _run_memory(opts, model, ops, ids[0], clock, costs, warn)
    clock.stop()
    times = {s: float(clock.times.get(s, 0.0)) for s in STAGES}
    return {"pipeline": opts.pipeline, "stages": times, "costs": costs, "end_to_end_s": end_to_end,
            "stage_sum_s": sum(times.values()), "setup_s": setup_s,
            "memory_share": sum(times[s] for s in MEMORY_STAGES) / end_to_end if end_to_end > 0 else 0.0,
            "info": info, **extra}


def _batch_capture(pipes: list[Any]) -> Callable[[int, Any], None] | None:
    """The prefill hook of a batch: each pipeline that keeps the prefill's hidden states gets its own row."""
    if getattr(pipes[0], "capture", None) is None:
        return None

    def capture(i: int, h: Any) -> None:
        for pipe, row in zip(pipes, h, strict=True):
            pipe.capture(i, row)

    return capture


def _make_decoder(opts: ProfileOptions, runner: Any, ops: Any) -> Any:
    if opts.pipeline == "quest":
        from mlx26.core.profile_memory.quest import QuestPipeline

        return QuestPipeline(runner, opts.budget, ops)
    if opts.pipeline == "indexer":
        from mlx26.core.profile_memory.indexer import IndexerPipeline

        return IndexerPipeline(runner, opts.budget, ops, seed=opts.seed)
    from mlx26.core.profile_memory.dense import DensePipeline

    return DensePipeline(runner)


def _run_rag(opts: ProfileOptions, model: Any, ops: Any, ids: Any, clock: LapClock, costs: CostBook,
             warn: Callable[[str], None]) -> tuple[float, dict[str, Any]]:
    import torch
    from mlx26.core.profile_memory import rag
    from mlx26.core.profile_memory.runner import LlamaRunner

    store_ids, query_ids = ids[:-rag.QUERY_TOKENS], ids[-rag.QUERY_TOKENS:]
    n_chunks = store_ids.shape[0] // rag.CHUNK
    k, clamped = rag.n_chunks_for_budget(opts.budget, max(n_chunks, 1))
    runner = LlamaRunner(model, k * rag.CHUNK + rag.QUERY_TOKENS + opts.decode_steps)
    emb = runner.inner.embed_tokens
    d, size = runner.hidden, runner.itemsize
    with torch.no_grad():
        start = time.perf_counter()
        clock.start()
        chunks = rag.chunk_ids(store_ids.to(runner.device))
        index = rag.embed(emb, chunks)
        clock.lap("prepare")
        query = rag.embed(emb, query_ids.to(runner.device))
        scores = index @ query
        clock.lap("relevancy")
        top = ops.topk(scores[None], k)[0].to(runner.device)
        prompt = torch.cat([chunks[top].reshape(-1), query_ids.to(runner.device)])
        clock.lap("retrieval")
        logits, _ = runner.prefill(prompt, costs=costs, stage="apply")
        clock.lap("apply")
        _decode_loop(runner, _plain_attend(runner), int(torch.argmax(logits)), opts.decode_steps, clock, costs)
        _sync(runner.device)()
        end_to_end = time.perf_counter() - start
    model_costs = rag.rag_costs(n_chunks, k, d, rag.CHUNK, size)
    in_out = {"prepare": (8.0 * store_ids.shape[0], size * n_chunks * d), "relevancy": (size * (n_chunks * d + rag.QUERY_TOKENS * d), size * n_chunks),
              "retrieval": (size * n_chunks + 8.0 * n_chunks * rag.CHUNK, 8.0 * prompt.shape[0])}
    for stage, (f, b, irr) in model_costs.items():
        costs[stage].add(f, b, irregular=irr, launches={"prepare": 3, "relevancy": 3, "retrieval": 3}[stage],
                         in_bytes=in_out[stage][0], out_bytes=in_out[stage][1],
                         kernels={"topk_select": topk_traffic(1, n_chunks, k, size)} if stage == "retrieval" else None)
    if clamped:
        warn(f"Warning: --budget {opts.budget} asks for more chunks than the store has; k clamped to {k}.")
    anchor_ids, anchor = rag.exact_search(index.cpu().numpy(), query.cpu().numpy(), k)
    agrees = sorted(anchor_ids.tolist()) == sorted(top.cpu().tolist())
    return end_to_end, {"chunks": n_chunks, "k": k, "anchor": anchor, "topk_matches_anchor": agrees,
                        "prompt_tokens": int(prompt.shape[0])}


def _run_memory(opts: ProfileOptions, model: Any, ops: Any, ids: Any, clock: LapClock, costs: CostBook,
                warn: Callable[[str], None]) -> tuple[float, dict[str, Any]]:
    import torch
    from mlx26.core.profile_memory import hmt
    from mlx26.core.profile_memory.runner import LlamaRunner

    seg = hmt.SEGMENT
    n_seg = opts.context // seg - 1
    if n_seg < 1:
        raise InputError(f"the memory pipeline needs at least 2 segments of {seg} tokens; --context {opts.context} "
                         "is too short.", f"use --context ≥ {2 * seg}")
    k, clamped = hmt.segments_for_budget(opts.budget, n_seg)
    runner = LlamaRunner(model, max(seg, seg + 1 + opts.decode_steps))
    current = ids[n_seg * seg:(n_seg + 1) * seg].to(runner.device)
    d, size = runner.hidden, runner.itemsize
    with torch.no_grad():
        start = time.perf_counter()
        clock.start()
        bank = torch.empty(n_seg, d, dtype=runner.dtype, device=runner.device)
        for s in range(n_seg):
            runner.reset()
            _, hidden = runner.prefill(ids[s * seg:(s + 1) * seg], costs=costs, stage="prepare")
            bank[s] = hidden.mean(dim=0)
        clock.lap("prepare")
        query = runner.inner.embed_tokens(current).mean(dim=0)
        scores = hmt.memory_scores(bank, query)
        clock.lap("relevancy")
        recalled, _ = hmt.recall(bank, scores, k, ops)
        clock.lap("retrieval")
        runner.reset()
        embeds = torch.cat([recalled[None], runner.inner.embed_tokens(current)])
        logits, _ = runner.prefill(embeds=embeds, costs=costs, stage="apply")
        clock.lap("apply")
        _decode_loop(runner, _plain_attend(runner), int(torch.argmax(logits)), opts.decode_steps, clock, costs)
        _sync(runner.device)()
        end_to_end = time.perf_counter() - start
    for stage, (f, b, irr) in hmt.hmt_costs(n_seg, k, d, size).items():
        costs[stage].add(f, b, irregular=irr, launches=4,
                         in_bytes=size * (n_seg * d + d) if stage == "relevancy" else size * n_seg,
                         out_bytes=size * n_seg if stage == "relevancy" else size * d,
                         kernels=hmt.retrieval_kernels(n_seg, k, d, size) if stage == "retrieval" else None)
    if clamped:
        warn(f"Warning: --budget {opts.budget} asks for more segments than memory holds; k clamped to {k}.")
    return end_to_end, {"segments": n_seg, "k": k}
