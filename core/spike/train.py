"""Training, evaluation, firing diagnostics and model folders for ``mlx26 spike``.

Our own training loop (AdamW, linear warm-up then cosine decay, gradient clipping at 1.0, cross-entropy), the
same for the ANN and the SNNs so the comparison is at equal budget. DAS is calibrated once on a training batch
before the first step (:func:`~mlx26.core.spike.das.calibrate_model`) and then learned.

A model folder holds ``config.json`` (the :class:`~mlx26.core.spike.model.SpikeConfig`, the task, label names
and the training record, with a format tag) and ``weights.pt`` (the state dict); its ``model_hash`` (SHA-256 of
the config and the weights) is what an exported ONNX file is checked against.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import torch
from mlx26.core.common.errors import InputError
from mlx26.core.spike import das as D
from mlx26.core.spike import energy as E
from mlx26.core.spike.model import SpikeClassifier, SpikeConfig, n_params
from mlx26.core.spike.neurons import firing_report, recording
from mlx26.core.spike.spec import MODEL_FORMAT
from mlx26.core.spike.tasks import Dataset


def build(data: Dataset, max_len: int | None = None, **options) -> SpikeClassifier:
    """A model for ``data``'s vocabulary and labels; ``max_len`` (default: the data's padded width) is the
    longest sequence it takes — pass the user's --max-len so longer test data is truncated, not refused."""
    cfg = SpikeConfig(vocab=data.vocab, classes=len(data.label_names),
                      max_len=max(int(data.ids.shape[1]), max_len or 0), pad_id=data.pad_id, **options)
    return SpikeClassifier(cfg)


def batches(data: Dataset, batch: int, gen: torch.Generator):
    while True:
        perm = torch.randperm(len(data), generator=gen)
        for i in range(0, len(data) - batch + 1 if len(data) >= batch else 1, batch):
            idx = perm[i : i + batch]
            yield data.ids[idx], data.labels[idx]


def calibrate(model: SpikeClassifier, data: Dataset, rows: int = 256) -> list[dict]:
    """Set every DAS from the first ``rows`` training sequences (no-op for a model without DAS)."""
    ids = data.ids[:rows]
    return D.calibrate_model(model, lambda: model(ids))


def diagnostics(model: SpikeClassifier, data: Dataset, rows: int = 256) -> dict:
    """Dead-neuron fraction and firing rate over ``rows`` sequences, and the gradient norm of the first block's
    first spike-fed linear (W_q) on one cross-entropy backward of that batch."""
    ids, labels = data.ids[:rows], data.labels[:rows]
    was = model.training
    model.eval()
    out: dict = {}
    if model.config.spiking:
        with recording(model), torch.no_grad():
            model(ids)
        rep = firing_report(model)
        out.update({"dead_fraction": rep["dead_fraction"], "firing_rate": rep["firing_rate"]})
    model.zero_grad(set_to_none=True)
    with torch.enable_grad():
        loss = torch.nn.functional.cross_entropy(model(ids), labels)
        loss.backward()
    g = model.blocks[0].q.linear.weight.grad
    out["first_layer_grad_norm"] = float(g.norm()) if g is not None else 0.0
    model.zero_grad(set_to_none=True)
    model.train(was)
    return out


@torch.no_grad()
def predict(model: SpikeClassifier, data: Dataset, batch: int = 256) -> torch.Tensor:
    model.eval()
    return torch.cat([model(data.ids[i : i + batch]) for i in range(0, len(data), batch)])


def accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    return float((logits.argmax(-1) == labels).double().mean())


def fit(model: SpikeClassifier, data: Dataset, *, steps: int, batch: int = 64, lr: float = 3e-3,
        weight_decay: float = 0.01, seed: int = 0, das_calibrate: bool = True,
        log: Callable[[dict], None] | None = None, log_every: int = 50,
        stop: Callable[[], bool] | None = None, progress: Callable[[int, float], None] | None = None) -> dict:
    """Train in place; returns the training record (diagnostics at init and at the end, loss curve summary).
    ``stop()`` is polled each step (an interrupt handler sets it): training ends there and says so.
    ``progress(steps_done, loss_ema)`` is told after every step (a progress display)."""
    if steps < 1 or batch < 1:
        raise InputError("--steps and --batch must be ≥ 1")
    gen = torch.Generator().manual_seed(seed)
    cal = calibrate(model, data) if das_calibrate and model.config.das else []
    init = diagnostics(model, data)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    warm = max(1, steps // 20)

    def lr_at(s: int) -> float:
        if s < warm:
            return (s + 1) / warm
        return 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, steps - warm)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    it = batches(data, min(batch, len(data)), gen)
    t0, ema, done, stopped = time.perf_counter(), None, 0, False
    for step in range(steps):
        if stop is not None and stop():
            stopped = True
            break
        ids, y = next(it)
        loss = torch.nn.functional.cross_entropy(model(ids), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        done = step + 1
        ema = float(loss.detach()) if ema is None else 0.9 * ema + 0.1 * float(loss.detach())
        if progress is not None:
            progress(done, ema)
        if log is not None and (done % log_every == 0 or done == steps):
            log({"step": done, "loss": round(ema, 5), "lr": opt.param_groups[0]["lr"],
                 "seconds": round(time.perf_counter() - t0, 2)})
    final = diagnostics(model, data)
    return {"steps": done, "interrupted": stopped, "train_seconds": round(time.perf_counter() - t0, 3),
            "final_loss": ema, "das_calibration": cal, "init": init, "final": final,
            "train_accuracy": accuracy(predict(model, data.subset(slice(0, 1024))), data.labels[:1024]),
            "params": n_params(model)}


def count_energy(model: SpikeClassifier, data: Dataset, table: dict | None = None, batch: int = 128) -> dict:
    """Operations of a forward over ``data`` (from the spikes fired), their modelled energy, per sequence."""
    counter = E.OpCounter()
    model.eval()
    with torch.no_grad():
        for i in range(0, len(data), batch):
            model(data.ids[i : i + batch], counter=counter)
    n = max(1, len(data))
    per_seq = {op: v / n for op, v in counter.items()}
    return {"ops_per_sequence": per_seq, **E.energy_pj(per_seq, table)}


def ann_twin(model: SpikeClassifier) -> SpikeClassifier:
    """The ANN at the same width and depth (weights untrained: operation counts depend only on shapes)."""
    c = SpikeConfig(**{**model.config.to_dict(), "arch": "ann", "attn": "softmax", "das": False, "T": 1})
    return SpikeClassifier(c)


# --------------------------------------------------------------------------- model folders

def _weights_bytes(model: torch.nn.Module) -> bytes:
    buf = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in sorted(model.state_dict().items())}, buf)
    return buf.getvalue()


def model_hash(model: SpikeClassifier) -> str:
    h = hashlib.sha256(json.dumps(model.config.to_dict(), sort_keys=True).encode())
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return "sha256:" + h.hexdigest()


def save(model: SpikeClassifier, folder: str, meta: dict) -> dict:
    from mlx26.core.common.files import atomic_folder

    record = {"format": MODEL_FORMAT, "config": model.config.to_dict(), "model_hash": model_hash(model), **meta}
    with atomic_folder(folder) as tmp:
        Path(tmp, "weights.pt").write_bytes(_weights_bytes(model))
        Path(tmp, "config.json").write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    return record


def load(folder: str) -> tuple[SpikeClassifier, dict]:
    p = Path(folder)
    cfg_path, w_path = p / "config.json", p / "weights.pt"
    if not p.is_dir() or not cfg_path.is_file() or not w_path.is_file():
        raise InputError(f"{folder}: not a spike model folder (config.json + weights.pt)",
                         "train one with `mlx26 spike train --out DIR`")
    try:
        record = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{cfg_path}: not JSON ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != MODEL_FORMAT:
        raise InputError(f"{folder}: format {record.get('format') if isinstance(record, dict) else None!r}, "
                         f"expected {MODEL_FORMAT}")
    try:
        model = SpikeClassifier(SpikeConfig(**record["config"]))
        state = torch.load(w_path, map_location="cpu", weights_only=True)
        model.load_state_dict(state)
    except InputError:
        raise
    except Exception as exc:  # torch raises RuntimeError/KeyError/UnpicklingError for a damaged folder
        raise InputError(f"{w_path}: the weights do not load ({type(exc).__name__}): the file is damaged or "
                         "not from `mlx26 spike train`") from None
    model.eval()
    if model_hash(model) != record.get("model_hash"):
        # weights.pt from another model (or edited): the ONNX guard and every figure rely on the pair matching
        raise InputError(f"{folder}: weights.pt does not match the model_hash in config.json",
                         "the folder was altered; train it again or restore its weights")
    return model, record
