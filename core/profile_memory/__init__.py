"""``mlx26 profile-memory``: the four-stage memory-processing pipeline, profiled and offloaded.

Reconstruction of He, Ma, Sun, Cong, "Understand and Accelerate Memory Processing Pipeline for
Disaggregated LLM Inference" (ICML 2026, arXiv 2603.29002; no public code). Sparse attention
(Quest, a DeepSeek-style indexer), RAG and compressed memory (HMT-style) are each split into
Prepare Memory, Compute Relevancy, Retrieval and Apply to Inference, profiled on a real model
with measured machine ceilings, and the memory-bound stages are either run as HLS C++ kernels
(``fpga/hls``; g++ emulation or pyxrt) or modelled on GPU/FPGA device specs.

Modules: ``costs`` (FLOP/byte accounting), ``clock`` (lap timer), ``runner`` (unrolled Llama
decode), ``quest`` / ``indexer`` / ``rag`` / ``hmt`` / ``dense`` (pipelines), ``reference``
(torch references of the kernels), ``ops`` (torch vs FPGA kernels), ``ceilings`` (GEMM and copy
micro-benchmarks), ``devices`` (DeviceSpec, roofline), ``placement`` (GPU-only vs GPU+FPGA),
``profiler`` and ``report``.
"""

from mlx26.core.common.lazy import lazy_exports

# {submodule: the names it exports}: each is imported on first use, so importing the package
# (and its stdlib-only .spec, which the CLI reads for --help) loads nothing heavy.
__all__ = lazy_exports(__name__, {
    "costs": ("MEMORY_STAGES", "STAGES", "StageCost"),
    "devices": ("BUILTIN", "DeviceSpec", "load_specs"),
    "placement": ("plan",),
    "profiler": ("ProfileOptions", "profile", "validate"),
    "spec": ("DEVICES", "PIPELINES"),
})
