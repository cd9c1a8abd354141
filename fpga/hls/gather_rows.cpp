// "Retrieval" (fetch): copy the selected rows (tokens of the selected pages) into a dense buffer.
//
// src: [rows][n_src][width]; idx: [rows][n_idx] (indices into n_src); dst: [rows][n_idx][width].
// A plain copy, so it is exact. Returns -1 (and writes nothing more) on an out-of-range index.
#include "hls_shim.h"

extern "C" int gather_rows(const float* src, int rows, int n_src, int width, const int* idx, int n_idx,
                           float* dst) {
  HLS_PRAGMA(HLS INTERFACE m_axi port = src offset = slave bundle = gmem0)
  HLS_PRAGMA(HLS INTERFACE m_axi port = idx offset = slave bundle = gmem1)
  HLS_PRAGMA(HLS INTERFACE m_axi port = dst offset = slave bundle = gmem2)
  HLS_PRAGMA(HLS INTERFACE s_axilite port = return)
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < n_idx; ++i) {
      const int j = idx[(long)r * n_idx + i];
      if (j < 0 || j >= n_src) return -1;
      const float* from = src + ((long)r * n_src + j) * width;
      float* to = dst + ((long)r * n_idx + i) * width;
      for (int d = 0; d < width; ++d) {
        HLS_PRAGMA(HLS PIPELINE II = 1)
        to[d] = from[d];
      }
    }
  }
  return 0;
}
