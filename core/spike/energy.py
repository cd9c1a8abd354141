"""Energy accounting: a per-operation cost table (45 nm) and operation counts, ANN vs SNN, softmax vs Spike2Max.

The convention is the one the spiking-transformer literature uses (Spikformer, SpikeLM, SpikingBERT):
energy = Σ_op count(op) × cost(op); an ANN layer costs MACs, a layer whose input is binary spikes costs
one accumulate (AC) per input spike and output channel — counted here from the spikes each forward
actually fires, not from an assumed rate. Numbers are MODELLED energy for a 45 nm process, not measured
on a device. Every cost is overridable (``load_table``: a JSON/YAML file ``{op: pJ}`` or
``{op: {pj: …, source: …}}``); the table in use is printed with its sources.

Horowitz (ISSCC 2014, "Computing's energy problem", 45 nm, 0.9 V) gives FP32 add 0.9 pJ, FP32 mult
3.7 pJ, INT32 add 0.1 pJ, INT32 mult 3.1 pJ; the MAC = mult + add. It gives no figure for shifts, exp,
division or comparison: those entries are our MODELLING assumptions and say so in their source.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from mlx26.core.common.errors import InputError, unknown_name

H = "Horowitz, ISSCC 2014, 45 nm"
DEFAULT_TABLE: dict[str, tuple[float, str]] = {
    "fp32_mac": (4.6, f"{H}: FP32 mult 3.7 + add 0.9 pJ"),
    "fp32_ac": (0.9, f"{H}: FP32 add (a spike-driven accumulate)"),
    "fp32_add": (0.9, f"{H}: FP32 add"),
    "fp32_mult": (3.7, f"{H}: FP32 mult"),
    "fp32_cmp": (0.9, "assumption: a compare costs an FP32 add"),
    "fp32_exp": (18.5, "assumption: range reduction + degree-4 Horner polynomial = 4 FP32 MACs + one exponent shift"),
    "fp32_div": (13.8, "assumption: Newton-Raphson reciprocal, 3 FP32 MACs"),
    "int32_add": (0.1, f"{H}: INT32 add"),
    "int32_mult": (3.1, f"{H}: INT32 mult"),
    "int_cmp": (0.1, "assumption: an integer compare costs an INT32 add"),
    "shift": (0.1, "assumption: a barrel shift costs an INT32 add (Horowitz lists no shift)"),
    "int32_div": (6.4, "assumption: 32-step restoring division, 32 × (INT32 add + shift)"),
}


def load_table(path: str | None = None) -> dict[str, tuple[float, str]]:
    """The default table, with entries from ``path`` (JSON or YAML) replacing defaults."""
    table = dict(DEFAULT_TABLE)
    if path is None:
        return table
    p = Path(path)
    if not p.is_file():
        raise InputError(f"energy table {path}: {'a folder, not a file' if p.is_dir() else 'no such file'}")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # json / yaml raise their own types
        raise InputError(f"{path}: not a JSON/YAML energy table ({type(exc).__name__}: {exc})") from exc
    if isinstance(data, list) and all(isinstance(r, dict) and "op" in r and "pj" in r for r in data):
        # the records `spike energy --table --format json` prints: edit them and pass the file back
        data = {r["op"]: {"pj": r["pj"], "source": r.get("source", path)} for r in data}
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping {{op: pJ}} or the records of `spike energy --table`")
    for op, val in data.items():
        if op not in DEFAULT_TABLE:
            raise unknown_name("energy-table operation", str(op), DEFAULT_TABLE)
        src = f"{path}"
        if isinstance(val, dict):
            src = str(val.get("source", src))
            val = val.get("pj")
        if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val) or val < 0:
            raise InputError(f"{path}: cost of '{op}' must be a finite number of pJ ≥ 0, got {val!r}")
        table[op] = (float(val), src)
    return table


def table_records(table: dict[str, tuple[float, str]]) -> list[dict]:
    return [{"op": op, "pj": pj, "source": src} for op, (pj, src) in table.items()]


class OpCounter(Counter[str]):
    """op name → count; layers call ``add`` while a forward runs with a counter."""

    def add(self, op: str, n: float) -> None:
        if op not in DEFAULT_TABLE:
            raise KeyError(op)
        self[op] += float(n)  # type: ignore[assignment]  # counts are float (fractional rows never occur)


def energy_pj(counts: dict[str, float], table: dict[str, tuple[float, str]] | None = None) -> dict:
    t = table or DEFAULT_TABLE
    per = {op: float(n) * t[op][0] for op, n in counts.items() if n}
    return {"total_pj": float(sum(per.values())), "per_op_pj": per}


def softmax_norm_ops(rows: float, n: int) -> dict[str, float]:
    """FP32 softmax of ``rows`` rows of ``n``: max (n−1 compares), n subtracts, n exps, n−1 adds, one reciprocal,
    n multiplies per row."""
    return {"fp32_cmp": rows * (n - 1), "fp32_add": rows * (2 * n - 1), "fp32_exp": rows * n,
            "fp32_div": rows * 1, "fp32_mult": rows * n}


def spike2max_norm_ops(rows: float, n: int, norm: str = "pow2") -> dict[str, float]:
    """Integer Spike2Max (:func:`~mlx26.core.spike.spike2max.spike2max_int`) of ``rows`` rows of ``n``:
    max (n−1 compares), n subtracts, n shifts for 2^(s−max), n−1 adds; pow2: the sum's leading one (one
    priority encode, costed as a shift) and n shifts; exact: n integer divisions."""
    ops = {"int_cmp": rows * (n - 1), "int32_add": rows * (2 * n - 1), "shift": rows * n}
    if norm == "pow2":
        ops["shift"] += rows * (n + 1)
    else:
        ops["int32_div"] = rows * n
    return ops


def linear_attn_norm_ops(rows: float, n: int) -> dict[str, float]:
    """Softmax-free attention: one scale multiply per score."""
    return {"fp32_mult": rows * n}


def normalisation_energy(lengths, heads: int, steps: int, layers: int,
                         table: dict[str, tuple[float, str]] | None = None) -> dict:
    """Energy per sequence of the attention normalisation alone, for sequences of the given valid ``lengths``
    (one row of n scores per query, head, time step and layer): softmax vs Spike2Max (pow2 and exact)."""
    out: dict[str, float | None] = {}
    for name, fn in (("softmax", softmax_norm_ops), ("spike2max_pow2", spike2max_norm_ops),
                     ("spike2max_exact", lambda r, n: spike2max_norm_ops(r, n, "exact"))):
        total = 0.0
        for n in lengths:
            n = int(n)
            total += energy_pj(fn(float(n) * heads * steps * layers, n), table)["total_pj"]
        out[f"{name}_pj"] = total / max(1, len(lengths))
    sm, p2, ex = out["softmax_pj"], out["spike2max_pow2_pj"], out["spike2max_exact_pj"]
    out["spike2max_pow2_over_softmax"] = p2 / sm if sm and p2 is not None else None
    out["spike2max_exact_over_softmax"] = ex / sm if sm and ex is not None else None
    return out


def model_comparison(model_energy: dict, ann_energy: dict, config, data, table=None) -> dict:
    """One record: the model's modelled energy per sequence vs its ANN twin's, and the normalisation alone."""
    m, a = model_energy["total_pj"], ann_energy["total_pj"]
    lengths = data.mask.sum(1).tolist()
    return {"energy": "MODELLED (45 nm cost table, not measured)", "arch": config.arch, "attn": config.attn,
            "T": config.steps, "sequences": len(lengths),
            "model_pj": m, "ann_twin_pj": a, "model_over_ann": m / a if a else None,
            "energy_change_pct": 100.0 * (m / a - 1.0) if a else None, "paper_energy_change_pct": -57.9,
            **normalisation_energy(lengths, config.heads, config.steps, config.layers, table),
            "model_ops": {k: round(v, 1) for k, v in model_energy["ops_per_sequence"].items() if v},
            "ann_ops": {k: round(v, 1) for k, v in ann_energy["ops_per_sequence"].items() if v}}
