"""Benchmark the shipped zoo models against general-purpose compressors on held-out stdlib code and on
the sources of installed packages none of them trained on.

The anchor is the issue's: xz -9e, bz2 -9 and gzip -9 compressing the same held-out bytes.
One run prints, per model: bits/byte, the ratio to each compressor (below 1 = the model
codes the text in fewer bits), scoring throughput (bytes/s) next to xz's, plus the core
and torch-thread count. ``benchmarks/results/zoo.json`` also keeps, per model, the tokens scored,
bytes/token, the MoE expert histogram, and a copy of the shipped manifest's training record (command,
steps, tokens seen, CPU and wall seconds) and its bits/byte next to this run's. Tiny locally trained
models, labelled as such. Usage:

    .venv/bin/python benchmarks/zoo.py [--max-bytes 262144] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import sys
import time

from _results import record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-bytes", type=int, default=262_144)
    ap.add_argument("--corpus", default="stdlib-code")
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    args = ap.parse_args(argv)

    import torch
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.zoo import corpus, registry
    from mlx26.core.zoo.evaluate import bits_per_byte, compressor_bits_per_byte

    threads = apply_torch_threads(torch)
    text = corpus(args.corpus).text("heldout", args.max_bytes)
    data = text.encode()
    t0 = time.perf_counter()
    lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)
    xz_seconds = time.perf_counter() - t0
    base = compressor_bits_per_byte(text)
    rows = []
    for name in registry.shipped_names():
        model, tok = registry.load_model(name), registry.load_tokenizer(name)
        context = registry.read_manifest(name)["training"]["context"]
        t0 = time.perf_counter()
        r = bits_per_byte(model, tok, text, context=context)
        seconds = time.perf_counter() - t0
        manifest = registry.read_manifest(name)
        tr, ev = manifest["training"], manifest["eval"]
        rows.append({"model": name, "parameters": manifest["parameters"],
                     "bits_per_byte": r["bits_per_byte"], **{f"ratio_to_{k.split()[0]}": r["bits_per_byte"] / v
                                                             for k, v in base.items()},
                     "score_bytes_per_s": len(data) / seconds, "xz_bytes_per_s": len(data) / xz_seconds,
                     "tokens": r["tokens"], "bytes_per_token": r["bytes_per_token"],
                     "dead_experts": r.get("dead_experts"),
                     **{k: r[k] for k in ("expert_load", "routed_positions", "min_expert_share", "max_expert_share")
                        if k in r},
                     # copied from the shipped manifest (core/zoo/models/<name>/manifest.json): how the model was
                     # trained and the figure it was shipped with, next to this run's score of the same bytes
                     "manifest": {"bits_per_byte": ev["bits_per_byte"], "eval_bytes": ev["bytes"],
                                  "corpus": ev["corpus"],
                                  "same_text": ev["text_hash"] == "sha256:" + hashlib.sha256(data).hexdigest(),
                                  # only a like-for-like comparison: the manifest scored this corpus
                                  "bits_per_byte_rel_diff": (r["bits_per_byte"] - ev["bits_per_byte"])
                                  / ev["bits_per_byte"] if ev["corpus"] == args.corpus else None,
                                  **{k: tr[k] for k in ("command", "seed", "steps", "tokens_seen", "batch_size",
                                                        "context", "lr", "minutes_budget", "budget_clock",
                                                        "cpu_time_s", "wall_time_s", "torch_threads")}}})
    print(f"held-out {args.corpus}: {len(data):,} bytes | cores {os.cpu_count()} | torch threads {threads} "
          "| tiny locally trained models")
    print("compressors (bits/byte): " + ", ".join(f"{k} {v:.4f}" for k, v in base.items()))
    header = f"{'model':18} {'params':>9} {'bits/byte':>9} {'/xz':>6} {'/bz2':>6} {'/gzip':>6} {'score B/s':>10} {'xz B/s':>10}"
    print(header)
    for r in rows:
        print(f"{r['model']:18} {r['parameters']:>9,} {r['bits_per_byte']:>9.4f} {r['ratio_to_xz']:>6.3f} "
              f"{r['ratio_to_bz2']:>6.3f} {r['ratio_to_gzip']:>6.3f} {r['score_bytes_per_s']:>10,.0f} "
              f"{r['xz_bytes_per_s']:>10,.0f}")
    unseen = _unseen_packages(args.max_bytes, registry, bits_per_byte, compressor_bits_per_byte)
    record("zoo", {"bytes": len(data), "corpus": args.corpus, "compressors": {k.split()[0]: v for k, v in base.items()},
                   "models": {r["model"]: r for r in rows}, "threads": threads, "unseen_packages": unseen},
           data=[{"name": f"{args.corpus} held-out", "source": f"the zoo's {args.corpus} corpus, held-out split, "
                  f"first {len(data):,} bytes (real Python stdlib source)"},
                 {"name": "packages-code held-out", "source": "the zoo's packages-code corpus, held-out split (whole "
                  f"installed distributions no zoo model trained on: {', '.join(unseen['packages'])}), first "
                  f"{unseen['bytes']:,} bytes (real third-party Python source)"},
                 {"name": "zoo models", "source": "the shipped tiny models, trained locally on the train split"}])
    if args.json:
        print(json.dumps({"bytes": len(data), "compressors": base, "models": rows, "cores": os.cpu_count(),
                          "threads": threads}, indent=2))
    return 0


def _unseen_packages(max_bytes, registry, bits_per_byte, compressor_bits_per_byte) -> dict:
    """Every shipped model and the compressors on the held-out distributions of ``packages-code``: code from
    packages none of the models saw (the generalisation check; tiny-llama-pkgs trained on the other packages)."""
    from mlx26.core.zoo import corpus
    from mlx26.core.zoo.corpora import package_inventory

    text = corpus("packages-code").text("heldout", max_bytes)
    scored = len(text.encode())
    base = {k.split()[0]: v for k, v in compressor_bits_per_byte(text).items()}
    # What the scored window holds: each package's bytes in it, and xz -9e on each file alone (no repeats
    # across files to find, as a 128-token model has none either).
    shares: dict[str, int] = {}
    offset, xz_bits = 0, 0.0
    for doc in corpus("packages-code").documents("heldout"):
        data = (doc.text if doc.text.endswith("\n") else doc.text + "\n").encode()[: scored - offset]
        if not data:
            break
        shares[doc.name.split("/")[0]] = shares.get(doc.name.split("/")[0], 0) + len(data)
        xz_bits += 8 * len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
        offset += len(data)
    base["xz_per_file"] = xz_bits / scored
    packages = sorted(shares, key=lambda n: -shares[n])
    versions = {row["name"]: row["version"] for row in package_inventory()}
    models = {}
    for name in registry.shipped_names():
        model, tok = registry.load_model(name), registry.load_tokenizer(name)
        r = bits_per_byte(model, tok, text, context=registry.read_manifest(name)["training"]["context"])
        models[name] = {"bits_per_byte": r["bits_per_byte"], **{f"ratio_to_{k}": r["bits_per_byte"] / v
                                                                for k, v in base.items()}}
    print(f"\nunseen packages (packages-code held-out, {scored:,} bytes from {len(packages)} distributions no "
          "model trained on: " + ", ".join(f"{n} {shares[n] / scored:.0%}" for n in packages) + ")")
    print("compressors (bits/byte; xz_per_file = xz -9e on each file alone): "
          + ", ".join(f"{k} {v:.4f}" for k, v in base.items()))
    for name, r in models.items():
        print(f"{name:18} {r['bits_per_byte']:>9.4f} {r['ratio_to_xz']:>6.3f} {r['ratio_to_bz2']:>6.3f} "
              f"{r['ratio_to_gzip']:>6.3f}")
    return {"bytes": scored, "compressors": base, "models": models, "packages": packages,
            "package_count": len(packages), "package_bytes": {n: shares[n] for n in packages},
            "versions": {p: versions.get(p, "") for p in packages}}


if __name__ == "__main__":
    sys.exit(main())
