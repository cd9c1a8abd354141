"""Edge export: the DAS-fused model to ONNX, onnxruntime inference, torch vs onnxruntime.

DAS is folded into its linears first (:func:`~mlx26.core.spike.das.fuse_model`), so the exported graph has no
DAS op. Exported with ``torch.onnx.export(..., dynamo=False)``: tracing unrolls the T time steps, and under
``no_grad`` every spike is a plain comparison, so the graph holds MatMul/Add/Mul/GreaterOrEqual/Where and,
for Spike2Max, ReduceMax/Pow(2, ·). The sequence axis is dynamic up to the model's ``max_len``.

The file carries our manifest in its metadata (``mlx26_model_hash`` of the unfused folder, config, format), so
``spike eval --runtime onnx`` refuses an ONNX file exported from another model.
"""

from __future__ import annotations

import copy
import json
import os
import time
import warnings

import numpy as np
import torch
from mlx26.core.common.errors import InputError
from mlx26.core.spike.das import fuse_model
from mlx26.core.spike.model import SpikeClassifier
from mlx26.core.spike.spec import MODEL_FORMAT

HASH_KEY = "mlx26_model_hash"


class _Graph(torch.nn.Module):
    def __init__(self, model: SpikeClassifier):
        super().__init__()
        self.model = model

    def forward(self, ids, mask):
        return self.model(ids, mask)


def fused_copy(model: SpikeClassifier) -> tuple[SpikeClassifier, int]:
    m = copy.deepcopy(model).eval()
    return m, fuse_model(m)


def export_onnx(model: SpikeClassifier, path: str, model_hash: str, opset: int = 17) -> dict:
    import onnx
    from mlx26.core.common.files import atomic_path

    fused, n_fused = fused_copy(model)
    n = min(8, model.config.max_len)
    ids = torch.ones(2, n, dtype=torch.int64)
    mask = torch.ones(2, n, dtype=torch.bool)
    with atomic_path(path, suffix=".onnx") as tmp, torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings about Python ints taken from shapes
        torch.onnx.export(_Graph(fused), (ids, mask), str(tmp), input_names=["ids", "mask"], output_names=["logits"],
                          dynamic_axes={"ids": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"},
                                        "logits": {0: "batch"}}, opset_version=opset, dynamo=False)
        proto = onnx.load(str(tmp))
        meta = {HASH_KEY: model_hash, "mlx26_format": MODEL_FORMAT,
                "mlx26_config": json.dumps(model.config.to_dict(), sort_keys=True)}
        for k, v in meta.items():
            entry = proto.metadata_props.add()
            entry.key, entry.value = k, v
        onnx.checker.check_model(proto)
        onnx.save(proto, str(tmp))
    return {"onnx": str(path), "bytes": os.path.getsize(path), "das_fused": n_fused, "opset": opset}


def session(path: str, expect_hash: str | None = None, threads: int = 1):
    """An onnxruntime session; with ``expect_hash``, a file exported from another model is refused."""
    import onnxruntime as ort

    if not os.path.isfile(path):
        raise InputError(f"{path}: no such ONNX file", "write one with `mlx26 spike export --model DIR [--onnx PATH]`")
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    try:
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidProtobuf types
        raise InputError(f"{path}: not an ONNX model onnxruntime can load ({str(exc)[:160]})") from None
    found = sess.get_modelmeta().custom_metadata_map.get(HASH_KEY)
    if expect_hash is not None and found != expect_hash:
        raise InputError(f"{path} was not exported from this model (its hash {str(found)[:19]}… ≠ {expect_hash[:19]}…)",
                         "re-export it with `mlx26 spike export --model DIR --onnx PATH`")
    return sess


def onnx_logits(sess, ids: torch.Tensor, pad_id: int, batch: int = 256) -> torch.Tensor:
    out = []
    for i in range(0, ids.shape[0], batch):
        x = ids[i : i + batch].numpy()
        out.append(sess.run(["logits"], {"ids": x, "mask": x != pad_id})[0])
    return torch.from_numpy(np.concatenate(out))


@torch.no_grad()
def compare(model: SpikeClassifier, sess, ids: torch.Tensor) -> dict:
    """onnxruntime vs the same fused model in torch (max |logit difference|), and prediction agreement with
    the unfused model (a rounding difference at θ can flip a spike, so that one is compared by argmax)."""
    fused, _ = fused_copy(model)
    model.eval()
    a = torch.cat([fused(ids[i : i + 256]) for i in range(0, ids.shape[0], 256)])
    u = torch.cat([model(ids[i : i + 256]) for i in range(0, ids.shape[0], 256)])
    b = onnx_logits(sess, ids, model.config.pad_id).to(a.dtype)
    return {"inputs": int(ids.shape[0]), "max_abs_diff": float((a - b).abs().max()),
            "argmax_agree": float((a.argmax(-1) == b.argmax(-1)).double().mean()),
            "unfused_max_abs_diff": float((u - b).abs().max()),
            "unfused_argmax_agree": float((u.argmax(-1) == b.argmax(-1)).double().mean())}


@torch.no_grad()
def latency(model: SpikeClassifier, sess, ids: torch.Tensor, repeats: int = 3) -> dict:
    """Per-sequence latency (batch 1, 1 thread): the median over sequences of the min over ``repeats``."""
    fused, _ = fused_copy(model)
    pad = model.config.pad_id

    def t_torch(x):
        t = time.perf_counter()
        fused(x)
        return time.perf_counter() - t

    def t_ort(x):
        xn = x.numpy()
        t = time.perf_counter()
        sess.run(["logits"], {"ids": xn, "mask": xn != pad})
        return time.perf_counter() - t

    rows = [ids[i : i + 1] for i in range(ids.shape[0])]
    for x in rows[:3]:  # warm-up
        t_torch(x)
        t_ort(x)
    tt = float(np.median([min(t_torch(x) for _ in range(repeats)) for x in rows]))
    to = float(np.median([min(t_ort(x) for _ in range(repeats)) for x in rows]))
    return {"torch_ms": tt * 1e3, "onnxruntime_ms": to * 1e3, "onnx_over_torch": to / tt if tt else None,
            "timed_sequences": len(rows)}
