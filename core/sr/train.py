"""Training, saving and loading of the Flash-ANSR model (``mlx26 sr train``).

Flash-ANSR (Saegert & Köthe, ICML 2026, arXiv 2602.08885) trains by teacher-forced cross-entropy on
the simplified prefix skeleton given the bit-encoded points. Ours: a pool of ``pool`` skeletons is
drawn from the prior (``sampler``), each simplified by our engine, and decontaminated against the
test sets (``decontam.default_test_index``: Nguyen-1..12, the FastSRB-style set and the 100
held-out synthetic problems of ``heldout_problems``; hashes plus, by default, the equivalence layer); every batch draws fresh constants, supports
and points (16..64 per set) for skeletons of the pool, so no two batches repeat. AdamW with linear
warm-up and cosine decay; one CPU thread. The checkpoint is a torch ``state_dict`` plus a JSON
manifest (format version, config, vocabulary, data hash, seed, steps, command, library versions,
loss curve); loading checks the format version.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.sr import spec
from mlx26.core.sr.sampler import PriorConfig

HELDOUT_SEED = 90_001  # the 100 held-out synthetic problems (acceptance test; never trained on)
# Held-out skeletons are not affine in the variables. The training pool drops every skeleton equivalent to a
# test skeleton up to re-parametrised constants, so an affine test skeleton such as c*(c*x3 + c) (5 of the first
# 100 prior draws are affine in one variable) would remove every affine function of one variable from
# training, and the shipped model could no longer propose a line for a user's data.
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"


@dataclass
class TrainConfig:
    steps: int = 1200
    batch: int = 48
    lr: float = 2e-3
    warmup: int = 100
    pool: int = 8000
    min_points: int = 16
    max_points: int = 48
    seed: int = 0
    preset: str = "tiny"
    equiv: bool = True  # the decontamination's equivalence layer (re-parametrised constants), not only hashes


def heldout_problems(n: int = 100, n_points: int = 64, cfg: PriorConfig | None = None):
    """The fixed held-out synthetic problems: prior skeletons (seed HELDOUT_SEED), train + test points."""
    from mlx26.core.sr.decontam import affine_in_variables
    from mlx26.core.sr.sampler import problems

    return problems(n, seed=HELDOUT_SEED, cfg=cfg, n_points=2 * n_points,
                    keep=lambda s: not affine_in_variables(s))


def build_pool(tc: TrainConfig, prior: PriorConfig, log=None) -> tuple[list[list[str]], dict]:
    from mlx26.core.sr.decontam import default_test_index
    from mlx26.core.sr.sampler import skeletons

    held = [p.skeleton for p in heldout_problems(cfg=prior)]
    index = default_test_index(held, use_equiv=tc.equiv)
    pool = [s for s in skeletons(tc.pool, seed=tc.seed, cfg=prior) if not index.contaminated(s)]
    h = hashlib.sha256("\n".join(" ".join(s) for s in pool).encode()).hexdigest()
    stats = {"pool_drawn": tc.pool, "pool_kept": len(pool), "unique_skeletons": len({" ".join(s) for s in pool}),
             "decontam": dict(index.stats), "test_skeletons": index.n_test, "data_hash": f"sha256:{h}"}
    return pool, stats


def _batch(pool, rng, tc: TrainConfig, vocab_index, max_len: int, n_vars: int):
    from mlx26.core.sr.model import BOS, EOS, PAD, encode_bits
    from mlx26.core.sr.sampler import sample_points

    n_pts = int(rng.integers(tc.min_points, tc.max_points + 1))
    bits, toks = [], []
    while len(bits) < tc.batch:
        s = pool[int(rng.integers(len(pool)))]
        p = sample_points(s, rng, n_pts, tries=3, n_vars=n_vars_for(s, rng, n_vars))
        if p is None:
            continue
        bits.append(encode_bits(p.X, p.y, n_vars))
        t = [BOS] + [vocab_index[x] for x in s] + [EOS]
        toks.append(t + [PAD] * (max_len - len(t)))
    return np.stack(bits), np.array(toks)


def n_vars_for(s, rng, n_vars_max: int) -> int:
    # Data columns may include variables the skeleton does not use (as in user data).
    from mlx26.core.sr.sampler import n_vars_of

    used = n_vars_of(s)
    return used if rng.random() < 0.7 else int(rng.integers(used, n_vars_max + 1))


def train(tc: TrainConfig, prior: PriorConfig | None = None, log=None, command: str = "",
          progress=None) -> tuple[object, dict]:
    """Sample and decontaminate the pool, train; ``log(text)`` every 1/20 of the run, ``progress(step, loss)``
    after every step (a progress display)."""
    import torch
    from mlx26.core.common.seeding import seed_everything
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.sr.model import SPECIALS, FlashANSR, ModelConfig, n_parameters
    from mlx26.core.sr.sampler import vocabulary

    if not (math.isfinite(tc.lr) and tc.lr > 0):
        raise InputError(f"--lr must be a finite number > 0, not {tc.lr}")
    if tc.preset not in spec.PRESETS:
        from mlx26.core.common.errors import unknown_name

        raise unknown_name("preset", tc.preset, spec.PRESETS)
    apply_torch_threads(torch)
    seed_everything(tc.seed)
    prior = prior or PriorConfig()
    t0 = time.time()
    pool, data = build_pool(tc, prior)
    if not pool:
        raise InputError("the decontaminated training pool is empty", "raise --pool")
    vocab = vocabulary()
    mc = ModelConfig(vocab=tuple(vocab), max_len=prior.max_len + 2)
    model = FlashANSR(mc)
    vi = {t: i + len(SPECIALS) for i, t in enumerate(vocab)}
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, weight_decay=0.01)

    warmup = max(1, min(tc.warmup, tc.steps // 10))  # a short run still reaches its peak and decays

    def lr_at(step):
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, tc.steps - warmup))) * 0.95 + 0.05

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    rng = np.random.default_rng(tc.seed + 1)
    curve, losses = [], []
    every = max(1, tc.steps // 20)
    for step in range(tc.steps):
        bits, toks = _batch(pool, rng, tc, vi, mc.max_len, mc.n_vars)
        b = torch.from_numpy(bits)
        t = torch.from_numpy(toks)
        logits = model(b, t[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), t[:, 1:].reshape(-1),
                                                 ignore_index=0)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if not math.isfinite(losses[-1]):
            raise RunFailure(f"the training loss became {losses[-1]} at step {step + 1}; nothing was saved",
                             "lower --lr")
        if progress is not None:
            progress(step + 1, losses[-1])
        if (step + 1) % every == 0 or step == tc.steps - 1:
            curve.append({"step": step + 1, "loss": round(float(np.mean(losses[-every:])), 4)})
            if log:
                log(f"step {step + 1}/{tc.steps} loss {curve[-1]['loss']:.4f}")
    k = max(1, min(20, tc.steps // 5))
    first, last = float(np.mean(losses[:k])), float(np.mean(losses[-k:]))
    manifest = {
        "format": spec.MODEL_FORMAT, "preset": tc.preset, "config": mc.as_dict(), "parameters": n_parameters(model),
        "prior": {"max_ops": prior.max_ops, "max_vars": prior.max_vars, "p_const": prior.p_const,
                  "max_len": prior.max_len, "max_constants": prior.max_constants, "operators": list(prior.operators),
                  "operator_weights": {o: spec.OPERATOR_WEIGHTS[o] for o in prior.operators}},
        "train": {"steps": tc.steps, "batch": tc.batch, "lr": tc.lr, "warmup": warmup, "seed": tc.seed,
                  "points": [tc.min_points, tc.max_points], "heldout_seed": HELDOUT_SEED, "heldout_affine": False,
                  "loss_first": round(first, 4), "loss_last": round(last, 4),
                  "loss_drop": round(1 - last / first, 4), "wall_s": round(time.time() - t0, 1), "curve": curve},
        "data": {**data, "synthetic": True}, "command": command, "versions": versions(),
    }
    return model, manifest


def versions() -> dict:
    import platform

    import numpy
    import scipy
    import torch
    from mlx26.core._version import __version__

    return {"mlx26": __version__, "python": platform.python_version(), "torch": torch.__version__,
            "numpy": numpy.__version__, "scipy": scipy.__version__}


def save(model, manifest: dict, folder: Path) -> None:
    """``folder/model.pt`` (state_dict) and ``folder/manifest.json`` (with the weights' sha256)."""
    import io

    import torch
    from mlx26.core.common.files import atomic_write

    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    data = buf.getvalue()
    manifest = {**manifest, "weights_sha256": hashlib.sha256(data).hexdigest()}
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / "model.pt", data)
    atomic_write(folder / "manifest.json", json.dumps(manifest, indent=2) + "\n")


def resolve(model: str) -> Path:
    """A shipped model name (``tiny``) or a folder / manifest path."""
    p = Path(model)
    if p.name == "manifest.json":
        p = p.parent
    if not p.exists() and (WEIGHTS_DIR / model).exists():
        p = WEIGHTS_DIR / model
    if not p.exists():
        from mlx26.core.common.errors import unknown_name

        names = sorted(d.name for d in WEIGHTS_DIR.iterdir() if d.is_dir()) if WEIGHTS_DIR.exists() else []
        raise unknown_name("model", model, names, hint="a shipped name (" + ", ".join(names) +
                           ") or a folder written by 'mlx26 sr train'")
    return p


def load(model: str = spec.DEFAULT_MODEL):
    """Load a model folder; a manifest of another format version or a changed file is an InputError."""
    import torch
    from mlx26.core.sr.model import FlashANSR, ModelConfig

    folder = resolve(model)
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{folder}: no readable manifest.json ({exc})") from None
    fmt = manifest.get("format") if isinstance(manifest, dict) else None
    if fmt != spec.MODEL_FORMAT:
        raise InputError(f"{folder}: model format {fmt!r}, this mlx26 reads {spec.MODEL_FORMAT!r}",
                         "retrain it with 'mlx26 sr train' or use the shipped model")
    raw = (folder / "model.pt").read_bytes()
    if hashlib.sha256(raw).hexdigest() != manifest.get("weights_sha256"):
        raise InputError(f"{folder}/model.pt does not match its manifest (sha256)")
    import io

    try:
        cfg = dict(manifest["config"])
        cfg["vocab"] = tuple(cfg["vocab"])
        model_ = FlashANSR(ModelConfig(**cfg))
        model_.load_state_dict(torch.load(io.BytesIO(raw), weights_only=True))
    except Exception as exc:  # a hand-edited manifest or a foreign model.pt: any failure is the folder's fault
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise InputError(f"{folder}: not a loadable 'sr train' model ({type(exc).__name__}: {first[:160]})",
                         "retrain it with 'mlx26 sr train' or use the shipped model") from None
    if not all(bool(torch.isfinite(p).all()) for p in model_.state_dict().values() if p.is_floating_point()):
        raise InputError(f"{folder}/model.pt holds non-finite weights", "retrain it with a lower --lr")
    model_.eval()
    return model_, manifest
