"""SpikingLM: Distribution-aware Scaling and Spike2Max for spiking language models (``mlx26 spike``).

Reconstruction of *SpikingLM* (ICML 2026; upstream code hamings1/SpikingLM was not reachable and no
full text was available). Everything here is rebuilt from the abstract and from prior spiking-LM work
(SpikeLM, SpikingBERT, Spikformer's spike self-attention, Sorbet's power-of-two softmax, spikingjelly's
neurons); each module says which part it reconstructs from what:

* :mod:`.neurons` — IF / LIF neurons, soft reset, atan / sigmoid surrogate gradients, ternary bi-spikes,
  firing-rate and dead-neuron statistics;
* :mod:`.das` — Distribution-aware Scaling: a calibrated, learnable per-channel affine after each linear
  that feeds a neuron, fused into that linear for inference;
* :mod:`.spike2max` — base-2 winner-takes-all normalisation with max subtraction, exact or power-of-two;
* :mod:`.model` — a spiking transformer encoder classifier (softmax / Spike2Max / linear attention) and
  its ANN twin; :mod:`.energy` — the per-operation cost table and operation counting;
* :mod:`.tasks` — GLUE TSV loaders and the substitute tasks built from the zoo corpora, plus the
  labelled-synthetic salient-token retrieval task; :mod:`.train` — training, evaluation, model folders;
* :mod:`.export` — ONNX export of the fused model and onnxruntime inference.

This ``__init__`` imports nothing heavy (``spec`` is imported by ``mlx26 --help``).
"""
