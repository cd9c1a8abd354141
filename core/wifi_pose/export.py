"""Edge deployment: ONNX export of a trained model and onnxruntime inference, torch vs onnxruntime.

Exported with ``torch.onnx.export(..., dynamo=False)`` (TorchScript tracing). The chunked scan has a Python
loop over chunks that tracing unrolls (T = 20 packets: two chunks of 16), so the graph holds only
cumsum/exp/where/matmul. WiFi-Mamba's graph takes the persistent state as an input and returns the next
one, so the edge runtime keeps the memory across frames itself.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import torch
from mlx26.core.wifi_pose import model as M


class _Wrapped(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, amp, ph, state):
        kp, logits, nxt = self.net(amp, ph, state)
        return kp, logits, nxt


def example_inputs(net, batch: int = 1, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    t, f = net.config["packets"], net.config["features"]
    amp = torch.randn(batch, t, f, generator=g) * net.amp_std + net.amp_mean
    ph = torch.randn(batch, t, f, generator=g) * net.ph_std + net.ph_mean
    if isinstance(net, M.WiFiMamba):
        return amp, ph, torch.randn(*net.zero_state(batch).shape, generator=g) * 0.1
    return amp, ph


def export_onnx(net, path, opset: int = 17) -> dict:
    """Write ``path``; returns names and sizes. WiFi-Mamba: inputs amp, ph, state; outputs joints, logits, state."""
    from mlx26.core.common.files import atomic_path

    net.eval()
    args = example_inputs(net)
    mamba = isinstance(net, M.WiFiMamba)
    module = _Wrapped(net) if mamba else net
    inputs = ["amp", "ph", "state"] if mamba else ["amp", "ph"]
    outputs = ["joints", "logits", "next_state"] if mamba else ["joints", "logits"]
    with atomic_path(path, suffix=".onnx") as tmp, torch.no_grad():
        if not mamba:
            class _Two(torch.nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.n = n

                def forward(self, amp, ph):
                    kp, logits, _ = self.n(amp, ph)
                    return kp, logits

            module = _Two(net)
        fast = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(False)  # the fused encoder kernel has no ONNX symbolic
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # TracerWarnings: shapes are constant for a fixed frame size
                torch.onnx.export(module, args, str(tmp), input_names=inputs, output_names=outputs,
                                  opset_version=opset, dynamo=False)
        finally:
            torch.backends.mha.set_fastpath_enabled(fast)
    import os

    return {"onnx": str(path), "bytes": os.path.getsize(path), "inputs": inputs, "outputs": outputs, "opset": opset}


def session(path, threads: int = 1):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def compare(net, path, batch: int = 1, seed: int = 1) -> dict:
    """Max |torch − onnxruntime| over every output on random inputs."""
    args = example_inputs(net, batch, seed)
    with torch.no_grad():
        ref = [v for v in net(*args) if v is not None]
    sess = session(path)
    names = [i.name for i in sess.get_inputs()]
    got = sess.run(None, {n: a.numpy() for n, a in zip(names, args, strict=True)})
    diffs = [float(np.abs(r.numpy() - g).max()) for r, g in zip(ref, got, strict=True)]
    return {"max_abs_diff": max(diffs), "per_output": diffs}


def latency(net, path, frames: int = 200, warmup: int = 20, baseline=None) -> dict:
    """Median per-frame latency (batch 1, one thread) of torch and onnxruntime, same inputs, one process;
    with ``baseline`` (another torch model) timed in the same loop, interleaved, so load spikes hit all alike."""
    args = example_inputs(net, 1, 2)
    base_args = example_inputs(baseline, 1, 2) if baseline is not None else None
    sess = session(path)
    feed = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args, strict=True)}
    torch_t, ort_t, base_t = [], [], []
    with torch.no_grad():
        for i in range(warmup + frames):
            t0 = time.perf_counter()
            net(*args)
            t1 = time.perf_counter()
            sess.run(None, feed)
            t2 = time.perf_counter()
            if base_args is not None:
                baseline(*base_args)
            t3 = time.perf_counter()
            if i >= warmup:
                torch_t.append(t1 - t0)
                ort_t.append(t2 - t1)
                base_t.append(t3 - t2)
    tm, om = float(np.median(torch_t) * 1e3), float(np.median(ort_t) * 1e3)
    out = {"torch_ms_per_frame": tm, "onnxruntime_ms_per_frame": om, "speedup_ort_over_torch": tm / om,
           "frames": frames, "torch_threads": torch.get_num_threads()}
    if base_args is not None:
        out["baseline_torch_ms_per_frame"] = float(np.median(base_t) * 1e3)
    return out

def latency_torch_only(net, frames: int = 100, warmup: int = 10) -> float:
    """Median torch ms per frame (batch 1) for a model that is not exported (the baseline)."""
    args = example_inputs(net, 1, 2)
    ts = []
    with torch.no_grad():
        for i in range(warmup + frames):
            t0 = time.perf_counter()
            net(*args)
            if i >= warmup:
                ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e3)
