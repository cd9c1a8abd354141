"""Persistence: an RL-native exploit policy vs an SFT-distilled student, both continued under the secure reward.

Part of the vulnerability-games reconstruction (arXiv 2602.12124: exploits propagate from teacher to student
through SFT and can persist longer when learned by RL). Ours, at token-action scale:

1. teacher — trained with ``algo`` on the vulnerable variant (:mod:`.train`);
2. student — a fresh policy fitted by cross-entropy (Adam, full-batch steps) to ``transcripts`` actions sampled
   from the teacher, contexts drawn from the game's distribution (the "teacher's transcripts"). By default
   (``sft_steps=None``) SFT runs until the student's ER matches the teacher's (the closest SFT step to it; ``er_matched`` when within ``match_tol``; at most
   ``max_sft_steps``, keeping the closest step), so both start the continuation at the same ER; a fixed
   ``sft_steps`` is the old protocol, whose outcome depends on how far the student was fitted (an under-fitted
   student starts less peaked and is corrected sooner; an over-fitted one outlasts the teacher);
3. both continue under the secure variant for ``steps`` steps with the same algorithm and seed; ER over steps
   side by side, the first step at which each falls below ``level`` (None: not within ``steps``) and the mean
   ER over the continuation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.vuln_games.games import make
from mlx26.core.vuln_games.train import Adam, TrainConfig, sample, softmax, train

MAX_SFT_STEPS = 5000   # ER matching: SFT steps at most
MATCH_TOL = 0.005      # ER matching: |student ER − teacher ER| reported as matched


def distil(teacher: np.ndarray, context_p: np.ndarray, transcripts: int, sft_steps: int, lr: float,
           seed: int, er_of: Callable[[np.ndarray], float] | None = None, target_er: float | None = None,
           ) -> tuple[np.ndarray, float, int]:
    """Student logits fitted to sampled teacher actions; returns (logits, final cross-entropy, steps used).

    With ``er_of`` and ``target_er``: stop once the student's ER reaches the target (SFT raises it towards the
    transcripts' exploit share) and return whichever of that step and the one before is closer; if it never
    reaches the target within ``sft_steps``, the step whose ER came closest."""
    rng = np.random.default_rng(seed + 7919)
    ctx = rng.choice(len(context_p), size=transcripts, p=context_p)
    act = sample(softmax(teacher), ctx, rng)
    counts = np.zeros_like(teacher)
    np.add.at(counts, (ctx, act), 1.0)
    theta = np.zeros_like(teacher)
    opt = Adam(theta.shape, lr)
    n = counts.sum(axis=1, keepdims=True)
    loss = float("nan")
    matching = er_of is not None and target_er is not None
    best: tuple[float, np.ndarray, float, int] | None = None
    for step in range(1, sft_steps + 1):
        probs = softmax(theta)
        # −∇ of the mean NLL of the transcripts: (empirical counts − n_c · π_c) / N
        opt.ascend(theta, (counts - n * probs) / transcripts)
        loss = float(-(counts * np.log(softmax(theta) + 1e-12)).sum() / transcripts)
        if matching:
            assert er_of is not None and target_er is not None
            er = er_of(theta)
            if best is None or abs(er - target_er) < best[0]:
                best = (abs(er - target_er), theta.copy(), loss, step)
            if er >= target_er:
                break
    if matching and best is not None:
        return best[1], best[2], best[3]
    return theta, loss, sft_steps


def experiment(game: str = "tampering", algo: str = "grpo", teacher_steps: int = 200, steps: int = 300,
               transcripts: int = 256, sft_steps: int | None = None, sft_lr: float = 0.05, seed: int = 0,
               level: float = 0.5, log_every: int = 10, match_tol: float = MATCH_TOL,
               max_sft_steps: int = MAX_SFT_STEPS, **game_kw: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``sft_steps=None``: fit the student until its ER matches the teacher's (the fair comparison)."""
    if transcripts < 1 or (sft_steps is not None and sft_steps < 1) or teacher_steps < 0 or steps < 0:
        raise InputError("persist needs --transcripts ≥ 1, --sft-steps ≥ 1, --teacher-steps ≥ 0 and --steps ≥ 0.")
    vulnerable, secure = make(game, "vulnerable", **game_kw), make(game, "secure", **game_kw)
    cfg = TrainConfig(algo=algo, steps=teacher_steps, seed=seed, log_every=log_every)
    records: list[dict[str, Any]] = []
    teacher = None
    for rec, current in train(vulnerable, cfg, phase="teacher"):
        records.append({**rec, "policy": "rl-teacher"})
        teacher = current
    assert teacher is not None
    teacher_er = vulnerable.metrics(softmax(teacher))["er"]
    if sft_steps is None:
        student, ce, used = distil(teacher, vulnerable.context_p, transcripts, max_sft_steps, sft_lr, seed,
                                   er_of=lambda th: vulnerable.metrics(softmax(th))["er"], target_er=teacher_er)
    else:
        student, ce, used = distil(teacher, vulnerable.context_p, transcripts, sft_steps, sft_lr, seed)
    student_er = vulnerable.metrics(softmax(student))["er"]
    summary: dict[str, Any] = {"game": game, "algo": algo, "teacher_steps": teacher_steps, "steps": steps,
                               "transcripts": transcripts, "sft_mode": "match-er" if sft_steps is None else "fixed",
                               "sft_steps": used, "sft_loss": ce, "level": level, "seed": seed,
                               "er_start_gap": student_er - teacher_er,
                               "er_matched": abs(student_er - teacher_er) <= match_tol}
    for name, theta in (("rl-native", teacher.copy()), ("sft-student", student)):
        curve = []
        for rec, _ in train(secure, replace(cfg, steps=steps, seed=seed + 1), theta, phase="continued"):
            rec = {**rec, "policy": name}
            records.append(rec)
            curve.append(rec)
        below = next((r["step"] for r in curve if r["er"] < level), None)
        summary[name] = {"er_start": curve[0]["er"], "er_end": curve[-1]["er"], "itp_end": curve[-1]["itp"],
                         "steps_to_below_level": below,
                         "er_auc": float(np.mean([r["er"] for r in curve]))}
    return records, summary
