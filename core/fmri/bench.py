"""Dynamic vs uniform vs random patching side by side (Omni-fMRI, arXiv 2601.23090), on SYNTHETIC data.

:func:`compare` — per seed (new data, new init) and patching, on the same clips: tokens per clip (and the
ratio to uniform), the tokeniser's reconstruction SSE (what the tokens keep,
:func:`.patching.reconstruction_sse`; random has the dynamic rule's token count), MAE pretraining time,
the held-out masked-reconstruction MSE vs the mean predictor (every patching reconstructs the same
foreground cells), and the linear-probe balanced accuracy of the pretrained encoder vs the same encoder at
random init (:func:`.train.probe`; task vs rest on held-out subjects). :func:`summarise` gives mean and sd
over seeds. :func:`timing` measures pretraining CPU time of dynamic vs uniform on larger clips, in one
process, interleaved, several repeats. Used by ``mlx26 fmri bench`` and ``benchmarks/fmri.py``; every number
is computed by the run.
"""

from __future__ import annotations

import numpy as np

from .patching import Settings, reconstruction_sse, tokenize
from .spec import PATCHINGS

GROUPED = {"condition": True, "network": True, "subject": False}  # probe folds hold out subjects?


def compare(*, subjects: int = 8, runs: int = 1, frames: int = 64, size: int = 32, clip: int = 8, steps: int = 200,
            tau: float = 0.25, bg: float = 1e-3, seeds=(0,), labels=("subject", "condition"), dim: int = 64,
            amplitude: float = 0.03, texture: float = 0.01, patchings=PATCHINGS, log=None) -> list[dict]:
    """One record per (seed, patching). Defaults = the docs' benchmark (8 subjects, 64 frames, 32^3, 200 steps)."""
    from . import preprocess, synth, train

    records = []
    for seed in seeds:
        vols = synth.generate(subjects=subjects, runs=runs, frames=frames, size=size, seed=seed,
                              amplitude=amplitude, texture=texture)
        data = preprocess.preprocess(vols, size=size, frames=clip)
        clips, meta = data.clips, data.labels
        held = meta["subject"] == meta["subject"].max()  # the last subject is held out for the MAE MSE
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
            probes = {}
            if labels:
                ts_all = train.prepare(clips, s)
                emb = train.embed(model, ts_all)
                emb0 = train.embed(train.build_model(clip, s, dim=dim, seed=seed), ts_all)
            for label in labels:
                groups = meta["subject"] if GROUPED.get(label) else None
                pre = train.probe(emb, meta[label], seed=seed, groups=groups)
                rnd = train.probe(emb0, meta[label], seed=seed, groups=groups)
                probes.update({f"probe_{label}_pretrained": pre["accuracy"],
                               f"probe_{label}_random_init": rnd["accuracy"],
                               f"probe_{label}_gain_points": 100 * (pre["accuracy"] - rnd["accuracy"]),
                               f"probe_{label}_chance": pre["chance"]})
            records.append({
                "data": "SYNTHETIC", "patching": patching, "seed": seed, "tokens_per_clip": float(np.mean(tokens)),
                "token_ratio_vs_uniform": float(np.mean(ratio)), "reconstruction_sse": float(np.sum(sse)),
                "train_seconds": info["train_seconds"], "train_cpu_seconds": info["train_cpu_seconds"],
                "mae_mse": ev["mae_mse"], "mean_predictor_mse": ev["mean_predictor_mse"], **probes,
                "clips": int(len(clips)), "size": size, "steps": steps, "tau": tau, "bg": bg,
            })
            if log:
                log(f"seed {seed} {patching}: {records[-1]['tokens_per_clip']:.1f} tokens/clip, "
                    f"MAE MSE {ev['mae_mse']:.4f}, {info['train_cpu_seconds']:.1f} CPU s")
    return records


def summarise(records: list[dict]) -> dict[str, dict]:
    """Per patching: mean and sd over seeds of every numeric field (``<field>`` and ``<field>_sd``), and
    per-seed ratios to uniform (``mae_ratio``: MAE MSE dynamic/uniform of the same seed, etc.)."""
    by: dict[str, list[dict]] = {}
    for r in records:
        by.setdefault(r["patching"], []).append(r)
    uni = {r["seed"]: r for r in by.get("uniform", [])}
    out = {}
    for name, rows in by.items():
        keys = [k for k, v in rows[0].items() if isinstance(v, float)]
        summ: dict = {"patching": name, "seeds": len(rows), "data": "SYNTHETIC"}
        for k in keys:
            vals = np.array([r[k] for r in rows])
            summ[k], summ[f"{k}_sd"] = float(vals.mean()), float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
        if uni:
            for k, field in (("mae_ratio", "mae_mse"), ("time_ratio", "train_cpu_seconds"),
                             ("token_ratio", "tokens_per_clip")):
                vals = np.array([r[field] / uni[r["seed"]][field] for r in rows if r["seed"] in uni])
                summ[k], summ[f"{k}_sd"] = float(vals.mean()), float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
        out[name] = summ
    return out


def timing(*, size: int = 48, subjects: int = 2, frames: int = 32, clip: int = 8, steps: int = 20, repeats: int = 5,
           dim: int = 64, depth: int = 2, tau: float = 0.25, bg: float = 1e-3, seed: int = 0, log=None) -> dict:
    """Pretraining CPU time, dynamic vs uniform, on the same SYNTHETIC clips in one process: ``repeats``
    rounds of ``steps`` steps each, from the same init, the order alternating every round (ABBA) so that a
    drifting machine load hits both alike. Returns per-round CPU seconds and the ratios."""
    from . import preprocess, synth, train

    vols = synth.generate(subjects=subjects, runs=1, frames=frames, size=size, seed=seed, texture=0.01)
    clips = preprocess.preprocess(vols, size=size, frames=clip).clips
    sets = {p: train.prepare(clips, Settings(tau=tau, bg=bg, patching=p, seed=seed)) for p in ("dynamic", "uniform")}
    cpu: dict[str, list[float]] = {"dynamic": [], "uniform": []}
    for rep in range(repeats):
        for p in (("dynamic", "uniform") if rep % 2 == 0 else ("uniform", "dynamic")):
            _, info = train.pretrain(sets[p], steps=steps, seed=seed, dim=dim, depth=depth)
            cpu[p].append(info["train_cpu_seconds"])
        if log:
            log(f"timing round {rep + 1}/{repeats}: dynamic {cpu['dynamic'][-1]:.2f} s, uniform {cpu['uniform'][-1]:.2f} s")
    ratios = np.array(cpu["dynamic"]) / np.array(cpu["uniform"])
    tokens = {p: float(np.mean(ts.counts)) for p, ts in sets.items()}
    return {"data": "SYNTHETIC", "size": size, "clips": int(len(clips)), "frames": clip, "steps": steps,
            "repeats": repeats, "dim": dim, "depth": depth, "tau": tau, "bg": bg, "seed": seed,
            "tokens_dynamic": tokens["dynamic"], "tokens_uniform": tokens["uniform"],
            "token_ratio": tokens["dynamic"] / tokens["uniform"],
            "cpu_dynamic": cpu["dynamic"], "cpu_uniform": cpu["uniform"],
            "time_ratio_median": float(np.median(cpu["dynamic"]) / np.median(cpu["uniform"])),
            "time_ratio_mean": float(ratios.mean()), "time_ratio_sd": float(ratios.std(ddof=1)) if repeats > 1 else 0.0,
            "rounds_dynamic_faster": int((ratios < 1).sum())}
