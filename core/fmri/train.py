"""Pretraining, embeddings and the linear probe of Omni-fMRI at CPU scale (arXiv 2601.23090).

``prepare`` tokenises every clip once (numpy, :mod:`.patching`) into the per-token arrays the model eats:
the fine-resolution input (a fine patch, or a coarse patch 2x-pooled), the coarse patch's fine sub-grid,
the patch centre, the scale and the reconstruction target at the token's own resolution. ``pretrain``
runs the masked-autoencoder objective with AdamW; ``embed`` mean-pools the encoder over all tokens;
``probe`` fits scikit-learn's logistic regression on embeddings (stratified k-fold accuracy), and the
random-init control is the same architecture, seeded, untrained.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure

from .patching import Settings, patch_arrays, tokenize
from .spec import MASK_RATIO


@dataclass
class TokenSet:
    """Padded per-clip token tensors: inp (C, N, T p^3) fine-resolution inputs (a fine patch, or a coarse
    patch 2x-pooled), pos (C, N, 3) centres, scale (C, N) (-1 = padding), coarse (C, K, T (2p)^3) the
    coarse patches at full resolution with coarse_index (C, K) their position in the sequence."""

    data: dict
    frames: int
    settings: Settings
    counts: list[int]
    mean: float


def _pool2(a: np.ndarray) -> np.ndarray:
    n, t, p = a.shape[0], a.shape[1], a.shape[2]
    return a.reshape(n, t, p // 2, 2, p // 2, 2, p // 2, 2).mean(axis=(3, 5, 7))


def prepare(clips: np.ndarray, settings: Settings) -> TokenSet:
    import torch

    if settings.scales > 2:
        raise InputError("the model supports 1 or 2 scales (fine 4^3 + coarse 8^3)", "use --scales 2")
    n, t = clips.shape[:2]
    p = settings.patch
    per, counts, total, nvox = [], [], 0.0, 0
    for i in range(n):
        tok = tokenize(clips[i], Settings(**{**settings.as_dict(), "seed": settings.seed + i}))
        arrays = patch_arrays(clips[i], tok)
        fine = arrays[0]
        coarse = arrays[1] if len(arrays) > 1 else np.zeros((0, t, 2 * p, 2 * p, 2 * p), np.float32)
        inp = np.concatenate([fine.reshape(len(fine), t * p ** 3), _pool2(coarse).reshape(len(coarse), t * p ** 3)])
        pos = np.concatenate([tok.coords(0) + p / 2] + ([tok.coords(1) + p] if len(arrays) > 1 else []))
        per.append((inp, pos.astype(np.float32), len(fine), coarse.reshape(len(coarse), 8 * t * p ** 3)))
        counts.append(len(inp))
        total += float(fine.sum() + coarse.sum())
        nvox += fine.size + coarse.size
    if not any(counts):
        raise RunFailure("no clip has a foreground token (all-zero input?)", "check the data and --bg")
    n_max, k_max = max(counts), max(1, max(len(c[3]) for c in per))
    f = t * p ** 3
    data = {"inp": np.zeros((n, n_max, f), np.float32), "pos": np.zeros((n, n_max, 3), np.float32),
            "scale": np.full((n, n_max), -1, np.int64), "coarse": np.zeros((n, k_max, 8 * f), np.float32),
            "coarse_index": np.zeros((n, k_max), np.int64), "coarse_valid": np.zeros((n, k_max), bool)}
    for i, (inp, pos, nf, co) in enumerate(per):
        m, k = len(inp), len(co)
        data["inp"][i, :m], data["pos"][i, :m] = inp, pos
        data["scale"][i, :nf], data["scale"][i, nf:m] = 0, 1
        data["coarse"][i, :k], data["coarse_index"][i, :k] = co, np.arange(nf, m)
        data["coarse_valid"][i, :k] = True
    return TokenSet({k: torch.from_numpy(v) for k, v in data.items()}, t, settings, counts, total / max(nvox, 1))


def collate(ts: TokenSet, idx, mean: float | None = None) -> dict:
    import torch

    idx = torch.as_tensor(np.asarray(idx, dtype=np.int64))
    n = int(max(ts.counts[i] for i in idx.tolist()))
    batch = {k: v[idx] for k, v in ts.data.items()}
    for k in ("inp", "pos", "scale"):
        batch[k] = batch[k][:, :n]
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
             log=None) -> tuple[object, dict]:
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


def probe(features: np.ndarray, labels: np.ndarray, seed: int = 0, folds: int = 5) -> dict:
    """Stratified k-fold accuracy of a logistic-regression probe on standardised features."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    labels = np.asarray(labels)
    classes, counts = np.unique(labels, return_counts=True)
    if len(classes) < 2:
        raise InputError(f"the probe label has a single class ({classes.tolist()})", "pick another --label")
    k = int(min(folds, counts.min()))
    if k < 2:
        raise InputError("each class needs at least 2 clips for the probe", "generate more clips")
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, C=1.0))
    acc = cross_val_score(clf, features, labels, cv=StratifiedKFold(k, shuffle=True, random_state=seed))
    return {"accuracy": float(acc.mean()), "accuracy_sd": float(acc.std()), "folds": k,
            "classes": len(classes), "chance": float(counts.max() / counts.sum()), "n": int(len(labels))}


def save(model, path, settings: Settings, info: dict) -> None:
    import torch
    from mlx26.core.common.files import atomic_path

    with atomic_path(path) as tmp:
        torch.save({"state": model.state_dict(), "config": model.config, "settings": settings.as_dict(),
                    "info": info, "format": "mlx26-fmri-mae-1"}, tmp)


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
    model = DualPathMAE(**cfg)
    model.load_state_dict(ck["state"])
    return model, Settings(**ck["settings"]), ck.get("info", {})
