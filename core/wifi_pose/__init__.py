"""WiFi-Mamba: selective state-space models for WiFi CSI 3D multi-person pose, with ONNX edge inference
("WiFi-Mamba", ICML 2026). No paper text or code is public: this is a RECONSTRUCTION from the abstract, the
Person-in-WiFi 3D setup (Yan et al., CVPR 2024; github.com/aiotgroup/Person-in-WiFi-3D-repo, Apache-2.0 —
read, not copied) and Mamba (Gu & Dao, arXiv 2312.00752). What is reconstructed from what, part by part:

* :mod:`.io` — csiread for Intel 5300 / Atheros captures with an independent record walk; PiW3D's folder
  layout (csi/*.mat ``csi_out`` 3×3×30×20, keypoint/*.npy persons×14×3 m) as in its public loader; our NPZ;
* :mod:`.sanitize` — PiW3D's phase sanitisation (unwrap, antenna chaining, one LS linear phase) made weighted
  and refit once (feasible GLS), and a wavelet denoiser that really thresholds (PiW3D's does not);
* :mod:`.synth` — ours entirely: SYNTHETIC CSI from 3D poses (image-source room, body joints as point
  scatterers, CFO/STO/AGC/noise impairments, smooth multi-person motion);
* :mod:`.ssm` — Mamba's selective scan in pure PyTorch (reference, sequential, chunked);
* :mod:`.model` — from the abstract's three named parts, our design for each: a dual-stream (amplitude,
  phase) bidirectional selective SSM whose read-out sees the other stream's state through κ = tanh θ (θ = 0
  at init: two independent SSMs); "Selective State Attention" = pose queries conditioned on the final SSM
  states, cross-attending with an additive bias from each token's Δ; "Persistent SSM Memory" = the forward
  scan's final state carried into the next frame through a learned gate, trained with truncated BPTT;
  a Hungarian set loss (scipy). Baseline: a PiW3D-style transformer encoder + query decoder, equal width;
* :mod:`.metrics` — MPJPE with Hungarian or PiW3D's greedy matching, PCK3D, analytic FLOPs;
* :mod:`.train`, :mod:`.export` (ONNX via ``torch.onnx.export(dynamo=False)`` + onnxruntime), :mod:`.show`,
  :mod:`.bench`.

The paper's figures (16–27 % lower MPJPE than PiW3D, 2.14 M vs 48.2 M parameters) are on the real PiW3D
dataset, which is not available here; nothing in this package reproduces them. This ``__init__`` imports
nothing heavy (``spec`` is imported by ``mlx26 --help``).
"""
