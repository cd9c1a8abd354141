"""``mlx26 zoo eval`` rows: a model's held-out bits/byte beside xz, bz2 and gzip, plus MoE load bars.

Our own evaluation harness (no paper reconstructed); the measures are in :mod:`.evaluate`.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError

DEFAULT_CONTEXT = 256


def cut_at_line(text: str, max_bytes: int) -> str:
    """The longest prefix of whole lines within ``max_bytes`` UTF-8 bytes (all of it if it fits; a text
    without a line end inside the limit is cut at the last whole character)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    head = data[:max_bytes]
    end = head.rfind(b"\n")
    return (head[:end + 1] if end >= 0 else head).decode("utf-8", errors="ignore")


def evaluate_rows(name: str, *, corpus: str | None = None, max_bytes: int = 262_144, context: int | None = None,
                  baselines: bool = True, text: str | None = None, source: str | None = None) -> list[dict[str, Any]]:
    """One row for the model and one per compressor, all on the same held-out bytes — a corpus's held-out
    split, or ``text`` (a user's file; ``source`` names it in the rows), cut to ``max_bytes`` at a line end."""
    import torch
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.zoo.corpora import corpus as get_corpus
    from mlx26.core.zoo.evaluate import bits_per_byte, compressor_bits_per_byte
    from mlx26.core.zoo.registry import load_model, load_tokenizer, read_manifest

    apply_torch_threads(torch)
    manifest = read_manifest(name)
    if text is not None:
        corpus = source or "text"
        text = cut_at_line(text, max_bytes)
        if len(text.encode("utf-8")) < 2:
            raise InputError(f"{corpus}: fewer than 2 bytes of text to score.")
    else:
        corpus = corpus or manifest.get("eval", {}).get("corpus") or "stdlib-code"
        text = get_corpus(corpus).text("heldout", max_bytes)
    if not text:
        raise InputError(f"--max-bytes {max_bytes} keeps no whole line of the held-out text.")
    model, tokenizer = load_model(name), load_tokenizer(name)
    max_pos = int(getattr(model.config, "max_position_embeddings", 0) or 0)
    if context is not None and (context < 2 or (max_pos and context > max_pos)):
        raise InputError(f"--context must be in [2, {max_pos or '…'}] for {name}, got {context}.")
    ctx = context or manifest.get("training", {}).get("context") or DEFAULT_CONTEXT
    ctx = min(ctx, max_pos or ctx)
    result = bits_per_byte(model, tokenizer, text, context=ctx)
    kind = "random-init (timing only)" if manifest.get("random_init") else "model"
    rows = [{"method": name, "kind": kind, "corpus": corpus, "bytes": result["bytes"],
             "bits_per_byte": result["bits_per_byte"], "tokens": result["tokens"], "context": ctx}]
    if baselines:
        for method, bpb in compressor_bits_per_byte(text).items():
            rows.append({"method": method, "kind": "compressor", "corpus": corpus, "bytes": result["bytes"],
                         "bits_per_byte": bpb})
        xz = rows[1]["bits_per_byte"]
        for row in rows:
            row["ratio_to_xz"] = row["bits_per_byte"] / xz
    for key in ("expert_load", "routed_positions", "dead_experts", "min_expert_share", "max_expert_share"):
        if key in result:
            rows[0][key] = result[key]
    return rows


def histogram_lines(load: list[list[int]], width: int = 30) -> list[str]:
    """Text bars of the expert-load histogram, one block per layer."""
    lines = []
    for layer, counts in enumerate(load):
        total = max(1, sum(counts))
        peak = max(1, max(counts))
        lines.append(f"expert load, layer {layer} ({total:,} top-k picks):")
        for expert, count in enumerate(counts):
            bar = "#" * round(width * count / peak)
            lines.append(f"  expert {expert:2d} {bar:<{width}} {100 * count / total:5.1f}%")
    return lines
