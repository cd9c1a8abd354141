"""HLS C++ kernels, the pyxrt host path and their software emulation."""
