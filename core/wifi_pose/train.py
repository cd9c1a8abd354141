"""Training and evaluation of WiFi-Mamba and the baseline on clips (CPU, one thread is enough for ``tiny``).

Batches are windows of K consecutive frames of one sequence. With persistent memory the forward scan's
state is carried from frame to frame inside a window (gradients flow through the K frames: truncated BPTT)
and the window starts from zero state; without it (``memory=False``, and for the transformer) every frame
starts from zero. Evaluation walks each test sequence from its first frame, carrying the state when the
memory is on. Same steps, batch and learning rate for every model: the budget is equal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.wifi_pose import metrics
from mlx26.core.wifi_pose import model as M
from mlx26.core.wifi_pose.io import Clips
from mlx26.core.wifi_pose.sanitize import features

FORMAT = "mlx26-wifi-pose-model-1"


@dataclass
class Data:
    amp: np.ndarray  # (N, T, F)
    ph: np.ndarray
    kp: np.ndarray  # (N, P, 14, 3)
    seq: np.ndarray
    frame: np.ndarray
    synthetic: bool

    @classmethod
    def from_clips(cls, clips: Clips) -> Data:
        amp, ph = features(clips.csi, clips.subcarriers)
        order = np.lexsort((clips.frame, clips.seq))
        return cls(amp[order], ph[order], clips.keypoints[order], clips.seq[order], clips.frame[order],
                   clips.synthetic)

    def windows(self, k: int) -> np.ndarray:
        """Start indices of windows of k consecutive frames inside one sequence."""
        starts = []
        for s in np.unique(self.seq):
            idx = np.flatnonzero(self.seq == s)
            starts += idx[: max(len(idx) - k + 1, 0)].tolist()
        return np.array(starts, int)


def split_by_sequence(clips: Clips, test_fraction: float = 0.25, seed: int = 0) -> tuple[Clips, Clips]:
    seqs = np.unique(clips.seq)
    if len(seqs) < 2:
        raise InputError("need at least 2 sequences to split train/test", "generate more with --sequences")
    rng = np.random.default_rng(seed)
    test = rng.permutation(seqs)[: max(1, int(round(len(seqs) * test_fraction)))]
    mask = np.isin(clips.seq, test)
    return clips.take(np.flatnonzero(~mask)), clips.take(np.flatnonzero(mask))


def build_for(kind: str, data: Data, preset: str = "tiny", memory: bool = True, **over) -> torch.nn.Module:
    net = M.build(kind, data.amp.shape[2], data.amp.shape[1], preset, **over)
    net.set_normalisation(data.amp, data.ph, data.kp)
    net.memory = memory and kind == "mamba"
    return net


def fit(net, data: Data, *, steps: int = 300, batch: int = 16, window: int = 4, lr: float = 3e-3,
        seed: int = 0, log=None, progress=None) -> dict:
    """Train ``net`` in place; ``log(text)`` every 1/5 of the run, ``progress(step, loss)`` after every step."""
    if not (lr > 0 and np.isfinite(lr)):
        raise InputError(f"--lr must be a positive number, got {lr}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    starts = data.windows(window)
    if not len(starts):
        raise InputError(f"no sequence has {window} consecutive frames", "lower --window")
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    amp, ph, kp = (torch.from_numpy(np.ascontiguousarray(v)) for v in (data.amp, data.ph, data.kp))
    t0, last = time.perf_counter(), {}
    net.train()
    for step in range(steps):
        st = rng.choice(starts, size=min(batch, len(starts)), replace=len(starts) < batch)
        state = None
        loss = torch.zeros(())
        for j in range(window):
            idx = torch.from_numpy(st + j)
            out_kp, logits, nxt = net(amp[idx], ph[idx], state if getattr(net, "memory", False) else None)
            l_, last = M.set_loss(out_kp, logits, kp[idx])
            loss = loss + l_ / window
            state = nxt
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        if not torch.isfinite(loss):
            raise RunFailure(f"the loss became {float(loss)} at step {step}", "lower --lr")
        if progress is not None:
            progress(step + 1, float(loss.detach()))
        if log and (step % max(1, steps // 5) == 0 or step == steps - 1):
            log(f"step {step + 1}/{steps} loss {float(loss.detach()):.4f} joint L1 {last['kp_l1_m'] * 1000:.0f} mm")
    net.eval()
    return {"steps": steps, "batch": batch, "window": window, "lr": lr, "train_s": time.perf_counter() - t0,
            "final_loss": float(loss.detach())}


@torch.no_grad()
def predict(net, data: Data, memory: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Predictions for every frame, walking each sequence in order (state carried when memory is on)."""
    use = getattr(net, "memory", False) if memory is None else memory and isinstance(net, M.WiFiMamba)
    kp = np.zeros((len(data.amp), net.n_queries, *data.kp.shape[2:]), np.float32)
    conf = np.zeros((len(data.amp), net.n_queries), np.float32)
    seqs = [np.flatnonzero(data.seq == s) for s in np.unique(data.seq)]
    length = max(len(s) for s in seqs)
    amp, ph = torch.from_numpy(data.amp), torch.from_numpy(data.ph)
    state = None
    for f in range(length):  # all sequences in one batch, frame by frame
        rows = [s[f] if f < len(s) else s[-1] for s in seqs]
        alive = [f < len(s) for s in seqs]
        out_kp, logits, nxt = net(amp[rows], ph[rows], state if use else None)
        state = nxt
        for r, ok, k_, c_ in zip(rows, alive, out_kp.numpy(), torch.sigmoid(logits).numpy(), strict=True):
            if ok:
                kp[r], conf[r] = k_, c_
    return kp, conf


def evaluate(net, data: Data, memory: bool | None = None) -> dict:
    kp, conf = predict(net, data, memory)
    return metrics.evaluate(kp, conf, data.kp)


def save(net, path, info: dict) -> None:
    from mlx26.core.common.files import atomic_path

    with atomic_path(path, suffix=".pt") as tmp:
        torch.save({"format": FORMAT, "kind": net.kind, "config": net.config, "memory": getattr(net, "memory", False),
                    "state_dict": net.state_dict(), "info": info}, tmp)


def load(path):
    from pathlib import Path

    if not Path(path).is_file():
        raise InputError(f"checkpoint not found: {path}", "train one with `mlx26 wifi-pose train --save`")
    try:
        ck = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for a non-checkpoint
        raise InputError(f"{path}: not an mlx26 wifi-pose checkpoint ({type(exc).__name__})",
                         "train one with `mlx26 wifi-pose train --save`") from exc
    if not isinstance(ck, dict) or ck.get("format") != FORMAT:
        raise InputError(f"{path}: not an mlx26 wifi-pose checkpoint", "train one with `mlx26 wifi-pose train --save`")
    cfg = dict(ck["config"])
    features, packets = cfg.pop("features"), cfg.pop("packets")
    net = M.WiFiMamba(features, packets, **cfg) if ck["kind"] == "mamba" else M.PiW3DTransformer(features, packets, **cfg)
    net.load_state_dict(ck["state_dict"])
    net.memory = ck.get("memory", False)
    net.eval()
    return net, ck.get("info", {})


def check_shape(net, data: Data) -> None:
    want_t, want_f = net.config["packets"], net.config["features"]
    if data.amp.shape[1] != want_t:
        raise InputError(f"the clips have {data.amp.shape[1]} packets (axis 'pkt'), the model was trained on {want_t}")
    if data.amp.shape[2] != want_f:
        raise InputError(f"the clips have {data.amp.shape[2]} link·ant·sub features, the model expects {want_f}",
                         "check the links/antennas/subcarriers axes (--layout) match the training data")
