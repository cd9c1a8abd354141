"""Merge ``run`` and ``serve-bench`` results into one table, and draw the two plots (matplotlib).

Rows: ``kind = category`` (AL by category of a run, with its engine and k) and ``kind =
concurrency`` (one serve-bench level: throughput, TTFT, TPOT, AL). Plots: AL by category (one bar
group per run) and output tokens/s against concurrency (one line per k). Our own code.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError


def rows(loaded: Sequence[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path, records in loaded:
        if len(records) == 1 and "summary" in records[0] and "by_category" in records[0]:
            s = records[0]["summary"]
            for c in records[0]["by_category"]:
                out.append({"kind": "category", "source": path, "target": s.get("target"), "engine": s.get("engine"),
                            "k": s.get("k"),
                            "key": c["category"], "acceptance_length": c["acceptance_length"],
                            "greedy_match": c.get("greedy_match"), "throughput_tokens_per_s": None,
                            "ttft_median_s": None, "tpot_median_s": None,
                            # the category's own figures (null in reports written before they were kept)
                            "modelled_speedup": c.get("modelled_speedup"), "wall_speedup_cpu": c.get("wall_speedup_cpu")})
        elif records and all("concurrency" in r for r in records):
            for r in records:
                out.append({"kind": "concurrency", "source": path, "target": r.get("model"), "engine": "server",
                            "k": r.get("k"),
                            "key": r["concurrency"], "acceptance_length": r.get("acceptance_length"),
                            "greedy_match": None, "throughput_tokens_per_s": r.get("throughput_tokens_per_s"),
                            "ttft_median_s": r.get("ttft_median_s"), "tpot_median_s": r.get("tpot_median_s"),
                            "modelled_speedup": None, "wall_speedup_cpu": None})
        else:
            raise InputError(f"{path}: neither a `spec-bench run` report nor `serve-bench` records.")
    return out


def plots(table: Sequence[dict[str, Any]], folder: str, force: bool = False) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from mlx26.core.common.files import atomic_writer

    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    cats = [r for r in table if r["kind"] == "category"]
    levels = [r for r in table if r["kind"] == "concurrency"]
    for name, subset in (("al_by_category.png", cats), ("throughput_vs_concurrency.png", levels)):
        if not subset:
            continue
        path = target / name
        if path.exists() and not force:
            raise InputError(f"{path} exists.", "pass --force to replace it")
        fig, ax = plt.subplots(figsize=(8, 4))
        if name.startswith("al"):
            runs = sorted({(r["source"], r["engine"], r["k"]) for r in cats})
            targets = {(r["source"], r["engine"], r["k"]): r.get("target") for r in cats}
            keys = list(dict.fromkeys(r["key"] for r in cats))
            width = 0.8 / max(1, len(runs))
            for i, run in enumerate(runs):
                vals = {r["key"]: r["acceptance_length"] or 0 for r in cats if (r["source"], r["engine"], r["k"]) == run}
                ax.bar([j + i * width for j in range(len(keys))], [vals.get(key, 0) for key in keys], width,
                       label=" ".join(str(x) for x in (targets[run], run[1], f"k={run[2]}") if x))
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))], keys, rotation=45, ha="right", fontsize=7)
            ax.set_ylabel("acceptance length")
        else:
            # one line per file and k: two sweeps (other servers or models) at the same k must not merge
            sources = list(dict.fromkeys(r["source"] for r in levels))
            for src, kval in sorted({(r["source"], r["k"]) for r in levels},
                                    key=lambda t: (sources.index(t[0]), -1 if t[1] is None else t[1])):
                pts = sorted((r["key"], r["throughput_tokens_per_s"] or 0) for r in levels
                             if r["source"] == src and r["k"] == kval)
                label = f"k={kval}" + (f" ({Path(src).name})" if len(sources) > 1 else "")
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("concurrency")
            ax.set_ylabel("output tokens/s (CPU-specific)")
        ax.legend(fontsize=7)
        ax.set_title("tiny zoo models on CPU (plumbing, not a GPU figure)", fontsize=9)
        fig.tight_layout()
        with atomic_writer(str(path), "wb", encoding=None) as handle:
            fig.savefig(handle, format="png", dpi=100)
        plt.close(fig)
        written.append(str(path))
    return written
