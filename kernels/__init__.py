"""Hot loops: fused torch ops and compiled kernels, each beside a pure reference implementation."""
