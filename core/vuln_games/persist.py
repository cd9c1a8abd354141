"""Persistence: an RL-native exploit policy vs an SFT-distilled student, both continued under the secure reward.

Part of the vulnerability-games reconstruction (arXiv 2602.12124: exploits propagate from teacher to student
through SFT and can persist longer when learned by RL). Ours, at token-action scale:

1. teacher — trained with ``algo`` on the vulnerable variant (:mod:`.train`);
2. student — a fresh policy fitted by cross-entropy (Adam, ``sft_steps`` full-batch steps) to ``transcripts``
   actions sampled from the teacher, contexts drawn from the game's distribution (the "teacher's transcripts");
3. both continue under the secure variant for ``steps`` steps with the same algorithm and seed; ER over steps
   side by side, and the first step at which each falls below ``level``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from mlx26.core.common.errors import InputError
from mlx26.core.vuln_games.games import make
from mlx26.core.vuln_games.train import Adam, TrainConfig, sample, softmax, train


def distil(teacher: np.ndarray, context_p: np.ndarray, transcripts: int, sft_steps: int, lr: float,
           seed: int) -> tuple[np.ndarray, float]:
    """Student logits fitted to sampled teacher actions; returns (logits, final cross-entropy)."""
    rng = np.random.default_rng(seed + 7919)
    ctx = rng.choice(len(context_p), size=transcripts, p=context_p)
    act = sample(softmax(teacher), ctx, rng)
    counts = np.zeros_like(teacher)
    np.add.at(counts, (ctx, act), 1.0)
    theta = np.zeros_like(teacher)
    opt = Adam(theta.shape, lr)
    n = counts.sum(axis=1, keepdims=True)
    loss = float("nan")
    for _ in range(sft_steps):
        probs = softmax(theta)
        # −∇ of the mean NLL of the transcripts: (empirical counts − n_c · π_c) / N
        opt.ascend(theta, (counts - n * probs) / transcripts)
        loss = float(-(counts * np.log(softmax(theta) + 1e-12)).sum() / transcripts)
    return theta, loss


def experiment(game: str = "tampering", algo: str = "grpo", teacher_steps: int = 200, steps: int = 300,
               transcripts: int = 256, sft_steps: int = 100, sft_lr: float = 0.05, seed: int = 0,
               level: float = 0.5, log_every: int = 10, **game_kw: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if transcripts < 1 or sft_steps < 1 or teacher_steps < 0 or steps < 0:
        raise InputError("persist needs --transcripts ≥ 1, --sft-steps ≥ 1, --teacher-steps ≥ 0 and --steps ≥ 0.")
    vulnerable, secure = make(game, "vulnerable", **game_kw), make(game, "secure", **game_kw)
    cfg = TrainConfig(algo=algo, steps=teacher_steps, seed=seed, log_every=log_every)
    records: list[dict[str, Any]] = []
    teacher = None
    for rec, current in train(vulnerable, cfg, phase="teacher"):
        records.append({**rec, "policy": "rl-teacher"})
        teacher = current
    assert teacher is not None
    student, ce = distil(teacher, vulnerable.context_p, transcripts, sft_steps, sft_lr, seed)
    summary: dict[str, Any] = {"game": game, "algo": algo, "teacher_steps": teacher_steps, "steps": steps,
                               "transcripts": transcripts, "sft_steps": sft_steps, "sft_loss": ce, "level": level,
                               "seed": seed}
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
