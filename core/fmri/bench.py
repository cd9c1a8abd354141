"""Dynamic vs uniform vs random patching side by side (Omni-fMRI, arXiv 2601.23090), on SYNTHETIC data.

For each patching on the same clips: tokens per clip (and the ratio to uniform), the tokeniser's
reconstruction SSE (what the tokens keep, :func:`.patching.reconstruction_sse`; random has the dynamic
rule's token count), MAE pretraining seconds (wall and process CPU time), the held-out masked-reconstruction MSE vs the mean
predictor, and the linear-probe accuracy of the pretrained encoder vs the same encoder at random init.
Used by ``mlx26 fmri bench`` and ``benchmarks/fmri.py``; every number is computed by the run.
"""

from __future__ import annotations

import numpy as np

from .patching import Settings, reconstruction_sse, tokenize
from .spec import PATCHINGS


def compare(*, subjects: int = 8, runs: int = 1, frames: int = 64, size: int = 32, clip: int = 8, steps: int = 200,
            tau: float = 0.25, bg: float = 1e-3, seed: int = 0, labels=("subject", "condition"), dim: int = 64,
            amplitude: float = 0.03, texture: float = 0.01, patchings=PATCHINGS, log=None) -> list[dict]:
    """One record per patching. Defaults = the docs' benchmark (8 subjects, 64 frames, 32^3, 200 steps)."""
    from . import preprocess, synth, train

    vols = synth.generate(subjects=subjects, runs=runs, frames=frames, size=size, seed=seed, amplitude=amplitude,
                          texture=texture)
    data = preprocess.preprocess(vols, size=size, frames=clip)
    clips, meta = data.clips, data.labels
    held = meta["subject"] == meta["subject"].max()  # the last subject is held out for the MAE MSE
    records = []
    for patching in patchings:
        s = Settings(tau=tau, bg=bg, patching=patching, seed=seed)
        sse, tokens, ratio = [], [], []
        for i, x in enumerate(clips):
            tok = tokenize(x, Settings(**{**s.as_dict(), "seed": seed + i}))
            summ = tok.summary()
            sse.append(reconstruction_sse(x, tok))
            tokens.append(summ["tokens"])
            ratio.append(summ["token_ratio"])
        ts_train = train.prepare(clips[~held], s)
        ts_test = train.prepare(clips[held], s)
        model, info = train.pretrain(ts_train, steps=steps, seed=seed, dim=dim, log=log)
        ev = train.evaluate(model, ts_test, seed=seed, mean=ts_train.mean)
        ts_all = train.prepare(clips, s)
        emb = train.embed(model, ts_all)
        emb0 = train.embed(train.build_model(clip, s, dim=dim, seed=seed), ts_all)
        probes = {}
        for label in labels:
            pre, rnd = train.probe(emb, meta[label], seed=seed), train.probe(emb0, meta[label], seed=seed)
            probes.update({f"probe_{label}_pretrained": pre["accuracy"], f"probe_{label}_random_init": rnd["accuracy"],
                           f"probe_{label}_gain_points": 100 * (pre["accuracy"] - rnd["accuracy"]),
                           f"probe_{label}_chance": pre["chance"]})
        records.append({
            "data": "SYNTHETIC", "patching": patching, "tokens_per_clip": float(np.mean(tokens)),
            "token_ratio_vs_uniform": float(np.mean(ratio)), "reconstruction_sse": float(np.sum(sse)),
            "train_seconds": info["train_seconds"], "train_cpu_seconds": info["train_cpu_seconds"], "mae_mse": ev["mae_mse"],
            "mean_predictor_mse": ev["mean_predictor_mse"], **probes,
            "clips": int(len(clips)), "steps": steps, "tau": tau, "bg": bg, "seed": seed,
        })
        if log:
            log(f"{patching}: {records[-1]['tokens_per_clip']:.1f} tokens/clip, MAE MSE {ev['mae_mse']:.4f}, "
                f"{info['train_seconds']:.1f} s")
    return records
