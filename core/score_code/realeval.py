"""Evaluation on real code: SVEN fixes, ordinary stdlib files, robustness, ranking (SecCodePRM reconstruction).

SecCodePRM (Yu et al., ICML 2026, arXiv 2602.10418) scores code step by step and calls a unit
vulnerable when the risk-sensitive aggregate of its step scores is at or below a threshold; it
is evaluated for vulnerability detection, step localisation and ranking. The protocol here is
ours (the paper evaluates an LLM PRM on its own benchmarks); every figure is on real code:

* **SVEN test** (SVEN ``val``, :func:`sven.split`): each fix's function before (vulnerable) and
  after (fixed), dedented (:func:`sven.dedented`, which keeps the line numbers), is one input.
  The PRM, bandit (a finding of severity ≥ MEDIUM) and semgrep (the shipped local rules, any
  finding) see exactly the same text (the analyzers as one ``.py`` file each). Function-level
  precision/recall/F1, overall and per CWE. Top-1 localisation over the vulnerable functions:
  the PRM's lowest-scored step overlaps a deleted line; an analyzer's highest-severity finding
  (the first one among equals) overlaps a deleted line; no finding is a miss.
* **Ranking**: the fixed version's aggregate is strictly above the vulnerable one's (analyzers:
  strictly fewer findings); ties are counted apart.
* **False alarms on ordinary code**: a seeded sample of standard-library modules (no tests,
  no idlelib/lib2to3/site-packages, ≤ 3000 lines) from the ``test`` part of :func:`stdlib_part`
  (the other 30 % may calibrate thresholds), judged file by file. These files are
  *ordinary code, assumed benign*: what any system flags there is counted as a false alarm,
  and the analyzers' findings there are not ground truth.
* **Robustness**: 10 vulnerable + 10 fixed SVEN test functions (seeded choice); a verdict
  flip is a changed verdict on the original function after (a) prepending two fixed benign
  helpers (:data:`HELPERS`; the new file is scored causally and only the original function's
  steps are aggregated; analyzers: findings inside the original lines) or (b) renaming the
  function's parameters and local variables consistently (:func:`rename_locals`).
* **Throughput**: lines/s in-process (segmentation + scoring) over the stdlib sample.

Operating rule of a PRM (:func:`operating_rule`): aggregate ``manifest["models"][kind]
["aggregate"]`` (default softmax) with ``tau`` (default 0.1); vulnerable iff the aggregate is
≤ ``threshold`` (default 0.0, the paper's rule) — a calibrated threshold in the model
folder's manifest is used as shipped.
"""

from __future__ import annotations

import ast
import math
import random
import sysconfig
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import BackendMissing, InputError
from mlx26.core.score_code import sven
from mlx26.core.score_code.aggregate import aggregate
from mlx26.core.score_code.analyzers import Finding, available, run_bandit, run_semgrep
from mlx26.core.score_code.evaluate import f1_difference, prf
from mlx26.core.score_code.prm import manifest, score_text
from mlx26.core.score_code.segment import split_lines
from mlx26.core.score_code.source import decode
from mlx26.core.score_code.spec import AGGREGATORS, ANALYZERS, SEGMENT_MODES

BANDIT = "bandit≥medium"
SEMGREP = "semgrep"
INSTALL_HINT = "pip install 'mlx26[score-code]'"
STDLIB_EXCLUDE = ("test", "tests", "idlelib", "lib2to3", "site-packages")
MAX_STDLIB_LINES = 3000
ROBUST_PER_CLASS = 10
BENIGN_NOTE = ("ordinary code, assumed benign: every flagged file counts as a false alarm; analyzer findings "
               "on these files are not ground truth")

# Two ordinary helpers prepended in the robustness check (fixed text; ends with two blank lines).
HELPERS = '''def clamp(value, low, high):
    """Limit value to the closed range [low, high]."""
    if low > high:
        low, high = high, low
    return max(low, min(high, value))


def slugify(text, separator="-"):
    """Lower-case words of text joined by separator."""
    words = "".join(c if c.isalnum() else " " for c in text.lower()).split()
    return separator.join(words)


'''

_SEVERITY = {"HIGH": 3, "ERROR": 3, "MEDIUM": 2, "WARNING": 2, "LOW": 1, "INFO": 1}


# --------------------------------------------------------------------------- operating rule


@dataclass(frozen=True)
class Rule:
    """How a PRM turns step scores into a verdict: ``aggregate(scores) <= threshold``."""

    agg: str = "softmax"
    tau: float = 0.1
    threshold: float = 0.0
    rank_agg: str = ""  # the aggregate that ranks candidates (manifest ``rank_aggregate``); "" = agg
    rank_tau: float = 0.0

    def value(self, scores: Sequence[float]) -> float:
        return aggregate(scores, self.agg, tau=self.tau) if len(scores) else math.nan

    def rank_value(self, scores: Sequence[float]) -> float:
        if not self.rank_agg:
            return self.value(scores)
        return aggregate(scores, self.rank_agg, tau=self.rank_tau or self.tau) if len(scores) else math.nan

    def flags(self, scores: Sequence[float]) -> bool:
        v = self.value(scores)
        return bool(v == v and v <= self.threshold)

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"aggregate": self.agg, "tau": self.tau, "threshold": self.threshold}
        if self.rank_agg:
            out.update({"rank_aggregate": self.rank_agg, "rank_tau": self.rank_tau})
        return out


def operating_rule(kind: str, model_dir: str | None = None) -> Rule:
    """The rule recorded in the model folder's manifest (defaults: softmax, τ = 0.1, threshold 0)."""
    entry = (manifest(model_dir).get("models") or {}).get(kind) or {}
    rule = Rule(str(entry.get("aggregate", "softmax")), float(entry.get("tau", 0.1)),
                float(entry.get("threshold", 0.0)), str(entry.get("rank_aggregate", "")),
                float(entry.get("rank_tau", 0.0)))
    if rule.agg not in AGGREGATORS or (rule.rank_agg and rule.rank_agg not in AGGREGATORS):
        raise InputError(f"the manifest of {model_dir or 'the shipped models'} names an unknown aggregator "
                         f"'{rule.agg}' for {kind}.", "choose one of: " + ", ".join(AGGREGATORS))
    if not (rule.tau > 0 and math.isfinite(rule.tau) and math.isfinite(rule.threshold)):
        raise InputError(f"the manifest's tau/threshold for {kind} must be finite (tau > 0).")
    return rule


# --------------------------------------------------------------------------- metrics


def ranking(fixed_scores: Sequence[float], vulnerable_scores: Sequence[float], higher_is_safer: bool = True
            ) -> dict[str, Any]:
    """How often the fixed version is preferred (strictly), tied, or worse, over paired scores."""
    pref = ties = worse = 0
    for f, v in zip(fixed_scores, vulnerable_scores, strict=True):
        a, b = (f, v) if higher_is_safer else (-f, -v)
        if a != a or b != b or a == b:  # NaN (nothing to score) counts as a tie
            ties += 1
        elif a > b:
            pref += 1
        else:
            worse += 1
    n = pref + ties + worse
    return {"pairs": n, "preferred": pref, "ties": ties, "worse": worse, "rate": round(pref / n, 4) if n else 0.0}


def hit_rate(hits: Sequence[bool]) -> dict[str, Any]:
    return {"hits": sum(map(bool, hits)), "n": len(hits), "rate": round(sum(map(bool, hits)) / len(hits), 4)
            if hits else 0.0}


def flips(before: Sequence[bool], after: Sequence[bool], ids: Sequence[str] | None = None) -> dict[str, Any]:
    """Changed verdicts between two runs over the same units (``flipped``: their ids or indices)."""
    names = list(ids) if ids is not None else list(range(len(before)))
    changed = [n for n, a, b in zip(names, before, after, strict=True) if a != b]
    return {"flips": len(changed), "n": len(before), "flipped": changed}


def overlaps(a: int, b: int, lines: Sequence[int]) -> bool:
    return any(a <= n <= b for n in lines)


def top_finding(findings: Sequence[Finding]) -> Finding | None:
    """The highest-severity finding; the first (lowest line) among equals."""
    if not findings:
        return None
    return min(findings, key=lambda f: (-_SEVERITY.get(f.severity.upper(), 0), f.start_line, f.end_line))


# --------------------------------------------------------------------------- inputs


def prepend_helpers(code: str) -> tuple[str, int]:
    """HELPERS + code, and the number of lines before the original code's first line."""
    return HELPERS + code, len(split_lines(HELPERS))


def _blocked_names(fn: ast.AST) -> set[str]:
    """Names bound or referenced in ways a Name/arg position rewrite cannot follow."""
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
        elif isinstance(node, ast.ClassDef):
            out.add("*")  # names stored in a class body are attributes, not locals
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not fn:
            out.add(node.name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("locals", "vars",
                                                                                                 "eval", "exec"):
            out.add("*")  # the function reads its own namespace by name: renaming could change behaviour
    return out


def rename_locals(code: str) -> tuple[str, dict[str, str]] | None:
    """Consistently rename the first top-level function's parameters and local variables.

    ``self``/``cls`` and names bound by ``global``/``nonlocal``/``except … as``/imports/nested defs
    are kept. The rewrite replaces identifier spans in place (layout, comments and blank lines
    are kept, so the segmentation is unchanged). None when the code does not parse or there is
    nothing to rename.
    """
    try:
        with warnings.catch_warnings():  # real code has invalid string escapes: not our concern
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return None
    blocked = _blocked_names(fn)
    if "*" in blocked:
        return None
    a = fn.args
    params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]]
    stores = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    candidates = [x for x in dict.fromkeys(params + stores) if x not in blocked and x not in ("self", "cls")]
    if not candidates:
        return None
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {
        n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)} | blocked
    mapping: dict[str, str] = {}
    k = 0
    for name in candidates:
        k += 1
        while f"v{k}" in taken:
            k += 1
        mapping[name] = f"v{k}"
    spans: list[tuple[int, int, int, str]] = []  # (line, byte start, byte end, new name)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in mapping:
            spans.append((node.lineno, node.col_offset, node.end_col_offset or 0, mapping[node.id]))
        elif isinstance(node, ast.arg) and node.arg in mapping:
            spans.append((node.lineno, node.col_offset, node.col_offset + len(node.arg.encode()), mapping[node.arg]))
    lines = code.splitlines(keepends=True)
    for line, start, end, new in sorted(spans, reverse=True):
        raw = lines[line - 1].encode("utf-8", "surrogateescape")
        lines[line - 1] = (raw[:start] + new.encode() + raw[end:]).decode("utf-8", "surrogateescape")
    return "".join(lines), mapping


def stdlib_files(root: str | Path | None = None) -> list[Path]:
    """Candidate stdlib modules, sorted: no test/idlelib/lib2to3/site-packages folders, ≤ 3000 lines."""
    base = Path(root or sysconfig.get_paths()["stdlib"])
    if not base.is_dir():
        raise InputError(f"no standard-library folder at {base}")
    out = []
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).parts
        if any(part in STDLIB_EXCLUDE or part == "__pycache__" for part in rel[:-1]):
            continue
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        if raw.strip() and raw.count(b"\n") <= MAX_STDLIB_LINES:
            out.append(path)
    return out


STDLIB_PARTS = ("test", "calibration", "all")
STDLIB_CALIBRATION_SHARE = 30  # percent of modules, chosen by a hash of the module's path


def stdlib_part(relative: str) -> str:
    """``calibration`` or ``test``: a fixed split of the standard library by module path.

    Training never reads the standard library; a PRM's threshold may be calibrated on the
    ``calibration`` modules, and false alarms are then counted on ``test`` modules only.
    """
    share = zlib.crc32(relative.replace("\\", "/").encode()) % 100
    return "calibration" if share < STDLIB_CALIBRATION_SHARE else "test"


def stdlib_sample(n: int = 200, seed: int = 0, root: str | Path | None = None, part: str = "test") -> list[Path]:
    """A seeded sample of :func:`stdlib_files` in one part of the split (sorted by path; same seed, same files)."""
    if n < 0:
        raise InputError(f"--stdlib-files must be ≥ 0, got {n}.")
    if part not in STDLIB_PARTS:
        raise InputError(f"unknown standard-library part '{part}'", "choose one of: " + ", ".join(STDLIB_PARTS))
    base = Path(root or sysconfig.get_paths()["stdlib"])
    files = [f for f in stdlib_files(base) if part == "all" or stdlib_part(f.relative_to(base).as_posix()) == part]
    picked = random.Random(seed).sample(range(len(files)), min(n, len(files)))
    return [files[i] for i in sorted(picked)]


# --------------------------------------------------------------------------- the evaluation


def check_analyzers(names: Sequence[str]) -> list[str]:
    out = []
    for name in names:
        if name not in ANALYZERS:
            raise InputError(f"unknown analyzer '{name}'.", "choose one of: " + ", ".join(ANALYZERS) + ", or none")
        if not available(name):
            raise BackendMissing(f"the analyzer '{name}' is not installed.", INSTALL_HINT)
        out.append(name)
    return list(dict.fromkeys(out))


def analyze_texts(names: Sequence[str], sources: dict[str, str], say: Callable[[str], None]) -> dict[str, dict]:
    """system → file key → kept findings (bandit: severity ≥ MEDIUM; semgrep: all)."""
    out: dict[str, dict[str, list[Finding]]] = {}
    if "bandit" in names:
        say(f"running bandit on {len(sources)} files")
        kept = [f for f in run_bandit(sources) if f.severity.upper() in ("MEDIUM", "HIGH")]
        out[BANDIT] = {}
        for f in kept:
            out[BANDIT].setdefault(f.file, []).append(f)
    if "semgrep" in names:
        say(f"running semgrep on {len(sources)} files")
        out[SEMGREP] = {}
        for f in run_semgrep(sources):
            out[SEMGREP].setdefault(f.file, []).append(f)
    return out


def _pick(n: int, k: int, rng: random.Random) -> list[int]:
    return sorted(rng.sample(range(n), min(k, n)))


def evaluate_real(pairs: Sequence[sven.Pair], models: dict[str, Any], rules: dict[str, Rule], *,
                  mode: str = "block", analyzers: Sequence[str] = ANALYZERS, stdlib_n: int = 200, seed: int = 0,
                  stdlib_root: str | Path | None = None, stdlib_part: str = "test",
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """All real-code figures for the PRMs in ``models`` (with their ``rules``) and the analyzers."""
    say = progress or (lambda _m: None)
    if mode not in SEGMENT_MODES:
        raise InputError(f"unknown segmentation '{mode}'.", "choose one of: " + ", ".join(SEGMENT_MODES))
    names = check_analyzers(analyzers)
    if not pairs:
        raise InputError("no SVEN test pairs to evaluate.")
    # Inputs: every text any system sees, keyed once, so each analyzer runs a single batch.
    texts: dict[str, str] = {}
    for i, p in enumerate(pairs):
        texts[f"sven/{i}/vulnerable"] = sven.dedented(p.before)[0]
        texts[f"sven/{i}/fixed"] = sven.dedented(p.after)[0]
    rng = random.Random(seed)
    robust = [(f"sven/{i}/vulnerable", True) for i in _pick(len(pairs), ROBUST_PER_CLASS, rng)] + [
        (f"sven/{i}/fixed", False) for i in _pick(len(pairs), ROBUST_PER_CLASS, rng)]
    offset = prepend_helpers("")[1]
    renamed: dict[str, str] = {}
    for key, _ in robust:
        texts[f"prepend/{key}"] = prepend_helpers(texts[key])[0]
        r = rename_locals(texts[key])
        if r is not None:
            renamed[key] = texts[f"rename/{key}"] = r[0]
    stdlib_root_path = Path(stdlib_root or sysconfig.get_paths()["stdlib"])
    sample = stdlib_sample(stdlib_n, seed, stdlib_root_path, part=stdlib_part) if stdlib_n else []
    for path in sample:
        texts[f"stdlib/{path.relative_to(stdlib_root_path)}"] = decode(path.read_bytes(), str(path)).text
    found = analyze_texts(names, texts, say)

    # PRM scores (causal over each whole text).
    scored: dict[str, dict[str, Any]] = {}
    speed: dict[str, Any] = {}
    std_keys = [k for k in texts if k.startswith("stdlib/")]
    for mname, model in models.items():
        say(f"scoring with the {mname} PRM")
        scored[mname] = {k: score_text(t, model, mode) for k, t in texts.items() if not k.startswith("stdlib/")}
        t0 = time.perf_counter()
        for k in std_keys:
            scored[mname][k] = score_text(texts[k], model, mode)
        if std_keys:
            speed[mname] = round(sum(len(split_lines(texts[k])) for k in std_keys) / (time.perf_counter() - t0))

    systems = list(models) + list(found)

    def verdict(system: str, key: str, after_line: int = 0) -> bool:
        if system in models:
            s = scored[system][key]
            return rules[system].flags([x for x, st in zip(s.scores, s.steps, strict=True)
                                        if st.start_line > after_line])
        return any(f.start_line > after_line for f in found[system].get(key, []))

    def value(system: str, key: str) -> float:
        if system in models:
            return rules[system].rank_value(scored[system][key].scores)
        return float(len(found[system].get(key, [])))

    # SVEN test: function level, localisation, ranking.
    keys = [(f"sven/{i}/{v}", v == "vulnerable", p) for i, p in enumerate(pairs) for v in ("vulnerable", "fixed")]
    cwes = sorted({p.cwe for p in pairs})
    function_level: dict[str, Any] = {}
    localisation: dict[str, Any] = {}
    rank: dict[str, Any] = {}
    gold = [g for _, g, _ in keys]
    preds = {system: [verdict(system, k) for k, _, _ in keys] for system in systems}
    pair_of = [i for i in range(len(pairs)) for _ in ("vulnerable", "fixed")]
    for system in systems:
        pred = preds[system]
        function_level[system] = {"all": prf(pred, gold), "by_cwe": {
            c: prf([x for x, (_, _, p) in zip(pred, keys, strict=True) if p.cwe == c],
                   [g for g, (_, _, p) in zip(gold, keys, strict=True) if p.cwe == c]) for c in cwes}}
        hits: list[bool] = []
        top_lines: list[int] = []
        for i, p in enumerate(pairs):
            key = f"sven/{i}/vulnerable"
            if system in models:
                s = scored[system][key]
                j = min(range(len(s.scores)), key=lambda t: (s.scores[t], t)) if s.scores else None
                hit = j is not None and overlaps(s.steps[j].start_line, s.steps[j].end_line, p.deleted)
                if j is not None:
                    top_lines.append(s.steps[j].end_line - s.steps[j].start_line + 1)
            else:
                top = top_finding(found[system].get(key, []))
                hit = top is not None and overlaps(top.start_line, top.end_line, p.deleted)
                if top is not None:
                    top_lines.append(top.end_line - top.start_line + 1)
            hits.append(hit)
        row = hit_rate(hits)
        row["by_cwe"] = {c: hit_rate([h for h, p in zip(hits, pairs, strict=True) if p.cwe == c]) for c in cwes}
        row["mean_lines_of_top"] = round(sum(top_lines) / len(top_lines), 2) if top_lines else 0.0
        if system in models:  # chance level: a uniformly random step of the function overlaps a deleted line
            chance = [sum(overlaps(st.start_line, st.end_line, p.deleted) for st in s.steps) / len(s.steps)
                      for i, p in enumerate(pairs) for s in [scored[system][f"sven/{i}/vulnerable"]] if s.steps]
            row["random_step_rate"] = round(sum(chance) / len(chance), 4) if chance else 0.0
        localisation[system] = row
        if system in models:  # each PRM against each analyzer on the same functions, resampling SVEN pairs
            function_level[system]["f1_minus"] = {a: f1_difference(pred, preds[a], gold, pair_of, seed=seed)
                                                  for a in found}
        fixed_v = [value(system, f"sven/{i}/fixed") for i in range(len(pairs))]
        vuln_v = [value(system, f"sven/{i}/vulnerable") for i in range(len(pairs))]
        rank[system] = ranking(fixed_v, vuln_v, higher_is_safer=system in models)

    # False alarms on ordinary stdlib code.
    false_alarms: dict[str, Any] = {"note": BENIGN_NOTE, "stdlib": str(stdlib_root_path), "files": len(std_keys),
                                    "lines": sum(len(split_lines(texts[k])) for k in std_keys), "seed": seed,
                                    "part": stdlib_part}
    for system in systems:
        flagged = [k[len("stdlib/"):] for k in std_keys if verdict(system, k)]
        false_alarms[system] = {"flagged": len(flagged), "rate": round(len(flagged) / len(std_keys), 4)
                                if std_keys else 0.0, "examples": flagged[:5]}

    # Robustness.
    robustness: dict[str, Any] = {"functions": len(robust), "ids": [k for k, _ in robust], "vulnerable": sum(v for _, v in robust),
                                  "helpers_lines": offset, "renamed": len(renamed),
                                  "rename_skipped": len(robust) - len(renamed), "prepend": {}, "rename": {}}
    for system in systems:
        ids = [k for k, _ in robust]
        robustness["prepend"][system] = flips([verdict(system, k) for k in ids],
                                              [verdict(system, f"prepend/{k}", offset) for k in ids], ids)
        rk = [k for k in ids if k in renamed]
        robustness["rename"][system] = flips([verdict(system, k) for k in rk],
                                             [verdict(system, f"rename/{k}") for k in rk], rk)
    data = {"source": "SVEN (eth-sri/sven, MIT) val = test part of sven.split", "pairs": len(pairs),
            "functions": 2 * len(pairs), "repositories": len({p.repo for p in pairs}),
            "by_cwe": {c: sum(p.cwe == c for p in pairs) for c in cwes}}
    return {"data": data, "segmentation": mode, "seed": seed, "systems": systems,
            "operating_rules": {m: rules[m].to_record() for m in models}, "analyzers": names,
            "function_level": function_level, "localisation_top1": localisation, "ranking": rank,
            "false_alarms": false_alarms, "robustness": robustness,
            "throughput_lines_per_s": {"lines": false_alarms["lines"], **speed}}


def load_test_pairs(folder: str | Path) -> list[sven.Pair]:
    """SVEN's test part (``val``, repository-disjoint from training) from ``folder``."""
    return sven.split(sven.load_pairs(folder))["test"]

