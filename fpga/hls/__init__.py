"""HLS C++ sources (Vitis HLS; also g++-compilable for software emulation). Not Python code."""
