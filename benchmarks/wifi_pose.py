"""WiFi-Mamba benchmark (reconstruction): WiFi-Mamba ± persistent memory vs the PiW3D-style transformer vs the
mean pose, at equal width and budget, side by side in one run; then torch vs onnxruntime per frame.

    python benchmarks/wifi_pose.py [--steps 1000] [--sequences 1000] [--frames 8] [--json out.json]   # make bench-wifi-pose

SYNTHETIC data only (mlx26.core.wifi_pose.synth): sequences of 1–3 walking persons, 3 links × 3 antennas ×
30 subcarriers × 20 packets per frame, split by sequence (75 % train). Every model gets the same steps,
batch, window (truncated-BPTT length) and learning rate. Ratios against the transformer (the anchor).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from _results import record

CAPTURES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "csi"
FILES = [("intel5300_sample_0x5_64_3000.dat", "intel5300"), ("intel5300_sample_0x1_ap.dat", "intel5300"),
         ("atheros_ath_csi_1.dat", "atheros")]


def captures(folder: Path) -> dict | None:
    """The real captures, read in place: packets parsed (csiread) vs our independent record walk, and the
    phase std raw vs sanitised of the static Intel 5300 capture (``mlx26 wifi-pose read|sanitize``)."""
    from mlx26.core.wifi_pose import io
    from mlx26.core.wifi_pose import sanitize as S

    if not all((folder / name).is_file() for name, _ in FILES):
        print(f"real captures not found in {folder}: that part is skipped", file=sys.stderr)
        return None
    out: dict = {}
    for name, chip in FILES:
        cap = io.read_capture(folder / name, chip)
        out[name] = {"chip": chip, "packets_csiread": cap.parsed, "packets_walked": cap.walked,
                     "shape": list(cap.csi.shape[1:]), "first_bad_offset": cap.first_bad_offset}
        print(f"capture {name}: {cap.parsed} packets (walk {cap.walked}), links x antennas x subcarriers "
              f"{'x'.join(map(str, cap.csi.shape[1:]))}")
    cap = io.read_capture(folder / FILES[0][0], FILES[0][1])
    rep = S.capture_report(cap.csi, cap.subcarriers)
    out["intel_static_phase"] = {k: rep[k] for k in ("phase_std_raw_median", "phase_std_sanitized_median",
                                                     "phase_std_sanitized_strongest_antenna",
                                                     "phase_std_sanitized_per_antenna", "mean_amplitude_per_antenna",
                                                     "amplitude_rel_std_per_antenna")}
    print(f"phase std {FILES[0][0]}: raw {rep['phase_std_raw_median']:.3f} rad -> sanitised "
          f"{rep['phase_std_sanitized_strongest_antenna']:.3f} on the strongest antenna, "
          f"{rep['phase_std_sanitized_median']:.3f} over all cells")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--sequences", type=int, default=1000)
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1],
                    help="one full comparison per seed (data, split and init); the first seed's rows are the main table")
    ap.add_argument("--json", help="also write the records to this JSON file")
    ap.add_argument("--captures", type=Path, default=CAPTURES,
                    help="folder of the real CSI captures (read in place; default ../shared/data/csi)")
    args = ap.parse_args(argv)
    import torch
    from mlx26.core.wifi_pose import bench

    torch.set_num_threads(1)  # a shared 2-core machine: one thread keeps the runs comparable
    t0 = time.perf_counter()
    runs = [bench.compare(steps=args.steps, sequences=args.sequences, frames=args.frames, window=args.window,
                          batch=args.batch, seed=seed, log=lambda m: print(f"  {m}", file=sys.stderr, flush=True))
            for seed in args.seeds]
    rows = runs[0]
    args.seed = args.seeds[0]
    r0 = rows[0]
    print(f"wifi-pose benchmark — SYNTHETIC data: {r0['train_clips']} train / {r0['test_clips']} test frames, "
          f"{args.steps} steps x batch {args.batch} x window {args.window}, seed {args.seed}, "
          f"{os.cpu_count()} cores, torch threads 1")
    print(f"{'model':28} {'params':>8} {'MFLOP/fr':>9} {'MPJPE mm':>9} {'greedy':>8} {'PCK@150':>8} "
          f"{'train s':>8} {'params/tf':>9} {'MPJPE/tf':>9} {'gain vs mean':>12}")
    for r in rows:
        print(f"{r['model']:28} {r['params']:>8} {r['flops_per_frame'] / 1e6:>9.2f} {r['mpjpe_mm']:>9.1f} "
              f"{r.get('mpjpe_greedy_mm', float('nan')):>8.1f} {r['pck3d@150']:>8.3f} {r['train_s']:>8.1f} "
              f"{r['params_ratio_vs_transformer']:>9.3f} {r['mpjpe_ratio_vs_transformer']:>9.3f} "
              f"{r['mpjpe_gain_vs_mean_pose']:>12.1%}")
    m = rows[1]
    print("ratios and checks (SYNTHETIC):")
    print(f"  params WiFi-Mamba / transformer      {m['params_ratio_vs_transformer']:.3f}   (target <= 0.6)")
    print(f"  MPJPE  WiFi-Mamba / transformer      {m['mpjpe_ratio_vs_transformer']:.3f}   (target <= 1)")
    print(f"  MPJPE  memory on / memory off        {m['mpjpe_mm'] / rows[2]['mpjpe_mm']:.3f}   (separately trained; target < 1)")
    print(f"  MPJPE  same weights, memory off      {m['mpjpe_same_weights_memory_off_mm']:.1f} mm vs {m['mpjpe_mm']:.1f} on")
    for r in rows[:3]:
        print(f"  gain over the mean pose  {r['model']:28} {r['mpjpe_gain_vs_mean_pose']:.1%}   (target >= 30 %)")
    if "ort_ms_per_frame" in m:
        print(f"  latency/frame torch {m['torch_ms_per_frame']:.2f} ms, onnxruntime {m['ort_ms_per_frame']:.2f} ms "
              f"(ort speed-up x{m['ort_speedup_over_torch']:.2f}); transformer torch {r0['torch_ms_per_frame']:.2f} ms "
              f"(WiFi-Mamba / transformer x{m['torch_latency_ratio_vs_transformer']:.2f})")
        print(f"  peak RSS torch {m['torch_peak_rss_mb']:.0f} MB, onnxruntime {m['ort_peak_rss_mb']:.0f} MB; "
              f"persistent state {m['state_bytes']} bytes/stream-set; onnx max|diff| {m['onnx_max_abs_diff']:.1e}")
    replicates = [{"seed": seed, "mpjpe_ratio_vs_transformer": rs[1]["mpjpe_ratio_vs_transformer"],
                   "memory_on_over_off": rs[1]["mpjpe_mm"] / rs[2]["mpjpe_mm"],
                   "min_gain_vs_mean_pose": min(r["mpjpe_gain_vs_mean_pose"] for r in rs[:3]),
                   **{f"{k}_mpjpe_mm": r["mpjpe_mm"] for k, r in zip(("transformer", "mamba", "mamba_no_memory",
                                                                      "mean_pose"), rs, strict=True)}}
                  for seed, rs in zip(args.seeds, runs, strict=True)]
    print("per seed (data, split and initialisation all change with it):")
    for rep in replicates:
        print(f"  seed {rep['seed']}: MPJPE WiFi-Mamba / transformer {rep['mpjpe_ratio_vs_transformer']:.3f}, memory on / off "
              f"{rep['memory_on_over_off']:.3f}, smallest gain over the mean pose {rep['min_gain_vs_mean_pose']:.1%}")
    real = captures(args.captures)
    print(f"total {time.perf_counter() - t0:.0f} s")
    keys = {"transformer (PiW3D-style)": "transformer", "wifi-mamba": "mamba", "wifi-mamba, no memory": "mamba_no_memory",
            "mean pose": "mean_pose"}
    figures = {"models": {keys.get(r["model"], r["model"]): r for r in rows},
               "memory_on_over_off": m["mpjpe_mm"] / rows[2]["mpjpe_mm"], "captures": real, "replicates": replicates,
               **{k: getattr(args, k) for k in ("steps", "sequences", "frames", "window", "batch", "seed", "seeds")}}
    data = [{"name": "synthetic CSI", "source": f"SYNTHETIC: mlx26.core.wifi_pose.synth, {args.sequences} sequences x "
             f"{args.frames} frames of 1-3 walking persons (seeds {', '.join(map(str, args.seeds))})"}]
    if real:
        data.append({"name": "csi", "source": "../shared/data/csi (real Intel 5300 and Atheros captures, read in place)"})
    record("wifi_pose", figures, data=data)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
