"""Held-out evaluation: our PRMs against bandit and semgrep (SecCodePRM reconstruction, arXiv 2602.10418).

Everything here runs on the synthetic held-out corpus (a seed the shipped models never saw)
or on user-supplied vulnerable/fixed pairs; figures computed on synthetic data say so.
Ground truth for a step: it overlaps a line the template marks as vulnerable. A prefix (partial
code) is judged against two labels: it already contains such a line, or ("file label", early
warning) the whole file is vulnerable. An analyzer flags a step when one of
its findings overlaps it, and a file when it reports any finding (``bandit≥medium``: severity
MEDIUM or HIGH only).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.score_code.aggregate import aggregate
from mlx26.core.score_code.analyzers import Finding, run_bandit, run_semgrep
from mlx26.core.score_code.corpus import Example
from mlx26.core.score_code.detect import prefix_text
from mlx26.core.score_code.labels import step_labels
from mlx26.core.score_code.segment import segment, split_lines
from mlx26.core.score_code.spec import ANALYZERS


def prf(pred: Sequence[bool], gold: Sequence[bool]) -> dict[str, float]:
    tp = sum(p and g for p, g in zip(pred, gold, strict=True))
    fp = sum(p and not g for p, g in zip(pred, gold, strict=True))
    fn = sum(g and not p for p, g in zip(pred, gold, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4), "n": len(gold),
            "positives": sum(bool(g) for g in gold)}


def f1_difference(pred_a: Sequence[bool], pred_b: Sequence[bool], gold: Sequence[bool], groups: Sequence[int], *,
                  resamples: int = 2000, level: float = 0.9, seed: int = 0) -> dict[str, float | int]:
    """F1(a) − F1(b) on the same items, with a paired percentile bootstrap that resamples whole ``groups``
    (e.g. a SVEN pair: its vulnerable and fixed function together), and the share of resamples where a's F1
    is above b's. Small test sets make F1 noisy; this says how much."""
    import numpy as np

    if not len(pred_a) == len(pred_b) == len(gold) == len(groups) or not gold:
        raise InputError("f1_difference needs equal, non-empty prediction, label and group lists")
    ids = sorted(set(groups))
    members = {g: [i for i, x in enumerate(groups) if x == g] for g in ids}

    def f1(pred, rows):
        tp = sum(pred[i] and gold[i] for i in rows)
        wrong = sum(pred[i] != gold[i] for i in rows)
        return 2 * tp / (2 * tp + wrong) if tp + wrong else 0.0

    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(resamples):
        rows = [i for g in rng.choice(len(ids), size=len(ids)) for i in members[ids[g]]]
        diffs.append(f1(pred_a, rows) - f1(pred_b, rows))
    every = list(range(len(gold)))
    tail = (1 - level) / 2
    return {"difference": round(f1(pred_a, every) - f1(pred_b, every), 4),
            "low": round(float(np.quantile(diffs, tail)), 4), "high": round(float(np.quantile(diffs, 1 - tail)), 4),
            "share_a_above": round(float(np.mean(np.array(diffs) > 0)), 4), "resamples": resamples,
            "groups": len(ids)}


def _flagged(findings: list[Finding], name: str, min_severity: bool = False) -> list[tuple[int, int]]:
    keep = ("MEDIUM", "HIGH") if min_severity else None
    return [(f.start_line, f.end_line) for f in findings if f.file == name and (keep is None or f.severity in keep)]


def _by_file(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.file, []).append(f)
    return out


def evaluate(examples: Sequence[Example], models: dict[str, Any], *, mode: str = "block",
             analyzers: Sequence[str] = ANALYZERS, rules: Sequence[str] = (),
             prefixes: Sequence[float] = (0.25, 0.5, 0.75), aggs: Sequence[str] = ("softmax", "last", "min", "mean"),
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Step-level, file-level and partial-code figures for each model and analyzer."""
    say = progress or (lambda _m: None)
    texts = {e.id: e.text for e in examples}

    def detect(src: dict[str, str]) -> dict[str, dict[str, list[tuple[int, int]]]]:
        """Flagged line ranges per system (bandit runs once for both of its rows)."""
        out: dict[str, dict[str, list[tuple[int, int]]]] = {}
        if "bandit" in analyzers:
            say(f"running bandit on {len(src)} files")
            found = _by_file(run_bandit(src))
            out["bandit"] = {k: _flagged(v, k) for k, v in found.items()}
            out["bandit≥medium"] = {k: _flagged(v, k, True) for k, v in found.items()}
        if "semgrep" in analyzers:
            say(f"running semgrep on {len(src)} files")
            out["semgrep"] = {k: _flagged(v, k) for k, v in _by_file(run_semgrep(src, rules)).items()}
        return out

    flags_full = detect(texts)
    gold_steps: dict[str, list[int]] = {}
    steps_of = {}
    for e in examples:
        steps_of[e.id] = segment(e.text, mode)
        gold_steps[e.id] = step_labels(steps_of[e.id], [(n, n) for n in e.vulnerable_lines])
    scores: dict[str, dict[str, list[float]]] = {}
    for mname, model in models.items():
        say(f"scoring with the {mname} PRM")
        scores[mname] = {e.id: model.score_steps([s.text for s in steps_of[e.id]])[0] for e in examples}

    def step_preds(system: str, eid: str) -> list[bool]:
        if system in scores:
            return [s <= 0 for s in scores[system][eid]]
        spans = flags_full[system].get(eid, [])
        return [bool(y) for y in step_labels(steps_of[eid], spans)]

    systems = list(scores) + list(flags_full)
    missed = [e.id for e in examples if e.vulnerable and not any(
        any(p and g for p, g in zip(step_preds(a, e.id), gold_steps[e.id], strict=True)) for a in flags_full)]
    cwes = sorted({e.cwe for e in examples})
    step_level: dict[str, Any] = {}
    for system in systems:
        row: dict[str, Any] = {}
        for subset, ids in [("all", [e.id for e in examples]), ("analyzer_missed", missed)] + [
                (c, [e.id for e in examples if e.cwe == c]) for c in cwes]:
            pred = [p for i in ids for p in step_preds(system, i)]
            gold = [bool(g) for i in ids for g in gold_steps[i]]
            row[subset] = prf(pred, gold)
        step_level[system] = row
    file_gold = {e.id: e.vulnerable for e in examples}
    file_level: dict[str, Any] = {}
    for system in systems:
        variants = [f"{system}/{a}" for a in aggs] if system in scores else [system]
        for variant in variants:
            if system in scores:
                agg = variant.split("/", 1)[1]
                file_pred = {i: aggregate(s, agg) <= 0 if s else False for i, s in scores[system].items()}
            else:
                file_pred = {i: bool(flags_full[system].get(i)) for i in texts}
            file_row = {"all": prf([file_pred[i] for i in texts], [file_gold[i] for i in texts])}
            for c in cwes:
                ids = [e.id for e in examples if e.cwe == c]
                file_row[c] = prf([file_pred[i] for i in ids], [file_gold[i] for i in ids])
            file_level[variant] = file_row
    # Every prefix (steps 1..t) judged against its monotone label: the aggregate of the steps so far
    # versus the last-step criterion (s_t ≤ 0), as in streaming detection.
    prefix_level: dict[str, Any] = {}
    for mname in scores:
        gold_m = [bool(y) for e in examples for y in step_labels(steps_of[e.id], [(n, n) for n in e.vulnerable_lines],
                                                                  "monotone")]
        for agg in aggs:
            prefix_pred = [aggregate(s[:t + 1], agg) <= 0 for e in examples for s in [scores[mname][e.id]]
                           for t in range(len(s))]
            prefix_level[f"{mname}/{agg}"] = prf(prefix_pred, gold_m)
    partial: dict[str, Any] = {}
    for frac in prefixes:
        cut = {e.id: prefix_text(e.text, frac) for e in examples}
        n_lines = {i: len(split_lines(t)) for i, t in cut.items()}
        cut_gold = {e.id: any(n <= n_lines[e.id] for n in e.vulnerable_lines) for e in examples}
        cut_row: dict[str, Any] = {}
        for mname, model in models.items():
            cut_pred: dict[str, bool] = {}
            for i, t in cut.items():
                s = model.score_steps([st.text for st in segment(t, mode)])[0]
                cut_pred[i] = bool(s) and aggregate(s, "softmax") <= 0
            cut_row[f"{mname}/softmax"] = prf([cut_pred[i] for i in cut], [cut_gold[i] for i in cut])
            cut_row[f"{mname}/softmax (file label)"] = prf([cut_pred[i] for i in cut], [file_gold[i] for i in cut])
        for name, flags in detect(cut).items():
            cut_row[name] = prf([bool(flags.get(i)) for i in cut], [cut_gold[i] for i in cut])
            cut_row[name + " (file label)"] = prf([bool(flags.get(i)) for i in cut], [file_gold[i] for i in cut])
        partial[f"{int(frac * 100)}%"] = cut_row
    return {"files": len(examples), "vulnerable_files": sum(file_gold.values()), "segmentation": mode,
            "analyzer_missed_files": len(missed), "step_level": step_level, "prefix_level": prefix_level,
            "file_level": file_level,
            "partial_code": partial}


def throughput(examples: Sequence[Example], models: dict[str, Any], *, mode: str = "block",
               analyzers: Sequence[str] = ANALYZERS, rules: Sequence[str] = ()) -> dict[str, float]:
    """Lines per second (segmentation + scoring for the PRMs; one batched run for each analyzer)."""
    texts = {e.id: e.text for e in examples}
    n_lines = sum(len(split_lines(t)) for t in texts.values())
    out: dict[str, float] = {"lines": n_lines}
    for name, model in models.items():
        t0 = time.perf_counter()
        for t in texts.values():
            model.score_steps([s.text for s in segment(t, mode)])
        out[name] = n_lines / (time.perf_counter() - t0)
    for name in analyzers:
        t0 = time.perf_counter()
        (run_bandit(texts) if name == "bandit" else run_semgrep(texts, rules))
        out[name] = n_lines / (time.perf_counter() - t0)
    return out


_PAIR_KEYS = (("vulnerable", "fixed"), ("before", "after"), ("code_before", "code_after"), ("func_before", "func_after"))


def pair_examples(folder: str) -> list[Example]:
    """Vulnerable/fixed Python pairs as labelled examples (labels from the fix diff).

    Accepts ``NAME.vuln.py`` + ``NAME.fixed.py`` (or ``_vuln``/``_fixed``) file pairs and JSONL
    files whose records hold one of the key pairs in ``_PAIR_KEYS`` (e.g. vulnerable/fixed,
    before/after). The vulnerable version gets the lines the fix changes; the fixed one none.
    """
    import json
    from pathlib import Path

    from mlx26.core.score_code.labels import diff_ranges

    pairs: list[tuple[str, str, str, str]] = []  # (id, vulnerable, fixed, cwe)
    root = Path(folder)
    for path in sorted(root.rglob("*.py")):
        for tag in (".vuln", "_vuln"):
            if path.stem.endswith(tag):
                fixed_path = path.with_name(path.stem[: -len(tag)] + tag.replace("vuln", "fixed") + ".py")
                if fixed_path.is_file():
                    pairs.append((str(path.relative_to(root)), path.read_text(errors="surrogateescape"),
                                  fixed_path.read_text(errors="surrogateescape"), "real"))
    for path in sorted(root.rglob("*.jsonl")):
        for n, line in enumerate(path.read_text(errors="surrogateescape").splitlines(), 1):
            if not line.strip():
                continue
            r = json.loads(line)
            keys = next(((a, b) for a, b in _PAIR_KEYS if isinstance(r.get(a), str) and isinstance(r.get(b), str)),
                        None)
            if keys:
                cwe = str(r.get("cwe", r.get("cwe_id", "real")))
                pairs.append((f"{path.name}:{n}", r[keys[0]], r[keys[1]], cwe))
    out = []
    for pid, vuln, fixed, cwe in pairs:
        lines = sorted({n for a, b in diff_ranges(vuln, fixed) for n in range(a, b + 1)})
        if not lines:
            continue
        out.append(Example(f"{pid}#vulnerable", vuln, lines, cwe, "real-pair", True))
        out.append(Example(f"{pid}#fixed", fixed, [], cwe, "real-pair", False))
    return out
