"""The side-by-side benchmark on SYNTHETIC sequences, equal width and budget (same steps, batch, window, lr):
WiFi-Mamba with and without persistent memory, the PiW3D-style transformer, and the mean pose; then torch
vs onnxruntime per-frame latency (one process, batch 1, one thread) and peak memory (one child process per
backend, so neither runtime's allocations count against the other).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from mlx26.core.common.seeding import seed_everything
from mlx26.core.wifi_pose import metrics, synth
from mlx26.core.wifi_pose import model as M
from mlx26.core.wifi_pose import train as T

_CHILD = r"""
import json, sys
import numpy as np
backend, ckpt, onnx, frames = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def hwm():  # VmHWM: this process's peak RSS in kB (ru_maxrss would carry the parent's over fork + exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
if backend == "torch":
    import torch
    torch.set_num_threads(1)
    from mlx26.core.wifi_pose import export as E, train as T
    net, _ = T.load(ckpt)
    args = E.example_inputs(net)
    loaded = hwm()
    with torch.no_grad():
        state = args[2]
        for _ in range(frames):
            _, _, state = net(args[0], args[1], state)
else:
    import onnxruntime as ort
    so = ort.SessionOptions(); so.intra_op_num_threads = 1
    s = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
    shapes = {i.name: i.shape for i in s.get_inputs()}
    feed = {n: np.random.default_rng(0).standard_normal(sh).astype(np.float32) for n, sh in shapes.items()}
    loaded = hwm()
    for _ in range(frames):
        out = s.run(None, feed)
        feed["state"] = out[2]
peak = hwm()
print(json.dumps({"peak_rss_mb": peak / 1024, "runtime_rss_mb": loaded / 1024, "run_growth_mb": (peak - loaded) / 1024}))
"""


def peak_memory(ckpt: str, onnx: str, frames: int = 200) -> dict:
    out = {}
    for backend in ("torch", "onnxruntime"):
        proc = subprocess.run([sys.executable, "-c", _CHILD, backend, ckpt, onnx, str(frames)], capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != 0:
            out[backend] = {"error": proc.stderr.strip().splitlines()[-1:]}
        else:
            out[backend] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def compare(*, steps: int = 1000, sequences: int = 1000, frames: int = 8, window: int = 4, batch: int = 16,
            preset: str = "tiny", seed: int = 0, lr: float = 3e-3, latency_frames: int = 100, log=None) -> list[dict]:
    clips = synth.generate(sequences=sequences, frames=frames, seed=seed)
    tr, te = T.split_by_sequence(clips, 0.25, seed)
    dtr, dte = T.Data.from_clips(tr), T.Data.from_clips(te)
    base = {"data": "SYNTHETIC", "train_clips": int(len(dtr.amp)), "test_clips": int(len(dte.amp)), "steps": steps,
            "batch": batch, "window": window, "preset": preset, "seed": seed}
    mean = metrics.mean_pose_baseline(dtr.kp, dte.kp)
    rows: list[dict] = []
    nets = {}
    for name, arch, mem in (("transformer (PiW3D-style)", "transformer", False), ("wifi-mamba", "mamba", True),
                            ("wifi-mamba, no memory", "mamba", False)):
        seed_everything(seed)  # every model's initialisation depends on the seed alone, not on the run order
        net = T.build_for(arch, dtr, preset, mem)
        info = T.fit(net, dtr, steps=steps, batch=batch, window=window, lr=lr, seed=seed,
                     log=(lambda m, n=name: log(f"{n}: {m}")) if log else None)
        ev = T.evaluate(net, dte)
        nets[name] = net
        rows.append({**base, "model": name, "params": M.n_params(net), "flops_per_frame": M.analytic_flops(net),
                     **ev, "train_s": round(info["train_s"], 1)})
    rows.append({**base, "model": "mean pose", "params": 0, "flops_per_frame": 0, **mean, "train_s": 0.0})
    tf = rows[0]
    for r in rows:
        r["params_ratio_vs_transformer"] = r["params"] / tf["params"]
        r["mpjpe_ratio_vs_transformer"] = r["mpjpe_mm"] / tf["mpjpe_mm"]
        r["mpjpe_gain_vs_mean_pose"] = 1 - r["mpjpe_mm"] / mean["mpjpe_mm"]
    mem_net = nets["wifi-mamba"]
    rows[1]["mpjpe_same_weights_memory_off_mm"] = T.evaluate(mem_net, dte, memory=False)["mpjpe_mm"]
    try:
        import onnxruntime  # noqa: F401
        from mlx26.core.wifi_pose import export as E

        with tempfile.TemporaryDirectory() as tmp:
            onnx = str(Path(tmp) / "m.onnx")
            ckpt = str(Path(tmp) / "m.pt")
            E.export_onnx(mem_net, onnx)
            T.save(mem_net, ckpt, {})
            lat = E.latency(mem_net, onnx, frames=latency_frames, warmup=10, baseline=nets["transformer (PiW3D-style)"])
            diff = E.compare(mem_net, onnx)["max_abs_diff"]
            memo = peak_memory(ckpt, onnx, latency_frames)
        tlat = lat["baseline_torch_ms_per_frame"]
        rows[1].update({"torch_ms_per_frame": lat["torch_ms_per_frame"], "ort_ms_per_frame":
                        lat["onnxruntime_ms_per_frame"], "ort_speedup_over_torch": lat["speedup_ort_over_torch"],
                        "onnx_max_abs_diff": diff, "state_bytes": int(mem_net.zero_state(1).numel() * 4),
                        "torch_peak_rss_mb": memo["torch"].get("peak_rss_mb"),
                        "ort_peak_rss_mb": memo["onnxruntime"].get("peak_rss_mb")})
        rows[0]["torch_ms_per_frame"] = tlat
        rows[1]["torch_latency_ratio_vs_transformer"] = lat["torch_ms_per_frame"] / tlat
    except ImportError:
        if log:
            log("onnxruntime is not installed: latency rows skipped (pip install 'mlx26[wifi]')")
    return rows
