"""Pretraining, embeddings and the linear probe of Omni-fMRI at CPU scale (arXiv 2601.23090).

``prepare`` tokenises every clip once (numpy, :mod:`.patching`) into what the model eats: per token the
fine-resolution input (a fine patch, or a coarse patch 2x-pooled), centre and scale; per clip its foreground
fine cells (the reconstruction targets, the same for every patching) with their token and sub-position.
``pretrain`` runs the masked-autoencoder objective with AdamW; ``embed`` mean-pools the encoder over all
tokens (a clip's frames are its channels, so this pools over space and time); ``probe`` is the usual
linear-probe protocol (standardised features, class-balanced logistic regression, C chosen by inner CV,
balanced accuracy, optionally held-out subjects), against the same architecture seeded and untrained.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure

from .patching import Settings, pad_to, tokenize
from .spec import MASK_RATIO

FORMAT = "mlx26-fmri-mae-2"  # 2: factored coarse head over foreground fine cells


@dataclass
class TokenSet:
    """Padded per-clip tensors (see :class:`.model.DualPathMAE`): tokens ``inp`` (C, N, T p^3) (a fine patch,
    or a coarse patch 2x-pooled), ``pos`` (C, N, 3) centres, ``scale`` (C, N) (-1 = padding); the clip's
    foreground fine cells ``cells`` (C, M, T p^3) with ``cell_tok`` (C, M) their token and ``cell_sub``
    (C, M) their sub-position in a coarse token (-1: a fine token's own cell). ``n_cells`` per clip equals
    the uniform token count for every patching."""

    data: dict
    frames: int
    settings: Settings
    counts: list[int]
    mean: float
    n_cells: list[int] | None = None


_SUB = np.array([(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)])  # sub-position j = 4a + 2b + c


def _pool2(a: np.ndarray) -> np.ndarray:
    n, t, p = a.shape[0], a.shape[1], a.shape[2]
    return a.reshape(n, t, p // 2, 2, p // 2, 2, p // 2, 2).mean(axis=(3, 5, 7))


def clip_tokens(x: np.ndarray, settings: Settings) -> dict:
    """One clip's tokens and foreground fine cells (numpy)."""
    tok = tokenize(x, settings)
    t, p = x.shape[0], settings.patch
    f = t * p ** 3
    xp = pad_to(x, tok.sizes[-1])
    grid = tuple(n // p for n in xp.shape[1:])
    cells = xp.reshape(t, grid[0], p, grid[1], p, grid[2], p).transpose(1, 3, 5, 0, 2, 4, 6).reshape(*grid, f)
    peak = pad_to(np.abs(x).max(axis=0)[None], tok.sizes[-1])[0]
    fg = peak.reshape(grid[0], p, grid[1], p, grid[2], p).max(axis=(1, 3, 5)) > settings.bg
    fine = np.argwhere(tok.grids[0])
    inp, pos = [cells[tuple(fine.T)]], [fine * p + p / 2]
    cell_data, cell_tok, cell_sub = [inp[0]], [np.arange(len(fine))], [np.full(len(fine), -1)]
    n_coarse = 0
    if len(tok.grids) > 1 and tok.grids[1].any():
        coarse = np.argwhere(tok.grids[1])
        n_coarse = len(coarse)
        blocks = xp.reshape(t, grid[0] // 2, 2 * p, grid[1] // 2, 2 * p, grid[2] // 2, 2 * p).transpose(1, 3, 5, 0, 2, 4, 6)
        inp.append(_pool2(blocks[tuple(coarse.T)]).reshape(n_coarse, f))
        pos.append(coarse * 2 * p + p)
        child = 2 * coarse[:, None, :] + _SUB[None]  # (K, 8, 3) fine-grid cells of each coarse patch
        keep = fg[tuple(child.reshape(-1, 3).T)].reshape(n_coarse, 8)
        k_idx, j_idx = np.nonzero(keep)
        cell_data.append(cells[tuple(child[k_idx, j_idx].T)])
        cell_tok.append(len(fine) + k_idx)
        cell_sub.append(j_idx)
    return {"inp": np.concatenate(inp).astype(np.float32), "pos": np.concatenate(pos).astype(np.float32),
            "n_fine": len(fine), "n_coarse": n_coarse, "cells": np.concatenate(cell_data).astype(np.float32),
            "cell_tok": np.concatenate(cell_tok), "cell_sub": np.concatenate(cell_sub)}


def prepare(clips: np.ndarray, settings: Settings) -> TokenSet:
    import torch

    if settings.scales > 2:
        raise InputError("the model supports 1 or 2 scales (fine 4^3 + coarse 8^3)", "use --scales 2")
    n, t = clips.shape[:2]
    per = [clip_tokens(clips[i], Settings(**{**settings.as_dict(), "seed": settings.seed + i})) for i in range(n)]
    counts = [len(c["inp"]) for c in per]
    n_cells = [len(c["cells"]) for c in per]
    if not any(counts):
        raise RunFailure("no clip has a foreground token (all-zero input?)", "check the data and --bg")
    total = sum(float(c["cells"].sum()) for c in per)
    nvox = sum(c["cells"].size for c in per)
    n_max, m_max = max(counts), max(n_cells)
    f = t * settings.patch ** 3
    data = {"inp": np.zeros((n, n_max, f), np.float32), "pos": np.zeros((n, n_max, 3), np.float32),
            "scale": np.full((n, n_max), -1, np.int64), "cells": np.zeros((n, m_max, f), np.float32),
            "cell_tok": np.full((n, m_max), -1, np.int64), "cell_sub": np.full((n, m_max), -1, np.int64)}
    for i, c in enumerate(per):
        m, k = counts[i], n_cells[i]
        data["inp"][i, :m], data["pos"][i, :m] = c["inp"], c["pos"]
        data["scale"][i, :c["n_fine"]], data["scale"][i, c["n_fine"]:m] = 0, 1
        data["cells"][i, :k], data["cell_tok"][i, :k], data["cell_sub"][i, :k] = c["cells"], c["cell_tok"], c["cell_sub"]
    return TokenSet({k: torch.from_numpy(v) for k, v in data.items()}, t, settings, counts, total / max(nvox, 1),
                    n_cells)


def collate(ts: TokenSet, idx, mean: float | None = None) -> dict:
    import torch

    idx = torch.as_tensor(np.asarray(idx, dtype=np.int64))
    n = int(max(ts.counts[i] for i in idx.tolist()))
    m = int(max((ts.n_cells or ts.counts)[i] for i in idx.tolist()))
    batch = {k: v[idx] for k, v in ts.data.items()}
    for k in ("inp", "pos", "scale"):
        batch[k] = batch[k][:, :n]
    for k in ("cells", "cell_tok", "cell_sub"):
        batch[k] = batch[k][:, :m]
    batch["valid"] = batch["scale"] >= 0
    batch["mean"] = torch.tensor(ts.mean if mean is None else mean)
    return batch


def build_model(frames: int, settings: Settings, dim: int = 64, depth: int = 2, heads: int = 4, seed: int = 0):
    import torch
    from mlx26.core.common.seeding import seed_everything

    from .model import DualPathMAE

    seed_everything(seed)
    torch.manual_seed(seed)
    return DualPathMAE(frames, settings.patch, dim, depth, heads, dim, 1, max(settings.scales, 1))


def pretrain(ts: TokenSet, *, steps: int = 200, batch: int = 8, lr: float = 1e-3, dim: int = 64, depth: int = 2,
             heads: int = 4, seed: int = 0, mask_ratio: float = MASK_RATIO, threads: int | None = None,
             log=None, progress=None) -> tuple[object, dict]:
    """MAE pretraining; ``log(text)`` every 1/5 of the run, ``progress(step, loss)`` after every step (a display)."""
    import torch

    if steps < 1 or batch < 1 or not 0 < mask_ratio < 1 or lr <= 0:
        raise InputError("steps and batch must be >= 1, 0 < mask ratio < 1 and lr > 0")
    if dim % heads:
        raise InputError(f"--dim {dim} must be a multiple of --heads {heads}")
    if threads:
        torch.set_num_threads(threads)
    model = build_model(ts.frames, ts.settings, dim, depth, heads, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    usable = [i for i, c in enumerate(ts.counts) if c]
    losses = []
    start, cpu = time.perf_counter(), time.process_time()
    model.train()
    for step in range(steps):
        idx = rng.choice(usable, size=min(batch, len(usable)), replace=False)
        loss, _, _ = model(collate(ts, idx), mask_ratio, gen)
        if not torch.isfinite(loss):
            raise RunFailure(f"loss became {float(loss)} at step {step}", "lower --lr")
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress(step + 1, losses[-1])
        if log and (step + 1) % max(1, steps // 5) == 0:
            log(f"step {step + 1}/{steps} loss {np.mean(losses[-10:]):.4f}")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return model, {"steps": steps, "train_seconds": seconds, "train_cpu_seconds": cpu, "final_loss": float(np.mean(losses[-10:])),
                   "mean_tokens": float(np.mean([ts.counts[i] for i in usable]))}


def evaluate(model, ts: TokenSet, *, mask_ratio: float = MASK_RATIO, seed: int = 0, batch: int = 8,
             mean: float | None = None) -> dict:
    """Masked-reconstruction MSE (per voxel) on ``ts`` vs the mean predictor on the same masked voxels."""
    import torch

    gen = torch.Generator().manual_seed(seed + 12345)
    usable = [i for i, c in enumerate(ts.counts) if c]
    sse = base = 0.0
    count = 0
    model.eval()
    with torch.no_grad():
        for k in range(0, len(usable), batch):
            loss, ref, n = model(collate(ts, usable[k:k + batch], mean), mask_ratio, gen)
            sse += float(loss) * n
            base += float(ref) * n
            count += n
    return {"mae_mse": sse / max(count, 1), "mean_predictor_mse": base / max(count, 1), "masked_values": count}


def embed(model, ts: TokenSet, batch: int = 16) -> np.ndarray:
    import torch

    model.eval()
    dim = model.config["dim"]
    out = np.zeros((len(ts.counts), dim), np.float32)
    usable = [i for i, c in enumerate(ts.counts) if c]
    with torch.no_grad():
        for k in range(0, len(usable), batch):
            idx = usable[k:k + batch]
            out[idx] = model.encode(collate(ts, idx)).numpy()
    return out


C_GRID = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)


def probe(features: np.ndarray, labels: np.ndarray, seed: int = 0, folds: int = 5, groups=None) -> dict:
    """Linear probe: standardised clip features, class-balanced logistic regression with C chosen by an inner
    stratified CV (``C_GRID``), balanced accuracy over outer folds. With ``groups`` (e.g. the subject), the
    outer folds hold out whole groups (``StratifiedGroupKFold``), otherwise stratified k-fold over clips."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedGroupKFold, StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    labels = np.asarray(labels)
    classes, counts = np.unique(labels, return_counts=True)
    if len(classes) < 2:
        raise InputError(f"the probe label has a single class ({classes.tolist()})", "pick another --label")
    k = int(min(folds, counts.min()))
    if groups is not None:
        k = min(k, len(np.unique(groups)))
    if k < 2:
        raise InputError("each class needs at least 2 clips (and 2 groups) for the probe", "generate more clips")
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, class_weight="balanced"))
    inner = int(min(3, counts.min() - -(-counts.min() // k)))  # smallest class left in a training fold
    if inner >= 2:
        clf = GridSearchCV(clf, {"logisticregression__C": list(C_GRID)}, scoring="balanced_accuracy",
                           cv=StratifiedKFold(inner, shuffle=True, random_state=seed))
    outer = (StratifiedGroupKFold(k, shuffle=True, random_state=seed) if groups is not None
             else StratifiedKFold(k, shuffle=True, random_state=seed))
    import warnings

    with warnings.catch_warnings():  # a small class in an inner fold is expected on tiny data
        warnings.simplefilter("ignore", UserWarning)
        acc = cross_val_score(clf, features, labels, groups=groups, cv=outer, scoring="balanced_accuracy")
    return {"accuracy": float(acc.mean()), "accuracy_sd": float(acc.std()), "folds": k,
            "classes": len(classes), "chance": 1.0 / len(classes), "n": int(len(labels)),
            "held_out": "groups" if groups is not None else "clips", "metric": "balanced_accuracy"}


def check_clips(model, clips: np.ndarray, path: str = "the model") -> None:
    """A checkpoint embeds clips of its own frame count only (time is the channel axis)."""
    t = int(model.config["frames"])
    if clips.shape[1] != t:
        raise InputError(f"{path} was pretrained on {t}-frame clips; these clips have {clips.shape[1]} frames",
                         f"preprocess with --frames {t}, or pretrain on these clips")


def save(model, path, settings: Settings, info: dict) -> None:
    import torch
    from mlx26.core.common.files import atomic_path

    with atomic_path(path) as tmp:
        torch.save({"state": model.state_dict(), "config": model.config, "settings": settings.as_dict(),
                    "info": info, "format": FORMAT}, tmp)


def load(path):
    import torch

    from .model import DualPathMAE

    try:
        ck = torch.load(path, map_location="cpu", weights_only=True)
        cfg = ck["config"]
    except FileNotFoundError:
        raise InputError(f"file not found: {path}", "check the path") from None
    except Exception as exc:
        raise InputError(f"{path}: not an mlx26 fmri checkpoint ({type(exc).__name__})",
                         "pass the output of `mlx26 fmri pretrain`") from exc
    if ck.get("format") != FORMAT:
        raise InputError(f"{path}: checkpoint format {ck.get('format')!r}, this version reads {FORMAT!r}",
                         "re-run `mlx26 fmri pretrain`")
    model = DualPathMAE(**cfg)
    model.load_state_dict(ck["state"])
    return model, Settings(**ck["settings"]), ck.get("info", {})
