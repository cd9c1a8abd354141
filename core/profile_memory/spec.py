"""The choices of ``mlx26 profile-memory``, shared by the CLI and the core (standard library only).

``mlx26.cli.profile_memory`` imports this at module level (``--help`` must not load torch);
:mod:`.profiler`, :mod:`.placement` and :mod:`.ops` import the same tuples.
"""

PIPELINES = ("quest", "indexer", "rag", "memory")  # the CLI adds "all" (every one of these)
DEVICES = ("cpu", "gpu", "fpga")
FPGA_BACKENDS = ("emu", "xrt")
PLACEMENTS = ("auto", "gpu", "hetero")
# Weights, activations and the KV cache in this precision (the stage byte counts follow its itemsize).
DTYPES = ("fp32", "bf16")
# The decode-time pipelines that take --batch > 1 (rag / memory build one prompt per request).
BATCHED = ("quest", "indexer", "dense")
