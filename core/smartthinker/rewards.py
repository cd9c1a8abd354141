"""Length rewards of one GRPO prompt group: SmartThinker (ICML 2026, arXiv 2603.08000) and baselines.

A group is the G responses sampled for one prompt: token lengths ``L_i > 0`` and correctness
``a_i ∈ {0, 1}``. Every function returns a :class:`GroupReward` (one reward per response, in the
given order) and depends only on the multiset of (length, correct) pairs, so permuting a group
permutes its rewards.

**SmartThinker** (the paper's definition, checked against the case analysis of the public reward
manager of SJTU-RTEAS/SmartThinker; written from the definition, not copied):

* optimal length ``l_opt``: all correct → min L; none correct → max L; otherwise, with population
  variances σ_c² (correct lengths) and σ_a² (all lengths) and means μ_c, μ_a:
  ``|σ_c² − σ_a²| < 1e-6`` → max L if μ_c < μ_a else min L; ``σ_c² > σ_a²`` → min L; else
  ``(σ_c² μ_a − σ_a² μ_c) / (σ_c² − σ_a²)`` clipped to [min L, max L];
* penalty ``p_i = L_i − l_opt`` for a correct response longer than ``l_opt``, else 0;
* ``α = (1 − acc) / (max_{correct} p − mean_{all} p + 1e-6)``, 0 when the group has no correct or no
  wrong response — the largest coefficient for which the most-penalised correct response still
  scores at least the group mean (so correct reasoning is never pushed below average);
* ``r_i = a_i − α p_i``.

**Baselines** (reconstructed from each paper's formula; their coefficients are the papers' defaults,
which were tuned for lengths in the thousands — ``coef`` rescales them):

* ``kimi`` — Kimi Team, *Kimi k1.5: Scaling Reinforcement Learning with LLMs* (arXiv 2501.12599):
  ``λ_i = 0.5 − (L_i − min L)/(max L − min L)`` (0 when all lengths are equal); correct responses get
  ``a + coef·λ``, wrong ones ``coef·min(0, λ)``;
* ``arora`` — Arora & Zanette, *Training Language Models to Reason Efficiently* (arXiv 2502.04463):
  ``a·(1 − coef·sigmoid((L − μ_c)/σ_c))`` with μ_c, σ_c over the group's correct responses (coef 0.2);
* ``l1-exact`` / ``l1-max`` — Aggarwal & Welleck, *L1: Controlling How Long a Reasoning Model Thinks
  with Reinforcement Learning* (arXiv 2503.04697): ``a − coef·|n_gold − L|`` and
  ``a·clip(coef·(n_gold − L) + 0.5, 0, 1)`` for a target length ``n_gold`` (coef 0.0003);
* ``thinkprune`` — Hou et al., *ThinkPrune: Pruning Long Chain-of-Thought of LLMs via Reinforcement
  Learning* (arXiv 2504.01296): a response longer than the cap scores 0 (it would be truncated);
* ``none`` — the accuracy reward ``a`` alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.smartthinker.spec import LENGTH_REWARDS, TARGET_METHODS

VAR_TOL = 1e-6  # |σ_c² − σ_a²| below this counts as equal variances
ALPHA_EPS = 1e-6  # the paper's stabiliser in the denominator of α
DEFAULT_COEF = {"kimi": 1.0, "arora": 0.2, "l1-exact": 0.0003, "l1-max": 0.0003}
L1_MAX_DELTA = 0.5


@dataclass(frozen=True)
class GroupReward:
    """Rewards of one group, in input order; ``l_opt`` / ``alpha`` are None where a method has none."""

    rewards: tuple[float, ...]
    l_opt: float | None = None
    alpha: float | None = None
    penalties: tuple[float, ...] | None = None


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _pvar(xs: Sequence[float]) -> float:
    m = _mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)


def optimal_length(lengths: Sequence[float], correct: Sequence[bool]) -> float:
    """SmartThinker's ``l_opt`` of one group (see the module docstring for the case analysis)."""
    lo, hi = min(lengths), max(lengths)
    right = [x for x, c in zip(lengths, correct, strict=True) if c]
    if len(right) == len(lengths):
        return float(lo)
    if not right:
        return float(hi)
    mu_a, mu_c = _mean(lengths), _mean(right)
    var_a, var_c = _pvar(lengths), _pvar(right)
    if abs(var_c - var_a) < VAR_TOL:
        return float(hi if mu_c < mu_a else lo)
    if var_c > var_a:
        return float(lo)
    l_opt = (var_c * mu_a - var_a * mu_c) / (var_c - var_a)
    return float(min(hi, max(lo, l_opt)))


def smartthinker(lengths: Sequence[float], correct: Sequence[bool]) -> GroupReward:
    """SmartThinker's reward ``a_i − α p_i`` with its per-group ``l_opt`` and ``α``."""
    l_opt = optimal_length(lengths, correct)
    pen = tuple(float(x - l_opt) if c and x > l_opt else 0.0 for x, c in zip(lengths, correct, strict=True))
    n_right = sum(1 for c in correct if c)
    if n_right == 0 or n_right == len(correct):
        alpha = 0.0
    else:
        acc = n_right / len(correct)
        worst = max(p for p, c in zip(pen, correct, strict=True) if c)
        alpha = (1.0 - acc) / (worst - _mean(pen) + ALPHA_EPS)
    rewards = tuple(float(c) - alpha * p for c, p in zip(correct, pen, strict=True))
    return GroupReward(rewards, l_opt, alpha, pen)


def kimi(lengths: Sequence[float], correct: Sequence[bool], coef: float = DEFAULT_COEF["kimi"]) -> GroupReward:
    lo, hi = min(lengths), max(lengths)
    lam = [0.0 if hi == lo else 0.5 - (x - lo) / (hi - lo) for x in lengths]
    rewards = tuple(1.0 + coef * v if c else coef * min(0.0, v) for v, c in zip(lam, correct, strict=True))
    return GroupReward(rewards, None, coef)


def arora(lengths: Sequence[float], correct: Sequence[bool], coef: float = DEFAULT_COEF["arora"]) -> GroupReward:
    right = [x for x, c in zip(lengths, correct, strict=True) if c]
    if not right:
        return GroupReward(tuple(0.0 for _ in lengths), None, coef)
    mu, sd = _mean(right), math.sqrt(_pvar(right))
    rewards = []
    for x, c in zip(lengths, correct, strict=True):
        z = 0.0 if sd == 0 else (x - mu) / sd
        rewards.append(float(c) * (1.0 - coef / (1.0 + math.exp(-z))))
    return GroupReward(tuple(rewards), None, coef)


def l1_exact(lengths: Sequence[float], correct: Sequence[bool], target: float,
             coef: float = DEFAULT_COEF["l1-exact"]) -> GroupReward:
    return GroupReward(tuple(float(c) - coef * abs(target - x) for x, c in zip(lengths, correct, strict=True)),
                       float(target), coef)


def l1_max(lengths: Sequence[float], correct: Sequence[bool], target: float,
           coef: float = DEFAULT_COEF["l1-max"]) -> GroupReward:
    return GroupReward(tuple(float(c) * min(1.0, max(0.0, coef * (target - x) + L1_MAX_DELTA))
                             for x, c in zip(lengths, correct, strict=True)), float(target), coef)


def thinkprune(lengths: Sequence[float], correct: Sequence[bool], target: float) -> GroupReward:
    return GroupReward(tuple(float(c) if x <= target else 0.0 for x, c in zip(lengths, correct, strict=True)),
                       float(target), None)


def accuracy_only(lengths: Sequence[float], correct: Sequence[bool]) -> GroupReward:
    return GroupReward(tuple(float(c) for c in correct))


def check_params(method: str, target: float | None, coef: float | None) -> None:
    """Validate the method name and its parameters before any work (exit 2 on a bad one)."""
    if method not in LENGTH_REWARDS:
        raise unknown_name("length reward", method, LENGTH_REWARDS)
    if method in TARGET_METHODS:
        if target is None:
            raise InputError(f"--method {method} needs --target-length (its target / cap in tokens).")
        if not math.isfinite(target) or target <= 0:
            raise InputError(f"--target-length must be a positive number, got {target}.")
    if coef is not None:
        if method not in DEFAULT_COEF:
            raise InputError(f"--coef does not apply to --method {method}.",
                             hint="it applies to: " + ", ".join(DEFAULT_COEF))
        if not math.isfinite(coef) or coef < 0:
            raise InputError(f"--coef must be a non-negative number, got {coef}.")


def group_reward(method: str, lengths: Sequence[float], correct: Sequence[bool], *,
                 target: float | None = None, coef: float | None = None) -> GroupReward:
    """The rewards of one group under ``method`` (see :data:`LENGTH_REWARDS`)."""
    check_params(method, target, coef)
    if not lengths or len(lengths) != len(correct):
        raise InputError("a group needs one correctness value per length, and at least one response.")
    kw: dict[str, float] = {} if coef is None else {"coef": coef}
    if method == "smartthinker":
        return smartthinker(lengths, correct)
    if method == "kimi":
        return kimi(lengths, correct, **kw)
    if method == "arora":
        return arora(lengths, correct, **kw)
    if method == "l1-exact":
        return l1_exact(lengths, correct, float(target), **kw)  # type: ignore[arg-type]
    if method == "l1-max":
        return l1_max(lengths, correct, float(target), **kw)  # type: ignore[arg-type]
    if method == "thinkprune":
        return thinkprune(lengths, correct, float(target))  # type: ignore[arg-type]
    return accuracy_only(lengths, correct)


# --------------------------------------------------------------------------- records

TRUE_WORDS = {"1", "true", "t", "yes", "y"}
FALSE_WORDS = {"0", "false", "f", "no", "n"}


def parse_correct(value: Any, where: str) -> bool:
    """A boolean-like ``correct`` value (bool, 0/1, "true"/"false", "yes"/"no"); else InputError."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise InputError(f"{where}: 'correct' must be boolean-like (true/false, 1/0, yes/no), got {value!r}.")


def parse_length(value: Any, where: str) -> float:
    """A positive finite token length; else InputError naming the row."""
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None:
        raise InputError(f"{where}: 'length' must be a number, got {value!r}.")
    if not math.isfinite(number) or number <= 0:
        raise InputError(f"{where}: 'length' must be a positive finite number, got {value!r}.")
    return number


@dataclass
class Scored:
    """Output rows (input rows plus ``reward``, ``l_opt``, ``alpha``) and warnings for stderr."""

    rows: list[dict[str, Any]]
    warnings: list[str]
    groups: int


def score_rows(numbered: Iterable[tuple[int, Mapping[str, Any]]], method: str, *, group_key: str = "group",
               length_key: str = "length", correct_key: str = "correct", target: float | None = None,
               coef: float | None = None) -> Scored:
    """Score records ``{group, length, correct}`` group by group; rows keep their input order."""
    check_params(method, target, coef)
    rows: list[dict[str, Any]] = []
    groups: dict[str, list[int]] = {}
    parsed: list[tuple[float, bool]] = []
    for line, record in numbered:
        where = f"row {line}"
        for key in (group_key, length_key, correct_key):
            if key not in record or record[key] in (None, ""):
                raise InputError(f"{where} has no '{key}' field.",
                                 hint=f"each row needs {group_key}, {length_key} and {correct_key}"
                                 + (" (--group-key names the group field)" if key == group_key else ""))
        parsed.append((parse_length(record[length_key], where), parse_correct(record[correct_key], where)))
        groups.setdefault(str(record[group_key]), []).append(len(rows))
        rows.append(dict(record))
    if not rows:
        raise InputError("no rows to score.", hint="give JSONL rows {group, length, correct}")
    warnings = []
    for name, idx in groups.items():
        if len(idx) == 1:
            warnings.append(f"warning: group {name!r} has a single response: no comparison within the group, "
                            "alpha = 0 (its reward is its accuracy, or the method's own single-response value)")
        res = group_reward(method, [parsed[i][0] for i in idx], [parsed[i][1] for i in idx],
                           target=target, coef=coef)
        for i, reward in zip(idx, res.rewards, strict=True):
            rows[i].update(reward=reward, l_opt=res.l_opt, alpha=res.alpha)
    return Scored(rows, warnings, len(groups))


def demo_groups() -> list[dict[str, Any]]:
    """The worked example of the issue (one mixed group) plus the special cases, as input rows."""
    cases = {
        "worked-example": ([100, 120, 300, 400, 90, 500, 250, 350], [1, 1, 1, 0, 0, 1, 0, 1]),
        "all-correct": ([80, 60, 120, 90], [1, 1, 1, 1]),
        "none-correct": ([80, 60, 120, 90], [0, 0, 0, 0]),
        "single-correct": ([80, 60, 120, 90], [0, 1, 0, 0]),
    }
    return [{"group": g, "length": x, "correct": bool(c)} for g, (ls, cs) in cases.items()
            for x, c in zip(ls, cs, strict=True)]
