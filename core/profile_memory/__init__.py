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

from mlx26.core.profile_memory.costs import MEMORY_STAGES, STAGES, StageCost
from mlx26.core.profile_memory.devices import BUILTIN, DeviceSpec, load_specs
from mlx26.core.profile_memory.placement import plan
from mlx26.core.profile_memory.profiler import DEVICES, PIPELINES, ProfileOptions, profile, validate

__all__ = ["BUILTIN", "DEVICES", "MEMORY_STAGES", "PIPELINES", "STAGES", "DeviceSpec", "ProfileOptions", "StageCost",
           "load_specs", "plan", "profile", "validate"]
